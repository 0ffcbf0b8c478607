"""What the actions beyond touch input mean, offline and online alike.

- ``launch``: the app is named by package or label. Online it is started through the
  launcher intent; offline it follows an edge into a screen of that app.
- ``answer``: the agent's answer to an information question; the last one (or the text of
  its ``done``) is checked against the task's accepted ``answers``.
- ``ask_user``: the user answers (``evaluator.users``): by default the task's scripted
  ``clarifications``, in order, or a simulated user; a question with no reply ends the
  episode with the outcome ``asked_user``. A simulated user that cannot answer makes the
  episode a harness error (kind ``user_simulator``), not an agent failure.
- ``give_up``: ends the episode without success (outcome ``gave_up``).

Actions whose coordinates are not finite or leave their screen are invalid: the agent's
failure, never carried out.

>>> resolve_app("Clock", ["com.android.deskclock", "com.android.settings"])
'com.android.deskclock'
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from evaluator.matching import EdgeMatch, normalize_text
from evaluator.records import ErrorKind, StepRecord, TaskResult, TokenUse, cut_short_result
from evaluator.users import Exchange, Question, ScriptedUser, User, UserSimulatorError
from evaluator.users import usage as user_usage
from graph_builder.model import (
    Action,
    ActionType,
    Edge,
    InstructionVariant,
    Size,
    Task,
    TaskGraph,
)

if TYPE_CHECKING:
    from PIL import Image

    from evaluator.agents.base import Agent

# Labels of common Android apps whose package does not contain their name.
_LABELS = {
    "phone": ("com.android.dialer", "com.google.android.dialer"),
    "dialer": ("com.android.dialer", "com.google.android.dialer"),
    "messages": ("com.google.android.apps.messaging", "com.android.messaging"),
    "sms": ("com.google.android.apps.messaging", "com.android.messaging"),
    "contacts": ("com.android.contacts", "com.google.android.contacts"),
    "clock": ("com.android.deskclock", "com.google.android.deskclock"),
    "alarm": ("com.android.deskclock", "com.google.android.deskclock"),
    "chrome": ("com.android.chrome",),
    "browser": ("com.android.chrome", "com.android.browser"),
    "camera": ("com.android.camera2", "com.google.android.GoogleCamera"),
    "photos": ("com.google.android.apps.photos",),
    "gallery": ("com.android.gallery3d", "com.google.android.apps.photos"),
    "calendar": ("com.google.android.calendar", "com.android.calendar"),
    "maps": ("com.google.android.apps.maps",),
    "play store": ("com.android.vending",),
    "files": ("com.google.android.documentsui", "com.android.documentsui"),
    "youtube": ("com.google.android.youtube",),
    "gmail": ("com.google.android.gm",),
}
_PACKAGE = re.compile(r"[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+")


def resolve_app(name: str, packages: Iterable[str]) -> str | None:
    """The package of the app called ``name`` among ``packages`` (None: not found).

    A package name is taken as it is. A label matches a package whose last parts contain
    it (``Clock`` -> ``com.android.deskclock``, ``Weather`` -> ``com.elderphone.weather``),
    or a package the table of common labels gives for it.
    """
    known = list(dict.fromkeys(packages))
    text = name.strip()
    if _PACKAGE.fullmatch(text):
        return text
    label = normalize_text(text).replace("_", " ")
    for package in _LABELS.get(label, ()):
        if package in known:
            return package
    squashed = re.sub(r"[^a-z0-9]", "", label)
    if not squashed:
        return None
    for package in known:
        tail = "".join(package.lower().split(".")[1:])
        if squashed in tail:
            return package
    return None


def package_of(activity: str | None) -> str | None:
    return activity.partition("/")[0] if activity else None


def graph_packages(graph: TaskGraph) -> list[str]:
    return [p for n in graph.nodes if (p := package_of(n.activity))]


def match_launch(
    edges: Iterable[Edge], graph: TaskGraph, source: str, app: str, packages: Sequence[str]
) -> EdgeMatch:
    """Offline ``launch``: the edge from ``source`` into a screen of ``app`` (by package,
    or by the label of the launcher icon its demonstrations tapped)."""
    package = resolve_app(app, packages)
    here = package_of(graph.node(source).activity)
    for edge in edges:
        target = package_of(graph.node(edge.target).activity)
        if package is not None and target == package and here != package:
            return EdgeMatch(edge, f"launch {package}: edge into the app")
        labels = [s.action.element.label() for s in edge.support if s.action.element]
        if any(fuzz.ratio(normalize_text(app), normalize_text(lbl)) >= 90 for lbl in labels):
            return EdgeMatch(edge, f"launch {app!r}: edge through its launcher icon")
    if package is None:
        return EdgeMatch(None, f"launch {app!r}: no known app by that name")
    if here == package:
        return EdgeMatch(None, f"launch {package}: already in the app; no edge restarts it")
    return EdgeMatch(None, f"launch {package}: no edge from here leads into the app")


def action_problem(action: Action, screen: Size) -> str | None:
    """Why ``action`` cannot be carried out on a ``screen``-sized device (None: it can)."""
    if action.screen is None:
        return None
    w, h = action.screen
    for name, value in (("x", action.x), ("y", action.y), ("x2", action.x2), ("y2", action.y2)):
        if value is None:
            continue
        if not math.isfinite(value):
            return f"{action.type.value} {name} is {value}, not a number"
        limit = w if name.startswith("x") else h
        if not -0.5 <= value <= limit + 0.5:
            return (
                f"{action.type.value} point is outside the screen ({name} {value:g} in a "
                f"{w}x{h} space)"
            )
    return None


def answer_matches(given: str, accepted: Sequence[str]) -> bool:
    """Whether ``given`` says one of the ``accepted`` answers (contains it, or is at least
    85% alike, after normalizing case, width and spaces)."""
    said = normalize_text(given)
    for want in accepted:
        target = normalize_text(want)
        if target and (target in said or fuzz.ratio(said, target) >= 85):
            return True
    return False


@dataclass
class Episode:
    """The task-level side of one episode: the user who answers questions (the task's
    scripted clarifications unless a simulated user is given), the conversation so far,
    the last answer."""

    task: Task
    user: User = field(default_factory=ScriptedUser)
    conversation: list[Exchange] = field(default_factory=list)
    answer: str | None = None
    spent: list[TokenUse] = field(default_factory=list)  # user calls that gave no exchange

    def ask(
        self,
        question: str | None,
        *,
        step: int,
        instruction: str,
        screenshot: Callable[[], Image.Image] | None = None,
    ) -> Exchange:
        """Put the agent's ``question`` to the user; the exchange (its reply None when the
        user has none). UserSimulatorError: the simulated user could not answer (what it
        spent stays counted in ``user_usage``)."""
        asked = Question(
            self.task, instruction, question or "", tuple(self.conversation), step, screenshot
        )
        try:
            said = self.user.reply(asked)
        except UserSimulatorError as exc:
            if exc.usage is not None:
                self.spent.append(exc.usage)
            raise
        exchange = Exchange(
            step,
            question or "",
            said.text,
            self.user.name,
            said.model,
            said.input_tokens,
            said.output_tokens,
            said.seconds,
        )
        self.conversation.append(exchange)
        return exchange

    @property
    def user_usage(self) -> tuple[TokenUse, ...]:
        """Every token the user's model spent in this episode, failed calls included."""
        return (*user_usage(self.conversation), *self.spent)

    def note(self, action: Action) -> None:
        if action.type is ActionType.ANSWER or (
            action.type is ActionType.DONE and action.text and self.answer is None
        ):
            self.answer = action.text

    @property
    def answer_correct(self) -> bool | None:
        if not self.task.answers:
            return None
        return self.answer is not None and answer_matches(self.answer, self.task.answers)

    def answer_problem(self) -> str | None:
        """Why the answer fails the task (None: it passes or is not asked for)."""
        if self.answer_correct is not False:
            return None
        if self.answer is None:
            return "gave no answer to the question"
        return f"answered {self.answer!r}, which is not one of {list(self.task.answers)!r}"


def user_error_result(
    task: Task,
    records: Sequence[StepRecord],
    error: UserSimulatorError,
    episode: Episode,
    protocol: str,
    variant: InstructionVariant | str,
    agent: Agent,
    started: float,
    finished: float,
    device: str | None = None,
) -> TaskResult:
    """The error result of an episode whose simulated user gave no usable reply: the
    harness failed, not the agent, so the task leaves the SR denominator (kind
    ``user_simulator``); what the agent and the user spent stays counted."""
    return cut_short_result(
        task,
        records,
        protocol=protocol,
        variant=variant,
        reason=f"user simulator: {error}",
        model=getattr(agent, "model", None),
        started=started,
        finished=finished,
        device=device,
        error_kind=ErrorKind.USER_SIMULATOR,
        user_usage=episode.user_usage,
    )
