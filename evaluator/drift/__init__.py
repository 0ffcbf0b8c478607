"""Drift after an app update: walk a suite's demonstrated paths on a device and say, per
task, whether the app still behaves as the graph recorded it (docs/drift.md).

- ``check_suite(tasks, device, progress=)`` / ``check_task(...)`` -> ``TaskDrift``;
- ``demonstrated_paths(graph)``: the paths people demonstrated;
- ``write_sheet(out, results)``: screenshots, ``drift.json``, ``drift.md`` and ``drift.html``.
"""

from __future__ import annotations

from evaluator.drift.paths import DemonstratedPath, demonstrated_paths
from evaluator.drift.walk import (
    Drift,
    DriftReason,
    PathWalk,
    TaskDrift,
    TaskStatus,
    check_suite,
    check_task,
)

__all__ = [
    "DemonstratedPath",
    "Drift",
    "DriftReason",
    "PathWalk",
    "TaskDrift",
    "TaskStatus",
    "check_suite",
    "check_task",
    "demonstrated_paths",
]
