"""GUI-Owl 1.5 replies: an ``Action:`` line (a short imperative), then one ``mobile_use``
tool call, ``<tool_call>{"name": "mobile_use", "arguments": {"action": "click",
"coordinate": [x, y]}}</tool_call>``.

Source: X-PLUG/MobileAgent (commit 11cea57), ``Mobile-Agent-v3.5/mobile_use/utils.py``
(the system prompt: the screen is said to be 1000x1000; actions key, click, long_press,
swipe, type, system_button, open, wait, answer, interact, terminate; the response is the
``Action:`` line then the tool call) and ``Mobile-Agent-v3.5/mobile_use/
run_gui_owl_1_5_for_mobile.py`` (the reference runner), with ``Mobile-Agent-v3.5/
README.md`` ("outputs relative coordinates (0-1000)").

The runner does not scale by the screenshot itself: it rounds the screenshot's sides to
multiples of 16 (``smart_resize`` with factor 16, pixels 3136..1003520x200, which for a
phone screen only rounds) and taps ``int(x / 1000 * rounded_width)`` as device pixels.
On a 1080-wide screen x=500 lands on pixel 544, not 540. We follow the runner
(``place_like_runner``); docs/agents.md records the disagreement.

Mapping (the runner's meaning): click -> tap, long_press -> long press (the runner holds
800 ms whatever ``time`` says), swipe(coordinate, coordinate2) -> a swipe of the finger
from the first point to the second, type(text) -> type, key(text) -> key, system_button
Back/Home -> back/home, Menu/Enter -> key (the runner ignores them), open(text) ->
launch, wait(time, default 2 s) -> wait, answer(text) -> done with the text as the
answer (the runner ends the task on it), interact(text) -> ask the user, terminate
success -> done, failure -> give up.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import replace

from evaluator.agents.families.grammar import (
    ActionParseError,
    InvalidActionError,
    Parsed,
    at,
    key_name,
    text_arg,
    wait_ms,
)
from evaluator.agents.families.mobile_use import call_arguments, whole_tool_calls
from evaluator.agents.families.space import GUI_OWL15_RUNNER_ROUNDING
from graph_builder.model import Action, ActionType, Size

_BUTTONS: dict[str, Callable[[], Action]] = {
    "back": Action.back,
    "home": Action.home,
    "menu": lambda: Action.key("menu"),
    "enter": lambda: Action.key("enter"),
}


def _action_line(text: str) -> str | None:
    m = re.search(r"Action:\s*(.*?)\s*(?=<tool_call>|$)", text, re.S)
    return (m.group(1).strip() or None) if m else None


def parse_gui_owl15(text: str, space: Size) -> Parsed:
    """Parse a GUI-Owl 1.5 reply; ``space`` is the 0-1000 relative space.

    >>> call = '{"name": "mobile_use", "arguments": {"action": "open", "text": "Clock"}}'
    >>> parse_gui_owl15(f"Action: open Clock\\n<tool_call>\\n{call}\\n</tool_call>",
    ...                 (1000, 1000)).action.describe()
    "launch 'Clock'"
    """
    calls = whole_tool_calls(text)
    if not calls:
        raise ActionParseError("no mobile_use tool call found")
    if len(calls) > 1:
        raise ActionParseError(f"the reply holds {len(calls)} tool calls; one per step")
    args = call_arguments(calls[0])
    kind = str(args.get("action", "")).strip()

    def coordinate(key: str = "coordinate") -> tuple[float, float]:
        return at(args.get(key), space, f"{kind} {key}")

    def terminate() -> Action:
        status = str(args.get("status", "success")).strip().lower()
        if status == "success":
            return Action.done()
        if status == "failure":
            return Action.give_up("terminate(status='failure')")
        raise ActionParseError(f"terminate status must be success or failure, got {status!r}")

    def button() -> Action:
        name = str(args.get("button", "")).strip().lower()
        if name not in _BUTTONS:
            raise ActionParseError(f"unknown system button {args.get('button')!r}")
        return _BUTTONS[name]()

    builders: dict[str, Callable[[], Action]] = {
        "click": lambda: Action.tap(*coordinate(), screen=space),
        "long_press": lambda: Action.long_press(*coordinate(), screen=space, duration_ms=800),
        "swipe": lambda: Action.swipe(*coordinate(), *coordinate("coordinate2"), screen=space),
        "type": lambda: Action.type_text(text_arg(args.get("text"), "type text")),
        "key": lambda: Action.key(key_name(args.get("text"))),
        "system_button": button,
        "open": lambda: Action.launch(text_arg(args.get("text"), "open text")),
        "wait": lambda: Action.wait(wait_ms(args.get("time", 2))),
        "answer": lambda: Action(ActionType.DONE, text=text_arg(args.get("text"), "answer text")),
        "interact": lambda: Action.ask_user(args.get("text") or None),
        "terminate": terminate,
    }
    if kind not in builders:
        raise ActionParseError(f"unknown GUI-Owl 1.5 action {kind!r}")
    return Parsed(builders[kind](), reasoning=_action_line(text))


def place_like_runner(action: Action, sent: Size) -> Action:
    """``action`` (0-1000) as the reference runner taps it on a ``sent``-sized screen:
    scaled by the screen's sides rounded to multiples of 16, the result taken as pixels.
    A point that lands past the screen's edge is an invalid action."""
    if action.screen is None:
        return action
    rounded = GUI_OWL15_RUNNER_ROUNDING(int(sent[0]), int(sent[1]))
    placed = replace(action.rescaled(rounded), screen=(int(sent[0]), int(sent[1])))
    for x, y in (p for p in (placed.point, placed.end_point) if p is not None):
        if not (math.isfinite(x) and math.isfinite(y) and 0 <= x <= sent[0] and 0 <= y <= sent[1]):
            raise InvalidActionError(
                f"the point lands at ({x:g}, {y:g}), outside the {sent[0]}x{sent[1]} screen "
                "once scaled by the runner's 16-rounded size"
            )
    return placed
