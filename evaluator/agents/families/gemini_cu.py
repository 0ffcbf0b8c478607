"""Gemini computer-use function calls on Android: one call ``{"name": "click_at",
"args": {"x": 500, "y": 310}}`` per step (as ``elderbench parse-action`` takes it), or the
same call as an OpenAI tool call (``<tool_call>{"name": ..., "arguments": ...}
</tool_call>``, the chat client's text for it).

Sources: Tongyi-MAI/MobileWorld ``src/mobile_world/agents/implementations/
gemini_cua_agent.py`` (commit a4b2fc0; the Android executor: which function means what,
the custom ``answer`` and ``done`` functions, the scroll rule) and ``src/mobile_world/
agents/utils/prompts/gemini_cua.py``; google-gemini/computer-use-preview ``agent.py``
(commit c93bb2d; the predefined functions and their arguments, ``denormalize_x``:
``x / 1000 * width``).

Coordinates are relative 0-1000: both executors divide by 1000, although the Android
agent's docstring says 0-999. The Android executor clamps a point to the screen
(``min(int(v / 1000 * dim), dim - 1)``), so a finite number past the edge lands on the
edge rather than being refused; we clamp too. It sends the screenshot shrunk to 3/4 of
its area but scales by the screenshot itself, which is harmless for relative numbers.

Mapping: click / click_at / middle_click / right_click / triple_click(x, y) -> tap,
double_click -> double tap, long_press -> long press, type(text) and type_text_at(text;
the executor types into the focused field and ignores x, y) -> type, drag_and_drop ->
swipe of the finger from start to destination, scroll / scroll_at / scroll_document(
direction, x, y, magnitude) -> the content moves ``direction``, so the finger moves the
other way, ``magnitude`` units (default 300, or 150 per wheel click) centred on (x, y)
(default the centre), go_back and press_key back/escape -> back, press_key home -> home,
press_key enter/return -> key enter, key_combination as press_key on its keys,
open_app(app_name or package_name) -> launch, answer(text) -> answer, done -> done, wait
/ wait_5_seconds / go_forward / hover_at / navigate and the other browser-only calls ->
wait 1 s (the executor's pause), take_screenshot / list_apps -> wait 0 ms (no device
action). A reply with text and no function call is the answer, as the executor reads it.
What we leave out: ``press_enter`` after typing (the executor injects an Enter at the
next step; we carry out one action per reply), and a reply with several calls (the
executor queues them; here it is a parse error, one action per step).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from evaluator.agents.families.grammar import (
    ActionParseError,
    InvalidActionError,
    Parsed,
    json_objects,
    number,
    text_arg,
)
from graph_builder.model import Action, Size

_CLICKS = ("click", "click_at", "middle_click", "right_click", "triple_click")
_KEYS: dict[str, Callable[[], Action]] = {
    "back": Action.back,
    "escape": Action.back,
    "home": Action.home,
    "enter": lambda: Action.key("enter"),
    "return": lambda: Action.key("enter"),
}
_PAUSES = ("wait", "wait_5_seconds", "go_forward", "hover_at", "move", "navigate", "search") + (
    "open_web_browser",
    "key_down",
    "key_up",
    "mouse_down",
    "mouse_up",
)
_NO_DEVICE_ACTION = ("take_screenshot", "list_apps")
_SCROLLS = ("scroll", "scroll_at", "scroll_document")
# The finger's movement (dx, dy) for content scrolled in a direction.
_SCROLL_FINGER = {"down": (0, -1), "up": (0, 1), "left": (-1, 0), "right": (1, 0)}


def _calls(text: str) -> list[dict[str, Any]]:
    return [o for o in json_objects(text) if isinstance(o.get("name"), str)]


def _args(call: dict[str, Any]) -> dict[str, Any]:
    args = call.get("args", call.get("arguments", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            raise ActionParseError("the function call's arguments are not JSON") from None
    if not isinstance(args, dict):
        raise ActionParseError("the function call's args must be an object")
    return args


def _coord(value: Any, scale: float, what: str) -> float:
    """A 0-1000 number clamped to the screen, as the executor does; NaN is refused."""
    v = number(value, what)
    if not math.isfinite(v):
        raise InvalidActionError(f"{what} {value!r} is not a finite number")
    return min(max(v, 0.0), scale)


def _key(args: dict[str, Any], name: str) -> Action:
    keys = args.get("keys", args.get("key", ""))
    if isinstance(keys, list):
        keys = "+".join(str(k) for k in keys)
    lowered = str(keys).strip().lower()
    if name == "press_key" and lowered in _KEYS:
        return _KEYS[lowered]()
    for key, build in _KEYS.items():  # the executor looks for any known key in a combination
        if name != "press_key" and key in lowered:
            return build()
    raise ActionParseError(f"{name}({keys!r}) is no key the Android executor presses")


def parse_gemini_cu(text: str, space: Size) -> Parsed:
    """Parse one Gemini computer-use function call; ``space`` is 1000x1000.

    >>> parse_gemini_cu('{"name": "click_at", "args": {"x": 500, "y": 250}}',
    ...                 (1000, 1000)).action.point
    (500.0, 250.0)
    """
    calls = _calls(text)
    if not calls:
        if "{" in text or "<tool_call>" in text:  # a call that did not come out as JSON
            raise ActionParseError("cannot read the function call (not a JSON object)")
        if text.strip():
            return Parsed(Action.answer(text.strip()))
        raise ActionParseError("no function call found")
    if len(calls) > 1:
        raise ActionParseError(f"the reply holds {len(calls)} function calls; one per step")
    name = calls[0]["name"].strip()
    args = _args(calls[0])
    w, h = space

    def xy(kx: str = "x", ky: str = "y") -> tuple[float, float]:
        return _coord(args.get(kx), w, f"{name} {kx}"), _coord(args.get(ky), h, f"{name} {ky}")

    def scroll() -> Action:
        direction = str(args.get("direction", "down")).strip().lower()
        if direction not in _SCROLL_FINGER:
            raise ActionParseError(
                f"scroll direction must be up, down, left or right: {direction!r}"
            )
        cx, cy = xy() if "x" in args and "y" in args else (w / 2, h / 2)
        if "magnitude_in_wheel_clicks" in args:
            magnitude = number(args["magnitude_in_wheel_clicks"], "magnitude") * 150
        else:
            magnitude = number(
                args.get("magnitude_in_pixels", args.get("magnitude", 300)), "magnitude"
            )
        dx, dy = _SCROLL_FINGER[direction]
        half = magnitude / 2

        def inside(v: float, side: int) -> float:  # a swipe that starts off-screen is none
            return min(max(v, 0.0), float(side))

        return Action.swipe(
            inside(cx - dx * half, w),
            inside(cy - dy * half, h),
            inside(cx + dx * half, w),
            inside(cy + dy * half, h),
            screen=space,
        )

    def drag() -> Action:
        if "start_x" in args:
            return Action.swipe(*xy("start_x", "start_y"), *xy("end_x", "end_y"), screen=space)
        return Action.swipe(*xy(), *xy("destination_x", "destination_y"), screen=space)

    builders: dict[str, Callable[[], Action]] = {
        **{c: (lambda: Action.tap(*xy(), screen=space)) for c in _CLICKS},
        "double_click": lambda: Action.double_tap(*xy(), screen=space),
        "long_press": lambda: Action.long_press(*xy(), screen=space),
        "type": lambda: Action.type_text(text_arg(args.get("text"), f"{name} text")),
        "type_text_at": lambda: Action.type_text(text_arg(args.get("text"), f"{name} text")),
        "drag_and_drop": drag,
        **{s: scroll for s in _SCROLLS},
        "go_back": Action.back,
        "press_key": lambda: _key(args, name),
        "key_combination": lambda: _key(args, name),
        "hotkey": lambda: _key(args, name),
        "open_app": lambda: Action.launch(
            text_arg(args.get("app_name") or args.get("package_name"), "open_app app_name")
        ),
        "answer": lambda: Action.answer(text_arg(args.get("text"), "answer text")),
        "done": Action.done,
        **{p: (lambda: Action.wait(1000)) for p in _PAUSES},
        **{n: (lambda: Action.wait(0)) for n in _NO_DEVICE_ACTION},
    }
    if name not in builders:
        raise ActionParseError(f"unknown computer-use function {name!r}")
    intent = args.get("intent")
    return Parsed(
        builders[name](), reasoning=intent if isinstance(intent, str) and intent else None
    )
