"""MAI-UI navigation replies: ``<thinking>...</thinking>`` then one ``mobile_use`` tool
call, ``<tool_call>{"name": "mobile_use", "arguments": {"action": "click",
"coordinate": [x, y]}}</tool_call>``; a thinking model's ``...</think>`` is read too.

Sources: Tongyi-MAI/MAI-UI (commit 4dd07b9) ``src/prompt.py`` (the action space of the
navigation prompts, with ``ask_user`` and ``double_click`` in the variant the benchmark
runs) and ``src/mai_naivigation_agent.py`` (coordinates, a point or a box whose centre
counts, are divided by ``SCALE_FACTOR = 999``); the executor the family is evaluated
with, Tongyi-MAI/MobileWorld ``src/mobile_world/agents/utils/action_translation.py``
(``args_to_action_dict``), ``src/mobile_world/core/server.py`` and
``src/mobile_world/runtime/controller.py``.

Swipes: ``swipe(direction)`` names the finger's movement. The executor turns up/down
into the opposite "scroll" and the server turns that scroll back into a finger swipe
the other way, so ``swipe up`` moves the finger up (left and right pass through
unchanged). The server starts every such swipe at the screen's centre, ignoring the
optional ``coordinate``; we do the same. ``drag(start_coordinate, end_coordinate)`` is a
finger movement from start to end.

Mapping: click -> tap, double_click -> double tap, long_press -> long press, type(text)
-> type, swipe -> swipe, drag -> swipe, open(text) -> launch, system_button back/home
-> back/home, enter/menu -> key, wait -> wait 1 s (the server's pause), terminate
success -> done, fail -> give up, answer(text) -> answer, ask_user(text) -> ask the user.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evaluator.agents.families.grammar import (
    ActionParseError,
    Parsed,
    at,
    between,
    swipe_towards,
    text_arg,
)
from evaluator.agents.families.mobile_use import (
    call_arguments,
    single_call,
    system_button,
    whole_tool_calls,
)
from graph_builder.model import Action, Size

_STATUS = {"success": Action.done, "fail": lambda: Action.give_up("terminate(status='fail')")}
_DIRECTIONS = ("up", "down", "left", "right")


def _thinking(text: str) -> str | None:
    found = between(text, "<thinking>", "</thinking>")
    if found is None and "</think>" in text:
        found = text.split("</think>", 1)[0].replace("<think>", "").strip()
    return found or None


def _swipe(args: dict[str, Any], space: Size) -> Action:
    direction = str(args.get("direction", "")).strip().lower()
    if direction not in _DIRECTIONS:
        raise ActionParseError(f"swipe direction must be up, down, left or right: {direction!r}")
    return swipe_towards(direction, space)


def parse_mai_ui(text: str, space: Size) -> Parsed:
    """Parse a MAI-UI reply; ``space`` is the 0-999 relative space.

    >>> reply = ('<thinking>open it</thinking><tool_call>{"name": "mobile_use", '
    ...     '"arguments": {"action": "click", "coordinate": [499.5, 999]}}</tool_call>')
    >>> parse_mai_ui(reply, (999, 999)).action.normalized().point
    (500.0, 1000.0)
    """
    call = single_call(whole_tool_calls(text))
    name = call.get("name", "mobile_use")
    if name != "mobile_use":
        raise ActionParseError(f"{name!r} is not a phone action (only mobile_use is)")
    args = call_arguments(call)
    kind = str(args.get("action", "")).strip()

    def coordinate(key: str = "coordinate") -> tuple[float, float]:
        return at(args.get(key), space, f"{kind} {key}")

    def terminate() -> Action:
        status = str(args.get("status", "success")).strip().lower()
        if status not in _STATUS:
            raise ActionParseError(f"terminate status must be success or fail, got {status!r}")
        return _STATUS[status]()

    builders: dict[str, Callable[[], Action]] = {
        "click": lambda: Action.tap(*coordinate(), screen=space),
        "double_click": lambda: Action.double_tap(*coordinate(), screen=space),
        "long_press": lambda: Action.long_press(*coordinate(), screen=space),
        "type": lambda: Action.type_text(text_arg(args.get("text"), "type text")),
        "swipe": lambda: _swipe(args, space),
        "drag": lambda: Action.swipe(
            *coordinate("start_coordinate"), *coordinate("end_coordinate"), screen=space
        ),
        "open": lambda: Action.launch(text_arg(args.get("text"), "open text")),
        "system_button": lambda: system_button(args),
        "wait": lambda: Action.wait(1000),
        "terminate": terminate,
        "answer": lambda: Action.answer(text_arg(args.get("text"), "answer text")),
        "ask_user": lambda: Action.ask_user(args.get("text") or None),
    }
    if kind not in builders:
        raise ActionParseError(f"unknown MAI-UI action {kind!r}")
    return Parsed(builders[kind](), reasoning=_thinking(text))
