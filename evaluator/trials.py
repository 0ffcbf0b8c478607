"""Repeated trials: the same run K times, and how much its outcome moves.

``elderbench eval --trials K --out OUT`` writes K ordinary run folders,
``OUT/trial-01`` ... ``OUT/trial-K``, then ``OUT/trials.json`` and ``OUT/trials.md`` with:

- the SR of every trial, their mean and a 95% Student-t interval across trials (marked
  degenerate with one trial, or when every trial gave the same SR);
- pass@k (the chance that at least one of k trials of a task succeeds) and pass^k (that all
  k do), for k = 1..K, with the unbiased estimators over each task's evaluated trials:
  ``pass@k = 1 - C(n-c, k) / C(n, k)`` and ``pass^k = C(c, k) / C(n, k)``, averaged over the
  tasks with at least k evaluated trials;
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


def summarize_trials(run_dirs: Sequence[Path]) -> dict[str, Any]:
    """Every number of trials.json for the trial folders ``run_dirs`` (in trial order)."""
    trials = [_outcomes(d) for d in run_dirs]
    srs: list[float | None] = []
    for t in trials:
        evaluated = [v for v in t.values() if v is not None]
        srs.append(sum(evaluated) / len(evaluated) if evaluated else None)
    known = [s for s in srs if s is not None]
    mean = sum(known) / len(known) if known else None
    interval: dict[str, Any] = {"low": None, "high": None, "degenerate": True}
    if mean is not None and len(known) >= 2:
        sd = math.sqrt(sum((s - mean) ** 2 for s in known) / (len(known) - 1))
        half = t_quantile(0.975, len(known) - 1) * sd / math.sqrt(len(known))
        interval = {
            "low": max(0.0, mean - half),
            "high": min(1.0, mean + half),
            "degenerate": sd == 0.0,
        }
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
    for k in range(1, k_max + 1):
        eligible = [c for c in per_task.values() if c["evaluated"] >= k]
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
        "mean_sr": mean,
        "sr_interval": interval,
        "pass_at_k": pass_at,
        "pass_hat_k": pass_hat,
        "tasks": per_task,
        "flipping_tasks": sorted(t for t, c in per_task.items() if c["flips"]),
    }


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def render_trials(summary: dict[str, Any]) -> str:
    """trials.md: the summary as Markdown."""
    interval = summary["sr_interval"]
    if interval["low"] is None:
        spread = "no interval (fewer than two trials with evaluated tasks)"
    else:
        spread = f"95% t-interval {_pct(interval['low'])}-{_pct(interval['high'])}"
        if interval["degenerate"]:
            spread += " (degenerate: every trial gave the same SR)"
    lines = [
        f"# Repeated trials ({len(summary['trials'])})",
        "",
        f"Mean SR {_pct(summary['mean_sr'])}; {spread}.",
        "",
        "| Trial | SR |",
        "|---|---|",
        *(f"| {i + 1} | {_pct(s)} |" for i, s in enumerate(summary["sr_per_trial"])),
        "",
        "| k | pass@k | pass^k |",
        "|---|---|---|",
        *(
            f"| {k} | {_pct(summary['pass_at_k'][k])} | {_pct(summary['pass_hat_k'][k])} |"
            for k in summary["pass_at_k"]
        ),
        "",
        f"{len(summary['flipping_tasks'])} of {len(summary['tasks'])} tasks changed outcome "
        "between trials.",
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
