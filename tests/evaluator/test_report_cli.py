"""Reports and the eval/report commands."""

from __future__ import annotations

import json

import pytest
from lxml import etree

from elderbench.cli import main
from evaluator.plots import svg_text
from evaluator.records import TaskResult
from evaluator.report import CHART_DIMENSIONS, write_report
from evaluator.run_figures import sr_by_label
from evaluator.run_store import FailureTag, HumanVerdict, RunStore
from evaluator.run_summary import Counts, summarize
from evaluator.runner import RunConfig, run_suite


@pytest.fixture
def two_runs(synthetic, tmp_path):
    normalized, original = tmp_path / "normalized", tmp_path / "original"
    run_suite(
        RunConfig(suite=synthetic.suite, out=normalized, agent="heuristic", variant="normalized")
    )
    run_suite(RunConfig(suite=synthetic.suite, out=original, agent="heuristic"))
    return normalized, original


def test_report_files_with_charts_tables_and_comparison(two_runs):
    normalized, original = two_runs
    store = RunStore.open(original)
    store.add_tag("task001", FailureTag("intent_understanding", 0, "literal reading"))
    store.set_override("task002", HumanVerdict(True, "counted by hand"))
    md, page = write_report(original, compare=normalized)
    text = md.read_text()
    assert "# Evaluation report: heuristic (no model) on suite" in text
    assert "## Paired comparison" in text and "McNemar exact p" in text
    # The two runs side by side, as the README shows them.
    summary = summarize(original, compare=normalized)
    assert summary.comparison is not None
    this, other = summary.comparison["side_by_side"]
    assert this["n"] == summary.counts.tasks - summary.counts.error
    assert "| On the 10 tasks both evaluated | Original | Normalized |" in text
    assert f"| SR (95% CI) | {100 * this['sr']:.1f}% (" in text
    assert f"{other['successes']} of {other['n']} |" in text
    assert "| task002 | success (human) |" in text
    assert "Intent understanding / capability boundary" in text
    for name in ("sr_by_label", "latency_vs_sr", "failure_shares"):
        svg = etree.fromstring((original / f"report_{name}.svg").read_bytes())
        assert svg.tag.endswith("svg") and len(svg) > 2
        assert f"report_{name}.svg" in text
    html = page.read_text()
    assert html.count("<svg") == 3 and "<table>" in html
    etree.fromstring(html.encode(), etree.HTMLParser())
    # the figure is the one `elderbench figures` draws of the two runs, inline in the page
    runs = [("heuristic (original)", summary.to_json())]
    runs.append(("heuristic (normalized)", summarize(normalized).to_json()))
    same = svg_text(sr_by_label(runs, CHART_DIMENSIONS))
    assert (original / "report_sr_by_label.svg").read_text() == same
    assert same[same.index("<svg") :] in html
    assert "SR of the evaluated tasks carrying each label (successes over n" in text


def test_summary_numbers(two_runs):
    normalized, original = two_runs
    summary = summarize(original, compare=normalized)
    assert summary.counts == Counts(
        tasks=10,
        success=0,
        failure=10,
        error=0,
        overridden=0,
        judge_errors=0,
        dirty_starts=0,
        user_simulator_errors=0,
        unreadable_lines=0,
    )
    assert summary.sr_line == "SR 0.0% (0 of 10 evaluated)"
    comparison = summary.comparison
    assert comparison["pairs"] == 10 and comparison["only_b"] == 10
    assert comparison["mcnemar_p"] == pytest.approx(2 / 2**10)
    assert comparison["sr_difference"] == -1.0
    assert set(summary.breakdowns) == {"protocol", "app", "scenario", "syntax", "semantics"}
    data = summary.to_json()  # what report --json prints
    assert data["counts"]["failure"] == 10 and data["tokens"] == {
        "input": 0,
        "output": 0,
        "judge_input": 0,
        "judge_output": 0,
        "user_input": 0,
        "user_output": 0,
    }
    assert json.loads(json.dumps(data)) == data


def test_report_json_on_stdout(two_runs, capsys):
    normalized, original = two_runs
    assert main(["report", str(normalized), "--compare", str(original), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    for key in ("sr", "cr", "da", "ra", "ail", "cost", "counts", "errors", "comparison"):
        assert key in summary
    assert summary["sr"] == 1.0 and summary["comparison"]["sr_difference"] == 1.0
    assert (normalized / "report.html").exists()


def test_eval_command_refuses_to_overwrite_and_resumes(synthetic, tmp_path, capsys):
    out = tmp_path / "run"
    args = [
        "eval",
        "--suite",
        str(synthetic.suite),
        "--agent",
        "replay",
        "--demos",
        str(synthetic.demos),
        "--tasks",
        "task000",
        "task001",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    assert (out / "report.md").exists()
    assert main(args) == 1
    assert "--resume" in capsys.readouterr().err
    assert main([*args, "--resume"]) == 0
    assert "2 already finished" in capsys.readouterr().err
    info = json.loads((out / "run.json").read_text())
    assert info["agent"]["name"] == "replay" and info["config"]["tasks"] == ["task000", "task001"]
    assert info["versions"]["elderbench"]


def test_eval_command_reads_agent_config_files(synthetic, tmp_path, capsys):
    config = tmp_path / "agent.toml"
    config.write_text("seed = 3\np_done = 1.0\n")
    out = tmp_path / "run"
    assert (
        main(
            [
                "eval",
                "--suite",
                str(synthetic.suite),
                "--agent",
                "random",
                "--agent-config",
                str(config),
                "--tasks",
                "task000",
                "--out",
                str(out),
                "--mode",
                "tolerant",
            ]
        )
        == 0
    )
    assert json.loads((out / "run.json").read_text())["agent"]["config"]["p_done"] == 1.0
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    assert (
        main(
            [
                "eval",
                "--suite",
                str(synthetic.suite),
                "--agent",
                "random",
                "--agent-config",
                str(bad),
                "--out",
                str(tmp_path / "x"),
            ]
        )
        == 1
    )
    assert "not valid JSON" in capsys.readouterr().err


# ----------------------------------------------------------------- every rate names its base


def _hand_run(folder, rows):
    """A run folder of hand-made results: (task, status, protocol, steps, decisions,
    correct decisions, matched steps, ground-truth steps, error kind)."""
    store = RunStore.create(folder, {"agent": {"name": "hand"}, "config": {"variant": "original"}})
    for task, status, protocol, steps, decisions, correct, matched, gt, kind in rows:
        store.append_result(
            TaskResult(
                task,
                status,
                protocol,
                terminated=status != "error" or kind == "judge",
                steps=steps,
                decisions=decisions,
                correct_decisions=correct,
                matched_steps=matched,
                gt_steps=gt,
                error_kind=kind,
                reason="error" if status == "error" else None,
            )
        )
    return folder


# 3 offline tasks with a graph (o3 answered a question: 3 steps, 2 decisions), 3 online
# tasks without one, one offline error and one online judge error
MIXED = [
    ("o1", "success", "offline", 3, 3, 3, 3, 3, None),
    ("o2", "failure", "offline", 4, 4, 1, 1, 3, None),
    ("o3", "success", "offline", 3, 2, 2, 2, 2, None),
    ("n1", "success", "online", 2, 0, 0, None, None, None),
    ("n2", "failure", "online", 5, 0, 0, None, None, None),
    ("n3", "success", "online", 2, 0, 0, None, None, None),
    ("e1", "error", "offline", 0, 0, 0, None, None, None),
    ("e2", "error", "online", 2, 0, 0, None, None, "judge"),
]


def test_sr_cr_and_da_name_their_bases_in_a_suite_with_offline_and_online_tasks(tmp_path):
    """SR counts 6 evaluated tasks, CR and DA only the 3 offline ones with a graph; the
    overview says so in md, html and --json, and prints SR with errors as failures."""
    run = _hand_run(tmp_path / "mixed", MIXED)
    summary = summarize(run)
    bases = summary.bases
    assert bases["sr"] == {"successes": 4, "evaluated": 6, "errors": 2}
    assert bases["sr_errors_as_failures"] == {"value": 0.5, "successes": 4, "tasks": 8}
    assert bases["cr"] == {"tasks": 3, "by_protocol": {"offline": 3}}
    assert summary.cr == pytest.approx((1 + 1 / 3 + 1) / 3)
    assert bases["da"] == {
        "correct": 6,
        "decisions": 9,
        "tasks": 3,
        "by_protocol": {"offline": 3},
        "unscored_steps": 19 - 9,  # the answer step of o3 and every online step
    }
    line = (
        "SR 66.7% (4 of 6 evaluated; 1 judge error excluded; 1 other error excluded)"
        " · SR with errors as failures 50.0% (4 of 8)"
    )
    assert summary.sr_line == line
    md, page = write_report(run)
    cells = ", 4 of 6 | 50.0% (4 of 8) | 77.8% over 3 offline tasks | 66.7% (6 of 9 decisions; 3"
    assert cells in md.read_text()
    assert "<td>50.0% (4 of 8)</td><td>77.8% over 3 offline tasks</td>" in page.read_text()
    for text in (md.read_text(), page.read_text()):
        assert line in text
        assert "CR only the 3 offline tasks with a graph, and DA the 9 decisions of 3 offline" in (
            text
        )
        assert "10 step(s) are not decisions (answer, ask user, give up" in text
    assert "| online | 3 | 1 | 66.7% (" in md.read_text()  # the breakdown keeps its own base
    data = summary.to_json()
    assert data["sr_errors_as_failures"] == 0.5 and data["bases"] == bases
    online = data["breakdowns"]["protocol"]["online"]
    assert (online["cr_tasks"], online["da_tasks"], online["decisions"]) == ({}, {}, 0)


def test_a_comparison_gives_each_run_one_sr_on_one_stated_base(tmp_path, capsys):
    """Both tables of a comparison count the tasks both runs evaluated; each run's own
    SR and the errors left out of the pairs are named."""
    this = _hand_run(tmp_path / "a", MIXED)
    other_rows = [
        ("o2", "error", "offline", 1, 0, 0, None, None, None) if r[0] == "o2" else r
        for r in MIXED
        if r[0] not in ("e1", "e2")
    ]
    other_rows += [
        ("e1", "success", "offline", 2, 2, 2, 2, 2, None),
        ("e2", "failure", "online", 2, 0, 0, None, None, None),
    ]
    other = _hand_run(tmp_path / "b", other_rows)
    summary = summarize(this, compare=other)
    comparison = summary.comparison
    assert comparison["pairs"] == 5  # o1, o3, n1, n2, n3
    mine, theirs = comparison["side_by_side"]
    assert mine["sr"] == comparison["sr_a"] == pytest.approx(4 / 5)
    assert theirs["sr"] == comparison["sr_b"] == pytest.approx(4 / 5)
    assert (mine["n"], theirs["n"]) == (5, 5)
    assert comparison["left_out"] == {
        "errors_a": ["e1", "e2"],
        "errors_b": ["o2"],
        "missing_a": [],
        "missing_b": [],
    }
    md, _ = write_report(this, compare=other)
    text = md.read_text()
    assert "| On the 5 tasks both evaluated | This run | Other run |" in text
    assert "| SR (95% CI) | 80.0% (" in text and "4 of 5 | 80.0% (" in text
    assert "errors of this run: 2 (e1, e2); errors of the other run: 1 (o2)" in text
    assert f"this run {summary.sr_line}" in text
    assert "the other run SR 71.4% (5 of 7 evaluated; 1 other error excluded) · SR with" in text
    assert "| SR this run (5 tasks) | SR other (5 tasks) |" in text
    assert main(["report", str(this), "--compare", str(other), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["comparison"]["side_by_side"][0]["sr"] == printed["comparison"]["sr_a"]
