"""Reports and the eval/report commands."""

from __future__ import annotations

import json

import pytest
from lxml import etree

from elderbench.cli import main
from evaluator.report import write_report
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
    assert "|  | Original | Normalized |" in text
    assert f"| SR (95% CI) | {100 * this['sr']:.1f}% (" in text
    assert f"{other['successes']} of {other['n']} |" in text
    assert "| task002 | success (human) |" in text
    assert "Intent understanding / capability boundary" in text
    for name in (
        "sr_by_scenario",
        "sr_by_syntax",
        "sr_by_semantics",
        "latency_vs_sr",
        "failure_analysis",
    ):
        svg = etree.fromstring((original / f"report_{name}.svg").read_bytes())
        assert svg.tag.endswith("svg") and len(svg) > 2
        assert f"report_{name}.svg" in text
    html = page.read_text()
    assert html.count("<svg") == 6 and "<table>" in html
    etree.fromstring(html.encode(), etree.HTMLParser())


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
        unreadable_lines=0,
    )
    assert summary.sr_line == "SR 0.0% of 10"
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
