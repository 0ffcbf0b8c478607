"""Drift detection speed: ``drift`` over the whole sample suite on one virtual phone.

    .venv/bin/python benchmarks/bench_drift.py [--repeats 3] [--app-version PACKAGE=VERSION ...]

Walks every demonstrated path of every sample task that has a graph (version 1 of the
apps unless ``--app-version`` says otherwise), through real adbutils, on a fast virtual
phone in this process. A step is one action performed on the phone; the time includes
each path's clean start (snapshot load, reset recipe), every screen check and the
actions. Target: median >= 3 steps per second (wall clock). Also checks the verdicts: on
version 1 every task must come out unchanged.

The phone and the walker share this one process, so its CPU time is printed too: steps
per CPU-second is the rate the walk reaches when it has a core to itself, which the wall
clock rate falls below on a machine busy with other work (the load average is printed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devices.android import AndroidDevice, adb_client  # noqa: E402
from evaluator.drift import TaskStatus, check_suite  # noqa: E402
from graph_builder.io import GRAPH_FILE, load_task, suite_task_dirs  # noqa: E402
from virtual_phone import fast_phone, running_server  # noqa: E402

SUITE = Path(__file__).resolve().parents[1] / "task_graphs" / "sample"
TARGET = 3.0


def one_sweep(versions: dict[str, int]) -> tuple[int, float, float, int]:
    """(steps, seconds, CPU seconds, tasks drifted) of one whole-suite drift check on a
    fresh phone."""
    tasks = [(load_task(d), d) for d in suite_task_dirs(SUITE) if (d / GRAPH_FILE).is_file()]
    with running_server([fast_phone("virtual-1", app_versions=versions)]) as server:
        device = AndroidDevice("virtual-1", client=adb_client(port=server.port))
        began, cpu = time.perf_counter(), time.process_time()
        results = check_suite(tasks, device)
        seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
    errors = [r for r in results if r.status is TaskStatus.ERROR]
    if errors:
        raise SystemExit(f"not checked: {[(r.task_id, r.error) for r in errors]}")
    drifted = sum(1 for r in results if r.status is TaskStatus.DRIFTED)
    return sum(r.steps for r in results), seconds, cpu, drifted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--app-version", action="append", default=[], metavar="PACKAGE=VERSION")
    args = parser.parse_args()
    versions = {p: int(v) for p, _, v in (item.partition("=") for item in args.app_version)}
    rates, cpu_rates = [], []
    for run in range(1, args.repeats + 1):
        steps, seconds, cpu, drifted = one_sweep(versions)
        rates.append(steps / seconds)
        cpu_rates.append(steps / cpu)
        print(
            f"run {run}: {steps} steps in {seconds:.1f} s = {steps / seconds:.2f} steps/s "
            f"({steps / cpu:.2f} per CPU-second), {drifted} tasks drifted, "
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        if not versions and drifted:
            print("FAIL: version 1 must leave every task unchanged")
            return 1
    median = statistics.median(rates)
    verdict = "ok" if median >= TARGET else "BELOW TARGET"
    print(
        f"median {median:.2f} steps/s (target >= {TARGET:.0f}): {verdict}; "
        f"median {statistics.median(cpu_rates):.2f} steps per CPU-second"
    )
    return 0 if median >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
