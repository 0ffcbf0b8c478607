"""The Agent seam: what an agent sees (AgentObservation) and what it answers (AgentStep).

Agents speak ``graph_builder.model.Action``. Coordinates may be in the ``[0,1000]`` space
(``screen=NORMALIZED_SCREEN``) or in the pixels of the screenshot they saw; the protocols
convert through ``Action.rescaled``. An agent never raises for a bad model answer: it
returns an AgentStep with ``action=None`` and ``parse_error`` set. It raises AgentError only
when it cannot answer at all (endpoint down, program died); the task is then an error.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from graph_builder.model import Action, InstructionVariant, Task
from graph_builder.screen import Screen

if TYPE_CHECKING:
    from graph_builder.model import TaskGraph


class StepOutcome(StrEnum):
    """Why a step has no action to follow: both are failures of the agent, not errors."""

    PARSE_ERROR = "parse_error"  # the reply could not be read
    INVALID_ACTION = "invalid_action"  # it names an action that cannot be done (off-screen, NaN)


class ReflectionVerdict(StrEnum):
    """An agent's judgement of its previous action (Mobile-Agent-v2's reflection answers)."""

    CORRECT = "correct"
    WRONG = "wrong"
    NO_CHANGE = "no_change"


@dataclass(frozen=True, slots=True)
class AgentObservation:
    """What the agent is shown at one step: a ``graph_builder.screen.Screen``, whose
    screenshot and hierarchy load on first use (offline, one Screen per node is kept, so
    the parsing cost is paid once).

    ``node_id`` and ``graph`` are set offline (and online when the state was mapped onto
    the task graph). Only the replay oracle may look at them; real agents must not.
    ``user_reply`` is the user's answer to the question the agent asked at the previous
    step (a task's scripted clarification).
    """

    task_id: str
    instruction: str
    step: int
    screen: Screen
    node_id: str | None = None
    graph: TaskGraph | None = None
    user_reply: str | None = None


@dataclass(frozen=True, slots=True)
class AgentStep:
    """An agent's answer for one observation.

    ``action`` is None when the model output could not be parsed or names an action that
    cannot be done (``parse_error`` says why, ``outcome`` which; ``raw_output`` keeps the
    text). ``reflection`` judges the *previous* step.
    """

    action: Action | None
    raw_output: str = ""
    reasoning: str | None = None
    reflection: ReflectionVerdict | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    inference_seconds: float = 0.0
    parsing_seconds: float = 0.0
    retry_seconds: float = 0.0  # failed calls and backoff, reported beside inference
    parse_error: str | None = None
    outcome: StepOutcome | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.reflection is not None:
            object.__setattr__(self, "reflection", ReflectionVerdict(self.reflection))
        if self.action is None and self.parse_error is None:
            raise ValueError("an AgentStep without an action needs a parse_error saying why")
        if self.action is None:
            object.__setattr__(self, "outcome", StepOutcome(self.outcome or "parse_error"))


def timed_step(agent: Agent, observation: AgentObservation) -> AgentStep:
    """``agent.step(observation)``; when the agent reports no time of its own (agents
    without a model: heuristic, random, replay), its whole step is its inference time."""
    started = time.perf_counter()
    step = agent.step(observation)
    if step.inference_seconds == 0 and step.parsing_seconds == 0 and step.retry_seconds == 0:
        step = replace(step, inference_seconds=time.perf_counter() - started)
    return step


@runtime_checkable
class Agent(Protocol):
    """A GUI agent. One instance runs one task at a time (one per worker thread)."""

    name: str
    model: str | None  # for costs: the price table's model name (None: no model)

    def reset(self, task: Task, variant: InstructionVariant) -> None:
        """Forget the previous task and prepare for ``task``."""

    def step(self, observation: AgentObservation) -> AgentStep:
        """Choose the next action."""

    def describe(self) -> dict[str, Any]:
        """The configuration to record in run.json (never secrets)."""

    def close(self) -> None:
        """Release processes and connections."""


@runtime_checkable
class SendsScreenshots(Protocol):
    """An agent whose requests carry the screenshot as ``evaluator.request_image`` prepares
    it: the harness may prepare the screens a step can lead to while the model thinks.
    The agent is never told which screens those are."""

    def image_request(self) -> tuple[int | None, str]:
        """The longer side the screenshot is shrunk to (None: as captured) and its format."""


class BaseAgent:
    """Defaults shared by the built-in agents."""

    name = "base"
    model: str | None = None

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self.config: dict[str, Any] = dict(config or {})
        self.task: Task | None = None
        self.variant = InstructionVariant.ORIGINAL

    def reset(self, task: Task, variant: InstructionVariant) -> None:
        self.task = task
        self.variant = InstructionVariant(variant)

    def step(self, observation: AgentObservation) -> AgentStep:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "config": dict(self.config)}

    def close(self) -> None:
        return None
