"""What a run records: one TaskResult per finished task (a line of results.jsonl) and one
StepRecord per agent step (a line of traces/<task_id>/steps.jsonl)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

from evaluator.errors import AgentError
from graph_builder.model import InstructionVariant, Labels, Task

# The most of a model's text a step stores (raw output, reasoning, parse error): a reply
# of megabytes would make steps.jsonl, the report and every reader of the trace as large.
MAX_STORED_TEXT = 64 * 1024


def stored_text(text: str, limit: int = MAX_STORED_TEXT) -> str:
    """``text``, or its first ``limit`` characters and a mark saying how much was cut.

    >>> stored_text("abcdefghij", 4)
    'abcd[... cut, 6 of 10 bytes]'
    """
    if len(text) <= limit:
        return text
    whole = len(text.encode("utf-8", "surrogatepass"))
    cut = whole - len(text[:limit].encode("utf-8", "surrogatepass"))
    return f"{text[:limit]}[... cut, {cut} of {whole} bytes]"


class TaskStatus(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"  # the agent ran and did not succeed
    ERROR = "error"  # the task could not be evaluated (no graph, endpoint down, device lost)


class ErrorKind(StrEnum):
    """Why an errored task could not be evaluated, where the report names it apart."""

    JUDGE = "judge"  # the episode ran; a judge could not reach a verdict
    DIRTY_START = "dirty_start"  # the phone did not show the task's start screen
    USER_SIMULATOR = "user_simulator"  # the simulated user gave no usable reply


@dataclass(frozen=True, slots=True)
class TokenUse:
    """Tokens one model spent (for costs: ``model`` is the price table's name), and the
    failed attempts and backoff of its call."""

    model: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    retry_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "input": self.input_tokens,
            "output": self.output_tokens,
            "retry_seconds": self.retry_seconds,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TokenUse:
        return cls(
            data.get("model"),
            int(data.get("input") or 0),
            int(data.get("output") or 0),
            float(data.get("retry_seconds") or 0.0),
        )


@dataclass(frozen=True, slots=True)
class Verdict:
    """One judge's opinion of an online episode; ``passed`` is None when it did not apply
    or, with ``error`` set, when the judge could not answer. Tokens are the judge's own."""

    judge: str
    passed: bool | None
    reason: str
    raw: str | None = None
    error: bool = False
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    retry_seconds: float = 0.0  # failed attempts and backoff of the judge's call

    def to_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "passed": self.passed,
            "reason": self.reason,
            "raw": self.raw,
            "error": self.error,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "retry_seconds": self.retry_seconds,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        return cls(
            str(data.get("judge", "?")),
            data.get("passed"),
            str(data.get("reason", "")),
            data.get("raw"),
            bool(data.get("error", False)),
            data.get("model"),
            int(data.get("input_tokens") or 0),
            int(data.get("output_tokens") or 0),
            float(data.get("retry_seconds") or 0.0),
        )


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One step of an episode, as stored in steps.jsonl and sent to live views.

    ``screenshot`` is a path: relative to the run folder online (``traces/<task>/0003.png``),
    relative to the suite folder offline (the node's representative screenshot).
    """

    index: int
    node: str | None = None
    screenshot: str | None = None
    hierarchy: str | None = None
    activity: str | None = None
    action: dict[str, Any] | None = None
    action_text: str = ""
    raw_output: str = ""
    reasoning: str | None = None
    parse_error: str | None = None
    # a named outcome of a step that follows no edge: parse_error, invalid_action,
    # answered, asked_user (the user's reply in extra["user_reply"], the whole exchange
    # in extra["user"]), gave_up
    outcome: str | None = None
    reflection: str | None = None
    reflection_correct: bool | None = None
    matched: bool | None = None
    edge: str | None = None
    rule: str = ""
    next_node: str | None = None
    decision_correct: bool | None = None
    decision_note: str = ""  # why the decision was scored so (evaluator.progress)
    screen_changed: bool | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    inference_seconds: float = 0.0
    parsing_seconds: float = 0.0
    retry_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StepRecord:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True, slots=True)
class TaskResult:
    """The outcome of one task. ``reason`` says why a task failed or errored."""

    task_id: str
    status: TaskStatus
    protocol: str
    instruction: str = ""
    variant: str = "original"
    app: str = ""
    labels: Labels = field(default_factory=Labels)
    terminated: bool = False
    steps: int = 0
    reason: str | None = None
    # how an episode that is not a success ended, when it has a name of its own:
    # asked_user (a question the task has no scripted reply for), gave_up
    outcome: str | None = None
    answer: str | None = None  # the agent's last answer (answer action, or done's text)
    answer_correct: bool | None = None  # against the task's answers (None: it has none)
    final_node: str | None = None
    matched_steps: int | None = None  # ground-truth steps covered (evaluator.progress)
    gt_steps: int | None = None
    mapped_steps: int | None = None  # online with a graph: steps on screens mapped to a node
    decisions: int = 0
    correct_decisions: int = 0
    reflections: int = 0
    correct_reflections: int = 0
    parse_failures: int = 0
    # steps that follow no edge, by what they were (outcome of their StepRecord)
    questions: int = 0  # ask_user
    answers_given: int = 0  # answer
    give_ups: int = 0  # give_up
    invalid_actions: int = 0  # an action that cannot be carried out (off-screen, NaN)
    inference_seconds: float = 0.0
    retry_seconds: float = 0.0  # failed calls and backoff, apart from inference_seconds
    input_tokens: int = 0
    output_tokens: int = 0
    model: str | None = None
    verification: tuple[Verdict, ...] = ()
    error_kind: str | None = None  # an ErrorKind the report names apart, or None
    # every judge call of the task, re-judging and failed calls included
    judge_usage: tuple[TokenUse, ...] = ()
    # every call of the simulated user (evaluator.users), failed ones included
    user_usage: tuple[TokenUse, ...] = ()
    device: str | None = None
    started: float = 0.0
    finished: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", TaskStatus(self.status))
        object.__setattr__(self, "verification", tuple(self.verification))
        object.__setattr__(self, "judge_usage", tuple(self.judge_usage))
        object.__setattr__(self, "user_usage", tuple(self.user_usage))

    @property
    def success(self) -> bool:
        return self.status is TaskStatus.SUCCESS

    @property
    def is_error(self) -> bool:
        return self.status is TaskStatus.ERROR

    @property
    def completion_rate(self) -> float | None:
        """Covered ground-truth steps over ground-truth steps (``evaluator.progress``)."""
        if not self.gt_steps or self.matched_steps is None:
            return None
        return min(1.0, self.matched_steps / self.gt_steps)

    @property
    def judge_input_tokens(self) -> int:
        return sum(u.input_tokens for u in self.judge_usage)

    @property
    def judge_output_tokens(self) -> int:
        return sum(u.output_tokens for u in self.judge_usage)

    @property
    def judge_retry_seconds(self) -> float:
        return sum(u.retry_seconds for u in self.judge_usage)

    @property
    def instruction_words(self) -> int:
        return len(self.instruction.split())

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "labels":
                value = value.to_json()
            elif f.name in ("verification", "judge_usage", "user_usage"):
                value = [v.to_json() for v in value]
            elif f.name == "status":
                value = value.value
            out[f.name] = value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskResult:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        raw_labels = data.get("labels") or {}
        values["labels"] = Labels(
            scenario=raw_labels.get("scenario"),
            syntax=tuple(raw_labels.get("syntax") or ()),
            semantics=tuple(raw_labels.get("semantics") or ()),
        )
        values["verification"] = tuple(Verdict.from_json(v) for v in data.get("verification") or ())
        values["judge_usage"] = tuple(TokenUse.from_json(u) for u in data.get("judge_usage") or ())
        values["user_usage"] = tuple(TokenUse.from_json(u) for u in data.get("user_usage") or ())
        return cls(**values)


def episode_result(
    task: Task,
    records: Sequence[StepRecord],
    *,
    protocol: str,
    variant: InstructionVariant | str,
    success: bool,
    terminated: bool,
    reason: str | None,
    final_node: str | None,
    matched_steps: int | None,
    gt_steps: int | None,
    model: str | None,
    started: float,
    finished: float,
    mapped_steps: int | None = None,
    outcome: str | None = None,
    answer: str | None = None,
    answer_correct: bool | None = None,
    verification: Sequence[Verdict] = (),
    device: str | None = None,
    error_kind: str | None = None,
    judge_usage: Sequence[TokenUse] = (),
    user_usage: Sequence[TokenUse] = (),
) -> TaskResult:
    """The TaskResult of one episode (offline or online), its counts taken from its steps.

    A step counts as a decision when it was scored (``decision_correct`` is not None):
    offline every step is, online only the steps of a task with a graph.
    """
    scored = [r for r in records if r.decision_correct is not None]
    counts = outcome_counts(records)
    return TaskResult(
        task_id=task.id,
        status=(
            TaskStatus.ERROR
            if error_kind is not None
            else TaskStatus.SUCCESS
            if success
            else TaskStatus.FAILURE
        ),
        protocol=protocol,
        instruction=task.instruction_for(variant),
        variant=InstructionVariant(variant).value,
        app=task.app,
        labels=task.labels,
        terminated=terminated,
        steps=len(records),
        reason=None if success else reason,
        outcome=outcome,
        answer=answer,
        answer_correct=answer_correct,
        final_node=final_node,
        matched_steps=matched_steps,
        gt_steps=gt_steps,
        mapped_steps=mapped_steps,
        decisions=len(scored),
        correct_decisions=sum(1 for r in scored if r.decision_correct),
        reflections=sum(1 for r in records if r.reflection_correct is not None),
        correct_reflections=sum(1 for r in records if r.reflection_correct),
        parse_failures=sum(1 for r in records if r.parse_error is not None),
        questions=counts["questions"],
        answers_given=counts["answers_given"],
        give_ups=counts["give_ups"],
        invalid_actions=counts["invalid_actions"],
        retry_seconds=sum(r.retry_seconds for r in records),
        inference_seconds=sum(r.inference_seconds + r.parsing_seconds for r in records),
        input_tokens=sum(r.input_tokens for r in records),
        output_tokens=sum(r.output_tokens for r in records),
        model=model,
        verification=tuple(verification),
        error_kind=error_kind,
        judge_usage=tuple(judge_usage),
        user_usage=tuple(user_usage),
        device=device,
        started=started,
        finished=finished,
    )


# a step's outcome -> the TaskResult field that counts it
_OUTCOME_FIELDS = {
    "asked_user": "questions",
    "answered": "answers_given",
    "gave_up": "give_ups",
    "invalid_action": "invalid_actions",
}


def outcome_counts(records: Sequence[StepRecord]) -> dict[str, int]:
    """How many steps asked the user, answered, gave up, or named an invalid action.

    >>> outcome_counts([StepRecord(0, outcome="asked_user"), StepRecord(1)])["questions"]
    1
    """
    counts = dict.fromkeys(_OUTCOME_FIELDS.values(), 0)
    for r in records:
        if r.outcome in _OUTCOME_FIELDS:
            counts[_OUTCOME_FIELDS[r.outcome]] += 1
    return counts


def cut_short_result(
    task: Task,
    records: Sequence[StepRecord],
    *,
    protocol: str,
    variant: InstructionVariant | str,
    reason: str,
    model: str | None,
    started: float,
    finished: float,
    device: str | None = None,
    error_kind: str | None = None,
    user_usage: Sequence[TokenUse] = (),
) -> TaskResult:
    """The result of an episode an error cut short: not terminated, no final node, no
    matched steps; what its steps spent stays counted."""
    return episode_result(
        task,
        records,
        protocol=protocol,
        variant=variant,
        success=False,
        terminated=False,
        reason=reason,
        final_node=None,
        matched_steps=None,
        gt_steps=None,
        model=model,
        started=started,
        finished=finished,
        device=device,
        error_kind=error_kind,
        user_usage=user_usage,
    )


def agent_error_result(
    task: Task,
    records: Sequence[StepRecord],
    error: AgentError,
    *,
    protocol: str,
    variant: InstructionVariant | str,
    model: str | None,
    started: float,
    finished: float,
    device: str | None = None,
    user_usage: Sequence[TokenUse] = (),
) -> TaskResult:
    """The error result of an episode whose agent could not answer (``AgentError``): what
    its steps spent, plus what the failed step spent before the error (answered calls, and
    the failed attempts and backoff of the call that ended in the error)."""
    ran = cut_short_result(
        task,
        records,
        protocol=protocol,
        variant=variant,
        reason=str(error),
        model=model,
        started=started,
        finished=finished,
        device=device,
        user_usage=user_usage,
    )
    return replace(
        ran,
        status=TaskStatus.ERROR,
        input_tokens=ran.input_tokens + error.input_tokens,
        output_tokens=ran.output_tokens + error.output_tokens,
        inference_seconds=ran.inference_seconds + error.inference_seconds,
        retry_seconds=ran.retry_seconds + error.retry_seconds,
    )
