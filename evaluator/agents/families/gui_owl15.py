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
from dataclasses import replace

from evaluator.agents.families.grammar import (
    ActionParseError,
    InvalidActionError,
    Parsed,
    at,
    text_arg,
    wait_ms,
)
from evaluator.agents.families.mobile_use import (
    call_arguments,
    mobile_use_builders,
    single_call,
    whole_tool_calls,
)
from evaluator.agents.families.space import GUI_OWL15_RUNNER_ROUNDING
from graph_builder.model import Action, ActionType, Size


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
    args = call_arguments(single_call(whole_tool_calls(text)))
    kind = str(args.get("action", "")).strip()

    def point() -> tuple[float, float]:
        return at(args.get("coordinate"), space, f"{kind} coordinate")

    builders = {
        **mobile_use_builders(args, space, kind),
        # the runner's own meanings where they differ from the mobile_use grammar
        "long_press": lambda: Action.long_press(*point(), screen=space, duration_ms=800),
        "wait": lambda: Action.wait(wait_ms(args.get("time", 2))),
        "answer": lambda: Action(ActionType.DONE, text=text_arg(args.get("text"), "answer text")),
        "interact": lambda: Action.ask_user(args.get("text") or None),
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
