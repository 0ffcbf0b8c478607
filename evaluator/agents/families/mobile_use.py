"""Qwen-VL ``mobile_use`` tool calls: ``<tool_call>{"name": "mobile_use", "arguments":
{"action": "click", "coordinate": [x, y]}}</tool_call>`` (or an OpenAI ``tool_calls``
entry, which the chat client turns into the same text).

Grammar from QwenLM/Qwen3-VL (formerly Qwen2.5-VL): cookbooks/utils/agent_function_call.py
(class MobileUse: key, click, long_press, swipe, type, system_button Back/Home/Menu/Enter,
open, wait, terminate with status success/failure) and cookbooks/mobile_agent.ipynb
(Qwen2.5-VL answers in pixels of the smart-resized image; Qwen3-VL adds ``answer``, is
told the screen is 999x999 and its answer is divided by 999; a Qwen3-VL reply opens with
``Thought:`` and ``Action:`` lines). GUI-Owl (X-PLUG/MobileAgent
Mobile-Agent-v3/android_world_v3/android_world/agents/gui_owl.py and
mobile_agent_utils_new.py) uses the same call inside ``<thinking>`` / ``<conclusion>``
tags, writes ``tap`` for ``click``, and adds ``answer`` and ``open_app``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from evaluator.agents.families.grammar import (
    ActionParseError,
    Parsed,
    at,
    between,
    json_objects,
    key_name,
    text_arg,
    wait_ms,
)
from graph_builder.model import Action, Size

SYSTEM_BUTTONS: dict[str, Callable[[], Action]] = {
    "back": Action.back,
    "home": Action.home,
    "menu": lambda: Action.key("menu"),
    "enter": lambda: Action.key("enter"),
}


def tool_calls(text: str) -> list[dict[str, Any]]:
    blocks = re.findall(r"<tool_call>(.*?)(?:</tool_call>|$)", text, re.S)
    objects = [o for block in blocks for o in json_objects(block)]
    if not blocks:
        objects = json_objects(text)
    return [o for o in objects if "arguments" in o or "action" in o]


def whole_tool_calls(text: str) -> list[dict[str, Any]]:
    """The calls of ``text``'s ``<tool_call>`` blocks, each block one whole JSON object (as
    the families that read the block with ``json.loads`` require); a block that is not is
    a parse error, not a source of inner objects."""
    blocks = re.findall(r"<tool_call>(.*?)(?:</tool_call>|$)", text, re.S)
    calls: list[dict[str, Any]] = []
    for block in blocks:
        try:
            value = json.loads(block)
        except json.JSONDecodeError:
            raise ActionParseError("a <tool_call> block is not one JSON object") from None
        if not isinstance(value, dict):
            raise ActionParseError("a <tool_call> block must hold a JSON object")
        calls.append(value)
    return calls


def call_arguments(call: dict[str, Any]) -> dict[str, Any]:
    args = call.get("arguments", call)
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            raise ActionParseError("the tool call's arguments are not JSON") from None
    if not isinstance(args, dict):
        raise ActionParseError("the tool call's arguments must be an object")
    return args


def thought_of(text: str) -> str | None:
    for start, end in (("<thinking>", "</thinking>"), ("<think>", "</think>")):
        found = between(text, start, end)
        if found:
            return found
    m = re.search(r"Thought:\s*(.*?)(?=\n\s*Action:|<tool_call>|$)", text, re.S)
    if m:
        return m.group(1).strip() or None
    head = text.split("<tool_call>", 1)[0].strip()
    return head or None


def single_call(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The one ``mobile_use`` call of a reply (a reply holds exactly one per step)."""
    if not calls:
        raise ActionParseError("no mobile_use tool call found")
    if len(calls) > 1:
        raise ActionParseError(f"the reply holds {len(calls)} tool calls; one per step")
    return calls[0]


def system_button(args: dict[str, Any]) -> Action:
    """``system_button``'s Back, Home, Menu or Enter."""
    name = str(args.get("button", "")).strip().lower()
    if name not in SYSTEM_BUTTONS:
        raise ActionParseError(f"unknown system button {args.get('button')!r}")
    return SYSTEM_BUTTONS[name]()


def mobile_use_builders(
    args: dict[str, Any], space: Size, kind: str
) -> dict[str, Callable[[], Action]]:
    """Per action kind, what the call's arguments make; families that read a kind their own
    way replace its entry."""

    def coordinate(key: str = "coordinate") -> tuple[float, float]:
        return at(args.get(key), space, f"{kind} {key}")

    def terminate() -> Action:
        status = str(args.get("status", "success")).strip().lower()
        if status == "success":
            return Action.done()
        if status == "failure":
            return Action.give_up("terminate(status='failure')")
        raise ActionParseError(f"terminate status must be success or failure, got {status!r}")

    return {
        "click": lambda: Action.tap(*coordinate(), screen=space),
        "long_press": lambda: Action.long_press(
            *coordinate(), screen=space, duration_ms=wait_ms(args.get("time"), 800)
        ),
        "swipe": lambda: Action.swipe(*coordinate(), *coordinate("coordinate2"), screen=space),
        "type": lambda: Action.type_text(text_arg(args.get("text"), "type text")),
        "key": lambda: Action.key(key_name(args.get("text"))),
        "system_button": lambda: system_button(args),
        "open": lambda: Action.launch(text_arg(args.get("text"), "open text")),
        "answer": lambda: Action.answer(text_arg(args.get("text"), "answer text")),
        "wait": lambda: Action.wait(wait_ms(args.get("time"))),
        "terminate": terminate,
    }


def parse_mobile_use(text: str, space: Size, *, aliases: dict[str, str] | None = None) -> Parsed:
    """Parse one ``mobile_use`` call; ``space`` is the size its coordinates run over.

    >>> call = '{"name": "mobile_use", "arguments": {"action": "open", "text": "Clock"}}'
    >>> reply = f"<tool_call>{call}</tool_call>"
    >>> parse_mobile_use(reply, (999, 999)).action.describe()
    "launch 'Clock'"
    """
    args = call_arguments(single_call(tool_calls(text)))
    kind = str(args.get("action", "")).strip()
    kind = (aliases or {}).get(kind, kind)
    builders = mobile_use_builders(args, space, kind)
    if kind not in builders:
        raise ActionParseError(f"unknown mobile_use action {kind!r}")
    return Parsed(builders[kind](), reasoning=thought_of(text))


def parse_qwen(text: str, space: Size) -> Parsed:
    return parse_mobile_use(text, space)


_GUI_OWL_ALIASES = {"tap": "click", "open_app": "open"}


def parse_gui_owl(text: str, space: Size) -> Parsed:
    parsed = parse_mobile_use(text, space, aliases=_GUI_OWL_ALIASES)
    summary = between(text, "<conclusion>", "</conclusion>")
    if summary and parsed.reasoning is None:
        return Parsed(parsed.action, reasoning=summary)
    return parsed
