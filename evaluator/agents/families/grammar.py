"""Pieces shared by the family parsers: errors, the parse result, a lenient reader of
``name(key=value, ...)`` calls, JSON objects embedded in prose, and checked coordinates.

Models write calls that Python cannot parse (``type(content='it's')``, Chinese quotes,
unescaped inner quotes), so calls are read by hand: a quote closes a string only where a
``,`` and the next ``key=`` or the closing ``)`` follow it.

>>> [c.name for c in find_calls("Action: click(start_box='(1,2)')", ("click",))]
['click']
>>> find_calls('do(action="Type", text="say "hi"")', ("do",))[0].kwargs["text"]
'say "hi"'
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from graph_builder.model import Action, Size, SwipeDirection


class ActionParseError(ValueError):
    """The reply holds no single action we understand."""


class InvalidActionError(ActionParseError):
    """The reply names an action that cannot be carried out (off-screen point, NaN)."""


@dataclass(frozen=True, slots=True)
class Parsed:
    """One parsed reply: the action (in the family's coordinate space), the model's
    reasoning, and content it asked to keep (AutoGLM ``Note``, Mobile-Agent ``memory``)."""

    action: Action
    reasoning: str | None = None
    memory: str | None = None


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    kwargs: dict[str, str] = field(default_factory=dict)
    start: int = 0
    end: int = 0


_KEY = re.compile(r"\s*([A-Za-z_]\w*)\s*=\s*")
_NEXT_KEY = re.compile(r"\s*,\s*[A-Za-z_]\w*\s*=")
_ESCAPES = {"n": "\n", "t": "\t", "'": "'", '"': '"', "\\": "\\"}


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), value)


def _string_end(text: str, i: int, quote: str) -> int | None:
    """Index of the quote closing the string whose opening quote is at ``i``."""
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == quote:
            rest = text[j + 1 :]
            if rest.lstrip().startswith(")") or _NEXT_KEY.match(rest) or not rest.strip():
                return j
        j += 1
    return None


def _bracket_end(text: str, i: int) -> int | None:
    pairs = {"[": "]", "(": ")"}
    stack = [pairs[text[i]]]
    for j in range(i + 1, len(text)):
        c = text[j]
        if c in pairs:
            stack.append(pairs[c])
        elif c in "])":
            if c != stack.pop():
                return None
            if not stack:
                return j
    return None


def _read_call(text: str, name: str, open_at: int, start: int) -> Call:
    kwargs: dict[str, str] = {}
    i = open_at + 1
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            raise ActionParseError(f"{name}(...) is not closed")
        if text[i] == ")":
            return Call(name, kwargs, start, i + 1)
        m = _KEY.match(text, i)
        if m is None:
            raise ActionParseError(
                f"cannot read the arguments of {name}(...) at {text[i : i + 20]!r}"
            )
        key, i = m.group(1), m.end()
        if i < len(text) and text[i] in "'\"":
            end = _string_end(text, i, text[i])
            if end is None:
                raise ActionParseError(f"the {key} argument of {name}(...) misses a closing quote")
            kwargs[key] = _unescape(text[i + 1 : end])
            i = end + 1
        elif i < len(text) and text[i] in "[(":
            end = _bracket_end(text, i)
            if end is None:
                raise ActionParseError(f"the {key} argument of {name}(...) misses a bracket")
            kwargs[key] = text[i : end + 1]
            i = end + 1
        else:
            m2 = re.compile(r"[^,)]*").match(text, i)
            assert m2 is not None
            kwargs[key] = m2.group(0).strip()
            i = m2.end()
        while i < len(text) and text[i].isspace():
            i += 1
        if i < len(text) and text[i] == ",":
            i += 1


def find_calls(text: str, names: Collection[str]) -> list[Call]:
    """Every ``name(...)`` call of one of ``names`` in ``text``, in order."""
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")\s*\(")
    calls: list[Call] = []
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        call = _read_call(text, m.group(1), m.end() - 1, m.start())
        calls.append(call)
        pos = call.end
    return calls


def one_call(text: str, names: Collection[str], what: str) -> Call:
    """The single call in ``text``; none, or more than one, is a parse error."""
    calls = find_calls(text, names)
    if not calls:
        raise ActionParseError(f"no {what} action found")
    if len(calls) > 1:
        listed = ", ".join(c.name for c in calls)
        raise ActionParseError(f"the reply holds {len(calls)} actions ({listed}); one per step")
    return calls[0]


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object embedded in ``text`` (fences and prose around are fine)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        i = text.find("{", end)
    return found


def between(text: str, start: str, end: str) -> str | None:
    m = re.search(re.escape(start) + r"(.*?)" + re.escape(end), text, re.S)
    return m.group(1).strip() if m else None


def number(value: Any, what: str) -> float:
    if isinstance(value, bool):
        raise ActionParseError(f"{what} must be a number, got {value!r}")
    try:
        return float(value if isinstance(value, int | float) else str(value).strip())
    except ValueError:
        raise ActionParseError(f"{what} must be a number, got {value!r}") from None


_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)|nan|inf", re.I)


def numbers(value: Any, what: str) -> list[float]:
    """The numbers in ``[x, y]``, ``(x, y)``, ``"x,y"``, ``"<point>x y</point>"``."""
    if isinstance(value, list | tuple):
        return [number(v, what) for v in value]
    if isinstance(value, str):
        return [float(v) for v in _NUMBER.findall(value)]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [float(value)]
    raise ActionParseError(f"{what} must be a point, got {value!r}")


def point(value: Any, what: str) -> tuple[float, float]:
    """A point ``[x, y]`` or the centre of a box ``[x1, y1, x2, y2]``."""
    nums = numbers(value, what)
    if len(nums) == 4:
        return (nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2
    if len(nums) == 2:
        return nums[0], nums[1]
    raise ActionParseError(f"{what} must be a point [x, y] or a box, got {value!r}")


def checked(xy: tuple[float, float], space: Size, what: str) -> tuple[float, float]:
    """``xy`` when it is a finite point of the ``space``-sized coordinate space."""
    x, y = xy
    if not (math.isfinite(x) and math.isfinite(y)):
        raise InvalidActionError(f"{what} ({x}, {y}) is not a finite point")
    w, h = space
    if not (0 <= x <= w and 0 <= y <= h):
        raise InvalidActionError(
            f"{what} ({x:g}, {y:g}) is outside the {w}x{h} coordinate space of the reply"
        )
    return x, y


def at(value: Any, space: Size, what: str) -> tuple[float, float]:
    return checked(point(value, what), space, what)


def text_arg(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ActionParseError(f"{what} must be a non-empty string, got {value!r}")
    return value


def wait_ms(value: Any, default_ms: int = 1000) -> int:
    """``2``, ``"2 seconds"``, ``"1500ms"`` -> milliseconds."""
    if value is None or value == "":
        return default_ms
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
        if not math.isfinite(seconds) or seconds < 0:
            raise InvalidActionError(f"cannot wait {value!r} seconds")
        return int(seconds * 1000)
    m = re.search(r"(\d+(?:\.\d+)?)\s*(ms|milli)?", str(value))
    if not m:
        return default_ms
    amount = float(m.group(1))
    return int(amount if m.group(2) else amount * 1000)


# The finger moves this fraction of the screen for a swipe given only by direction.
_SWIPE_FRACTION = 0.3
_FINGER_VECTORS: dict[SwipeDirection, tuple[float, float]] = {
    SwipeDirection.UP: (0.0, -1.0),
    SwipeDirection.DOWN: (0.0, 1.0),
    SwipeDirection.LEFT: (-1.0, 0.0),
    SwipeDirection.RIGHT: (1.0, 0.0),
}
# "scroll down" shows what is further down: the finger moves up.
SCROLL_TO_FINGER = {"down": "up", "up": "down", "left": "right", "right": "left"}


def swipe_towards(direction: str, space: Size, start: tuple[float, float] | None = None) -> Action:
    """A swipe whose finger moves in ``direction`` from ``start`` (default: the centre)."""
    try:
        d = SwipeDirection(direction.strip().lower())
    except ValueError:
        raise ActionParseError(f"unknown swipe direction {direction!r}") from None
    w, h = space
    x, y = start if start is not None else (w / 2, h / 2)
    vx, vy = _FINGER_VECTORS[d]
    x2 = min(max(x + vx * w * _SWIPE_FRACTION, 0.0), float(w))
    y2 = min(max(y + vy * h * _SWIPE_FRACTION, 0.0), float(h))
    return Action.swipe(x, y, x2, y2, screen=space)


def key_name(value: Any) -> str:
    """A key as the ``key`` action carries it: ``"enter"``, ``"volume_up"`` or ``"66"``."""
    name = text_arg(value, "key").strip()
    if name.isdigit():
        return name
    name = name.lower().replace(" ", "_")
    name = name.removeprefix("keycode_")
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise ActionParseError(f"{value!r} is not a key name")
    return name
