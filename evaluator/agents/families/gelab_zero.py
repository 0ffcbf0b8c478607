"""GELab-Zero replies: ``<THINK> reasoning </THINK>`` then one line of tab-separated
``key:value`` fields, ``explain:...\\taction:CLICK\\tpoint:500,310\\tsummary:...``.

Sources: stepfun-ai/gelab-zero (commit 19465cf) ``copilot_tools/parser_0920_summary.py``
(the prompt's nine actions and the reader: THINK tags in any case, also the misspelt
``TINK``; fields split on tabs, each on its first colon; a field whose key contains
``point`` holds two integers, ``x,y`` or ``x y``), ``copilot_agent_client/pu_client.py``
(the loop: INFO asks the user, COMPLETE and ABORT end the task) and
``copilot_front_end/pu_frontend_executor.py`` (the executor: points are 0-1000 of the
device's size, ``x / 1000 * width``).

Mapping: CLICK(point) -> tap, LONGPRESS(point, value seconds, default 1.5) -> long
press, SLIDE(point1, point2) -> a swipe of the finger from point1 to point2, TYPE(value;
its point is tapped only when no keyboard is up, which the executor assumes it is) ->
type, AWAKE(value) -> launch, WAIT(value seconds) -> wait, INFO(value) -> ask the user,
COMPLETE(return) -> done with the returned text as the answer, ABORT(value) -> give up.
The executor also knows BACK, HOME, HOT_KEY(key) and SCROLL(point, direction: the
content's, so ``down`` moves the finger up 30% of the screen), which the prompt does not
offer; we read them the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from evaluator.agents.families.grammar import (
    SCROLL_TO_FINGER,
    ActionParseError,
    Parsed,
    checked,
    key_name,
    number,
    swipe_towards,
    text_arg,
    wait_ms,
)
from graph_builder.model import Action, ActionType, Size

_THINK = re.compile(r"<\s*(/?)\s*T(?:H)?INK\s*>", re.I)


def _fields(text: str) -> tuple[str | None, dict[str, str]]:
    """The reasoning and the ``key:value`` fields of a reply."""
    text = _THINK.sub(lambda m: "</THINK>" if m.group(1) else "<THINK>", text.strip())
    reasoning = None
    if "<THINK>" in text and "</THINK>" in text:
        reasoning = text.split("<THINK>", 1)[1].split("</THINK>", 1)[0].strip() or None
        text = text.split("</THINK>", 1)[1]
    fields: dict[str, str] = {}
    for part in (p.strip() for p in text.split("\t")):
        if ":" in part:
            key, value = part.split(":", 1)
            key = key.strip()
            if key == "action" and "action" in fields:
                raise ActionParseError("the reply holds two action fields; one per step")
            fields[key] = value.strip()
    return reasoning, fields


def _point(fields: dict[str, str], key: str, space: Size) -> tuple[float, float]:
    raw = fields.get(key)
    if raw is None:
        raise ActionParseError(f"the action needs a {key} field")
    parts = raw.replace(",", " ").split()
    if len(parts) < 2 or not all(re.fullmatch(r"[-+]?\d+", p) for p in parts[:2]):
        raise ActionParseError(f"{key} must be two integers 'x,y', got {raw!r}")
    return checked((float(parts[0]), float(parts[1])), space, key)


def parse_gelab_zero(text: str, space: Size) -> Parsed:
    """Parse a GELab-Zero reply; ``space`` is the 0-1000 relative space.

    >>> parse_gelab_zero("<THINK>go</THINK>\\nexplain:open\\taction:AWAKE\\tvalue:Clock",
    ...                  (1000, 1000)).action.describe()
    "launch 'Clock'"
    """
    reasoning, f = _fields(text)
    kind = f.get("action", "").strip().upper()
    if not kind:
        raise ActionParseError("no action field (action:CLICK ...) in the reply")

    def scroll() -> Action:
        direction = f.get("direction", "").strip().lower()
        if direction not in SCROLL_TO_FINGER:
            raise ActionParseError(
                f"SCROLL direction must be up, down, left or right: {direction!r}"
            )
        return swipe_towards(SCROLL_TO_FINGER[direction], space, _point(f, "point", space))

    def hot_key() -> Action:
        key = key_name(f.get("key"))
        return {"back": Action.back, "home": Action.home}.get(key, lambda: Action.key(key))()

    def long_press() -> Action:
        seconds = number(f["value"], "LONGPRESS value") if f.get("value") else 1.5
        return Action.long_press(
            *_point(f, "point", space), screen=space, duration_ms=int(seconds * 1000)
        )

    builders: dict[str, Callable[[], Action]] = {
        "CLICK": lambda: Action.tap(*_point(f, "point", space), screen=space),
        "LONGPRESS": long_press,
        "SLIDE": lambda: Action.swipe(
            *_point(f, "point1", space), *_point(f, "point2", space), screen=space
        ),
        "TYPE": lambda: Action.type_text(text_arg(f.get("value"), "TYPE value")),
        "AWAKE": lambda: Action.launch(text_arg(f.get("value"), "AWAKE value")),
        "WAIT": lambda: Action.wait(wait_ms(f.get("value"))),
        "INFO": lambda: Action.ask_user(f.get("value") or None),
        "COMPLETE": lambda: Action(ActionType.DONE, text=f.get("return") or None),
        "ABORT": lambda: Action.give_up(f.get("value") or None),
        "BACK": Action.back,
        "HOME": Action.home,
        "HOT_KEY": hot_key,
        "SCROLL": scroll,
    }
    if kind not in builders:
        raise ActionParseError(f"unknown GELab-Zero action {kind!r}")
    # ``summary`` is the model's new account of the history, which its loop feeds back.
    return Parsed(
        builders[kind](),
        reasoning=reasoning or f.get("explain") or None,
        memory=f.get("summary") or None,
    )
