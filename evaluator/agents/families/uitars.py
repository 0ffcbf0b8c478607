"""UI-TARS replies: ``Thought: ...`` then ``Action: click(start_box='(x,y)')``.

Grammar from bytedance/UI-TARS: README_v1.md (the 1.0 mobile and computer prompts),
codes/ui_tars/prompt.py (MOBILE_USE_DOUBAO, the 1.5 mobile prompt) and
codes/ui_tars/action_parser.py (how boxes and ``<point>`` are read; a reply may also open
with ``Reflection: ... Action_Summary: ...``). Both versions accept both syntaxes:

- 1.0: ``start_box='<|box_start|>(x1,y1)<|box_end|>'``, coordinates relative 0-1000;
  the mobile prompt scrolls with ``scroll(start_box=..., end_box=...)`` (a drag of the
  finger) and long-presses with ``long_press(start_box=..., time='')``;
- 1.5: ``point='<point>x1 y1</point>'`` (``start_point`` / ``end_point`` for drag),
  coordinates in pixels of the smart-resized image, plus ``open_app(app_name='')``.

``scroll(direction='down')`` shows what is further down, so the finger moves up.
``left_double`` is a double tap, ``hotkey(key=)`` / ``press(key=)`` a key, ``call_user()``
asks the user, ``finished(content=)`` ends the task with its content as the answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from evaluator.agents.families.grammar import (
    SCROLL_TO_FINGER,
    ActionParseError,
    Call,
    Parsed,
    at,
    key_name,
    one_call,
    swipe_towards,
    text_arg,
    wait_ms,
)
from graph_builder.model import Action, ActionType, Size

NAMES = (
    "click",
    "left_single",
    "left_double",
    "long_press",
    "type",
    "scroll",
    "drag",
    "open_app",
    "press_home",
    "press_back",
    "hotkey",
    "press",
    "wait",
    "call_user",
    "finished",
)


def _box(call: Call, space: Size, *keys: str) -> tuple[float, float]:
    for key in keys:
        if key in call.kwargs:
            raw = call.kwargs[key].replace("<|box_start|>", "").replace("<|box_end|>", "")
            return at(raw, space, f"{call.name} {key}")
    raise ActionParseError(f"{call.name}(...) needs {' or '.join(keys)}")


_START = ("start_box", "point", "start_point")
_END = ("end_box", "end_point")


def _scroll(call: Call, space: Size) -> Action:
    start = _box(call, space, *_START) if any(k in call.kwargs for k in _START) else None
    if any(k in call.kwargs for k in _END):
        if start is None:
            raise ActionParseError("scroll(...) with an end needs a start")
        return Action.swipe(*start, *_box(call, space, *_END), screen=space)
    direction = call.kwargs.get("direction", "").strip().lower()
    if direction not in SCROLL_TO_FINGER:
        raise ActionParseError(f"scroll direction must be up, down, left or right: {direction!r}")
    return swipe_towards(SCROLL_TO_FINGER[direction], space, start)


def _long_press(call: Call, space: Size) -> Action:
    time = call.kwargs.get("time", "")
    duration = wait_ms(time, 800) if re.search(r"\d", time) else 800
    return Action.long_press(*_box(call, space, *_START), screen=space, duration_ms=duration)


def parse_uitars(text: str, space: Size) -> Parsed:
    """Parse a UI-TARS (1.0 or 1.5) reply; ``space`` is the size its coordinates run over.

    >>> parse_uitars("Action: click(point='<point>200 300</point>')", (1000, 1000)).action.point
    (200.0, 300.0)
    """
    thought = None
    m = re.search(r"(?:Thought|Action_Summary):\s*(.*?)(?=\n\s*Action:|$)", text, re.S)
    if m:
        thought = m.group(1).strip() or None
    if "Action:" not in text:
        raise ActionParseError("no 'Action:' line in the reply")
    call = one_call(text.rsplit("Action:", 1)[1], NAMES, "UI-TARS")
    kw = call.kwargs
    builders: dict[str, Callable[[], Action]] = {
        "click": lambda: Action.tap(*_box(call, space, *_START), screen=space),
        "left_single": lambda: Action.tap(*_box(call, space, *_START), screen=space),
        "left_double": lambda: Action.double_tap(*_box(call, space, *_START), screen=space),
        "long_press": lambda: _long_press(call, space),
        "type": lambda: Action.type_text(text_arg(kw.get("content"), "type content")),
        "scroll": lambda: _scroll(call, space),
        "drag": lambda: Action.swipe(
            *_box(call, space, *_START), *_box(call, space, *_END), screen=space
        ),
        "open_app": lambda: Action.launch(text_arg(kw.get("app_name"), "open_app app_name")),
        "press_home": Action.home,
        "press_back": Action.back,
        "hotkey": lambda: Action.key(key_name(kw.get("key", kw.get("hotkey")))),
        "press": lambda: Action.key(key_name(kw.get("key", kw.get("press")))),
        "wait": lambda: Action.wait(5000),  # the prompts: "Sleep for 5s"
        "call_user": lambda: Action.ask_user(thought),
        "finished": lambda: Action(ActionType.DONE, text=kw.get("content") or None),
    }
    return Parsed(builders[call.name](), reasoning=thought)
