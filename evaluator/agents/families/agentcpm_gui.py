"""AgentCPM-GUI replies: one compact JSON object, ``{"thought": "...", "POINT": [729, 69]}``.

Sources: OpenBMB/AgentCPM-GUI (commit acbaf50) ``README.md`` (the action table, the
system prompt built around the schema, the screenshot's longer side resized to 1120 px),
``eval/utils/schema/schema.json`` (the fields: ``POINT`` and ``to`` are integer pairs in
0-1000 of the screen's width and height, ``to`` may instead be up/down/left/right,
``duration`` in ms with default 200, ``PRESS`` HOME/BACK/ENTER, ``TYPE``, ``STATUS``; no
other field is allowed) and ``eval/utils/evaluator.py`` with ``eval/utils/
convert_output.py`` (the reference reading: a stopping ``STATUS`` ends the task whatever
action comes with it; ``POINT`` alone is a click, with ``to`` a swipe, with a
``duration`` above 200 a long press; a ``duration`` alone is a wait).

Swipes: ``to`` as a direction is the finger's movement from ``POINT`` (the evaluator
compares it with the touch-to-lift direction of the recorded gesture); the published
code never carries a direction swipe out, so its length is ours, 30% of the screen.

Mapping: POINT -> tap, POINT + duration > 200 -> long press of that duration, POINT +
to -> swipe, TYPE -> type, PRESS HOME/BACK -> home/back, ENTER -> key enter, duration
alone -> wait, STATUS finish or satisfied -> done, impossible or interrupt -> give up,
need_feedback -> ask the user, the thought being the question (the schema has no field
for one); ``thought`` is the reasoning.
"""

from __future__ import annotations

from typing import Any

from evaluator.agents.families.grammar import (
    ActionParseError,
    Parsed,
    checked,
    json_objects,
    swipe_towards,
    text_arg,
)
from graph_builder.model import Action, Size

_FIELDS = {"thought", "POINT", "to", "duration", "PRESS", "TYPE", "STATUS"}
_DEFAULT_MS = 200
_STOPS = {
    "finish": Action.done,
    "satisfied": Action.done,
    "impossible": lambda: Action.give_up("STATUS impossible"),
    "interrupt": lambda: Action.give_up("STATUS interrupt"),
}
_PRESS = {"HOME": Action.home, "BACK": Action.back, "ENTER": lambda: Action.key("enter")}
_DIRECTIONS = ("up", "down", "left", "right")


def _location(value: Any, space: Size, what: str) -> tuple[float, float]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise ActionParseError(f"{what} must be two integers [x, y], got {value!r}")
    return checked((float(value[0]), float(value[1])), space, what)


def _duration(fields: dict[str, Any]) -> int:
    value = fields.get("duration", _DEFAULT_MS)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ActionParseError(f"duration must be a whole number of ms, got {value!r}")
    return value


def _pointed(fields: dict[str, Any], space: Size) -> Action:
    start = _location(fields["POINT"], space, "POINT")
    to = fields.get("to")
    if to is None:
        ms = _duration(fields)
        if ms > _DEFAULT_MS:
            return Action.long_press(*start, screen=space, duration_ms=ms)
        return Action.tap(*start, screen=space)
    if isinstance(to, str):
        if to not in _DIRECTIONS:
            raise ActionParseError(f"to must be up, down, left, right or [x, y], got {to!r}")
        return swipe_towards(to, space, start)
    return Action.swipe(*start, *_location(to, space, "to"), screen=space)


def parse_agentcpm_gui(text: str, space: Size) -> Parsed:
    """Parse an AgentCPM-GUI reply; ``space`` is the 0-1000 relative space.

    >>> parse_agentcpm_gui('{"thought": "tap it", "POINT": [729, 69]}', (1000, 1000)).action.point
    (729.0, 69.0)
    """
    objects = json_objects(text)
    if not objects:
        raise ActionParseError("no JSON action found")
    if len(objects) > 1:
        raise ActionParseError(f"the reply holds {len(objects)} JSON objects; one per step")
    fields = objects[0]
    unknown = sorted(set(fields) - _FIELDS)
    if unknown:
        raise ActionParseError(f"fields the schema does not allow: {', '.join(unknown)}")
    thought = fields.get("thought")
    reasoning = thought if isinstance(thought, str) and thought else None
    status = fields.get("STATUS", "continue")
    if status == "need_feedback":  # the schema has no question field: the thought asks
        return Parsed(Action.ask_user(reasoning), reasoning)
    if status in _STOPS:
        return Parsed(_STOPS[status](), reasoning)
    if status != "continue":
        raise ActionParseError(f"unknown STATUS {status!r}")
    if "TYPE" in fields:
        return Parsed(Action.type_text(text_arg(fields["TYPE"], "TYPE")), reasoning)
    if "POINT" in fields:
        return Parsed(_pointed(fields, space), reasoning)
    if "PRESS" in fields:
        press = fields["PRESS"]
        if press not in _PRESS:
            raise ActionParseError(f"PRESS must be HOME, BACK or ENTER, got {press!r}")
        return Parsed(_PRESS[press](), reasoning)
    if "duration" in fields:
        return Parsed(Action.wait(_duration(fields)), reasoning)
    raise ActionParseError("the JSON object holds no action (POINT, PRESS, TYPE, duration)")
