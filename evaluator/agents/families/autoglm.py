"""AutoGLM / Open-AutoGLM replies: ``<think>...</think><answer>do(action="Tap",
element=[x,y])</answer>`` or ``finish(message="...")``.

Grammar from zai-org/Open-AutoGLM: phone_agent/config/prompts_zh.py and prompts_en.py
(the action list), phone_agent/actions/handler.py (the handlers; coordinates are divided
by 1000 although the prompt says 0-999) and phone_agent/model/client.py (the thinking is
everything before the first ``do(action=`` or ``finish(message=``; ``<answer>`` tags are
optional). The reference reads ``Type`` text as everything between ``text="`` and the
final ``")``, so inner quotes are part of the text.

Mapping: ``Launch`` -> launch, ``Tap`` (with or without the sensitive-operation
``message``) -> tap, ``Double Tap`` -> double tap, ``Long Press`` -> long press,
``Swipe`` -> swipe, ``Type`` / ``Type_Name`` -> type, ``Back`` / ``Home`` / ``Wait``,
``Take_over`` and ``Interact`` -> ask the user, ``Note`` and ``Call_API`` (no effect on
the phone; the reference keeps them for a later summary) -> a zero wait whose text is
kept as memory, ``finish`` -> done with its message as the answer.
"""

from __future__ import annotations

from collections.abc import Callable

from evaluator.agents.families.grammar import (
    ActionParseError,
    Parsed,
    at,
    between,
    one_call,
    text_arg,
    wait_ms,
)
from graph_builder.model import Action, ActionType, Size


def parse_autoglm(text: str, space: Size) -> Parsed:
    """Parse an AutoGLM reply; ``space`` is the size its coordinates run over (1000x1000).

    >>> parse_autoglm('do(action="Launch", app="Clock")', (1000, 1000)).action.describe()
    "launch 'Clock'"
    """
    answer = between(text, "<answer>", "</answer>")
    markers = [i for i in (text.find("do(action="), text.find("finish(message=")) if i >= 0]
    first = min(markers) if markers else -1
    reasoning = between(text, "<think>", "</think>")
    if reasoning is None and first > 0:
        reasoning = text[:first].replace("<answer>", "").strip() or None
    body = answer if answer is not None else (text[first:] if first >= 0 else text)
    call = one_call(body, ("do", "finish"), "do(...) or finish(...)")
    kw = call.kwargs
    if call.name == "finish":
        return Parsed(Action(ActionType.DONE, text=kw.get("message") or None), reasoning)
    kind = kw.get("action", "").strip()
    key = kind.lower().replace("_", " ")

    def element() -> tuple[float, float]:
        return at(kw.get("element"), space, f"{kind} element")

    builders: dict[str, Callable[[], Action]] = {
        "launch": lambda: Action.launch(text_arg(kw.get("app"), "Launch app")),
        "tap": lambda: Action.tap(*element(), screen=space),
        "double tap": lambda: Action.double_tap(*element(), screen=space),
        "long press": lambda: Action.long_press(*element(), screen=space),
        "swipe": lambda: Action.swipe(
            *at(kw.get("start"), space, "Swipe start"),
            *at(kw.get("end"), space, "Swipe end"),
            screen=space,
        ),
        "type": lambda: Action.type_text(text_arg(kw.get("text"), "Type text")),
        "type name": lambda: Action.type_text(text_arg(kw.get("text"), "Type_Name text")),
        "back": Action.back,
        "home": Action.home,
        "wait": lambda: Action.wait(wait_ms(kw.get("duration"))),
        "take over": lambda: Action.ask_user(kw.get("message")),
        "interact": lambda: Action.ask_user(kw.get("message")),
        "note": lambda: Action.wait(0),
        "call api": lambda: Action.wait(0),
    }
    if key not in builders:
        raise ActionParseError(f"unknown AutoGLM action {kind!r}")
    memory = kw.get("message") if key == "note" else kw.get("instruction")
    return Parsed(
        builders[key](), reasoning, memory if key in ("note", "call api") and memory else None
    )
