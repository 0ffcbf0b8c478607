"""Metrics and statistics on cases computed by hand."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from evaluator.metrics import (
    breakdowns,
    compare_runs,
    group_metrics,
    judge_agreement,
    judge_disagreements,
)
from evaluator.prices import Price, PriceTable, load_prices
from evaluator.records import TaskResult, Verdict
from evaluator.run_store import HumanVerdict
from evaluator.stats import (
    correlation_p_value,
    mcnemar_exact,
    paired_bootstrap_ci,
    point_biserial,
    regularized_beta,
    wilson_interval,
)
from graph_builder.model import Labels

PRICES = PriceTable("USD", {"gpt-4o": Price(2.5, 10.0)})


def hand_results() -> list[TaskResult]:
    return [
        TaskResult(
            "a",
            "success",
            "offline",
            instruction="open display",
            app="settings",
            labels=Labels("system_settings", ("canonical", "compound")),
            steps=3,
            matched_steps=3,
            gt_steps=3,
            decisions=3,
            correct_decisions=3,
            reflections=2,
            correct_reflections=2,
            inference_seconds=3.0,
            input_tokens=1000,
            output_tokens=100,
            model="gpt-4o",
        ),
        TaskResult(
            "b",
            "failure",
            "offline",
            instruction="make the letters bigger please",
            app="settings",
            labels=Labels("system_settings", ("narrative",)),
            steps=4,
            matched_steps=1,
            gt_steps=3,
            decisions=4,
            correct_decisions=1,
            reflections=3,
            correct_reflections=1,
            inference_seconds=2.0,
            input_tokens=2000,
            output_tokens=200,
            model="gpt-4o",
        ),
        TaskResult(
            "c",
            "error",
            "online",
            app="clock",
            reason="device lost",
            input_tokens=500,
            output_tokens=0,
            model="gpt-4o",
        ),
        TaskResult(
            "d",
            "success",
            "online",
            terminated=True,
            instruction="alarm at seven",
            app="clock",
            labels=Labels("tool_assistance", ("compound",)),
            steps=2,
            decisions=0,
            inference_seconds=1.0,
            verification=(Verdict("rule", True, "ok"), Verdict("vlm", False, "no alarm")),
            model="gpt-4o",
        ),
    ]


def test_group_metrics_by_hand():
    overrides = {"d": HumanVerdict(False, "the alarm is for 19:00")}
    m = group_metrics(hand_results(), overrides, PRICES)
    assert (m.n, m.successes, m.errors) == (3, 1, 1)  # a, b, d evaluated; d overridden
    assert m.sr == pytest.approx(1 / 3)
    assert m.cr == pytest.approx((1 + 1 / 3) / 2)  # d has no graph
    assert m.da == pytest.approx(4 / 7)
    assert m.ra == pytest.approx(3 / 5)
    assert m.ail == pytest.approx(6.0 / 9)
    assert m.steps == 9 and m.mean_steps == 3
    # tokens of every task count, errors too: 3500 in, 300 out
    assert (m.input_tokens, m.output_tokens) == (3500, 300)
    assert m.cost == pytest.approx((3500 * 2.5 + 300 * 10) / 1e6)
    assert (m.sr_low, m.sr_high) == pytest.approx(wilson_interval(1, 3))


def test_without_overrides_the_judges_decide():
    m = group_metrics(hand_results())
    assert m.sr == pytest.approx(2 / 3) and m.cost is None


def test_a_human_verdict_overrides_verification_not_termination():
    # c lost its device before it said done: no human verdict makes it evaluated
    m = group_metrics(hand_results(), {"c": HumanVerdict(True)})
    assert (m.n, m.successes, m.errors) == (3, 2, 1)
    never_done = TaskResult("e", "failure", "online", reason="did not say done")
    assert group_metrics([never_done], {"e": HumanVerdict(True)}).successes == 0
    # a terminated episode whose judge failed is an error until a human decides it
    judged = TaskResult(
        "f",
        "error",
        "online",
        terminated=True,
        error_kind="judge",
        verification=(Verdict("vlm", None, "error: no verdict", error=True),),
    )
    m = group_metrics([*hand_results(), judged])
    assert (m.errors, m.judge_errors) == (2, 1)
    assert m.sr_line == (
        "SR 66.7% (2 of 3 evaluated; 1 judge error excluded; 1 other error excluded)"
        " · SR with errors as failures 40.0% (2 of 5)"
    )
    decided = group_metrics([*hand_results(), judged], {"f": HumanVerdict(True)})
    assert (decided.n, decided.successes, decided.judge_errors) == (4, 3, 0)


def test_judge_calibration_kappa_confusion_and_review_queue():
    # 10 tasks with a human verdict: vlm passes 6 (5 right), fails 4 (3 right)
    # confusion [[5, 1], [1, 3]]; p_o = 0.8, p_e = 0.6*0.6 + 0.4*0.4 = 0.52,
    # kappa = (0.8 - 0.52) / 0.48 = 0.5833
    pairs = [(True, True)] * 5 + [(True, False), (False, True)] + [(False, False)] * 3
    results = [
        TaskResult(
            f"t{i}",
            "success" if j else "failure",
            "online",
            terminated=True,
            verification=(Verdict("vlm", j, f"saw {i}"),),
        )
        for i, (j, _) in enumerate(pairs)
    ]
    overrides = {f"t{i}": HumanVerdict(h) for i, (_, h) in enumerate(pairs)}
    vlm = judge_agreement(results, overrides)["vlm"]
    assert vlm.to_json()["confusion"] == {
        "both_pass": 5,
        "judge_pass_human_fail": 1,
        "judge_fail_human_pass": 1,
        "both_fail": 3,
    }
    assert (vlm.n, vlm.agree, vlm.rate) == (10, 8, 0.8)
    assert vlm.kappa == pytest.approx(0.28 / 0.48)
    queue = judge_disagreements(results, overrides)
    assert [(d.task_id, d.judge_passed, d.human_success, d.reason) for d in queue] == [
        ("t5", True, False, "saw 5"),
        ("t6", False, True, "saw 6"),
    ]
    # a judge that always passes, against humans who always agree: kappa is undefined
    same = judge_agreement(results[:5], overrides)["vlm"]
    assert same.rate == 1.0 and same.kappa is None
    # a judge that could not answer is left out of its calibration
    errored = TaskResult(
        "x",
        "error",
        "online",
        terminated=True,
        error_kind="judge",
        verification=(Verdict("vlm", None, "error: down", error=True),),
    )
    assert judge_agreement([errored], {"x": HumanVerdict(True)}) == {}


def test_unpriced_models_make_cost_unknown():
    results = hand_results()
    results[0] = TaskResult("a", "success", "offline", input_tokens=10, model="mystery")
    m = group_metrics(results, {}, PRICES)
    assert m.cost is None and m.unpriced_models == ("mystery",)
    assert PRICES.cost(None, 0, 0) == 0.0


def test_breakdowns_count_a_task_in_each_of_its_labels():
    groups = breakdowns(hand_results(), {}, PRICES)
    assert set(groups) == {"protocol", "app", "scenario", "syntax", "semantics"}
    assert groups["syntax"]["compound"].n == 2 and groups["syntax"]["compound"].sr == 1.0
    assert groups["syntax"]["narrative"].sr == 0.0
    assert groups["protocol"]["online"].errors == 1
    assert groups["app"]["clock"].n == 1


def test_judge_agreement_with_humans():
    results = hand_results()
    agreement = judge_agreement(results, {"d": HumanVerdict(False)})
    assert (agreement["rule"].n, agreement["rule"].agree) == (1, 0)
    assert (agreement["vlm"].n, agreement["vlm"].agree) == (1, 1)
    assert agreement["combined"].rate == 1.0


# --------------------------------------------------------------------------- statistics


def test_mcnemar_exact_by_hand():
    assert mcnemar_exact(1, 5) == pytest.approx(2 * (1 + 6) / 64)  # 0.21875
    assert mcnemar_exact(5, 1) == mcnemar_exact(1, 5)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 9) == pytest.approx(2 / 2**9)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_compare_runs_pairs_tasks_and_applies_the_hand_case():
    def runs(outcomes: str) -> list[TaskResult]:
        return [
            TaskResult(f"t{i}", "success" if o == "1" else "failure", "offline")
            for i, o in enumerate(outcomes)
        ]

    # 8 tasks: A only wins t0; B only wins t1..t5; both win t6; both fail t7
    a, b = runs("10000010"), runs("01111110")
    b.append(TaskResult("extra", "success", "offline"))  # not paired
    comparison = compare_runs(a, b, seed=3)
    assert comparison.pairs == 8 and (comparison.only_a, comparison.only_b) == (1, 5)
    assert comparison.mcnemar_p == pytest.approx(0.21875)
    assert comparison.ci.difference == pytest.approx(2 / 8 - 6 / 8)
    assert comparison.ci.low <= -0.5 <= comparison.ci.high
    assert compare_runs(a, b, seed=3).ci == comparison.ci  # seeded


def test_bootstrap_degenerate_and_exact_cases():
    ci = paired_bootstrap_ci([True] * 5, [False] * 5, resamples=500)
    assert (ci.difference, ci.low, ci.high) == (1.0, 1.0, 1.0)
    # two pairs with differences (1, 0): resampled means are 0, .5, 1 with p .25, .5, .25
    ci = paired_bootstrap_ci([True, False], [False, False], resamples=4000, seed=1)
    assert (ci.low, ci.high) == (0.0, 1.0) and ci.difference == 0.5
    with pytest.raises(ValueError):
        paired_bootstrap_ci([True], [True, False])


def test_point_biserial_by_hand():
    c = point_biserial([True, True, False, False], [4, 3, 2, 1])
    assert c.r == pytest.approx(2 / math.sqrt(5))
    t = c.r * math.sqrt(2 / (1 - c.r**2))
    assert c.p_value == pytest.approx(1 - t / math.sqrt(t * t + 2))  # t with 2 df
    assert point_biserial([True, True, True], [1, 2, 3]) is None


def test_p_values_agree_with_scipy():
    for r, n in [(0.3, 20), (-0.6, 10), (0.05, 249), (0.99, 5)]:
        t = r * math.sqrt((n - 2) / (1 - r * r))
        assert correlation_p_value(r, n) == pytest.approx(2 * stats.t.sf(abs(t), n - 2), rel=1e-9)
    assert regularized_beta(0.3, 2.5, 4.0) == pytest.approx(stats.beta.cdf(0.3, 2.5, 4.0))


def test_default_price_table_loads():
    table = load_prices()
    assert table.price("GPT-4o").input > 0


def test_a_bootstrap_interval_without_spread_is_marked_degenerate():
    same = [TaskResult(f"t{i}", "success", "offline") for i in range(4)]
    comparison = compare_runs(same, same, resamples=200).to_json()
    assert comparison["ci"]["low"] == comparison["ci"]["high"] == 0.0
    assert comparison["ci"]["degenerate"] is True
    mixed = [TaskResult(f"t{i}", "failure" if i else "success", "offline") for i in range(4)]
    assert compare_runs(mixed, same, resamples=200).to_json()["ci"]["degenerate"] is False
