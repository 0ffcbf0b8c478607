"""The executors a run can use, by name (``elderbench eval --executor``, the studio).

Each entry makes an ``evaluator.execution.Executor``; the modules are imported only when
one is chosen, so that listing the names (every CLI call) imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluator.execution import Executor


def _threads() -> Executor:
    from evaluator.farm.thread_executor import ThreadExecutor

    return ThreadExecutor()


def _ray() -> Executor:
    from evaluator.farm.ray_executor import RayExecutor

    return RayExecutor()


@dataclass(frozen=True, slots=True)
class ExecutorEntry:
    description: str  # what a picker shows
    make: Callable[[], Executor]
    needs_devices: bool  # runs online tasks only


EXECUTORS: dict[str, ExecutorEntry] = {
    "local": ExecutorEntry("worker threads on this computer", _threads, needs_devices=False),
    "ray": ExecutorEntry(
        "one Ray actor per device, on the host that holds it (pip install '.[farm]')",
        _ray,
        needs_devices=True,
    ),
}


def create_executor(name: str) -> Executor:
    """The executor registered as ``name``; KeyError for an unknown name (FarmSettings
    refuses those when a run is configured)."""
    return EXECUTORS[name].make()
