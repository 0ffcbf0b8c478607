"""Repeated trials computed by hand, and --trials end to end."""

from __future__ import annotations

import json

import pytest

from elderbench.cli import main as elderbench_main
from evaluator.records import TaskResult
from evaluator.run_store import HumanVerdict, RunStore
from evaluator.trials import pass_at_k, pass_hat_k, summarize_trials, t_quantile, trial_dir


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
    assert summary["sr_interval"] == {"low": 0.5, "high": 0.5, "degenerate": True}
    one = summarize_trials(trials(tmp_path / "one", {"a": "s"}))
    assert one["sr_interval"] == {"low": None, "high": None, "degenerate": True}


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
