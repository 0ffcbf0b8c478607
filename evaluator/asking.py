"""How a run's agent talked to the user: who asked, how often, and whether it paid off.

Every count is over evaluated episodes (harness errors are left out and counted apart,
as for SR), with human verdicts applied:

- episodes that asked (at least one ``ask_user``) and questions per episode, over all
  evaluated episodes and over those that asked;
- SR of the episodes that asked and of those that did not, each with its base;
- asking on tasks labelled under-specified or referentially ambiguous (where a question
  is called for) against asking on the other tasks;
- steps by what they were: ``answer``, ``ask_user``, ``give_up``, invalid actions and
  parse failures, apart.

>>> from evaluator.records import TaskResult
>>> asked = TaskResult("a", "success", "offline", questions=2, steps=5)
>>> silent = TaskResult("b", "failure", "offline", steps=3)
>>> summary = asking_summary([asked, silent])
>>> summary["episodes_that_asked"], summary["questions_per_episode"]
(1, 1.0)
>>> summary["sr_when_asked"]["value"], summary["sr_when_not_asked"]["value"]
(1.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluator.document import Block, Table, percent
from evaluator.metrics import effective_status
from evaluator.records import ErrorKind, TaskResult, TaskStatus
from evaluator.run_store import HumanVerdict

# Labels under which the request itself leaves open what to do: a question is called for.
CALLS_FOR_A_QUESTION = frozenset({"under_specification", "referential_ambiguity"})


def calls_for_a_question(result: TaskResult) -> bool:
    return bool(CALLS_FOR_A_QUESTION & set(result.labels.semantics))


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _sr(results: Sequence[TaskResult], statuses: Mapping[str, TaskStatus]) -> dict[str, Any]:
    successes = sum(1 for r in results if statuses[r.task_id] is TaskStatus.SUCCESS)
    return {
        "value": _ratio(successes, len(results)),
        "successes": successes,
        "episodes": len(results),
    }


def _asking(results: Sequence[TaskResult]) -> dict[str, Any]:
    asked = sum(1 for r in results if r.questions)
    return {"episodes": len(results), "asked": asked, "rate": _ratio(asked, len(results))}


def asking_summary(
    results: Sequence[TaskResult], overrides: Mapping[str, HumanVerdict] | None = None
) -> dict[str, Any]:
    """The numbers above, as ``report --json`` prints them under ``asking``."""
    overrides = overrides or {}
    statuses = {r.task_id: effective_status(r, overrides) for r in results}
    evaluated = [r for r in results if statuses[r.task_id] is not TaskStatus.ERROR]
    asked = [r for r in evaluated if r.questions]
    questions = sum(r.questions for r in evaluated)
    called_for = [r for r in evaluated if calls_for_a_question(r)]
    others = [r for r in evaluated if not calls_for_a_question(r)]
    return {
        "episodes": len(evaluated),
        "episodes_that_asked": len(asked),
        "questions": questions,
        "questions_per_episode": _ratio(questions, len(evaluated)),
        "questions_per_asking_episode": _ratio(questions, len(asked)),
        "sr_when_asked": _sr(asked, statuses),
        "sr_when_not_asked": _sr([r for r in evaluated if not r.questions], statuses),
        "asking_by_label": {
            "under_specified_or_ambiguous": _asking(called_for),
            "other": _asking(others),
        },
        "steps": {
            "answer": sum(r.answers_given for r in evaluated),
            "ask_user": questions,
            "give_up": sum(r.give_ups for r in evaluated),
            "invalid_action": sum(r.invalid_actions for r in evaluated),
            "parse_failure": sum(r.parse_failures for r in evaluated),
        },
        "user_simulator_errors": sum(
            1
            for r in results
            if statuses[r.task_id] is TaskStatus.ERROR and r.error_kind == ErrorKind.USER_SIMULATOR
        ),
    }


def _share(part: int, whole: int) -> str:
    return f"{percent(_ratio(part, whole))} ({part} of {whole})"


def asking_blocks(asking: Mapping[str, Any]) -> list[Block]:
    """The report's section on asking the user."""
    n = asking["episodes"]
    asked = asking["episodes_that_asked"]
    per = asking["questions_per_episode"]
    per_asking = asking["questions_per_asking_episode"]
    yes, no = asking["sr_when_asked"], asking["sr_when_not_asked"]
    labelled = asking["asking_by_label"]
    steps = asking["steps"]
    rows = [
        ["Episodes that asked", _share(asked, n)],
        [
            "Questions per episode",
            f"{'n/a' if per is None else f'{per:.2f}'} over {n} episodes; "
            f"{'n/a' if per_asking is None else f'{per_asking:.2f}'} over the {asked} that asked",
        ],
        ["SR when it asked", f"{percent(yes['value'])} ({yes['successes']} of {yes['episodes']})"],
        [
            "SR when it did not ask",
            f"{percent(no['value'])} ({no['successes']} of {no['episodes']})",
        ],
        [
            "Asked on under-specified or ambiguous tasks",
            _share(
                labelled["under_specified_or_ambiguous"]["asked"],
                labelled["under_specified_or_ambiguous"]["episodes"],
            ),
        ],
        [
            "Asked on the other tasks",
            _share(labelled["other"]["asked"], labelled["other"]["episodes"]),
        ],
    ]
    return [
        ("h2", "Asking the user"),
        Table(("Measure", "Value"), rows),
        Table(
            ("answer", "ask_user", "give_up", "invalid action", "parse failure"),
            [
                [
                    str(steps[k])
                    for k in ("answer", "ask_user", "give_up", "invalid_action", "parse_failure")
                ]
            ],
        ),
        (
            "p",
            "Over evaluated episodes (harness errors left out, human verdicts applied). "
            "Under-specified or ambiguous: tasks labelled under_specification or "
            "referential_ambiguity. The second table counts steps by what they were. "
            f"Episodes whose simulated user could not answer: {asking['user_simulator_errors']} "
            "(harness errors).",
        ),
    ]
