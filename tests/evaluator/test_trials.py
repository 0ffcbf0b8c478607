"""Repeated trials computed by hand, and --trials end to end."""

from __future__ import annotations

import json

import pytest

from elderbench.cli import main as elderbench_main
from evaluator.records import TaskResult
from evaluator.run_store import HumanVerdict, RunStore
from evaluator.trials import (
    pass_at_k,
    pass_hat_k,
    summarize_trials,
    t_quantile,
    trial_dir,
    write_trials,
)


def trials(tmp_path, table: dict[str, str]):
    """One run folder per column: 's' success, 'f' failure, 'e' error."""
    k = len(next(iter(table.values())))
    dirs = []
    for i in range(k):
        store = RunStore.create(trial_dir(tmp_path, i + 1), {"agent": {"name": "x"}})
        for task, row in table.items():
            status = {"s": "success", "f": "failure", "e": "error"}[row[i]]
            store.append_result(TaskResult(task, status, "offline", terminated=True))
        dirs.append(store.run_dir)
    return dirs


def test_pass_at_k_and_pass_hat_k_by_hand():
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at_k(3, 1, 2) == pytest.approx(2 / 3)  # 1 - C(2,2)/C(3,2)
    assert pass_at_k(3, 0, 3) == 0.0 and pass_at_k(3, 1, 3) == 1.0
    assert pass_hat_k(3, 2, 2) == pytest.approx(1 / 3)  # C(2,2)/C(3,2)
    assert pass_hat_k(3, 3, 3) == 1.0 and pass_hat_k(3, 2, 3) == 0.0
    assert t_quantile(0.975, 2) == pytest.approx(4.302653, abs=1e-5)
    assert t_quantile(0.975, 30) == pytest.approx(2.042272, abs=1e-5)


def test_three_trials_by_hand(tmp_path):
    # a: s s s   b: s f s (2 flips)   c: f f f   d: s e f (the error is left out: 1 flip)
    dirs = trials(tmp_path, {"a": "sss", "b": "sfs", "c": "fff", "d": "sef"})
    summary = summarize_trials(dirs)
    assert summary["sr_per_trial"] == pytest.approx([3 / 4, 1 / 3, 1 / 2])
    mean = (3 / 4 + 1 / 3 + 1 / 2) / 3
    assert summary["mean_sr"] == pytest.approx(mean)
    sd = (sum((x - mean) ** 2 for x in (3 / 4, 1 / 3, 1 / 2)) / 2) ** 0.5
    half = 4.302653 * sd / 3**0.5
    assert summary["sr_interval"]["low"] == pytest.approx(max(0.0, mean - half), abs=1e-5)
    assert summary["sr_interval"]["high"] == pytest.approx(min(1.0, mean + half), abs=1e-5)
    assert not summary["sr_interval"]["degenerate"]
    assert summary["tasks"]["b"] == {"evaluated": 3, "successes": 2, "flips": 2}
    assert summary["tasks"]["d"] == {"evaluated": 2, "successes": 1, "flips": 1}
    assert summary["flipping_tasks"] == ["b", "d"]
    # pass@1 = mean of c/n: (1 + 2/3 + 0 + 1/2) / 4; pass^3 only over a, b, c: (1 + 0 + 0) / 3
    assert summary["pass_at_k"]["1"] == pytest.approx((1 + 2 / 3 + 0 + 1 / 2) / 4)
    assert summary["pass_at_k"]["3"] == pytest.approx((1 + 1 + 0) / 3)
    assert summary["pass_hat_k"]["3"] == pytest.approx(1 / 3)
    # a human verdict of one trial applies to that trial
    RunStore.open(dirs[1]).set_override("b", HumanVerdict(True))
    assert summarize_trials(dirs)["tasks"]["b"]["flips"] == 0


def test_identical_trials_have_a_degenerate_interval(tmp_path):
    summary = summarize_trials(trials(tmp_path, {"a": "ss", "b": "ff"}))
    interval = summary["sr_interval"]
    assert (interval["low"], interval["high"], interval["degenerate"]) == (0.5, 0.5, True)
    assert interval["clipped"] is False
    one = summarize_trials(trials(tmp_path / "one", {"a": "s"}))
    interval = one["sr_interval"]
    assert (interval["low"], interval["high"], interval["degenerate"]) == (None, None, True)


def test_trials_md_names_every_base_and_says_when_the_interval_is_clipped(tmp_path):
    """Each trial's SR with its count (2 of 5 after an error) and with errors as failures,
    pass@k with the number of tasks it averages over, and a clipped t-interval said so."""
    dirs = trials(
        tmp_path,
        {"a": "fsff", "b": "fsff", "c": "feff", "d": "ffff", "e": "ffff", "f": "ffff"},
    )
    summary = summarize_trials(dirs)
    assert summary["per_trial"][1] == {
        "sr": 0.4,
        "successes": 2,
        "evaluated": 5,
        "errors": 1,
        "sr_errors_as_failures": 2 / 6,
    }
    assert summary["pass_k_tasks"] == {"1": 6, "2": 6, "3": 6, "4": 5}
    # trial SRs 0, .4, 0, 0: mean .1, sd .2; the t formula reaches below 0
    low = 0.1 - t_quantile(0.975, 3) * 0.2 / 2
    interval = summary["sr_interval"]
    assert interval["low_unclipped"] == pytest.approx(low) and low < 0
    assert interval["low"] == 0.0 and interval["clipped"] is True
    write_trials(tmp_path)
    text = (tmp_path / "trials.md").read_text()
    assert "| 2 | 40.0% (2 of 5 evaluated; 1 error excluded) | 33.3% (2 of 6) |" in text
    assert "| 1 | 0.0% (0 of 6 evaluated) | 0.0% (0 of 6) |" in text
    assert "| 4 | 5 of 6 |" in text and "| 3 | 6 of 6 |" in text
    assert f"clipped to 0-100%; the t formula gives {100 * low:.1f}% to " in text
    assert "the mean of the SRs of 4 trials" in text


def test_trials_from_the_command_line(synthetic, tmp_path):
    out = tmp_path / "trials"
    argv = ["eval", "--suite", str(synthetic.suite), "--agent", "random", "--out", str(out)]
    assert elderbench_main([*argv, "--trials", "3", "--max-steps", "3", "--no-report"]) == 0
    assert [p.name for p in sorted(out.glob("trial-*"))] == ["trial-01", "trial-02", "trial-03"]
    summary = json.loads((out / "trials.json").read_text())
    assert len(summary["sr_per_trial"]) == 3 and len(summary["tasks"]) == 10
    # the random agent is seeded per task: the same run three times, no flips
    assert summary["flipping_tasks"] == [] and summary["sr_interval"]["degenerate"]
    assert "Repeated trials (3)" in (out / "trials.md").read_text()
