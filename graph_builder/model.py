"""The data model: every record that crosses a package boundary or lands on disk.

All records are frozen, slotted dataclasses validated in ``__post_init__``, with a
``to_json()`` / ``from_json()`` pair. Top-level documents (demo.json, task.json, suite.json,
graph.json) carry ``schema_version``; ``graph_builder.io`` checks it.

Coordinates: actions are stored in the pixels of the screen they were taken on, together
with that screen's size. Agents speak the normalized ``[0,1000]`` space. An action in that
space is simply an action whose ``screen`` is ``NORMALIZED_SCREEN``, and ``rescale_point``
is the one place that converts between spaces.

>>> tap = Action.tap(540, 1200, screen=(1080, 2400))
>>> tap.normalized().x, tap.normalized().y
(500.0, 500.0)
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Self

from graph_builder.errors import FormatError, InvalidIdError

SCHEMA_VERSION = 1
NORMALIZED_SCREEN: tuple[int, int] = (1000, 1000)

Size = tuple[int, int]
Point = tuple[float, float]

_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def validate_id(value: str, what: str = "id") -> str:
    """Return ``value`` if it is safe as a single folder name, else raise InvalidIdError.

    Ids become folder names, so path separators, ``..`` and control characters are refused.
    """
    if not isinstance(value, str) or not _ID_PATTERN.fullmatch(value) or ".." in value:
        raise InvalidIdError(
            f"{what} {value!r} is not allowed: use 1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit, and no '..'"
        )
    return value


def rescale_point(x: float, y: float, src: Size, dst: Size) -> Point:
    """Convert a point between two screen spaces (device pixels, ``[0,1000]``, ...)."""
    return x * dst[0] / src[0], y * dst[1] / src[1]


def _num(value: float) -> float | int:
    """Write integral floats as ints so device-pixel JSON stays readable."""
    return int(value) if float(value).is_integer() else round(value, 3)


# --------------------------------------------------------------------------- JSON reading


class _Reader:
    """Typed access to one JSON object; every problem names the document and the field."""

    __slots__ = ("_data", "_where", "_source")

    def __init__(self, data: object, where: str, source: object = None) -> None:
        if not isinstance(data, dict):
            raise FormatError(
                f"{where} must be a JSON object, not {type(data).__name__}", source=source
            )
        self._data: dict[str, Any] = data
        self._where = where
        self._source = source

    def _fail(self, key: str, problem: str) -> FormatError:
        return FormatError(f"{self._where}: field {key!r} {problem}", source=self._source)

    def get(
        self, key: str, kind: type | tuple[type, ...], *, default: Any = ..., null: bool = False
    ) -> Any:
        if key not in self._data:
            if default is ...:
                raise self._fail(key, "is missing")
            return default
        value = self._data[key]
        if value is None and null:
            return None
        kinds = kind if isinstance(kind, tuple) else (kind,)
        # JSON has no int/bool distinction problems for us except that bool is an int subclass.
        if isinstance(value, bool) and bool not in kinds:
            raise self._fail(key, f"must be {_kind_names(kinds)}, not a boolean")
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, kinds):
            raise self._fail(key, f"must be {_kind_names(kinds)}, not {type(value).__name__}")
        return value

    def str_list(self, key: str) -> tuple[str, ...]:
        values = self.get(key, list, default=[])
        if not all(isinstance(v, str) for v in values):
            raise self._fail(key, "must be a list of strings")
        return tuple(values)

    def objects(self, key: str, default: Any = ...) -> list[_Reader]:
        values = self.get(key, list, default=default)
        return [_Reader(v, f"{self._where}.{key}[{i}]", self._source) for i, v in enumerate(values)]

    def child(self, key: str, *, null: bool = False) -> _Reader | None:
        value = self.get(key, dict, default=None if null else ..., null=null)
        return None if value is None else _Reader(value, f"{self._where}.{key}", self._source)

    def enum[E: StrEnum](self, key: str, enum: type[E], *, default: Any = ...) -> E:
        raw = self.get(key, str, default=default)
        try:
            return enum(raw)
        except ValueError:
            allowed = ", ".join(e.value for e in enum)
            raise self._fail(key, f"is {raw!r}; expected one of: {allowed}") from None

    def build[T](self, factory: type[T], **kwargs: Any) -> T:
        """Construct a record, turning its validation errors into a FormatError here."""
        try:
            return factory(**kwargs)
        except (ValueError, TypeError, InvalidIdError) as exc:
            raise FormatError(f"{self._where}: {exc}", source=self._source) from exc


def _kind_names(kinds: tuple[type, ...]) -> str:
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        list: "a list",
        dict: "an object",
    }
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _size(reader: _Reader, key: str) -> Size:
    value = reader.get(key, list)
    if len(value) != 2 or not all(isinstance(v, int) and v > 0 for v in value):
        raise reader._fail(key, "must be [width, height] with two positive integers")
    return (value[0], value[1])


# --------------------------------------------------------------------------- geometry


@dataclass(frozen=True, slots=True)
class Bounds:
    """An axis-aligned rectangle; ``right``/``bottom`` are exclusive, as in uiautomator."""

    left: float
    top: float
    right: float
    bottom: float

    def __post_init__(self) -> None:
        if self.right < self.left or self.bottom < self.top:
            raise ValueError(f"bounds {self.as_list()} have negative width or height")

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def area(self) -> float:
        return self.width * self.height

    @property
    def center(self) -> Point:
        return (self.left + self.right) / 2, (self.top + self.bottom) / 2

    def contains(self, x: float, y: float) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom

    def rescaled(self, src: Size, dst: Size) -> Bounds:
        left, top = rescale_point(self.left, self.top, src, dst)
        right, bottom = rescale_point(self.right, self.bottom, src, dst)
        return Bounds(left, top, right, bottom)

    def as_list(self) -> list[float | int]:
        return [_num(v) for v in (self.left, self.top, self.right, self.bottom)]

    @classmethod
    def from_list(cls, value: object) -> Bounds:
        if (
            not isinstance(value, list)
            or len(value) != 4
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        ):
            raise ValueError(f"bounds must be [left, top, right, bottom], got {value!r}")
        return cls(*(float(v) for v in value))


# --------------------------------------------------------------------------- actions


class ActionType(StrEnum):
    TAP = "tap"
    LONG_PRESS = "long_press"
    SWIPE = "swipe"
    TYPE = "type"
    BACK = "back"
    HOME = "home"
    WAIT = "wait"
    DONE = "done"

    @property
    def is_pointed(self) -> bool:
        """Tap and long press: a single point on the screen."""
        return self in (ActionType.TAP, ActionType.LONG_PRESS)


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
    def from_json(cls, r: _Reader) -> ElementRef:
        try:
            bounds = Bounds.from_list(r.get("bounds", list))
        except ValueError as exc:
            raise r._fail("bounds", str(exc)) from exc
        return cls(
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
            raise ValueError(f"a {t.value} action needs x, y and screen")
        if t is ActionType.SWIPE and (self.x2 is None or self.y2 is None):
            raise ValueError("a swipe action needs x2 and y2")
        if t is ActionType.TYPE and not self.text:
            raise ValueError("a type action needs non-empty text")
        if self.screen is not None and (self.screen[0] <= 0 or self.screen[1] <= 0):
            raise ValueError(f"screen size {self.screen} must be positive")
        if self.duration_ms is not None and self.duration_ms < 0:
            raise ValueError("duration_ms must not be negative")

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
        """Dominant direction of a swipe's finger movement, in a square-normalized space."""
        if self.type is not ActionType.SWIPE:
            return None
        n = self.normalized()
        assert n.x is not None and n.y is not None and n.x2 is not None and n.y2 is not None
        dx, dy = n.x2 - n.x, n.y2 - n.y
        if abs(dy) >= abs(dx):
            return SwipeDirection.UP if dy < 0 else SwipeDirection.DOWN
        return SwipeDirection.LEFT if dx < 0 else SwipeDirection.RIGHT

    @property
    def distance(self) -> float:
        """Length of a swipe in the action's own space (0 for other actions)."""
        if self.type is not ActionType.SWIPE:
            return 0.0
        assert (
            self.x is not None
            and self.y is not None
            and self.x2 is not None
            and self.y2 is not None
        )
        return math.hypot(self.x2 - self.x, self.y2 - self.y)

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
        if t is ActionType.WAIT:
            return f"wait {self.duration_ms or 0} ms"
        return t.value

    # -- JSON

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type.value}
        if self.type is ActionType.SWIPE:
            assert (
                self.x is not None
                and self.y is not None
                and self.x2 is not None
                and self.y2 is not None
            )
            out.update(x1=_num(self.x), y1=_num(self.y), x2=_num(self.x2), y2=_num(self.y2))
        elif self.x is not None and self.y is not None:
            out.update(x=_num(self.x), y=_num(self.y))
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
    def from_json(cls, data: object, *, where: str = "action", source: object = None) -> Action:
        r = data if isinstance(data, _Reader) else _Reader(data, where, source)
        t = r.enum("type", ActionType)
        swipe = t is ActionType.SWIPE
        num = (int, float)
        element = r.child("element", null=True)
        return r.build(
            cls,
            type=t,
            x=r.get("x1" if swipe else "x", num, default=None),
            y=r.get("y1" if swipe else "y", num, default=None),
            x2=r.get("x2", num, default=None) if swipe else None,
            y2=r.get("y2", num, default=None) if swipe else None,
            text=r.get("text", str, default=None, null=True),
            duration_ms=r.get("duration_ms", int, default=None, null=True),
            screen=_size(r, "screen") if r.get("screen", list, default=None, null=True) else None,
            element=ElementRef.from_json(element) if element is not None else None,
        )


# --------------------------------------------------------------------------- observations


@dataclass(frozen=True, slots=True)
class Observation:
    """What the screen looked like: file paths are relative to the owning folder."""

    screenshot: str
    screen: Size
    hierarchy: str | None = None
    activity: str | None = None
    time: float = 0.0
    phash: str | None = None

    @property
    def package(self) -> str | None:
        return self.activity.partition("/")[0] if self.activity else None

    def to_json(self) -> dict[str, Any]:
        return {
            "screenshot": self.screenshot,
            "hierarchy": self.hierarchy,
            "activity": self.activity,
            "time": self.time,
            "screen": list(self.screen),
            "phash": self.phash,
        }

    @classmethod
    def from_json(cls, r: _Reader) -> Observation:
        return r.build(
            cls,
            screenshot=r.get("screenshot", str),
            hierarchy=r.get("hierarchy", str, default=None, null=True),
            activity=r.get("activity", str, default=None, null=True),
            time=r.get("time", float, default=0.0),
            screen=_size(r, "screen"),
            phash=r.get("phash", str, default=None, null=True),
        )


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a demonstration: the observation before the action, and the action."""

    index: int
    observation: Observation
    action: Action

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "observation": self.observation.to_json(),
            "action": self.action.to_json(),
        }

    @classmethod
    def from_json(cls, r: _Reader) -> Step:
        obs = r.child("observation")
        action = r.child("action")
        assert obs is not None and action is not None
        return cls(
            index=r.get("index", int),
            observation=Observation.from_json(obs),
            action=Action.from_json(action),
        )


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    serial: str
    model: str = ""
    android_version: str = ""
    width: int = 0
    height: int = 0
    density: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "serial": self.serial,
            "model": self.model,
            "android_version": self.android_version,
            "width": self.width,
            "height": self.height,
            "density": self.density,
        }

    @classmethod
    def from_json(cls, r: _Reader) -> DeviceInfo:
        return cls(
            serial=r.get("serial", str),
            model=r.get("model", str, default=""),
            android_version=r.get("android_version", str, default=""),
            width=r.get("width", int, default=0),
            height=r.get("height", int, default=0),
            density=r.get("density", int, default=0),
        )


class DemoStatus(StrEnum):
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    DISCARDED = "discarded"


@dataclass(frozen=True, slots=True)
class Demonstration:
    """A human performing one task once. Step paths are relative to the demo folder."""

    id: str
    task_id: str
    instruction: str
    steps: tuple[Step, ...] = ()
    app: str = ""
    device: DeviceInfo | None = None
    annotator: str = ""
    status: DemoStatus = DemoStatus.INCOMPLETE
    created: float = 0.0
    source: str = "recorded"
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        validate_id(self.id, "demonstration id")
        validate_id(self.task_id, "task id")
        object.__setattr__(self, "status", DemoStatus(self.status))
        object.__setattr__(self, "steps", tuple(self.steps))
        for i, step in enumerate(self.steps):
            if step.index != i:
                raise ValueError(
                    f"step {i} has index {step.index}; steps must be numbered 0, 1, 2, ..."
                )

    @property
    def is_finished(self) -> bool:
        """A complete demonstration ends with a ``done`` action."""
        return bool(self.steps) and self.steps[-1].action.type is ActionType.DONE

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "id": self.id,
            "task_id": self.task_id,
            "instruction": self.instruction,
            "app": self.app,
            "device": self.device.to_json() if self.device else None,
            "annotator": self.annotator,
            "status": self.status.value,
            "created": self.created,
            "source": self.source,
            "steps": [s.to_json() for s in self.steps],
        }

    @classmethod
    def from_json(cls, data: object, *, source: object = None) -> Demonstration:
        r = _Reader(data, "demonstration", source)
        device = r.child("device", null=True)
        return r.build(
            cls,
            schema_version=r.get("schema_version", int),
            id=r.get("id", str),
            task_id=r.get("task_id", str),
            instruction=r.get("instruction", str),
            app=r.get("app", str, default=""),
            device=DeviceInfo.from_json(device) if device else None,
            annotator=r.get("annotator", str, default=""),
            status=r.enum("status", DemoStatus),
            created=r.get("created", float, default=0.0),
            source=r.get("source", str, default="recorded"),
            steps=tuple(Step.from_json(s) for s in r.objects("steps")),
        )


# --------------------------------------------------------------------------- tasks and suites


class Protocol(StrEnum):
    ONLINE = "online"
    OFFLINE = "offline"


class InstructionVariant(StrEnum):
    ORIGINAL = "original"
    NORMALIZED = "normalized"


SCENARIOS = (
    "life_service",
    "social_communication",
    "system_settings",
    "information_inquiry",
    "tool_assistance",
)
SYNTAX = ("canonical", "narrative", "elliptical", "compound")
SEMANTICS = (
    "indirect_speech",
    "referential_ambiguity",
    "under_specification",
    "disfluency_correction",
)
DEFAULT_VOCABULARIES: dict[str, tuple[str, ...]] = {
    "scenario": SCENARIOS,
    "syntax": SYNTAX,
    "semantics": SEMANTICS,
}


@dataclass(frozen=True, slots=True)
class Labels:
    """Linguistic and scenario labels (ElderBench's taxonomy by default)."""

    scenario: str | None = None
    syntax: tuple[str, ...] = ()
    semantics: tuple[str, ...] = ()

    def items(self) -> Iterable[tuple[str, str]]:
        """(dimension, label) pairs, for breakdowns."""
        if self.scenario:
            yield "scenario", self.scenario
        for s in self.syntax:
            yield "syntax", s
        for s in self.semantics:
            yield "semantics", s

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "syntax": list(self.syntax),
            "semantics": list(self.semantics),
        }

    @classmethod
    def from_json(cls, r: _Reader) -> Labels:
        return cls(
            scenario=r.get("scenario", str, default=None, null=True),
            syntax=r.str_list("syntax"),
            semantics=r.str_list("semantics"),
        )


SETTINGS_NAMESPACES = ("system", "secure", "global")


@dataclass(frozen=True, slots=True)
class SettingValue:
    """One Android setting (``settings put NAMESPACE KEY VALUE``)."""

    namespace: str
    key: str
    value: str

    def __post_init__(self) -> None:
        if self.namespace not in SETTINGS_NAMESPACES:
            raise ValueError(
                f"settings namespace {self.namespace!r} must be one of "
                + ", ".join(SETTINGS_NAMESPACES)
            )
        if not re.fullmatch(r"[A-Za-z0-9_.]+", self.key):
            raise ValueError(f"settings key {self.key!r} must be letters, digits, '_' or '.'")

    def to_json(self) -> dict[str, str]:
        return {"namespace": self.namespace, "key": self.key, "value": self.value}

    @classmethod
    def from_json(cls, r: _Reader) -> SettingValue:
        return r.build(
            cls,
            namespace=r.get("namespace", str),
            key=r.get("key", str),
            value=r.get("value", str),
        )


@dataclass(frozen=True, slots=True)
class ResetRecipe:
    """How to put the app in the same state before every demonstration or run.

    ``settings`` are system-wide values restored first (e.g. ``system font_scale 1.0``):
    resetting an app does not undo what an earlier task changed in Settings.
    """

    package: str
    activity: str | None = None
    go_home: bool = True
    force_stop: bool = True
    clear_data: bool = False
    settings: tuple[SettingValue, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "settings", tuple(self.settings))

    def to_json(self) -> dict[str, Any]:
        return {
            "package": self.package,
            "activity": self.activity,
            "go_home": self.go_home,
            "force_stop": self.force_stop,
            "clear_data": self.clear_data,
            "settings": [v.to_json() for v in self.settings],
        }

    @classmethod
    def from_json(cls, r: _Reader) -> ResetRecipe:
        return cls(
            package=r.get("package", str),
            activity=r.get("activity", str, default=None, null=True),
            go_home=r.get("go_home", bool, default=True),
            force_stop=r.get("force_stop", bool, default=True),
            clear_data=r.get("clear_data", bool, default=False),
            settings=tuple(SettingValue.from_json(v) for v in r.objects("settings", default=[])),
        )


@dataclass(frozen=True, slots=True)
class SuccessCriteria:
    """Online verification: rules on the final screen, and a rubric for a VLM judge."""

    activity: str | None = None
    must_contain: tuple[str, ...] = ()
    must_not_contain: tuple[str, ...] = ()
    rubric: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "activity": self.activity,
            "must_contain": list(self.must_contain),
            "must_not_contain": list(self.must_not_contain),
            "rubric": self.rubric,
        }

    @classmethod
    def from_json(cls, r: _Reader) -> SuccessCriteria:
        return cls(
            activity=r.get("activity", str, default=None, null=True),
            must_contain=r.str_list("must_contain"),
            must_not_contain=r.str_list("must_not_contain"),
            rubric=r.get("rubric", str, default=None, null=True),
        )


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    instruction: str
    app: str = ""
    protocol: Protocol = Protocol.OFFLINE
    normalized_instruction: str | None = None
    max_steps: int = 20
    labels: Labels = field(default_factory=Labels)
    reset: ResetRecipe | None = None
    success: SuccessCriteria | None = None
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        validate_id(self.id, "task id")
        object.__setattr__(self, "protocol", Protocol(self.protocol))
        if not self.instruction.strip():
            raise ValueError("a task needs a non-empty instruction")
        if self.max_steps < 1:
            raise ValueError("max_steps must be at least 1")

    def instruction_for(self, variant: InstructionVariant | str) -> str:
        """The instruction an agent sees; falls back to the original when not normalized."""
        if InstructionVariant(variant) is InstructionVariant.NORMALIZED:
            return self.normalized_instruction or self.instruction
        return self.instruction

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "id": self.id,
            "instruction": self.instruction,
            "normalized_instruction": self.normalized_instruction,
            "app": self.app,
            "protocol": self.protocol.value,
            "max_steps": self.max_steps,
            "labels": self.labels.to_json(),
            "reset": self.reset.to_json() if self.reset else None,
            "success": self.success.to_json() if self.success else None,
        }

    @classmethod
    def from_json(cls, data: object, *, source: object = None) -> Task:
        r = _Reader(data, "task", source)
        labels = r.child("labels", null=True)
        reset = r.child("reset", null=True)
        success = r.child("success", null=True)
        return r.build(
            cls,
            schema_version=r.get("schema_version", int),
            id=r.get("id", str),
            instruction=r.get("instruction", str),
            normalized_instruction=r.get("normalized_instruction", str, default=None, null=True),
            app=r.get("app", str, default=""),
            protocol=r.enum("protocol", Protocol, default="offline"),
            max_steps=r.get("max_steps", int, default=20),
            labels=Labels.from_json(labels) if labels else Labels(),
            reset=ResetRecipe.from_json(reset) if reset else None,
            success=SuccessCriteria.from_json(success) if success else None,
        )


@dataclass(frozen=True, slots=True)
class Suite:
    """A benchmark suite's header; its tasks live in sub-folders beside suite.json."""

    name: str
    description: str = ""
    vocabularies: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: dict(DEFAULT_VOCABULARIES)
    )
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "name": self.name,
            "description": self.description,
            "vocabularies": {k: list(v) for k, v in self.vocabularies.items()},
        }

    @classmethod
    def from_json(cls, data: object, *, source: object = None) -> Suite:
        r = _Reader(data, "suite", source)
        vocab = r.child("vocabularies", null=True)
        vocabularies = (
            {key: vocab.str_list(key) for key in vocab._data}
            if vocab
            else dict(DEFAULT_VOCABULARIES)
        )
        return r.build(
            cls,
            schema_version=r.get("schema_version", int),
            name=r.get("name", str),
            description=r.get("description", str, default=""),
            vocabularies=vocabularies,
        )


# --------------------------------------------------------------------------- task graphs


class NodeKind(StrEnum):
    START = "start"
    STATE = "state"
    DONE = "done"


@dataclass(frozen=True, slots=True, order=True)
class MemberRef:
    """One demonstration step whose observation belongs to a node."""

    demo_id: str
    step: int

    def to_json(self) -> list[Any]:
        return [self.demo_id, self.step]

    @classmethod
    def from_json(cls, value: object, where: str, source: object = None) -> MemberRef:
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not isinstance(value[0], str)
            or not isinstance(value[1], int)
        ):
            raise FormatError(f"{where} must be [demo_id, step], got {value!r}", source=source)
        return cls(value[0], value[1])

    def __str__(self) -> str:
        return f"{self.demo_id}#{self.step}"


@dataclass(frozen=True, slots=True)
class Node:
    """An equivalence class of UI states. Image paths are relative to the task folder."""

    id: str
    kind: NodeKind
    screenshot: str
    screen: Size
    members: tuple[MemberRef, ...] = ()
    hierarchy: str | None = None
    activity: str | None = None
    phash: str | None = None

    def __post_init__(self) -> None:
        validate_id(self.id, "node id")
        object.__setattr__(self, "kind", NodeKind(self.kind))
        object.__setattr__(self, "members", tuple(self.members))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            "screenshot": self.screenshot,
            "hierarchy": self.hierarchy,
            "activity": self.activity,
            "screen": list(self.screen),
            "phash": self.phash,
            "members": [m.to_json() for m in self.members],
        }

    @classmethod
    def from_json(cls, r: _Reader) -> Node:
        members = r.get("members", list, default=[])
        return r.build(
            cls,
            id=r.get("id", str),
            kind=r.enum("kind", NodeKind),
            screenshot=r.get("screenshot", str),
            hierarchy=r.get("hierarchy", str, default=None, null=True),
            activity=r.get("activity", str, default=None, null=True),
            screen=_size(r, "screen"),
            phash=r.get("phash", str, default=None, null=True),
            members=tuple(
                MemberRef.from_json(m, f"{r._where}.members[{i}]", r._source)
                for i, m in enumerate(members)
            ),
        )


@dataclass(frozen=True, slots=True)
class MatchRule:
    """How an agent's action is matched against an edge. Geometry is in ``[0,1000]`` space.

    Pointed actions match inside ``bounds`` or within ``radius`` of any of ``points``;
    swipes match by ``direction``; typed text matches any of ``texts`` with a rapidfuzz
    ratio of at least ``text_threshold``; back, home and wait match by type.
    """

    action_type: ActionType
    bounds: Bounds | None = None
    points: tuple[Point, ...] = ()
    radius: float = 50.0
    direction: SwipeDirection | None = None
    texts: tuple[str, ...] = ()
    text_threshold: float = 80.0

    def __post_init__(self) -> None:
        t = ActionType(self.action_type)
        object.__setattr__(self, "action_type", t)
        if self.direction is not None:
            object.__setattr__(self, "direction", SwipeDirection(self.direction))
        object.__setattr__(self, "points", tuple((float(x), float(y)) for x, y in self.points))
        object.__setattr__(self, "texts", tuple(self.texts))
        if self.radius < 0:
            raise ValueError("radius must not be negative")
        if not 0 <= self.text_threshold <= 100:
            raise ValueError("text_threshold must be between 0 and 100")

    def problems(self) -> list[str]:
        """Why this rule cannot match anything of its type (empty when it is usable)."""
        t = self.action_type
        if t is ActionType.DONE:
            return ["'done' is how an agent terminates, not an edge"]
        if t.is_pointed and self.bounds is None and not self.points:
            return [f"a {t.value} rule needs element bounds or at least one point"]
        if t is ActionType.SWIPE and self.direction is None:
            return ["a swipe rule needs a direction"]
        if t is ActionType.TYPE and not self.texts:
            return ["a type rule needs at least one accepted text"]
        return []

    def to_json(self) -> dict[str, Any]:
        return {
            "action_type": self.action_type.value,
            "bounds": self.bounds.as_list() if self.bounds else None,
            "points": [[_num(x), _num(y)] for x, y in self.points],
            "radius": _num(self.radius),
            "direction": self.direction.value if self.direction else None,
            "texts": list(self.texts),
            "text_threshold": _num(self.text_threshold),
        }

    @classmethod
    def from_json(cls, r: _Reader) -> MatchRule:
        raw_bounds = r.get("bounds", list, default=None, null=True)
        raw_points = r.get("points", list, default=[])
        try:
            bounds = Bounds.from_list(raw_bounds) if raw_bounds is not None else None
        except ValueError as exc:
            raise r._fail("bounds", str(exc)) from exc
        if not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(v, int | float) for v in p)
            for p in raw_points
        ):
            raise r._fail("points", "must be a list of [x, y] pairs")
        direction = r.get("direction", str, default=None, null=True)
        return r.build(
            cls,
            action_type=r.enum("action_type", ActionType),
            bounds=bounds,
            points=tuple((float(x), float(y)) for x, y in raw_points),
            radius=r.get("radius", float, default=50.0),
            direction=direction,
            texts=r.str_list("texts"),
            text_threshold=r.get("text_threshold", float, default=80.0),
        )


@dataclass(frozen=True, slots=True)
class EdgeSupport:
    """A demonstrated action that supports an edge, in the demo's device pixels."""

    member: MemberRef
    action: Action

    def to_json(self) -> dict[str, Any]:
        return {"member": self.member.to_json(), "action": self.action.to_json()}

    @classmethod
    def from_json(cls, r: _Reader) -> EdgeSupport:
        action = r.child("action")
        assert action is not None
        return cls(
            member=MemberRef.from_json(r.get("member", list), f"{r._where}.member", r._source),
            action=Action.from_json(action),
        )


@dataclass(frozen=True, slots=True)
class Edge:
    id: str
    source: str
    target: str
    rule: MatchRule
    support: tuple[EdgeSupport, ...] = ()

    def __post_init__(self) -> None:
        validate_id(self.id, "edge id")
        object.__setattr__(self, "support", tuple(self.support))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "target": self.target,
            "rule": self.rule.to_json(),
            "support": [s.to_json() for s in self.support],
        }

    @classmethod
    def from_json(cls, r: _Reader) -> Edge:
        rule = r.child("rule")
        assert rule is not None
        return r.build(
            cls,
            id=r.get("id", str),
            source=r.get("source", str),
            target=r.get("target", str),
            rule=MatchRule.from_json(rule),
            support=tuple(EdgeSupport.from_json(s) for s in r.objects("support", default=[])),
        )


class PinKind(StrEnum):
    TOGETHER = "together"  # a manual merge: these members stay in one node
    APART = "apart"  # a manual split: these members never share a node with the others


@dataclass(frozen=True, slots=True)
class Pin:
    """A manual decision from the editor, kept when the graph is rebuilt."""

    kind: PinKind
    members: tuple[MemberRef, ...]
    others: tuple[MemberRef, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", PinKind(self.kind))

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "members": [m.to_json() for m in self.members],
            "others": [m.to_json() for m in self.others],
        }

    @classmethod
    def from_json(cls, r: _Reader) -> Pin:
        def refs(key: str) -> tuple[MemberRef, ...]:
            return tuple(
                MemberRef.from_json(m, f"{r._where}.{key}[{i}]", r._source)
                for i, m in enumerate(r.get(key, list, default=[]))
            )

        return r.build(
            cls, kind=r.enum("kind", PinKind), members=refs("members"), others=refs("others")
        )


@dataclass(frozen=True, slots=True)
class TaskGraph:
    """A multi-path task graph. The networkx view (``graph_builder.graph_index``) is an index."""

    task_id: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...] = ()
    pins: tuple[Pin, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        validate_id(self.task_id, "task id")
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "edges", tuple(self.edges))
        object.__setattr__(self, "pins", tuple(self.pins))
        for what, items in (("node", self.nodes), ("edge", self.edges)):
            ids = [item.id for item in items]
            if len(ids) != len(set(ids)):
                dupes = sorted({i for i in ids if ids.count(i) > 1})
                raise ValueError(f"duplicate {what} ids: {', '.join(dupes)}")

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(f"no node {node_id!r} in the graph of {self.task_id}")

    def edge(self, edge_id: str) -> Edge:
        for e in self.edges:
            if e.id == edge_id:
                return e
        raise KeyError(f"no edge {edge_id!r} in the graph of {self.task_id}")

    @property
    def start(self) -> Node | None:
        return next((n for n in self.nodes if n.kind is NodeKind.START), None)

    @property
    def done_nodes(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.kind is NodeKind.DONE)

    def out_edges(self, node_id: str) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.source == node_id)

    def with_changes(self, **changes: Any) -> Self:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "task_id": self.task_id,
            "nodes": [n.to_json() for n in self.nodes],
            "edges": [e.to_json() for e in self.edges],
            "pins": [p.to_json() for p in self.pins],
            "meta": dict(self.meta),
        }

    @classmethod
    def from_json(cls, data: object, *, source: object = None) -> TaskGraph:
        r = _Reader(data, "graph", source)
        return r.build(
            cls,
            schema_version=r.get("schema_version", int),
            task_id=r.get("task_id", str),
            nodes=tuple(Node.from_json(n) for n in r.objects("nodes")),
            edges=tuple(Edge.from_json(e) for e in r.objects("edges", default=[])),
            pins=tuple(Pin.from_json(p) for p in r.objects("pins", default=[])),
            meta=r.get("meta", dict, default={}),
        )
