"""Repeated trials: the same run K times, and how much its outcome moves.

``elderbench eval --trials K --out OUT`` writes K ordinary run folders,
``OUT/trial-01`` ... ``OUT/trial-K``, then ``OUT/trials.json`` and ``OUT/trials.md`` with:

- the SR of every trial with its count (successes of evaluated tasks, errors excluded)
  and its SR with errors counted as failures; their mean and a 95% Student-t interval
  across trials (marked degenerate with one trial, or when every trial gave the same SR;
  clipped to [0, 1] and then marked ``clipped``, its unclipped ends kept);
- pass@k (the chance that at least one of k trials of a task succeeds) and pass^k (that all
  k do), for k = 1..K, with the unbiased estimators over each task's evaluated trials:
  ``pass@k = 1 - C(n-c, k) / C(n, k)`` and ``pass^k = C(c, k) / C(n, k)``, averaged over the
  tasks with at least k evaluated trials (how many: ``pass_k_tasks``);
- per task: successes, evaluated trials and flips (how often its outcome changed from one
  trial to the next).

Errors are left out of each trial as they are from SR; human verdicts of each trial apply.

>>> round(pass_at_k(5, 2, 3), 3), round(pass_hat_k(5, 2, 2), 3)
(0.9, 0.1)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluator.metrics import effective_status
from evaluator.records import TaskStatus
from evaluator.run_store import RunStore
from evaluator.stats import regularized_beta

TRIAL_PREFIX = "trial-"


def trial_dir(out: Path, index: int) -> Path:
    """The run folder of trial ``index`` (1-based) under ``out``."""
    return Path(out) / f"{TRIAL_PREFIX}{index:02d}"


def trial_dirs(out: Path) -> list[Path]:
    return sorted(p for p in Path(out).glob(f"{TRIAL_PREFIX}*") if (p / "run.json").is_file())


def pass_at_k(n: int, c: int, k: int) -> float:
    """At least one success among k of n trials with c successes, drawn without replacement."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """All of k trials succeed, drawn without replacement from n trials with c successes."""
    return math.comb(c, k) / math.comb(n, k)


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile (p > 0.5) of Student's t with ``df`` degrees of freedom."""

    def cdf(t: float) -> float:
        return 1.0 - 0.5 * regularized_beta(df / (df + t * t), df / 2, 0.5)

    low, high = 0.0, 1.0
    while cdf(high) < p:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if cdf(mid) < p else (low, mid)
    return (low + high) / 2


def _outcomes(run_dir: Path) -> dict[str, bool | None]:
    """Per task of one trial: succeeded, failed, or None (an error: not evaluated)."""
    store = RunStore.open(run_dir)
    overrides = store.overrides()
    out: dict[str, bool | None] = {}
    for r in store.results():
        status = effective_status(r, overrides)
        out[r.task_id] = None if status is TaskStatus.ERROR else status is TaskStatus.SUCCESS
    return out


def _trial_counts(outcomes: dict[str, bool | None]) -> dict[str, Any]:
    """One trial's SR with its base: successes of evaluated tasks, errors apart, and the SR
    that counts the errors as failures."""
    evaluated = [v for v in outcomes.values() if v is not None]
    successes = sum(evaluated)
    return {
        "sr": successes / len(evaluated) if evaluated else None,
        "successes": successes,
        "evaluated": len(evaluated),
        "errors": len(outcomes) - len(evaluated),
        "sr_errors_as_failures": successes / len(outcomes) if outcomes else None,
    }


def _t_interval(known: list[float], mean: float | None) -> dict[str, Any]:
    """The 95% Student-t interval of the mean SR across trials. An SR lies in [0, 1], so
    the interval is clipped there; ``clipped`` says so and the unclipped ends are kept."""
    interval: dict[str, Any] = {
        "low": None,
        "high": None,
        "degenerate": True,
        "low_unclipped": None,
        "high_unclipped": None,
        "clipped": False,
    }
    if mean is None or len(known) < 2:
        return interval
    sd = math.sqrt(sum((s - mean) ** 2 for s in known) / (len(known) - 1))
    half = t_quantile(0.975, len(known) - 1) * sd / math.sqrt(len(known))
    low, high = mean - half, mean + half
    return {
        "low": max(0.0, low),
        "high": min(1.0, high),
        "degenerate": sd == 0.0,
        "low_unclipped": low,
        "high_unclipped": high,
        "clipped": low < 0.0 or high > 1.0,
    }


def summarize_trials(run_dirs: Sequence[Path]) -> dict[str, Any]:
    """Every number of trials.json for the trial folders ``run_dirs`` (in trial order)."""
    trials = [_outcomes(d) for d in run_dirs]
    per_trial = [_trial_counts(t) for t in trials]
    srs: list[float | None] = [c["sr"] for c in per_trial]
    known = [s for s in srs if s is not None]
    mean = sum(known) / len(known) if known else None
    tasks = sorted({t for trial in trials for t in trial})
    per_task: dict[str, dict[str, int]] = {}
    for task in tasks:
        seq = [v for trial in trials if (v := trial.get(task)) is not None]
        per_task[task] = {
            "evaluated": len(seq),
            "successes": sum(seq),
            "flips": sum(1 for a, b in zip(seq, seq[1:], strict=False) if a != b),
        }
    k_max = len(trials)
    pass_at: dict[str, float | None] = {}
    pass_hat: dict[str, float | None] = {}
    pass_tasks: dict[str, int] = {}
    for k in range(1, k_max + 1):
        eligible = [c for c in per_task.values() if c["evaluated"] >= k]
        pass_tasks[str(k)] = len(eligible)
        pass_at[str(k)] = (
            sum(pass_at_k(c["evaluated"], c["successes"], k) for c in eligible) / len(eligible)
            if eligible
            else None
        )
        pass_hat[str(k)] = (
            sum(pass_hat_k(c["evaluated"], c["successes"], k) for c in eligible) / len(eligible)
            if eligible
            else None
        )
    return {
        "trials": [str(d) for d in run_dirs],
        "sr_per_trial": srs,
        "per_trial": per_trial,
        "mean_sr": mean,
        "mean_sr_trials": len(known),  # the trials with an SR (some evaluated task)
        "sr_interval": _t_interval(known, mean),
        "pass_at_k": pass_at,
        "pass_hat_k": pass_hat,
        "pass_k_tasks": pass_tasks,  # k -> the tasks with at least k evaluated trials
        "tasks": per_task,
        "flipping_tasks": sorted(t for t, c in per_task.items() if c["flips"]),
    }


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _spread(interval: dict[str, Any]) -> str:
    if interval["low"] is None:
        return "no interval (fewer than two trials with evaluated tasks)"
    spread = f"95% t-interval {_pct(interval['low'])}-{_pct(interval['high'])}"
    if interval["clipped"]:
        spread += (
            f" (clipped to 0-100%; the t formula gives {_pct(interval['low_unclipped'])}"
            f" to {_pct(interval['high_unclipped'])}, outside the range an SR can take)"
        )
    if interval["degenerate"]:
        spread += " (degenerate: every trial gave the same SR)"
    return spread


def _trial_row(index: int, c: dict[str, Any]) -> str:
    total = c["evaluated"] + c["errors"]
    errors = (
        f"; {c['errors']} error{'s' if c['errors'] != 1 else ''} excluded" if c["errors"] else ""
    )
    return (
        f"| {index} | {_pct(c['sr'])} ({c['successes']} of {c['evaluated']} evaluated{errors}) "
        f"| {_pct(c['sr_errors_as_failures'])} ({c['successes']} of {total}) |"
    )


def render_trials(summary: dict[str, Any]) -> str:
    """trials.md: the summary as Markdown. Every rate says what it counts."""
    n_tasks = len(summary["tasks"])
    pass_tasks = summary["pass_k_tasks"]
    short = [k for k, n in pass_tasks.items() if n < n_tasks]
    lines = [
        f"# Repeated trials ({len(summary['trials'])})",
        "",
        f"Mean SR {_pct(summary['mean_sr'])}: the mean of the SRs of "
        f"{summary['mean_sr_trials']} trials, each over its own evaluated tasks; "
        f"{_spread(summary['sr_interval'])}.",
        "",
        "| Trial | SR (successes of evaluated tasks) | SR with errors as failures |",
        "|---|---|---|",
        *(_trial_row(i + 1, c) for i, c in enumerate(summary["per_trial"])),
        "",
        f"pass@k and pass^k average over the tasks with at least k evaluated trials "
        f"(of {n_tasks} tasks)"
        + (
            f"; for k = {', '.join(short)} some tasks have fewer, and are left out."
            if short
            else "."
        ),
        "",
        "| k | Tasks | pass@k | pass^k |",
        "|---|---|---|---|",
        *(
            f"| {k} | {pass_tasks[k]} of {n_tasks} | {_pct(summary['pass_at_k'][k])} "
            f"| {_pct(summary['pass_hat_k'][k])} |"
            for k in summary["pass_at_k"]
        ),
        "",
        f"{len(summary['flipping_tasks'])} of {n_tasks} tasks changed outcome between trials.",
        "",
        "| Task | Successes | Evaluated trials | Flips |",
        "|---|---|---|---|",
        *(
            f"| {t} | {c['successes']} | {c['evaluated']} | {c['flips']} |"
            for t, c in summary["tasks"].items()
        ),
        "",
    ]
    return "\n".join(lines)


def write_trials(out: Path) -> dict[str, Any]:
    """Summarize the trial folders under ``out`` into trials.json and trials.md."""
    from graph_builder.io import atomic_write_bytes, atomic_write_json

    summary = summarize_trials(trial_dirs(out))
    atomic_write_json(Path(out) / "trials.json", summary)
    atomic_write_bytes(Path(out) / "trials.md", render_trials(summary).encode("utf-8"))
    return summary
