"""Offline evaluation speed: the evaluator's own time per step, and a 100-task replay run.

    .venv/bin/python benchmarks/bench_offline.py [--tasks 100] [--repeats 3]
    .venv/bin/python benchmarks/bench_offline.py --scaling 1000 4000 [--repeats 1]

Targets: evaluator overhead per offline step (everything between two agent calls:
matching, scoring, the trace line, the live-view event) median <= 2 ms; a 100-task
offline run with the replay agent under 10 s. ``--scaling`` runs suites of several sizes
and prints the time per task of each: the evaluator must stay linear (the same time per
task at 1,000 and at 10,000 tasks).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.agents import AGENTS  # noqa: E402
from evaluator.agents.base import AgentObservation, AgentStep  # noqa: E402
from evaluator.agents.replay import ReplayAgent  # noqa: E402
from evaluator.run_store import RunStore  # noqa: E402
from evaluator.runner import RunConfig, run_suite  # noqa: E402
from evaluator.synthetic import write_suite  # noqa: E402

_calls: list[tuple[float, float]] = []  # (entered, left) for every agent step


class TimedReplay(ReplayAgent):
    """The replay agent, noting when each of its steps starts and ends."""

    name = "timed_replay"

    def step(self, observation: AgentObservation) -> AgentStep:
        entered = time.perf_counter()
        step = super().step(observation)
        _calls.append((entered, time.perf_counter()))
        return step

    def reset(self, task: Any, variant: Any) -> None:
        _calls.append((float("nan"), float("nan")))  # a task boundary: no gap measured
        super().reset(task, variant)


def step_overheads() -> list[float]:
    """Seconds the evaluator spent between one agent step's end and the next one's start,
    within a task."""
    gaps = []
    for (_, left), (entered, _) in zip(_calls, _calls[1:], strict=False):
        if left == left and entered == entered:  # neither is a task boundary (NaN)
            gaps.append(entered - left)
    return gaps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scaling", type=int, nargs="+", metavar="N", help="suite sizes")
    args = parser.parse_args()
    AGENTS["timed_replay"] = TimedReplay
    if args.scaling:
        return scaling(args.scaling, args.repeats)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        write_suite(root / "suite", args.tasks, demos=root / "demos", size=(270, 600))
        print(
            f"synthetic suite of {args.tasks} tasks written in "
            f"{time.perf_counter() - started:.1f} s (not measured)"
        )
        run_times, overheads = [], []
        for i in range(args.repeats):
            _calls.clear()
            out = root / f"run{i}"
            started = time.perf_counter()
            run_suite(
                RunConfig(suite=root / "suite", out=out, agent="timed_replay", demos=root / "demos")
            )
            run_times.append(time.perf_counter() - started)
            results = RunStore.open(out).results()
            assert len(results) == args.tasks and all(r.success for r in results), "replay must win"
            overheads += step_overheads()
        steps = len(overheads) + args.tasks  # gaps exclude each task's first step
        print(
            f"steps measured: {len(overheads)} gaps over {args.repeats} runs "
            f"(~{steps // args.repeats} steps per run)"
        )
        print(
            "evaluator overhead per offline step: median "
            f"{1000 * statistics.median(overheads):.3f} ms"
            f" (p90 {1000 * statistics.quantiles(overheads, n=10)[-1]:.3f} ms; target <= 2 ms)"
        )
        print(
            f"{args.tasks}-task offline run with the replay agent: median "
            f"{statistics.median(run_times):.2f} s over {args.repeats} runs "
            f"(min {min(run_times):.2f} s; target < 10 s)"
        )
    return 0


def scaling(sizes: list[int], repeats: int) -> int:
    """Milliseconds per task of whole offline runs, for suites of each size."""
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_suite(root / "suite", size, demos=root / "demos", size=(270, 600))
            times = []
            for i in range(repeats):
                started = time.perf_counter()
                run_suite(
                    RunConfig(
                        suite=root / "suite",
                        out=root / f"run{i}",
                        agent="replay",
                        demos=root / "demos",
                    )
                )
                times.append(time.perf_counter() - started)
            run = statistics.median(times)
            print(f"{size:6d} tasks: median {run:.1f} s, {1000 * run / size:.2f} ms per task")
    return 0


if __name__ == "__main__":
    sys.exit(main())
