"""Drift after an app update: walk a suite's demonstrated paths on a device and say, per
task, whether the app still behaves as the graph recorded it (docs/drift.md).

- ``check_suite(tasks, device, progress=)`` / ``check_task(...)`` -> ``TaskDrift``;
- ``demonstrated_paths(graph)``: the paths people demonstrated;
- ``evaluator.drift.sheet.write_sheet(out, results, ...)``: screenshots, ``drift.json``,
  ``drift.md`` and ``drift.html``.

Names load on first use, so ``elderbench --help`` (which imports this package's ``cli``)
does not pay for the evaluator.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_LAZY = {
    "DemonstratedPath": "evaluator.drift.paths",
    "demonstrated_paths": "evaluator.drift.paths",
    **dict.fromkeys(
        (
            "Drift",
            "DriftReason",
            "PathWalk",
            "TaskDrift",
            "TaskStatus",
            "check_suite",
            "check_task",
        ),
        "evaluator.drift.walk",
    ),
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'evaluator.drift' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
