"""The Agent seam: what an agent sees (AgentObservation) and what it answers (AgentStep).

Agents speak ``graph_builder.model.Action``. Coordinates may be in the ``[0,1000]`` space
(``screen=NORMALIZED_SCREEN``) or in the pixels of the screenshot they saw; the protocols
convert through ``Action.rescaled``. An agent never raises for a bad model answer: it
returns an AgentStep with ``action=None`` and ``parse_error`` set. It raises AgentError only
when it cannot answer at all (endpoint down, program died); the task is then an error.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from graph_builder.hierarchy import Hierarchy, parse_hierarchy
from graph_builder.io import read_png
from graph_builder.model import Action, InstructionVariant, Size, Task

if TYPE_CHECKING:
    from PIL import Image

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


class Screen:
    """One screen as an agent sees it; the PNG, image and hierarchy load on first use.

    Offline, the same node is shown many times, so the protocol keeps one Screen per node
    and the parsing cost is paid once. Safe to share between threads.
    """

    __slots__ = (
        "screenshot_path",
        "hierarchy_path",
        "size",
        "activity",
        "_png",
        "_xml",
        "_hierarchy",
        "_image",
        "_lock",
    )

    def __init__(
        self,
        *,
        size: Size,
        screenshot_path: Path | None = None,
        hierarchy_path: Path | None = None,
        png: bytes | None = None,
        hierarchy_xml: str | None = None,
        hierarchy: Hierarchy | None = None,
        activity: str | None = None,
    ) -> None:
        self.size = size
        self.screenshot_path = screenshot_path
        self.hierarchy_path = hierarchy_path
        self.activity = activity
        self._png = png
        self._xml = hierarchy_xml
        self._hierarchy: Hierarchy | None = hierarchy
        self._image: Image.Image | None = None
        self._lock = threading.Lock()

    def png(self) -> bytes | None:
        with self._lock:
            if self._png is None and self.screenshot_path is not None:
                self._png = read_png(self.screenshot_path)
            return self._png

    def image(self) -> Image.Image | None:
        """The screenshot as an RGB PIL image (decoded once)."""
        data = self.png()
        if data is None:
            return None
        with self._lock:
            if self._image is None:
                from PIL import Image

                self._image = Image.open(io.BytesIO(data)).convert("RGB")
            return self._image

    def hierarchy_xml(self) -> str | None:
        with self._lock:
            if self._xml is None and self.hierarchy_path is not None:
                self._xml = self.hierarchy_path.read_text(encoding="utf-8")
            return self._xml

    def hierarchy(self) -> Hierarchy | None:
        """The parsed uiautomator hierarchy, or None when there is none."""
        xml = self.hierarchy_xml()
        if xml is None:
            return None
        with self._lock:
            if self._hierarchy is None:
                self._hierarchy = parse_hierarchy(xml, source=self.hierarchy_path)
            return self._hierarchy


@dataclass(frozen=True, slots=True)
class AgentObservation:
    """What the agent is shown at one step.

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
