"""The sample suite's offline tasks evaluated four ways (heuristic and random agents, the
original and the normalized instruction), for the tests of what reads several runs
(``elderbench table``, ``elderbench figures``); tests/evaluator/conftest.py makes them once
per session as the ``sample_runs`` fixture."""

from __future__ import annotations

from pathlib import Path

from elderbench.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "task_graphs" / "sample"
RUNS = ("heuristic-original", "heuristic-normalized", "random-original", "random-normalized")


def evaluate_sample(root: Path) -> list[Path]:
    """One run folder under ``root`` per name of ``RUNS``, in that order."""
    out = []
    for name in RUNS:
        agent, variant = name.split("-")
        run = root / name
        argv = ["eval", "--suite", str(SAMPLE), "--protocol", "offline", "--agent", agent]
        assert main([*argv, "--instruction", variant, "--out", str(run), "--no-report"]) == 0
        out.append(run)
    return out
