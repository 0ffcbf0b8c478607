"""UI-Venus 1.5 replies: ``<think>...</think><action>Click(box=(x,y))</action>
<conclusion>...</conclusion>``.

Sources: inclusionAI/UI-Venus (commit c3a1442) ``Venus_framework/processor/
uivenus_processor.py`` (the prompt: Click, Drag, Scroll, Type, Launch, Wait, Finished,
CallUser, LongPress, PressBack, PressHome, PressEnter, PressRecent; coordinates said to
run from (0,0) to (999,999)), ``Venus_framework/policy/ui_venus_policy.py`` (the reference
reader and executor mapping: points are ``int(x * width / 1000)``), and
``Venus_framework/README.md`` (the action table).

Where they disagree we follow the executor: coordinates are divided by 1000, not 999; a
``Scroll`` or ``Drag`` with ``start`` and ``end`` moves the finger from start to end,
and a ``Scroll`` without them (the README's ``Scroll(direction)``) always moves the
finger up, from (750, 714) to (750, 400) of the screen, whatever the direction says,
because the executor looks its preset up under a key that never matches; the typed text
has its ``(``, ``)`` and ``|`` replaced by their full-width forms, as the executor
types it. Points are integer tuples ``(x,y)``, as the reader requires.

Mapping: Click(box) -> tap, LongPress(box) -> long press, Scroll / Drag(start, end) ->
swipe, Type(content) -> type, Launch(app) -> launch, Wait() -> wait 1 s, Finished() ->
done (with its content as the answer when there is one), CallUser(content) -> ask the
user (the prompt uses it both for answers to the user and for handing over), PressBack
/ PressHome -> back / home, PressEnter -> key enter, PressRecent -> key app_switch.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from evaluator.agents.families.grammar import (
    ActionParseError,
    Call,
    Parsed,
    between,
    checked,
    find_calls,
    text_arg,
)
from graph_builder.model import Action, ActionType, Size

NAMES = (
    "Click",
    "LongPress",
    "Drag",
    "Scroll",
    "Type",
    "Launch",
    "Wait",
    "Finished",
    "CallUser",
    "PressBack",
    "PressHome",
    "PressEnter",
    "PressRecent",
)
# The executor's preset for a direction-only scroll, as fractions of the screen.
_PRESET_SCROLL = ((0.75, 5 / 7), (0.75, 0.4))
_FULL_WIDTH = str.maketrans({"(": "（", ")": "）", "|": "｜"})


def _point(call: Call, key: str, space: Size) -> tuple[float, float]:
    raw = call.kwargs.get(key)
    if raw is None:
        raise ActionParseError(f"{call.name}(...) needs {key}=(x,y)")
    m = re.fullmatch(r"\(\s*([-+]?\d+)\s*,\s*([-+]?\d+)\s*\)", raw.strip())
    if m is None:
        raise ActionParseError(f"{call.name} {key} must be an integer pair (x,y), got {raw!r}")
    return checked((float(m.group(1)), float(m.group(2))), space, f"{call.name} {key}")


def _swipe(call: Call, space: Size) -> Action:
    if "start" in call.kwargs or "end" in call.kwargs:
        return Action.swipe(
            *_point(call, "start", space), *_point(call, "end", space), screen=space
        )
    if call.name == "Drag":
        raise ActionParseError("Drag(...) needs start=(x,y) and end=(x,y)")
    (fx1, fy1), (fx2, fy2) = _PRESET_SCROLL
    w, h = space
    return Action.swipe(fx1 * w, fy1 * h, fx2 * w, fy2 * h, screen=space)


def parse_ui_venus(text: str, space: Size) -> Parsed:
    """Parse a UI-Venus 1.5 reply; ``space`` is the 0-1000 relative space.

    >>> parse_ui_venus("<action>Click(box=(500,250))</action>", (1000, 1000)).action.point
    (500.0, 250.0)
    """
    body = between(text, "<action>", "</action>")
    body = text.strip() if body is None else body
    calls = find_calls(body, NAMES)
    if not calls:
        raise ActionParseError("no UI-Venus action found")
    if len(calls) > 1:
        raise ActionParseError(f"the reply holds {len(calls)} actions; one per step")
    call = calls[0]
    if body[: call.start].strip():  # the reference reads a call only at the start
        raise ActionParseError(f"the action must open the <action> part: {body[:40]!r}")
    kw = call.kwargs

    def typed() -> Action:
        return Action.type_text(text_arg(kw.get("content"), "Type content").translate(_FULL_WIDTH))

    builders: dict[str, Callable[[], Action]] = {
        "Click": lambda: Action.tap(*_point(call, "box", space), screen=space),
        "LongPress": lambda: Action.long_press(*_point(call, "box", space), screen=space),
        "Drag": lambda: _swipe(call, space),
        "Scroll": lambda: _swipe(call, space),
        "Type": typed,
        "Launch": lambda: Action.launch(text_arg(kw.get("app"), "Launch app")),
        "Wait": lambda: Action.wait(1000),
        "Finished": lambda: Action(ActionType.DONE, text=kw.get("content") or None),
        "CallUser": lambda: Action.ask_user(kw.get("content") or None),
        "PressBack": Action.back,
        "PressHome": Action.home,
        "PressEnter": lambda: Action.key("enter"),
        "PressRecent": lambda: Action.key("app_switch"),
    }
    reasoning = between(text, "<think>", "</think>") or between(
        text, "<conclusion>", "</conclusion>"
    )
    return Parsed(builders[call.name](), reasoning=reasoning or None)
