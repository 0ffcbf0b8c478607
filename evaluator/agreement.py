"""Offline against online on the same tasks (docs/evaluation.md, "Offline against online").

Pairs an offline run with an online run of the same agent and suite, task by task. Only
tasks present in both runs count, and a task that is an error in either run is left out
and counted. Per task and in total: both succeed, offline only, online only, both fail;
Cohen's kappa of the two verdicts (``stats.cohen_kappa``); and the offline false-negative
rate, online successes that failed offline over online successes, with a 95% Wilson
interval (``stats.wilson_interval``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.metrics import effective_status
from evaluator.records import TaskResult, TaskStatus
from evaluator.run_store import HumanVerdict
from evaluator.stats import cohen_kappa, wilson_interval

CELLS = ("both_succeed", "offline_only", "online_only", "both_fail")


@dataclass(frozen=True, slots=True)
class TaskPair:
    task_id: str
    offline: bool
    online: bool

    @property
    def cell(self) -> str:
        if self.offline and self.online:
            return "both_succeed"
        if self.offline:
            return "offline_only"
        return "online_only" if self.online else "both_fail"


@dataclass(frozen=True, slots=True)
class Agreement:
    pairs: tuple[TaskPair, ...]  # the paired tasks, errors excluded
    excluded_errors: tuple[str, ...]  # in both runs, but an error in one or both
    offline_only_tasks: tuple[str, ...]  # evaluated only in the offline run
    online_only_tasks: tuple[str, ...]

    def count(self, cell: str) -> int:
        return sum(p.cell == cell for p in self.pairs)

    @property
    def kappa(self) -> float | None:
        return cohen_kappa([p.offline for p in self.pairs], [p.online for p in self.pairs]).kappa

    @property
    def online_successes(self) -> int:
        return self.count("both_succeed") + self.count("online_only")

    @property
    def false_negative_rate(self) -> float | None:
        base = self.online_successes
        return self.count("online_only") / base if base else None

    @property
    def false_negative_ci(self) -> tuple[float, float] | None:
        base = self.online_successes
        return wilson_interval(self.count("online_only"), base) if base else None

    def to_json(self) -> dict[str, Any]:
        ci = self.false_negative_ci
        return {
            "paired_tasks": len(self.pairs),
            **{cell: self.count(cell) for cell in CELLS},
            "kappa": self.kappa,
            "observed_agreement": (
                (self.count("both_succeed") + self.count("both_fail")) / len(self.pairs)
                if self.pairs
                else None
            ),
            "false_negative_rate": self.false_negative_rate,
            "false_negative_ci": list(ci) if ci else None,
            "false_negative_base": self.online_successes,
            "per_task": [{"task_id": p.task_id, "cell": p.cell} for p in self.pairs],
            "excluded_errors": list(self.excluded_errors),
            "only_in_offline_run": list(self.offline_only_tasks),
            "only_in_online_run": list(self.online_only_tasks),
        }


def agreement(
    offline: Sequence[TaskResult],
    online: Sequence[TaskResult],
    offline_overrides: Mapping[str, HumanVerdict] | None = None,
    online_overrides: Mapping[str, HumanVerdict] | None = None,
) -> Agreement:
    """Pair the two runs' results by task id (human verdicts applied); only the offline
    run's offline results and the online run's online results are read."""
    off = {
        r.task_id: effective_status(r, offline_overrides or {})
        for r in offline
        if r.protocol == "offline"
    }
    on = {
        r.task_id: effective_status(r, online_overrides or {})
        for r in online
        if r.protocol == "online"
    }
    pairs: list[TaskPair] = []
    errors: list[str] = []
    for task_id in sorted(off.keys() & on.keys()):
        if TaskStatus.ERROR in (off[task_id], on[task_id]):
            errors.append(task_id)
            continue
        pairs.append(
            TaskPair(task_id, off[task_id] is TaskStatus.SUCCESS, on[task_id] is TaskStatus.SUCCESS)
        )
    return Agreement(
        tuple(pairs),
        tuple(errors),
        tuple(sorted(off.keys() - on.keys())),
        tuple(sorted(on.keys() - off.keys())),
    )
