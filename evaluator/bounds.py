"""The SR bounds that audit marks imply (docs/evaluation.md, "Bounds from audit marks").

An offline episode is *undetermined* when it failed, no human verdict decided it, and the
first step where it left the graph (an action that matched no edge; an earlier parse
failure or invalid action leaves first, and the episode is not undetermined) falls in an
audit group marked ``valid``: the agent took a sensible way the graph does not know, so
the graph cannot say how the episode would have ended. The strict SR counts it as a
failure; the upper bound counts it as a success. Nothing else changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.audit_groups import MarkFinder, is_unmatched
from evaluator.audit_marks import MarksError, Verdict
from evaluator.metrics import effective_status
from evaluator.records import StepRecord, TaskResult, TaskStatus
from evaluator.run_store import HumanVerdict, RunStore

_LEAVES = ("parse_error", "invalid_action")


@dataclass(frozen=True, slots=True)
class SrBounds:
    n: int  # evaluated tasks (errors excluded), the base of both rates
    successes: int
    undetermined: tuple[str, ...]  # failed only by a branch marked valid
    unsure: tuple[str, ...]  # ... by a branch marked unsure
    unmarked: tuple[str, ...]  # ... by a branch nobody has marked yet
    problems: tuple[str, ...] = ()  # marks files that could not be read

    @property
    def strict(self) -> float | None:
        return self.successes / self.n if self.n else None

    @property
    def upper(self) -> float | None:
        return (self.successes + len(self.undetermined)) / self.n if self.n else None

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "successes": self.successes,
            "strict_sr": self.strict,
            "upper_sr": self.upper,
            "undetermined": len(self.undetermined),
            "undetermined_tasks": list(self.undetermined),
            "unsure_tasks": list(self.unsure),
            "unmarked_tasks": list(self.unmarked),
            "problems": list(self.problems),
        }


def first_departure(steps: Sequence[StepRecord]) -> StepRecord | None:
    """The first step that left the graph: unmatched, a parse failure or an invalid action."""
    for step in steps:
        if step.outcome in _LEAVES or is_unmatched(step):
            return step
    return None


def sr_bounds(
    store: RunStore,
    results: Sequence[TaskResult],
    overrides: Mapping[str, HumanVerdict],
    suite: Path,
) -> SrBounds:
    """Strict and upper SR of a run's results under the suite's audit marks."""
    finder = MarkFinder(suite)
    statuses = [effective_status(r, overrides) for r in results]
    evaluated = [
        (r, s) for r, s in zip(results, statuses, strict=True) if s is not TaskStatus.ERROR
    ]
    found: dict[Verdict | None, list[str]] = {v: [] for v in (*Verdict, None)}
    problems: list[str] = []
    for result, status in evaluated:
        decided = result.task_id in overrides and result.terminated
        if status is not TaskStatus.FAILURE or result.protocol != "offline" or decided:
            continue
        step = first_departure(store.read_steps(result.task_id))
        if step is None or step.outcome in _LEAVES:
            continue
        try:
            mark = finder.mark_of(result.task_id, step)
        except MarksError as exc:
            problems.append(str(exc))
            continue
        found[mark.verdict if mark else None].append(result.task_id)
    return SrBounds(
        n=len(evaluated),
        successes=sum(s is TaskStatus.SUCCESS for _, s in evaluated),
        undetermined=tuple(found[Verdict.VALID]),
        unsure=tuple(found[Verdict.UNSURE]),
        unmarked=tuple(found[None]),
        problems=tuple(problems),
    )
