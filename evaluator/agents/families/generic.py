"""Two formats of our own making: the JSON format for API models (GPT, Gemini, Claude,
Qwen-VL-Flash behind OpenAI-compatible endpoints), and the Mobile-Agent-v2 operation
format.

JSON: ``{"thought": "...", "action": "tap", "x": 500, "y": 310}`` in the ``[0,1000]``
space. Also the on-disk form ``{"type": "tap", ...}`` and every action of our space:
``double_tap``, ``long_press``, ``swipe`` (``x1..y2`` or ``direction``), ``type``
(``text``), ``key`` (``key``), ``launch`` / ``open_app`` (``app``), ``back``, ``home``,
``wait``, ``answer`` (``text``), ``ask_user`` (``question``), ``give_up``,
``terminate`` (``status``: success or failure) and ``done``.

Mobile-Agent-v2 (X-PLUG/MobileAgent Mobile-Agent-v2/MobileAgent/prompt.py
get_action_prompt, and run.py, which reads the reply): ``### Thought ###`` ...
``### Action ###`` one of ``Open app (name)``, ``Tap (x, y)``, ``Swipe (x1, y1), (x2,
y2)``, ``Type (text)``, ``Back``, ``Home``, ``Stop`` ... ``### Operation ###`` a short
description; we also read an optional ``### Memory ###`` section (content to keep, which
the original asks for in a separate call). Coordinates are pixels of the screenshot as
sent. A JSON action in the Action section is read as above, in the same pixels.
"""

from __future__ import annotations

import re
from typing import Any

from evaluator.agents.families.grammar import (
    ActionParseError,
    Parsed,
    at,
    checked,
    json_objects,
    key_name,
    number,
    swipe_towards,
    text_arg,
    wait_ms,
)
from graph_builder.model import Action, ActionType, Size

_ALIASES = {
    "click": "tap",
    "open_app": "launch",
    "open": "launch",
    "press_key": "key",
    "take_over": "ask_user",
    "stop": "done",
    "finish": "done",
    "finished": "done",
    "fail": "give_up",
}


def action_from_fields(fields: dict[str, Any], space: Size) -> Action:
    """An Action from our JSON action fields, in the ``space``-sized coordinate space."""
    kind = fields.get("action", fields.get("type"))
    if isinstance(kind, dict):
        return action_from_fields(kind, space)
    if not isinstance(kind, str):
        raise ActionParseError("the JSON object has no 'action' (or 'type') string")
    name = kind.strip().lower().replace(" ", "_")
    name = _ALIASES.get(name, name)
    if name == "terminate":
        status = str(fields.get("status", "success")).strip().lower()
        return Action.done() if status == "success" else Action.give_up(fields.get("reason"))
    try:
        t = ActionType(name)
    except ValueError:
        raise ActionParseError(f"unknown action {kind!r}") from None
    if t.is_pointed:
        if "x" in fields and "y" in fields:
            x, y = checked(
                (number(fields["x"], "x"), number(fields["y"], "y")), space, f"{t.value} point"
            )
        else:
            x, y = at(fields.get("point", fields.get("coordinate")), space, f"{t.value} point")
        if t is ActionType.TAP:
            return Action.tap(x, y, screen=space)
        if t is ActionType.DOUBLE_TAP:
            return Action.double_tap(x, y, screen=space)
        return Action.long_press(x, y, screen=space)
    if t is ActionType.SWIPE:
        if all(k in fields for k in ("x1", "y1", "x2", "y2")):
            start = checked((number(fields["x1"], "x1"), number(fields["y1"], "y1")), space, "x1")
            end = checked((number(fields["x2"], "x2"), number(fields["y2"], "y2")), space, "x2")
            return Action.swipe(*start, *end, screen=space)
        if "direction" in fields:
            begin = None
            if "x" in fields and "y" in fields:
                begin = checked(
                    (number(fields["x"], "x"), number(fields["y"], "y")), space, "swipe start"
                )
            return swipe_towards(str(fields["direction"]), space, begin)
        raise ActionParseError("a swipe needs x1, y1, x2, y2 or a direction")
    if t is ActionType.TYPE:
        return Action.type_text(text_arg(fields.get("text"), "text"))
    if t is ActionType.KEY:
        return Action.key(key_name(fields.get("key", fields.get("text"))))
    if t is ActionType.LAUNCH:
        return Action.launch(
            text_arg(fields.get("app", fields.get("text", fields.get("package"))), "app")
        )
    if t is ActionType.ANSWER:
        return Action.answer(text_arg(fields.get("text", fields.get("answer")), "answer text"))
    if t is ActionType.ASK_USER:
        return Action.ask_user(fields.get("question", fields.get("text")))
    if t is ActionType.GIVE_UP:
        return Action.give_up(fields.get("reason", fields.get("text")))
    if t is ActionType.WAIT:
        return Action.wait(wait_ms(fields.get("seconds", 1)))
    if t is ActionType.DONE:
        answer = fields.get("answer", fields.get("text"))
        return Action(t, text=answer if isinstance(answer, str) and answer else None)
    return Action(t)


def parse_json(text: str, space: Size) -> Parsed:
    """Our JSON format: one object with ``action`` and its fields, plus ``thought``.

    >>> parse_json('{"action": "tap", "x": 120, "y": 860}', (1000, 1000)).action.point
    (120.0, 860.0)
    """
    objects = [o for o in json_objects(text) if "action" in o or "type" in o]
    if not objects:
        raise ActionParseError("no JSON object with an 'action' field found")
    if len(objects) > 1:
        raise ActionParseError(f"the reply holds {len(objects)} JSON actions; one per step")
    obj = objects[0]
    thought = obj.get("thought", obj.get("reasoning"))
    memory = obj.get("memory")
    return Parsed(
        action_from_fields(obj, space),
        reasoning=thought if isinstance(thought, str) else None,
        memory=memory if isinstance(memory, str) and memory else None,
    )


def _section(text: str, name: str) -> str | None:
    m = re.search(rf"###\s*{name}\s*###(.*?)(?=###\s*\w[\w ]*###|$)", text, re.S | re.I)
    return m.group(1).strip() if m else None


_PAIR = r"\(\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*\)"


def parse_mobile_agent_v2(text: str, space: Size) -> Parsed:
    """Mobile-Agent-v2's ``### Thought ### / ### Action ### / ### Operation ###`` reply.

    >>> reply = "### Thought ###\\nOpen it\\n### Action ###\\nTap (540, 1200)\\n### Operation ###"
    >>> parse_mobile_agent_v2(reply, (1080, 2400)).action.point
    (540.0, 1200.0)
    """
    action_text = _section(text, "Action")
    thought = _section(text, "Thought")
    if action_text is None:
        if json_objects(text):
            return parse_json(text, space)
        raise ActionParseError("no '### Action ###' section in the reply")
    memory = _section(text, "Memory")
    memory = None if not memory or memory.strip(". ").lower() == "none" else memory
    if "{" in action_text:
        parsed = parse_json(action_text, space)
        return Parsed(parsed.action, thought or parsed.reasoning, parsed.memory or memory)
    line = action_text.strip().strip("`").strip()
    m = re.match(r"(open app|tap|swipe|type|back|home|stop)\b\s*(.*)", line, re.I | re.S)
    if m is None:
        raise ActionParseError(f"unknown Mobile-Agent-v2 action {line[:40]!r}")
    verb, rest = m.group(1).lower(), m.group(2).strip()
    if verb == "open app":
        name = rest.strip().removeprefix("(").removesuffix(")").strip().strip("\"'")
        action = Action.launch(text_arg(name, "Open app name"))
    elif verb == "tap":
        pair = re.match(_PAIR, rest)
        if pair is None:
            raise ActionParseError(f"Tap needs (x, y), got {rest[:40]!r}")
        xy = checked((float(pair.group(1)), float(pair.group(2))), space, "Tap")
        action = Action.tap(*xy, screen=space)
    elif verb == "swipe":
        pairs = re.findall(_PAIR, rest)
        if len(pairs) != 2:
            raise ActionParseError(f"Swipe needs (x1, y1), (x2, y2), got {rest[:40]!r}")
        start = checked((float(pairs[0][0]), float(pairs[0][1])), space, "Swipe start")
        end = checked((float(pairs[1][0]), float(pairs[1][1])), space, "Swipe end")
        action = Action.swipe(*start, *end, screen=space)
    elif verb == "type":
        typed = rest.removeprefix("(").removesuffix(")").strip()
        if len(typed) >= 2 and typed[0] == typed[-1] and typed[0] in "\"'":
            typed = typed[1:-1]
        action = Action.type_text(text_arg(typed, "Type text"))
    elif verb == "back":
        action = Action.back()
    elif verb == "home":
        action = Action.home()
    else:
        action = Action.done()
    return Parsed(action, reasoning=thought, memory=memory)
