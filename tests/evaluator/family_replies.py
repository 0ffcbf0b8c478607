"""Replies written the way each model family writes them, for an intended action.

The test stand-in for a model: given our Action (any space) and the size of the image
the model was sent, write what that family would answer, with its coordinates computed
by the family's own rule (relative 0-1000, relative 0-999, or pixels of the
smart-resized image, rounded to integers as the models print them). Formats follow the
sources listed in evaluator/agents/families/*.py.
"""

from __future__ import annotations

import json
import math

from evaluator.agents.families import get_family
from evaluator.agents.families.space import GUI_OWL15_RUNNER_ROUNDING
from graph_builder.model import Action, ActionType, Size

_SCROLL = {"up": "down", "down": "up", "left": "right", "right": "left"}  # finger -> content


def _xy(action: Action, space: Size, end: bool = False) -> tuple[int, int]:
    a = action.rescaled(space)
    x, y = (a.x2, a.y2) if end else (a.x, a.y)
    assert x is not None and y is not None
    return min(round(x), space[0]), min(round(y), space[1])


def _uitars(action: Action, space: Size, version: str) -> str:
    def box(end: bool = False) -> str:
        x, y = _xy(action, space, end)
        if version == "1.5":
            return f"'<point>{x} {y}</point>'"
        return f"'<|box_start|>({x},{y})<|box_end|>'"

    start = "point" if version == "1.5" else "start_box"
    t = action.type
    calls = {
        ActionType.TAP: lambda: f"click({start}={box()})",
        ActionType.DOUBLE_TAP: lambda: f"left_double({start}={box()})",
        ActionType.LONG_PRESS: lambda: f"long_press({start}={box()})",
        ActionType.TYPE: lambda: "type(content='{}')".format(
            (action.text or "").replace("'", "\\'")
        ),
        ActionType.BACK: lambda: "press_back()",
        ActionType.HOME: lambda: "press_home()",
        ActionType.KEY: lambda: f"hotkey(key='{action.text}')",
        ActionType.LAUNCH: lambda: f"open_app(app_name='{action.text}')",
        ActionType.WAIT: lambda: "wait()",
        ActionType.ASK_USER: lambda: "call_user()",
        ActionType.DONE: lambda: "finished(content='{}')".format(action.text or "done"),
    }
    if t is ActionType.SWIPE:
        if version == "1.5":
            call = f"drag(start_point={box()}, end_point={box(True)})"
        else:
            call = f"scroll(start_box={box()}, end_box={box(True)})"
    else:
        call = calls[t]()
    return f"Thought: I will {t.value.replace('_', ' ')} now.\nAction: {call}"


def _autoglm(action: Action, space: Size) -> str:
    t = action.type

    def el(end: bool = False) -> str:
        x, y = _xy(action, space, end)
        return f"[{x},{y}]"

    ops = {
        ActionType.TAP: lambda: f'do(action="Tap", element={el()})',
        ActionType.DOUBLE_TAP: lambda: f'do(action="Double Tap", element={el()})',
        ActionType.LONG_PRESS: lambda: f'do(action="Long Press", element={el()})',
        ActionType.SWIPE: lambda: f'do(action="Swipe", start={el()}, end={el(True)})',
        ActionType.TYPE: lambda: f'do(action="Type", text="{action.text}")',
        ActionType.LAUNCH: lambda: f'do(action="Launch", app="{action.text}")',
        ActionType.BACK: lambda: 'do(action="Back")',
        ActionType.HOME: lambda: 'do(action="Home")',
        ActionType.WAIT: lambda: 'do(action="Wait", duration="2 seconds")',
        ActionType.ASK_USER: lambda: f'do(action="Take_over", message="{action.text or "help"}")',
        ActionType.DONE: lambda: f'finish(message="{action.text or "Task completed."}")',
    }
    return f"<think>The next step is to {t.value}.</think>\n<answer>{ops[t]()}</answer>"


def _mobile_use(action: Action, space: Size, family: str) -> str:
    t = action.type
    click = "tap" if family == "gui-owl" else "click"
    args: dict[str, object]
    if t is ActionType.TAP:
        args = {"action": click, "coordinate": list(_xy(action, space))}
    elif t is ActionType.LONG_PRESS:
        args = {"action": "long_press", "coordinate": list(_xy(action, space)), "time": 2}
    elif t is ActionType.SWIPE:
        args = {
            "action": "swipe",
            "coordinate": list(_xy(action, space)),
            "coordinate2": list(_xy(action, space, True)),
        }
    elif t is ActionType.TYPE:
        args = {"action": "type", "text": action.text}
    elif t is ActionType.KEY:
        args = {"action": "key", "text": action.text}
    elif t is ActionType.LAUNCH:
        args = {"action": "open_app" if family == "gui-owl" else "open", "text": action.text}
    elif t in (ActionType.BACK, ActionType.HOME):
        args = {"action": "system_button", "button": t.value.capitalize()}
    elif t is ActionType.ANSWER:
        args = {"action": "answer", "text": action.text}
    elif t is ActionType.WAIT:
        args = {"action": "wait", "time": 2}
    elif t is ActionType.GIVE_UP:
        args = {"action": "terminate", "status": "failure"}
    elif t is ActionType.DONE:
        args = {"action": "terminate", "status": "success"}
    else:
        raise ValueError(f"{family} has no {t.value}")
    call = json.dumps({"name": "mobile_use", "arguments": args}, ensure_ascii=False)
    if family == "gui-owl":
        return (
            f"<thinking>\nNext: {t.value}.\n</thinking>\n<tool_call>\n{call}\n</tool_call>\n"
            f"<conclusion>\nI did {t.value}.\n</conclusion>"
        )
    if family == "qwen3-vl":
        return f"Thought: next, {t.value}.\nAction: {t.value}.\n<tool_call>\n{call}\n</tool_call>"
    return f"<tool_call>\n{call}\n</tool_call>"


def _json(action: Action, space: Size) -> str:
    t = action.type
    fields: dict[str, object] = {"thought": f"{t.value} next", "action": t.value}
    if t.is_pointed:
        x, y = _xy(action, space)
        fields.update(x=x, y=y)
    elif t is ActionType.SWIPE:
        (x1, y1), (x2, y2) = _xy(action, space), _xy(action, space, True)
        fields.update(x1=x1, y1=y1, x2=x2, y2=y2)
    elif t is ActionType.KEY:
        fields["key"] = action.text
    elif t is ActionType.LAUNCH:
        fields["app"] = action.text
    elif t is ActionType.ASK_USER:
        fields["question"] = action.text
    elif action.text:
        fields["text"] = action.text
    return json.dumps(fields, ensure_ascii=False)


def _mobile_agent_v2(action: Action, space: Size) -> str:
    t = action.type
    if t is ActionType.TAP:
        x, y = _xy(action, space)
        op = f"Tap ({x}, {y})"
    elif t is ActionType.SWIPE:
        (x1, y1), (x2, y2) = _xy(action, space), _xy(action, space, True)
        op = f"Swipe ({x1}, {y1}), ({x2}, {y2})"
    elif t is ActionType.TYPE:
        op = f"Type ({action.text})"
    elif t is ActionType.LAUNCH:
        op = f"Open app ({action.text})"
    elif t in (ActionType.BACK, ActionType.HOME):
        op = t.value.capitalize()
    elif t is ActionType.DONE:
        op = "Stop"
    else:
        raise ValueError(f"Mobile-Agent-v2 has no {t.value}")
    return (
        f"### Thought ###\nThe next step is {t.value}.\n### Action ###\n{op}\n"
        f"### Operation ###\n{t.value} as planned."
    )


def _runner_xy(action: Action, sent: Size, end: bool = False) -> tuple[int, int]:
    """GUI-Owl 1.5's 0-1000 numbers that its runner (scaling by the 16-rounded screen)
    taps at the intended pixel of a ``sent``-sized screen."""
    a = action.rescaled(sent)
    x, y = (a.x2, a.y2) if end else (a.x, a.y)
    assert x is not None and y is not None
    rw, rh = GUI_OWL15_RUNNER_ROUNDING(*sent)
    top_x, top_y = math.floor(1000 * sent[0] / rw), math.floor(1000 * sent[1] / rh)
    return min(round(x * 1000 / rw), top_x, 1000), min(round(y * 1000 / rh), top_y, 1000)


def _gui_owl15(action: Action, sent: Size) -> str:
    t = action.type
    args: dict[str, object]
    if t is ActionType.TAP:
        args = {"action": "click", "coordinate": list(_runner_xy(action, sent))}
    elif t is ActionType.LONG_PRESS:
        args = {"action": "long_press", "coordinate": list(_runner_xy(action, sent)), "time": 1}
    elif t is ActionType.SWIPE:
        args = {
            "action": "swipe",
            "coordinate": list(_runner_xy(action, sent)),
            "coordinate2": list(_runner_xy(action, sent, True)),
        }
    elif t is ActionType.TYPE:
        args = {"action": "type", "text": action.text}
    elif t is ActionType.KEY and action.text == "enter":
        args = {"action": "system_button", "button": "Enter"}
    elif t is ActionType.KEY:
        args = {"action": "key", "text": action.text}
    elif t is ActionType.LAUNCH:
        args = {"action": "open", "text": action.text}
    elif t in (ActionType.BACK, ActionType.HOME):
        args = {"action": "system_button", "button": t.value.capitalize()}
    elif t is ActionType.WAIT:
        args = {"action": "wait", "time": 2}
    elif t is ActionType.ASK_USER:
        args = {"action": "interact", "text": action.text or "Which one?"}
    elif t is ActionType.GIVE_UP:
        args = {"action": "terminate", "status": "failure"}
    elif t is ActionType.DONE and action.text:
        args = {"action": "answer", "text": action.text}
    elif t is ActionType.DONE:
        args = {"action": "terminate", "status": "success"}
    else:
        raise ValueError(f"gui-owl-1.5 has no {t.value}")
    call = json.dumps({"name": "mobile_use", "arguments": args}, ensure_ascii=False)
    return f"Action: {t.value.replace('_', ' ')} now.\n<tool_call>\n{call}\n</tool_call>"


def _mai_ui(action: Action, space: Size) -> str:
    t = action.type
    point = {"coordinate": list(_xy(action, space))} if action.point is not None else {}
    simple: dict[ActionType, dict[str, object]] = {
        ActionType.TAP: {"action": "click", **point},
        ActionType.DOUBLE_TAP: {"action": "double_click", **point},
        ActionType.LONG_PRESS: {"action": "long_press", **point},
        ActionType.TYPE: {"action": "type", "text": action.text},
        ActionType.LAUNCH: {"action": "open", "text": action.text},
        ActionType.BACK: {"action": "system_button", "button": "back"},
        ActionType.HOME: {"action": "system_button", "button": "home"},
        ActionType.KEY: {"action": "system_button", "button": action.text},
        ActionType.WAIT: {"action": "wait"},
        ActionType.ANSWER: {"action": "answer", "text": action.text},
        ActionType.ASK_USER: {"action": "ask_user", "text": action.text or "Which one?"},
        ActionType.GIVE_UP: {"action": "terminate", "status": "fail"},
        ActionType.DONE: {"action": "terminate", "status": "success"},
    }
    if t is ActionType.SWIPE:  # exact points: a drag (swipe(direction) starts at the centre)
        args: dict[str, object] = {
            "action": "drag",
            "start_coordinate": list(_xy(action, space)),
            "end_coordinate": list(_xy(action, space, True)),
        }
    else:
        args = simple[t]
    call = json.dumps({"name": "mobile_use", "arguments": args}, ensure_ascii=False)
    return f"<thinking>\nNext, {t.value}.\n</thinking>\n<tool_call>\n{call}\n</tool_call>"


def _gemini(action: Action, space: Size) -> str:
    t = action.type
    xy = dict(zip(("x", "y"), _xy(action, space), strict=True)) if action.point else {}
    calls: dict[ActionType, tuple[str, dict[str, object]]] = {
        ActionType.TAP: ("click_at", xy),
        ActionType.DOUBLE_TAP: ("double_click", xy),
        ActionType.LONG_PRESS: ("long_press", xy),
        ActionType.TYPE: ("type_text_at", {"x": 500, "y": 500, "text": action.text}),
        ActionType.LAUNCH: ("open_app", {"app_name": action.text}),
        ActionType.BACK: ("go_back", {}),
        ActionType.HOME: ("press_key", {"key": "home"}),
        ActionType.KEY: ("press_key", {"key": action.text}),
        ActionType.WAIT: ("wait_5_seconds", {}),
        ActionType.ANSWER: ("answer", {"text": action.text}),
        ActionType.DONE: ("done", {"summary": "finished"}),
    }
    if t is ActionType.SWIPE:
        (x1, y1), (x2, y2) = _xy(action, space), _xy(action, space, True)
        name, args = "drag_and_drop", {"x": x1, "y": y1, "destination_x": x2, "destination_y": y2}
    else:
        name, args = calls[t]
    return json.dumps({"name": name, "args": args}, ensure_ascii=False)


def _gelab(action: Action, space: Size) -> str:
    t = action.type

    def pt(end: bool = False) -> str:
        x, y = _xy(action, space, end)
        return f"{x},{y}"

    fields = {
        ActionType.TAP: lambda: f"action:CLICK\tpoint:{pt()}",
        ActionType.LONG_PRESS: lambda: f"action:LONGPRESS\tpoint:{pt()}",
        ActionType.SWIPE: lambda: f"action:SLIDE\tpoint1:{pt()}\tpoint2:{pt(True)}",
        ActionType.TYPE: lambda: f"action:TYPE\tvalue:{action.text}\tpoint:500,500",
        ActionType.LAUNCH: lambda: f"action:AWAKE\tvalue:{action.text}",
        ActionType.WAIT: lambda: "action:WAIT\tvalue:2",
        ActionType.ASK_USER: lambda: f"action:INFO\tvalue:{action.text or 'Which one?'}",
        ActionType.DONE: lambda: f"action:COMPLETE\treturn:{action.text or 'Done.'}",
        ActionType.GIVE_UP: lambda: "action:ABORT\tvalue:cannot go on",
        ActionType.BACK: lambda: "action:BACK",
        ActionType.HOME: lambda: "action:HOME",
        ActionType.KEY: lambda: f"action:HOT_KEY\tkey:{action.text}",
    }
    return (
        f"<THINK> The next step is {t.value}. </THINK>\n"
        f"explain:{t.value} now\t{fields[t]()}\tsummary:did {t.value}"
    )


def _ui_venus(action: Action, space: Size) -> str:
    t = action.type

    def pt(end: bool = False) -> str:
        x, y = _xy(action, space, end)
        return f"({x},{y})"

    def quoted(text: str | None) -> str:
        return "'{}'".format((text or "").replace("'", "\\'"))

    ops = {
        ActionType.TAP: lambda: f"Click(box={pt()})",
        ActionType.LONG_PRESS: lambda: f"LongPress(box={pt()})",
        ActionType.SWIPE: lambda: f"Scroll(start={pt()}, end={pt(True)})",
        ActionType.TYPE: lambda: f"Type(content={quoted(action.text)})",
        ActionType.LAUNCH: lambda: f"Launch(app={quoted(action.text)})",
        ActionType.WAIT: lambda: "Wait()",
        ActionType.DONE: lambda: f"Finished(content={quoted(action.text)})",
        ActionType.ASK_USER: lambda: f"CallUser(content={quoted(action.text)})",
        ActionType.BACK: lambda: "PressBack()",
        ActionType.HOME: lambda: "PressHome()",
        ActionType.KEY: lambda: "PressEnter()" if action.text == "enter" else "PressRecent()",
    }
    return (
        f"<think>Next: {t.value}.</think>\n<action>{ops[t]()}</action>\n"
        f"<conclusion>I {t.value}.</conclusion>"
    )


def _agentcpm(action: Action, space: Size) -> str:
    t = action.type
    fields: dict[str, object] = {"thought": f"Next, {t.value}."}
    if t in (ActionType.TAP, ActionType.LONG_PRESS, ActionType.SWIPE):
        fields["POINT"] = list(_xy(action, space))
    if t is ActionType.LONG_PRESS:
        fields["duration"] = 1000
    elif t is ActionType.SWIPE:
        fields["to"] = list(_xy(action, space, True))
    elif t is ActionType.TYPE:
        fields["TYPE"] = action.text
    elif t in (ActionType.BACK, ActionType.HOME):
        fields["PRESS"] = t.value.upper()
    elif t is ActionType.KEY:
        fields["PRESS"] = (action.text or "").upper()
    elif t is ActionType.WAIT:
        fields["duration"] = 1500
    elif t is ActionType.DONE:
        fields["STATUS"] = "finish"
    elif t is ActionType.GIVE_UP:
        fields["STATUS"] = "impossible"
    elif t is ActionType.ASK_USER:
        fields.update(thought=action.text, STATUS="need_feedback")
    elif t is not ActionType.TAP:
        raise ValueError(f"agentcpm-gui has no {t.value}")
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))


def reply_for(family: str, action: Action, sent: Size) -> str:
    """What ``family`` answers for ``action`` when it was sent an image of ``sent`` size."""
    space = get_family(family).space_size(sent)
    if family.startswith("ui-tars"):
        return _uitars(action, space, family.rsplit("-", 1)[1])
    if family in ("autoglm", "open-autoglm"):
        return _autoglm(action, space)
    if family == "gui-owl-1.5":
        return _gui_owl15(action, sent)
    if family == "agentcpm-gui":
        return _agentcpm(action, space)
    if family == "ui-venus-1.5":
        return _ui_venus(action, space)
    if family == "gelab-zero":
        return _gelab(action, space)
    if family == "mai-ui":
        return _mai_ui(action, space)
    if family == "gemini-computer-use":
        return _gemini(action, space)
    if family in ("qwen2.5-vl", "qwen3-vl", "gui-owl"):
        return _mobile_use(action, space, family)
    if family == "json":
        return _json(action, space)
    if family == "mobile-agent-v2":
        return _mobile_agent_v2(action, space)
    raise ValueError(family)
