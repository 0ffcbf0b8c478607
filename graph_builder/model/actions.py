"""Actions: what a person or an agent does on the screen, and the element it targeted.

>>> tap = Action.tap(540, 1200, screen=(1080, 2400))
>>> tap.normalized().x, tap.normalized().y
(500.0, 500.0)
>>> Action.swipe(500, 1800, 500, 600, screen=(1080, 2400)).direction
<SwipeDirection.UP: 'up'>
>>> Action.from_json({"type": "tap", "x": 540, "y": 1200, "screen": [1080, 2400]}) == tap
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Self

from graph_builder.errors import RecordError
from graph_builder.model._json import Reader, num
from graph_builder.model.geometry import NORMALIZED_SCREEN, Bounds, Point, Size, rescale_point


class ActionType(StrEnum):
    """What an action does. The last four are decisions about the task, not device input:
    ``answer`` carries the agent's reply to an information question, ``ask_user`` a
    question to the user (clarification or take-over), ``give_up`` ends without success,
    ``done`` ends claiming success (its text, if any, is the final answer)."""

    TAP = "tap"
    DOUBLE_TAP = "double_tap"
    LONG_PRESS = "long_press"
    SWIPE = "swipe"
    TYPE = "type"
    KEY = "key"  # text: a key name ("enter", "volume_up") or an Android keycode number
    LAUNCH = "launch"  # text: the app's package or its label
    BACK = "back"
    HOME = "home"
    WAIT = "wait"
    ANSWER = "answer"
    ASK_USER = "ask_user"
    GIVE_UP = "give_up"
    DONE = "done"

    @property
    def is_pointed(self) -> bool:
        """Tap, double tap and long press: a single point on the screen."""
        return self in (ActionType.TAP, ActionType.DOUBLE_TAP, ActionType.LONG_PRESS)

    @property
    def needs_text(self) -> bool:
        return self in (ActionType.TYPE, ActionType.KEY, ActionType.LAUNCH, ActionType.ANSWER)

    @property
    def touches_device(self) -> bool:
        """Whether the online protocol performs it on the phone."""
        return self not in (
            ActionType.ANSWER,
            ActionType.ASK_USER,
            ActionType.GIVE_UP,
            ActionType.DONE,
        )


MIN_SWIPE = 0.04  # the shortest swipe, as a fraction of the screen's shorter side


def shortest_swipe(screen: Size) -> float:
    """The shortest finger movement, in device pixels of ``screen``, that is a swipe.

    The one rule for recorder and matcher: a drag shorter than this is recorded as a tap
    (or long press), and a swipe shorter than this has no direction and matches no edge,
    e.g. 43.2 px on a 1080x2400 screen.
    """
    return MIN_SWIPE * min(screen)


def reaches_swipe(start: Point, end: Point, screen: Size) -> bool:
    """Whether a finger moving from ``start`` to ``end`` (device pixels) makes a swipe."""
    return math.dist(start, end) >= shortest_swipe(screen)


class SwipeDirection(StrEnum):
    """The way the finger moves (``up`` scrolls a list towards its end)."""

    UP = "up"
    DOWN = "down"
    LEFT = "left"
    RIGHT = "right"


@dataclass(frozen=True, slots=True)
class ElementRef:
    """A compact summary of the element an action targeted, from the pre-action hierarchy."""

    bounds: Bounds
    resource_id: str = ""
    text: str = ""
    content_desc: str = ""
    class_name: str = ""

    def label(self) -> str:
        """What a person would call the element."""
        return (
            self.text or self.content_desc or self.resource_id.rpartition("/")[2] or self.class_name
        )

    def rescaled(self, src: Size, dst: Size) -> ElementRef:
        return replace(self, bounds=self.bounds.rescaled(src, dst))

    def to_json(self) -> dict[str, Any]:
        return {
            "bounds": self.bounds.as_list(),
            "resource_id": self.resource_id,
            "text": self.text,
            "content_desc": self.content_desc,
            "class": self.class_name,
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "element", source: object = None) -> Self:
        r = Reader(data, where, source)
        try:
            bounds = Bounds.from_list(r.get("bounds", list))
        except ValueError as exc:
            raise r.fail("bounds", str(exc)) from exc
        return r.build(
            cls,
            bounds=bounds,
            resource_id=r.get("resource_id", str, default=""),
            text=r.get("text", str, default=""),
            content_desc=r.get("content_desc", str, default=""),
            class_name=r.get("class", str, default=""),
        )


@dataclass(frozen=True, slots=True)
class Action:
    """One user action.

    ``x, y`` is the point of a tap or long press, or where a swipe starts; ``x2, y2`` is
    where a swipe ends. ``screen`` is the (width, height) of the space the coordinates are
    in. ``element`` is the targeted element, in the same space.
    """

    type: ActionType
    x: float | None = None
    y: float | None = None
    x2: float | None = None
    y2: float | None = None
    text: str | None = None
    duration_ms: int | None = None
    element: ElementRef | None = None
    screen: Size | None = None

    def __post_init__(self) -> None:
        t = ActionType(self.type)
        object.__setattr__(self, "type", t)
        pointed = t.is_pointed or t is ActionType.SWIPE
        if pointed and (self.x is None or self.y is None or self.screen is None):
            raise RecordError(f"a {t.value} action needs x, y and screen")
        if t is ActionType.SWIPE and (self.x2 is None or self.y2 is None):
            raise RecordError("a swipe action needs x2 and y2")
        if t.needs_text and not self.text:
            raise RecordError(f"a {t.value} action needs non-empty text")
        if self.screen is not None and (self.screen[0] <= 0 or self.screen[1] <= 0):
            raise RecordError(f"screen size {self.screen} must be positive")
        if self.duration_ms is not None and self.duration_ms < 0:
            raise RecordError("duration_ms must not be negative")

    # -- constructors

    @classmethod
    def tap(cls, x: float, y: float, *, screen: Size, element: ElementRef | None = None) -> Action:
        return cls(ActionType.TAP, x=x, y=y, screen=screen, element=element)

    @classmethod
    def long_press(
        cls,
        x: float,
        y: float,
        *,
        screen: Size,
        duration_ms: int = 800,
        element: ElementRef | None = None,
    ) -> Action:
        return cls(
            ActionType.LONG_PRESS, x=x, y=y, screen=screen, duration_ms=duration_ms, element=element
        )

    @classmethod
    def swipe(
        cls, x1: float, y1: float, x2: float, y2: float, *, screen: Size, duration_ms: int = 300
    ) -> Action:
        return cls(
            ActionType.SWIPE, x=x1, y=y1, x2=x2, y2=y2, screen=screen, duration_ms=duration_ms
        )

    @classmethod
    def type_text(cls, text: str) -> Action:
        return cls(ActionType.TYPE, text=text)

    @classmethod
    def back(cls) -> Action:
        return cls(ActionType.BACK)

    @classmethod
    def home(cls) -> Action:
        return cls(ActionType.HOME)

    @classmethod
    def wait(cls, duration_ms: int = 1000) -> Action:
        return cls(ActionType.WAIT, duration_ms=duration_ms)

    @classmethod
    def done(cls) -> Action:
        return cls(ActionType.DONE)

    @classmethod
    def double_tap(cls, x: float, y: float, *, screen: Size) -> Action:
        return cls(ActionType.DOUBLE_TAP, x=x, y=y, screen=screen)

    @classmethod
    def key(cls, name: str) -> Action:
        return cls(ActionType.KEY, text=name)

    @classmethod
    def launch(cls, app: str) -> Action:
        return cls(ActionType.LAUNCH, text=app)

    @classmethod
    def answer(cls, text: str) -> Action:
        return cls(ActionType.ANSWER, text=text)

    @classmethod
    def ask_user(cls, question: str | None = None) -> Action:
        return cls(ActionType.ASK_USER, text=question or None)

    @classmethod
    def give_up(cls, reason: str | None = None) -> Action:
        return cls(ActionType.GIVE_UP, text=reason or None)

    # -- coordinates

    @property
    def point(self) -> Point | None:
        return None if self.x is None or self.y is None else (self.x, self.y)

    @property
    def end_point(self) -> Point | None:
        return None if self.x2 is None or self.y2 is None else (self.x2, self.y2)

    def rescaled(self, screen: Size) -> Action:
        """The same action with its coordinates (and element bounds) in another space."""
        if self.screen is None or self.screen == screen:
            return self
        src = self.screen
        changes: dict[str, Any] = {"screen": screen}
        if self.x is not None and self.y is not None:
            changes["x"], changes["y"] = rescale_point(self.x, self.y, src, screen)
        if self.x2 is not None and self.y2 is not None:
            changes["x2"], changes["y2"] = rescale_point(self.x2, self.y2, src, screen)
        if self.element is not None:
            changes["element"] = self.element.rescaled(src, screen)
        return replace(self, **changes)

    def normalized(self) -> Action:
        """This action in the ``[0,1000]`` space agents speak."""
        return self.rescaled(NORMALIZED_SCREEN)

    def to_device(self, screen: Size) -> Action:
        """This action in device pixels (rounded) for a screen of ``screen`` size."""
        scaled = self.rescaled(screen)
        changes: dict[str, Any] = {
            k: float(round(v))
            for k in ("x", "y", "x2", "y2")
            if (v := getattr(scaled, k)) is not None
        }
        return replace(scaled, **changes)

    @property
    def direction(self) -> SwipeDirection | None:
        """Dominant direction of a swipe's finger movement, decided in the action's own space.

        A demonstration's swipe is stored in its device's pixels, so this is the direction
        on the glass; to judge another space's action the same way, rescale it to the
        device first (``action.rescaled(screen).direction``), as the matcher does. A tie
        (an exact diagonal, or no movement) is vertical.
        """
        if self.type is not ActionType.SWIPE:
            return None
        x1, y1, x2, y2 = self.segment()
        dx, dy = x2 - x1, y2 - y1
        if abs(dy) >= abs(dx):
            return SwipeDirection.UP if dy < 0 else SwipeDirection.DOWN
        return SwipeDirection.LEFT if dx < 0 else SwipeDirection.RIGHT

    def is_long_swipe(self, screen: Size) -> bool:
        """Whether this swipe moves far enough to be one (``reaches_swipe``) in the whole
        device pixels of ``screen``, where the device performs it; False for non-swipes."""
        if self.type is not ActionType.SWIPE:
            return False
        x1, y1, x2, y2 = self.to_device(screen).segment()
        return reaches_swipe((x1, y1), (x2, y2), screen)

    @property
    def distance(self) -> float:
        """Length of a swipe in the action's own space (0 for other actions)."""
        if self.type is not ActionType.SWIPE:
            return 0.0
        x1, y1, x2, y2 = self.segment()
        return math.hypot(x2 - x1, y2 - y1)

    def segment(self) -> tuple[float, float, float, float]:
        """A swipe's start and end: ``(x1, y1, x2, y2)``."""
        if self.x is None or self.y is None or self.x2 is None or self.y2 is None:
            raise RecordError(f"a {self.type.value} action has no x, y, x2 and y2")
        return self.x, self.y, self.x2, self.y2

    def describe(self) -> str:
        """A short human-readable line, e.g. ``tap (540, 1200) 'Display'``."""
        t = self.type
        if t.is_pointed:
            where = f"({self.x:.0f}, {self.y:.0f})"
            label = f" {self.element.label()!r}" if self.element and self.element.label() else ""
            return f"{t.value.replace('_', ' ')} {where}{label}"
        if t is ActionType.SWIPE:
            start, end = f"({self.x:.0f}, {self.y:.0f})", f"({self.x2:.0f}, {self.y2:.0f})"
            return f"swipe {self.direction} {start} -> {end}"
        if t is ActionType.TYPE:
            return f"type {self.text!r}"
        if self.text and t is not ActionType.DONE:
            return f"{t.value.replace('_', ' ')} {self.text!r}"
        if t is ActionType.WAIT:
            return f"wait {self.duration_ms or 0} ms"
        return t.value

    # -- JSON

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type.value}
        if self.type is ActionType.SWIPE:
            x1, y1, x2, y2 = self.segment()
            out.update(x1=num(x1), y1=num(y1), x2=num(x2), y2=num(y2))
        elif self.x is not None and self.y is not None:
            out.update(x=num(self.x), y=num(self.y))
        if self.text is not None:
            out["text"] = self.text
        if self.duration_ms is not None:
            out["duration_ms"] = self.duration_ms
        if self.screen is not None:
            out["screen"] = list(self.screen)
        if self.element is not None:
            out["element"] = self.element.to_json()
        return out

    @classmethod
    def from_json(cls, data: object, *, where: str = "action", source: object = None) -> Self:
        r = Reader(data, where, source)
        t = r.enum("type", ActionType)
        swipe = t is ActionType.SWIPE
        number = (int, float)
        return r.build(
            cls,
            type=t,
            x=r.get("x1" if swipe else "x", number, default=None),
            y=r.get("y1" if swipe else "y", number, default=None),
            x2=r.get("x2", number, default=None) if swipe else None,
            y2=r.get("y2", number, default=None) if swipe else None,
            text=r.get("text", str, default=None, null=True),
            duration_ms=r.get("duration_ms", int, default=None, null=True),
            screen=r.size("screen") if r.get("screen", list, default=None, null=True) else None,
            element=r.optional("element", ElementRef.from_json),
        )
