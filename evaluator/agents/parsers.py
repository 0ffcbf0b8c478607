"""Turn a model's text into an Action, for several popular GUI-agent output styles.

Each parser is ``parse(text, space) -> Parsed``: ``space`` is the (width, height) of the
coordinate space the model answers in (``NORMALIZED_SCREEN`` for ``[0,1000]`` models, the
sent image size for pixel models), and the returned action carries it as ``screen``.
Unparseable text raises ActionParseError with a message saying what was wrong; agents turn
it into a recorded parse failure, never a crash.

>>> parse_autoglm('do(action="Tap", element=[500, 250])', (1000, 1000)).action.describe()
'tap (500, 250)'
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evaluator.errors import ConfigError
from graph_builder.model import Action, ActionType, Size, SwipeDirection


class ActionParseError(ValueError):
    """The model output holds no action we understand."""


@dataclass(frozen=True, slots=True)
class Parsed:
    action: Action
    reasoning: str | None = None
    memory: str | None = None


Parser = Callable[[str, Size], Parsed]

# The finger moves this fraction of the screen for a swipe given only by direction.
_SWIPE_FRACTION = 0.3
_FINGER_VECTORS: dict[SwipeDirection, tuple[float, float]] = {
    SwipeDirection.UP: (0.0, -1.0),
    SwipeDirection.DOWN: (0.0, 1.0),
    SwipeDirection.LEFT: (-1.0, 0.0),
    SwipeDirection.RIGHT: (1.0, 0.0),
}


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


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        try:
            return float(str(value).strip())
        except ValueError:
            raise ActionParseError(f"{what} must be a number, got {value!r}") from None
    return float(value)


def _point(value: Any, what: str) -> tuple[float, float]:
    """[x, y], (x, y), "x,y", "(x, y)" or a box [x1, y1, x2, y2] (its centre)."""
    if isinstance(value, str):
        value = [v for v in re.findall(r"-?\d+(?:\.\d+)?", value)]
    if isinstance(value, list | tuple) and len(value) in (2, 4):
        nums = [_number(v, what) for v in value]
        if len(nums) == 4:
            return (nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2
        return nums[0], nums[1]
    raise ActionParseError(f"{what} must be a point [x, y], got {value!r}")


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ActionParseError(f"{what} must be a non-empty string, got {value!r}")
    return value


def _wait_ms(value: Any) -> int:
    """'2 seconds', 2, '1500ms' -> milliseconds (default one second)."""
    if value is None:
        return 1000
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value * 1000)
    m = re.search(r"(\d+(?:\.\d+)?)\s*(ms|milli)?", str(value))
    if not m:
        return 1000
    number = float(m.group(1))
    return int(number if m.group(2) else number * 1000)


# --------------------------------------------------------------------------- our JSON format


def _json_objects(text: str) -> list[dict[str, Any]]:
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


def action_from_fields(fields: dict[str, Any], space: Size) -> Action:
    """Build an Action from our JSON action fields (``{"action": "tap", "x": .., "y": ..}``).

    Also accepts the on-disk form ``{"type": "tap", ...}`` and swipes given by
    ``direction`` only.
    """
    kind = fields.get("action", fields.get("type"))
    if isinstance(kind, dict):
        return action_from_fields(kind, space)
    if not isinstance(kind, str):
        raise ActionParseError("the JSON object has no 'action' (or 'type') string")
    try:
        t = ActionType(kind.strip().lower().replace(" ", "_"))
    except ValueError:
        raise ActionParseError(f"unknown action {kind!r}") from None
    if t.is_pointed:
        if "x" in fields and "y" in fields:
            x, y = _number(fields["x"], "x"), _number(fields["y"], "y")
        else:
            x, y = _point(fields.get("point", fields.get("coordinate")), "point")
        if t is ActionType.TAP:
            return Action.tap(x, y, screen=space)
        return Action.long_press(x, y, screen=space)
    if t is ActionType.SWIPE:
        if all(k in fields for k in ("x1", "y1", "x2", "y2")):
            return Action.swipe(
                _number(fields["x1"], "x1"),
                _number(fields["y1"], "y1"),
                _number(fields["x2"], "x2"),
                _number(fields["y2"], "y2"),
                screen=space,
            )
        if "direction" in fields:
            start = None
            if "x" in fields and "y" in fields:
                start = (_number(fields["x"], "x"), _number(fields["y"], "y"))
            return swipe_towards(str(fields["direction"]), space, start)
        raise ActionParseError("a swipe needs x1, y1, x2, y2 or a direction")
    if t is ActionType.TYPE:
        return Action.type_text(_text(fields.get("text"), "text"))
    if t is ActionType.WAIT:
        return Action.wait(_wait_ms(fields.get("seconds", 1)))
    return Action(t)


def parse_json(text: str, space: Size) -> Parsed:
    """Our format: a JSON object with ``action`` and its fields, plus optional ``thought``.

    ``{"thought": "open settings", "action": "tap", "x": 120, "y": 860}``
    """
    for obj in _json_objects(text):
        if "action" in obj or "type" in obj:
            thought = obj.get("thought", obj.get("reasoning"))
            memory = obj.get("memory")
            return Parsed(
                action_from_fields(obj, space),
                reasoning=thought if isinstance(thought, str) else None,
                memory=memory if isinstance(memory, str) and memory else None,
            )
    raise ActionParseError("no JSON object with an 'action' field found")


# --------------------------------------------------------------------------- function calls


def _find_call(text: str, names: tuple[str, ...]) -> ast.Call:
    """The last ``name(...)`` call in ``text`` (string-aware paren matching), parsed safely."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\s*\(")
    for m in reversed(list(pattern.finditer(text))):
        end = _closing_paren(text, m.end() - 1)
        if end is None:
            continue
        try:
            tree = ast.parse(text[m.start() : end + 1].strip(), mode="eval")
        except SyntaxError:
            continue
        if isinstance(tree.body, ast.Call):
            return tree.body
    raise ActionParseError(f"no {' / '.join(n + '(...)' for n in names)} call found")


def _closing_paren(text: str, open_at: int) -> int | None:
    depth, quote, i = 0, "", open_at
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _call_name(call: ast.Call) -> str:
    return call.func.id if isinstance(call.func, ast.Name) else ""


def _call_kwargs(call: ast.Call) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            continue
        try:
            out[kw.arg] = ast.literal_eval(kw.value)
        except ValueError as exc:
            raise ActionParseError(f"argument {kw.arg!r} is not a literal value") from exc
    return out


def _between(text: str, start: str, end: str) -> str | None:
    m = re.search(re.escape(start) + r"(.*?)" + re.escape(end), text, re.S)
    return m.group(1).strip() if m else None


def parse_autoglm(text: str, space: Size) -> Parsed:
    """AutoGLM style: ``do(action="Tap", element=[x,y])``, ``finish(message="...")``.

    Coordinates are AutoGLM's relative ``[0,1000)`` space, i.e. pass NORMALIZED_SCREEN.
    """
    reasoning = _between(text, "<think>", "</think>")
    answer = _between(text, "<answer>", "</answer>") or text
    call = _find_call(answer, ("do", "finish"))
    kw = _call_kwargs(call)
    if _call_name(call) == "finish":
        return Parsed(Action.done(), reasoning=reasoning or kw.get("message"))
    kind = str(kw.get("action", "")).strip().lower().replace("_", " ")
    builders: dict[str, Callable[[], Action]] = {
        "tap": lambda: Action.tap(*_point(kw.get("element"), "element"), screen=space),
        "double tap": lambda: Action.tap(*_point(kw.get("element"), "element"), screen=space),
        "long press": lambda: Action.long_press(
            *_point(kw.get("element"), "element"), screen=space
        ),
        "swipe": lambda: Action.swipe(
            *_point(kw.get("start"), "start"), *_point(kw.get("end"), "end"), screen=space
        ),
        "type": lambda: Action.type_text(_text(kw.get("text"), "text")),
        "type name": lambda: Action.type_text(_text(kw.get("text"), "text")),
        "back": Action.back,
        "home": Action.home,
        "wait": lambda: Action.wait(_wait_ms(kw.get("duration"))),
    }
    if kind not in builders:
        raise ActionParseError(f"unsupported AutoGLM action {kw.get('action')!r}")
    return Parsed(builders[kind](), reasoning=reasoning)


def parse_uitars(text: str, space: Size) -> Parsed:
    """UI-TARS style: ``Thought: ...`` then ``Action: click(start_box='(x,y)')``.

    ``scroll(direction='down')`` shows what is further down, so the finger moves up.
    """
    thought = None
    m = re.search(r"Thought:\s*(.*?)(?:\n\s*Action:|$)", text, re.S)
    if m:
        thought = m.group(1).strip() or None
    action_text = text.split("Action:", 1)[1] if "Action:" in text else text
    names = (
        "click",
        "left_single",
        "long_press",
        "type",
        "scroll",
        "drag",
        "press_home",
        "press_back",
        "finished",
        "wait",
    )
    call = _find_call(action_text, names)
    kw = _call_kwargs(call)
    name = _call_name(call)

    def box(key: str) -> tuple[float, float]:
        raw = kw.get(key)
        if isinstance(raw, str):
            raw = raw.replace("<|box_start|>", "").replace("<|box_end|>", "")
        return _point(raw, key)

    scroll_finger = {"down": "up", "up": "down", "left": "right", "right": "left"}
    builders: dict[str, Callable[[], Action]] = {
        "click": lambda: Action.tap(*box("start_box"), screen=space),
        "left_single": lambda: Action.tap(*box("start_box"), screen=space),
        "long_press": lambda: Action.long_press(*box("start_box"), screen=space),
        "type": lambda: Action.type_text(_text(kw.get("content"), "content")),
        "scroll": lambda: swipe_towards(
            scroll_finger.get(str(kw.get("direction", "")).lower(), str(kw.get("direction"))),
            space,
            box("start_box") if "start_box" in kw else None,
        ),
        "drag": lambda: Action.swipe(*box("start_box"), *box("end_box"), screen=space),
        "press_home": Action.home,
        "press_back": Action.back,
        "finished": Action.done,
        "wait": Action.wait,
    }
    return Parsed(builders[name](), reasoning=thought)


def parse_qwen_mobile_use(text: str, space: Size) -> Parsed:
    """Qwen-VL's ``mobile_use`` tool call inside ``<tool_call>...</tool_call>``.

    Coordinates are pixels of the image the model saw: pass that image's size.
    """
    body = _between(text, "<tool_call>", "</tool_call>") or text
    call = next((o for o in _json_objects(body) if "arguments" in o), None)
    if call is None:
        raise ActionParseError("no tool call with 'arguments' found")
    args = call["arguments"]
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            raise ActionParseError("the tool call's arguments are not JSON") from None
    if not isinstance(args, dict):
        raise ActionParseError("the tool call's arguments must be an object")
    thought = text.split("<tool_call>", 1)[0].strip() or None
    kind = str(args.get("action", ""))
    buttons: dict[str, Callable[[], Action]] = {"back": Action.back, "home": Action.home}
    builders: dict[str, Callable[[], Action]] = {
        "click": lambda: Action.tap(*_point(args.get("coordinate"), "coordinate"), screen=space),
        "long_press": lambda: Action.long_press(
            *_point(args.get("coordinate"), "coordinate"),
            screen=space,
            duration_ms=_wait_ms(args.get("time", 0.8)),
        ),
        "swipe": lambda: Action.swipe(
            *_point(args.get("coordinate"), "coordinate"),
            *_point(args.get("coordinate2"), "coordinate2"),
            screen=space,
        ),
        "type": lambda: Action.type_text(_text(args.get("text"), "text")),
        "system_button": lambda: _button(buttons, args.get("button")),
        "wait": lambda: Action.wait(_wait_ms(args.get("time"))),
        "terminate": Action.done,
    }
    if kind not in builders:
        raise ActionParseError(f"unsupported mobile_use action {kind!r}")
    return Parsed(builders[kind](), reasoning=thought)


def _button(buttons: dict[str, Callable[[], Action]], name: object) -> Action:
    key = str(name).strip().lower()
    if key not in buttons:
        raise ActionParseError(f"unsupported system button {name!r}")
    return buttons[key]()


PARSERS: dict[str, Parser] = {
    "json": parse_json,
    "autoglm": parse_autoglm,
    "uitars": parse_uitars,
    "qwen_mobile_use": parse_qwen_mobile_use,
}

# Whether a style's coordinates are [0,1000] ("normalized") or pixels of the sent image.
DEFAULT_SPACES: dict[str, str] = {
    "json": "normalized",
    "autoglm": "normalized",
    "uitars": "normalized",
    "qwen_mobile_use": "image",
}


def get_parser(name: str) -> Parser:
    try:
        return PARSERS[name]
    except KeyError:
        raise ConfigError(
            f"unknown action parser {name!r}; choose one of: {', '.join(sorted(PARSERS))}"
        ) from None
