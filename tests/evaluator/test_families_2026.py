"""The conformance corpus of the families added for issue 26: each family's own reply
format, read as its reference executor reads it, landing on the device pixel that
executor taps.

Sources of the example replies (the module docstrings name files and commits):
- GUI-Owl 1.5: X-PLUG/MobileAgent Mobile-Agent-v3.5/mobile_use/utils.py (the system
  prompt's response format: an ``Action:`` line, then the tool call) and
  run_gui_owl_1_5_for_mobile.py (the runner: 0-1000 scaled by the 16-rounded screenshot).
- MAI-UI: Tongyi-MAI/MAI-UI src/prompt.py (the action space lines, ``<thinking>`` and
  ``<tool_call>``), src/mai_naivigation_agent.py (/999, a box's centre, ``</think>``);
  Tongyi-MAI/MobileWorld (swipe direction, centre start, wait 1 s, status fail).
- Gemini computer use: Tongyi-MAI/MobileWorld gemini_cua_agent.py (function names and
  arguments, /1000 with clamping, the scroll rule, text-only replies as the answer);
  google-gemini/computer-use-preview agent.py (scroll_at, drag_and_drop destination_x).
- Open-AutoGLM: zai-org/Open-AutoGLM phone_agent/ (the autoglm grammar, one source).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from evaluator.agents.families import (
    FAMILIES,
    ActionParseError,
    InvalidActionError,
    get_family,
    read_reply,
)
from evaluator.agents.families.space import GUI_OWL15_RUNNER_ROUNDING
from graph_builder.model import NORMALIZED_SCREEN, Action, ActionType
from tests.evaluator.family_replies import reply_for

PHONE = (1080, 2400)
SMALL = (720, 1280)
TALL = (1440, 3120)


def owl(args: dict[str, object], line: str = "Do it.") -> str:
    call = json.dumps({"name": "mobile_use", "arguments": args}, ensure_ascii=False)
    return f"Action: {line}\n<tool_call>\n{call}\n</tool_call>"


def mai(args: dict[str, object], thinking: str = "The plan.") -> str:
    call = json.dumps({"name": "mobile_use", "arguments": args}, ensure_ascii=False)
    return f"<thinking>\n{thinking}\n</thinking>\n<tool_call>\n{call}\n</tool_call>"


def gelab(fields: str, think: str = "Look at the screen.") -> str:
    return f"<THINK> {think} </THINK>\nexplain:the reason\t{fields}\tsummary:so far so good"


def venus(action: str) -> str:
    return f"<think>Look first.</think>\n<action>{action}</action>\n<conclusion>ok</conclusion>"


def gem(name: str, **args: object) -> str:
    return json.dumps({"name": name, "args": args})


CORPUS = [
    # --- GUI-Owl 1.5: 0-1000 times the screenshot rounded to multiples of 16 (1080 -> 1088)
    (
        "gui-owl-1.5",
        owl({"action": "click", "coordinate": [500, 500]}),
        PHONE,
        {"type": "tap", "x": 544, "y": 1200},
    ),
    (
        "gui-owl-1.5",
        owl({"action": "click", "coordinate": [500, 500]}),
        SMALL,
        {"type": "tap", "x": 360, "y": 640},
    ),
    (
        "gui-owl-1.5",
        owl({"action": "click", "coordinate": [250, 750]}),
        TALL,
        {"type": "tap", "x": 360, "y": 2340},
    ),
    (
        "gui-owl-1.5",
        owl({"action": "long_press", "coordinate": [100, 200], "time": 3}),
        PHONE,
        {"type": "long_press", "x": 109, "y": 480, "duration_ms": 800},
    ),
    (
        "gui-owl-1.5",
        owl({"action": "swipe", "coordinate": [500, 800], "coordinate2": [500, 200]}),
        PHONE,
        {"type": "swipe", "x": 544, "y": 1920, "x2": 544, "y2": 480, "direction": "up"},
    ),
    (
        "gui-owl-1.5",
        owl({"action": "swipe", "coordinate": [200, 500], "coordinate2": [800, 500]}),
        SMALL,
        {"type": "swipe", "x": 144, "x2": 576, "direction": "right"},
    ),
    (
        "gui-owl-1.5",
        owl({"action": "type", "text": "Tom 他"}),
        PHONE,
        {"type": "type", "text": "Tom 他"},
    ),
    (
        "gui-owl-1.5",
        owl({"action": "key", "text": "volume_up"}),
        PHONE,
        {"type": "key", "text": "volume_up"},
    ),
    ("gui-owl-1.5", owl({"action": "system_button", "button": "Back"}), PHONE, {"type": "back"}),
    ("gui-owl-1.5", owl({"action": "system_button", "button": "Home"}), PHONE, {"type": "home"}),
    (
        "gui-owl-1.5",
        owl({"action": "system_button", "button": "Enter"}),
        PHONE,
        {"type": "key", "text": "enter"},
    ),
    (
        "gui-owl-1.5",
        owl({"action": "open", "text": "Clock"}, "Open the Clock app."),
        PHONE,
        {"type": "launch", "text": "Clock"},
    ),
    (
        "gui-owl-1.5",
        owl({"action": "wait", "time": 3}),
        PHONE,
        {"type": "wait", "duration_ms": 3000},
    ),
    ("gui-owl-1.5", owl({"action": "wait"}), PHONE, {"type": "wait", "duration_ms": 2000}),
    (
        "gui-owl-1.5",
        owl({"action": "answer", "text": "21 degrees"}),
        PHONE,
        {"type": "done", "text": "21 degrees"},
    ),
    (
        "gui-owl-1.5",
        owl({"action": "interact", "text": "Which Tom?"}),
        PHONE,
        {"type": "ask_user", "text": "Which Tom?"},
    ),
    ("gui-owl-1.5", owl({"action": "terminate", "status": "success"}), PHONE, {"type": "done"}),
    ("gui-owl-1.5", owl({"action": "terminate", "status": "failure"}), PHONE, {"type": "give_up"}),
    # --- MAI-UI: relative 0-999
    (
        "mai-ui",
        mai({"action": "click", "coordinate": [999, 999]}),
        PHONE,
        {"type": "tap", "x": 1080, "y": 2400},
    ),
    (
        "mai-ui",
        mai({"action": "click", "coordinate": [100, 100, 300, 300]}),
        PHONE,
        {"type": "tap", "x": 216, "y": 480},
    ),
    (
        "mai-ui",
        mai({"action": "double_click", "coordinate": [499.5, 499.5]}),
        SMALL,
        {"type": "double_tap", "x": 360, "y": 640},
    ),
    (
        "mai-ui",
        mai({"action": "long_press", "coordinate": [333, 666]}),
        TALL,
        {"type": "long_press", "x": 480, "y": 2080},
    ),
    (
        "mai-ui",
        mai({"action": "type", "text": 'say "hi"\n'}),
        PHONE,
        {"type": "type", "text": 'say "hi"\n'},
    ),
    (
        "mai-ui",
        mai({"action": "swipe", "direction": "up", "coordinate": [100, 900]}),
        PHONE,
        {"type": "swipe", "x": 540, "y": 1200, "direction": "up"},
    ),
    (
        "mai-ui",
        mai({"action": "swipe", "direction": "down"}),
        PHONE,
        {"type": "swipe", "x": 540, "y": 1200, "direction": "down"},
    ),
    (
        "mai-ui",
        mai({"action": "swipe", "direction": "left"}),
        PHONE,
        {"type": "swipe", "direction": "left"},
    ),
    (
        "mai-ui",
        mai({"action": "swipe", "direction": "right"}),
        PHONE,
        {"type": "swipe", "direction": "right"},
    ),
    (
        "mai-ui",
        mai({"action": "drag", "start_coordinate": [999, 0], "end_coordinate": [0, 999]}),
        PHONE,
        {"type": "swipe", "x": 1080, "y": 0, "x2": 0, "y2": 2400, "direction": "down"},
    ),
    (
        "mai-ui",
        mai({"action": "open", "text": "Contacts"}),
        PHONE,
        {"type": "launch", "text": "Contacts"},
    ),
    ("mai-ui", mai({"action": "system_button", "button": "back"}), PHONE, {"type": "back"}),
    ("mai-ui", mai({"action": "system_button", "button": "home"}), PHONE, {"type": "home"}),
    (
        "mai-ui",
        mai({"action": "system_button", "button": "enter"}),
        PHONE,
        {"type": "key", "text": "enter"},
    ),
    ("mai-ui", mai({"action": "wait"}), PHONE, {"type": "wait", "duration_ms": 1000}),
    (
        "mai-ui",
        mai({"action": "answer", "text": "It's 3 pm"}),
        PHONE,
        {"type": "answer", "text": "It's 3 pm"},
    ),
    (
        "mai-ui",
        mai({"action": "ask_user", "text": "Which daughter?"}),
        PHONE,
        {"type": "ask_user", "text": "Which daughter?"},
    ),
    ("mai-ui", mai({"action": "terminate", "status": "success"}), PHONE, {"type": "done"}),
    ("mai-ui", mai({"action": "terminate", "status": "fail"}), PHONE, {"type": "give_up"}),
    (
        "mai-ui",  # a thinking model: only the closing tag
        'Tap it.</think>\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", '
        '"coordinate": [0, 0]}}\n</tool_call>',
        PHONE,
        {"type": "tap", "x": 0, "y": 0},
    ),
    # --- Gemini computer use: relative, divided by 1000
    (
        "gemini-computer-use",
        gem("click_at", x=500, y=250),
        PHONE,
        {"type": "tap", "x": 540, "y": 600},
    ),
    (
        "gemini-computer-use",
        gem("click", x=1000, y=1000),
        SMALL,
        {"type": "tap", "x": 720, "y": 1280},
    ),
    (
        "gemini-computer-use",
        gem("click_at", x=1500, y=-20),
        PHONE,  # clamped to the edge
        {"type": "tap", "x": 1080, "y": 0},
    ),
    (
        "gemini-computer-use",
        gem("double_click", x=250, y=250),
        TALL,
        {"type": "double_tap", "x": 360, "y": 780},
    ),
    (
        "gemini-computer-use",
        gem("long_press", x=100, y=900),
        PHONE,
        {"type": "long_press", "x": 108, "y": 2160},
    ),
    (
        "gemini-computer-use",
        gem("type_text_at", x=500, y=100, text="Tom", press_enter=False),
        PHONE,
        {"type": "type", "text": "Tom"},
    ),
    ("gemini-computer-use", gem("type", text="pills"), PHONE, {"type": "type", "text": "pills"}),
    (
        "gemini-computer-use",
        gem("scroll_at", x=500, y=500, direction="down", magnitude=400),
        PHONE,
        {"type": "swipe", "x": 540, "y": 1680, "x2": 540, "y2": 720, "direction": "up"},
    ),
    (
        "gemini-computer-use",
        gem("scroll_document", direction="up"),
        PHONE,
        {"type": "swipe", "y": 840, "y2": 1560, "direction": "down"},
    ),
    (
        "gemini-computer-use",
        gem("scroll_at", x=500, y=500, direction="right", magnitude=200),
        PHONE,
        {"type": "swipe", "x": 432, "x2": 648, "direction": "right"},
    ),
    (
        "gemini-computer-use",
        gem("scroll", direction="left", magnitude_in_wheel_clicks=2),
        PHONE,
        {"type": "swipe", "x": 702, "x2": 378, "direction": "left"},
    ),
    (
        "gemini-computer-use",
        gem("drag_and_drop", x=500, y=900, destination_x=500, destination_y=100),
        PHONE,
        {"type": "swipe", "y": 2160, "y2": 240, "direction": "up"},
    ),
    ("gemini-computer-use", gem("go_back"), PHONE, {"type": "back"}),
    ("gemini-computer-use", gem("press_key", key="home"), PHONE, {"type": "home"}),
    ("gemini-computer-use", gem("press_key", key="Enter"), PHONE, {"type": "key", "text": "enter"}),
    ("gemini-computer-use", gem("key_combination", keys="Escape"), PHONE, {"type": "back"}),
    (
        "gemini-computer-use",
        gem("open_app", app_name="Clock"),
        PHONE,
        {"type": "launch", "text": "Clock"},
    ),
    (
        "gemini-computer-use",
        gem("open_app", package_name="com.android.settings"),
        PHONE,
        {"type": "launch", "text": "com.android.settings"},
    ),
    ("gemini-computer-use", gem("wait_5_seconds"), PHONE, {"type": "wait", "duration_ms": 1000}),
    ("gemini-computer-use", gem("list_apps"), PHONE, {"type": "wait", "duration_ms": 0}),
    ("gemini-computer-use", gem("answer", text="True"), PHONE, {"type": "answer", "text": "True"}),
    ("gemini-computer-use", gem("done", summary="Alarm set."), PHONE, {"type": "done"}),
    (
        "gemini-computer-use",
        "The battery is at 80%.",
        PHONE,
        {"type": "answer", "text": "The battery is at 80%."},
    ),
    (
        "gemini-computer-use",  # the chat client's text for an OpenAI tool call
        '<tool_call>{"name": "click_at", "arguments": {"x": 500, "y": 500}}</tool_call>',
        PHONE,
        {"type": "tap", "x": 540, "y": 1200},
    ),
    # --- GELab-Zero: relative 0-1000, tab-separated fields
    (
        "gelab-zero",
        gelab("action:CLICK\tpoint:500,250"),
        PHONE,
        {"type": "tap", "x": 540, "y": 600},
    ),
    (
        "gelab-zero",
        gelab("action:CLICK\tpoint:1000 1000"),
        SMALL,
        {"type": "tap", "x": 720, "y": 1280},
    ),
    (
        "gelab-zero",
        gelab("action:LONGPRESS\tpoint:250,750"),
        TALL,
        {"type": "long_press", "x": 360, "y": 2340, "duration_ms": 1500},
    ),
    (
        "gelab-zero",
        gelab("action:LONGPRESS\tpoint:250,750\tvalue:3"),
        PHONE,
        {"type": "long_press", "duration_ms": 3000},
    ),
    (
        "gelab-zero",
        gelab("action:SLIDE\tpoint1:500,800\tpoint2:500,200"),
        PHONE,
        {"type": "swipe", "x": 540, "y": 1920, "x2": 540, "y2": 480, "direction": "up"},
    ),
    (
        "gelab-zero",
        gelab("action:TYPE\tvalue:李明 Tom\tpoint:500,100"),
        PHONE,
        {"type": "type", "text": "李明 Tom"},
    ),
    (
        "gelab-zero",
        gelab("action:AWAKE\tvalue:Settings"),
        PHONE,
        {"type": "launch", "text": "Settings"},
    ),
    ("gelab-zero", gelab("action:WAIT\tvalue:3"), PHONE, {"type": "wait", "duration_ms": 3000}),
    (
        "gelab-zero",
        gelab("action:INFO\tvalue:Which prescription?"),
        PHONE,
        {"type": "ask_user", "text": "Which prescription?"},
    ),
    (
        "gelab-zero",
        gelab("action:COMPLETE\treturn:Your alarm is set for 7:00."),
        PHONE,
        {"type": "done", "text": "Your alarm is set for 7:00."},
    ),
    ("gelab-zero", gelab("action:ABORT\tvalue:no network"), PHONE, {"type": "give_up"}),
    ("gelab-zero", gelab("action:BACK"), PHONE, {"type": "back"}),
    ("gelab-zero", gelab("action:HOME"), PHONE, {"type": "home"}),
    (
        "gelab-zero",
        gelab("action:HOT_KEY\tkey:volume_up"),
        PHONE,
        {"type": "key", "text": "volume_up"},
    ),
    (
        "gelab-zero",
        gelab("action:SCROLL\tpoint:500,500\tdirection:down"),
        PHONE,
        {"type": "swipe", "x": 540, "y": 1200, "direction": "up"},
    ),
    (
        "gelab-zero",  # lower-case and misspelt THINK tags are read as the reference reads them
        "<tink>hmm</TINK>\nexplain:x\taction:CLICK\tpoint:0,0",
        PHONE,
        {"type": "tap", "x": 0},
    ),
    # --- UI-Venus 1.5: divided by 1000 as the executor does (the prompt says 0-999)
    ("ui-venus-1.5", venus("Click(box=(500,250))"), PHONE, {"type": "tap", "x": 540, "y": 600}),
    ("ui-venus-1.5", venus("Click(box=(999,999))"), SMALL, {"type": "tap", "x": 719, "y": 1279}),
    (
        "ui-venus-1.5",
        venus("LongPress(box=(250,750))"),
        TALL,
        {"type": "long_press", "x": 360, "y": 2340},
    ),
    (
        "ui-venus-1.5",
        venus("Scroll(start=(500,800), end=(500,200))"),
        PHONE,
        {"type": "swipe", "x": 540, "y": 1920, "x2": 540, "y2": 480, "direction": "up"},
    ),
    (
        "ui-venus-1.5",
        venus("Drag(start=(100,500), end=(900,500))"),
        PHONE,
        {"type": "swipe", "x": 108, "x2": 972, "direction": "right"},
    ),
    (
        "ui-venus-1.5",
        venus("Scroll(direction='down')"),
        PHONE,  # the executor's preset
        {"type": "swipe", "x": 810, "y": 1714, "x2": 810, "y2": 960, "direction": "up"},
    ),
    ("ui-venus-1.5", venus("Scroll(direction='up')"), PHONE, {"type": "swipe", "direction": "up"}),
    (
        "ui-venus-1.5",
        venus("Type(content='Tom (work) | home')"),
        PHONE,
        {"type": "type", "text": "Tom （work） ｜ home"},
    ),
    ("ui-venus-1.5", venus("Launch(app='Clock')"), PHONE, {"type": "launch", "text": "Clock"}),
    ("ui-venus-1.5", venus("Wait()"), PHONE, {"type": "wait", "duration_ms": 1000}),
    ("ui-venus-1.5", venus("Finished(content='')"), PHONE, {"type": "done"}),
    (
        "ui-venus-1.5",
        venus("Finished(content='It is sunny.')"),
        PHONE,
        {"type": "done", "text": "It is sunny."},
    ),
    (
        "ui-venus-1.5",
        venus("CallUser(content='Which Tom do you mean?')"),
        PHONE,
        {"type": "ask_user", "text": "Which Tom do you mean?"},
    ),
    ("ui-venus-1.5", venus("PressBack()"), PHONE, {"type": "back"}),
    ("ui-venus-1.5", venus("PressHome()"), PHONE, {"type": "home"}),
    ("ui-venus-1.5", venus("PressEnter()"), PHONE, {"type": "key", "text": "enter"}),
    ("ui-venus-1.5", venus("PressRecent()"), PHONE, {"type": "key", "text": "app_switch"}),
    ("ui-venus-1.5", "Click(box=(500,500))", PHONE, {"type": "tap", "x": 540}),
    # --- AgentCPM-GUI: compact JSON, relative 0-1000
    (
        "agentcpm-gui",  # the README's expected output
        '{"thought":"任务目标是点击屏幕上的‘会员’按钮。","POINT":[729,69]}',
        PHONE,
        {"type": "tap", "x": 787, "y": 166},
    ),
    ("agentcpm-gui", '{"POINT":[480,320]}', SMALL, {"type": "tap", "x": 346, "y": 410}),
    ("agentcpm-gui", '{"POINT":[1000,1000]}', TALL, {"type": "tap", "x": 1440, "y": 3120}),
    (
        "agentcpm-gui",
        '{"POINT":[480,320],"duration":1000}',
        PHONE,
        {"type": "long_press", "x": 518, "y": 768, "duration_ms": 1000},
    ),
    ("agentcpm-gui", '{"POINT":[480,320],"duration":200}', PHONE, {"type": "tap"}),
    (
        "agentcpm-gui",
        '{"POINT":[500,200],"to":"down"}',
        PHONE,
        {"type": "swipe", "x": 540, "y": 480, "direction": "down"},
    ),
    (
        "agentcpm-gui",
        '{"POINT":[500,500],"to":"left"}',
        PHONE,
        {"type": "swipe", "direction": "left"},
    ),
    (
        "agentcpm-gui",
        '{"POINT":[500,800],"to":[500,200]}',
        PHONE,
        {"type": "swipe", "x": 540, "y": 1920, "x2": 540, "y2": 480, "direction": "up"},
    ),
    ("agentcpm-gui", '{"PRESS":"HOME"}', PHONE, {"type": "home"}),
    ("agentcpm-gui", '{"PRESS":"BACK"}', PHONE, {"type": "back"}),
    ("agentcpm-gui", '{"PRESS":"ENTER"}', PHONE, {"type": "key", "text": "enter"}),
    ("agentcpm-gui", '{"TYPE":"Hello, world!"}', PHONE, {"type": "type", "text": "Hello, world!"}),
    ("agentcpm-gui", '{"duration":500}', PHONE, {"type": "wait", "duration_ms": 500}),
    ("agentcpm-gui", '{"STATUS":"finish"}', PHONE, {"type": "done"}),
    ("agentcpm-gui", '{"STATUS":"satisfied"}', PHONE, {"type": "done"}),
    ("agentcpm-gui", '{"STATUS":"impossible"}', PHONE, {"type": "give_up"}),
    ("agentcpm-gui", '{"STATUS":"interrupt"}', PHONE, {"type": "give_up"}),
    (
        "agentcpm-gui",
        '{"thought":"Which pharmacy?","STATUS":"need_feedback"}',
        PHONE,
        {"type": "ask_user", "text": "Which pharmacy?"},
    ),
    (
        "agentcpm-gui",  # a stopping status ends the task whatever comes with it
        '{"TYPE":"x","STATUS":"finish"}',
        PHONE,
        {"type": "done"},
    ),
    ("agentcpm-gui", '{"POINT":[10,10],"STATUS":"continue"}', PHONE, {"type": "tap", "x": 11}),
    # --- Open-AutoGLM: the autoglm grammar
    (
        "open-autoglm",
        'do(action="Tap", element=[500,500])',
        PHONE,
        {"type": "tap", "x": 540, "y": 1200},
    ),
    (
        "open-autoglm",
        '<think>done</think><answer>finish(message="Done.")</answer>',
        PHONE,
        {"type": "done", "text": "Done."},
    ),
]


@pytest.mark.parametrize(("family", "text", "screen", "expected"), CORPUS)
def test_corpus_reply_means_the_executors_device_action(family, text, screen, expected):
    out = read_reply(family, text, screen)
    assert {k: out.get(k) for k in expected} == expected, out


def test_every_new_family_names_the_convention_it_applies():
    for family in ("gui-owl-1.5", "mai-ui", "gemini-computer-use", "open-autoglm"):
        out = read_reply(family, reply_for(family, Action.back(), PHONE), PHONE)
        assert out["convention"], family
    assert "rounded to multiples of 16" in FAMILIES["gui-owl-1.5"].convention
    assert "divided by 1000" in FAMILIES["gemini-computer-use"].convention


def test_open_autoglm_is_the_autoglm_family():
    assert get_family("open-autoglm") is FAMILIES["autoglm"]
    assert "open-autoglm" not in FAMILIES


def test_the_gui_owl15_runner_rounding():
    assert GUI_OWL15_RUNNER_ROUNDING(1080, 2400) == (1088, 2400)
    assert GUI_OWL15_RUNNER_ROUNDING(720, 1280) == (720, 1280)
    assert GUI_OWL15_RUNNER_ROUNDING(1076, 2400) == (1072, 2400)


KINDS = {
    "gui-owl-1.5": ["tap", "long_press", "swipe", "type", "key", "launch", "back", "home"]
    + ["wait", "ask_user", "give_up", "done"],
    "mai-ui": ["tap", "double_tap", "long_press", "swipe", "type", "key", "launch", "back"]
    + ["home", "wait", "answer", "ask_user", "give_up", "done"],
    "agentcpm-gui": ["tap", "long_press", "swipe", "type", "key", "back", "home", "wait"]
    + ["ask_user", "give_up", "done"],
    "ui-venus-1.5": ["tap", "long_press", "swipe", "type", "key", "launch", "back", "home"]
    + ["wait", "ask_user", "done"],
    "gelab-zero": ["tap", "long_press", "swipe", "type", "key", "launch", "back", "home"]
    + ["wait", "ask_user", "give_up", "done"],
    "gemini-computer-use": ["tap", "double_tap", "long_press", "swipe", "type", "key"]
    + ["launch", "back", "home", "wait", "answer", "done"],
}
TEXTS = {"type": "a 'quoted' 文字", "key": "enter", "launch": "Clock", "answer": "21 degrees"}
SCREENS = [(1080, 2400), (720, 1280), (1440, 3120), (1080, 1920), (1920, 1080), (1076, 2392)]
TARGETS = [(0.0, 0.0), (1000.0, 1000.0), (123.4, 876.5), (500.0, 500.0), (999.9, 3.3)]


def intended(kind: str, x: float, y: float) -> Action:
    t = ActionType(kind)
    if t.is_pointed:
        return Action(t, x=x, y=y, screen=NORMALIZED_SCREEN)
    if t is ActionType.SWIPE:
        return Action.swipe(x, y, x, (y + 500) % 1000, screen=NORMALIZED_SCREEN)
    if t in TEXTS or t is ActionType.ASK_USER:
        return Action(t, text=TEXTS.get(kind, "Which one?"))
    return Action(t)


def reachable(family: str, sent: tuple[int, int]) -> tuple[float, float]:
    """The largest normalized point the family's executor can tap on a ``sent`` screen
    (GUI-Owl 1.5's runner cannot reach past its 16-rounded size when that is smaller)."""
    if family != "gui-owl-1.5":
        return 1000.0, 1000.0
    rw, rh = GUI_OWL15_RUNNER_ROUNDING(*sent)
    return min(1000.0, 1000 * rw / sent[0]), min(1000.0, 1000 * rh / sent[1])


@pytest.mark.parametrize("family", sorted(KINDS))
def test_every_action_kind_lands_within_one_unit(family):
    fam = FAMILIES[family]
    for screen in SCREENS:
        for sent in {fam.sent_size(screen), fam.sent_size(screen, 540)}:
            top_x, top_y = reachable(family, sent)
            for kind in KINDS[family]:
                pointed = ActionType(kind).is_pointed or kind == "swipe"
                for x, y in TARGETS if pointed else [(0.0, 0.0)]:
                    want = intended(kind, min(x, top_x), min(y, top_y))
                    text = reply_for(family, want, sent)
                    got = fam.read(text, sent).action
                    assert got.type is want.type, (family, kind, text)
                    if want.text is not None:
                        assert got.text == want.text, (family, text)
                    if want.point is None:
                        continue
                    n = got.normalized()
                    assert n.x is not None and n.y is not None
                    assert want.x is not None and want.y is not None
                    err = max(abs(n.x - want.x), abs(n.y - want.y))
                    assert err <= 1.0 + 1e-9, (family, kind, screen, sent, text, err)
                    if kind == "swipe":
                        assert got.direction is want.direction


@pytest.mark.parametrize(
    ("family", "text", "error"),
    [
        ("gui-owl-1.5", "Action: tap the icon", ActionParseError),
        ("gui-owl-1.5", owl({"action": "click", "coordinate": [500, 500]}) * 2, ActionParseError),
        ("gui-owl-1.5", owl({"action": "fly"}), ActionParseError),
        ("gui-owl-1.5", owl({"action": "click", "coordinate": [1000, 10]}), InvalidActionError),
        ("gui-owl-1.5", owl({"action": "terminate", "status": "fail"}), ActionParseError),
        ("mai-ui", mai({"action": "click", "coordinate": [1200, 10]}), InvalidActionError),
        ("mai-ui", mai({"action": "swipe", "direction": "sideways"}), ActionParseError),
        ("mai-ui", mai({"action": "terminate", "status": "failure"}), ActionParseError),
        ("mai-ui", "<thinking>I will tap it.</thinking>", ActionParseError),
        (
            "mai-ui",
            '<tool_call>{"name": "weather", "arguments": {"city": "x"}}</tool_call>',
            ActionParseError,
        ),
        ("gemini-computer-use", gem("click_at", x=float("nan"), y=3), InvalidActionError),
        ("gemini-computer-use", gem("go_back") + gem("go_home"), ActionParseError),
        ("gemini-computer-use", gem("teleport"), ActionParseError),
        ("gemini-computer-use", gem("press_key", key="F5"), ActionParseError),
        ("gemini-computer-use", gem("scroll_at", x=5, y=5, direction="in"), ActionParseError),
        ("gemini-computer-use", "   ", ActionParseError),
        ("gemini-computer-use", '{"name": "click_at", "args": {"x": 5', ActionParseError),
        (
            "gui-owl-1.5",
            'Action: x\n<tool_call>\n{"name": "mobile_use", "arguments": '
            '{"action": "click", "coordinate": [1, 2]}\n</tool_call>',
            ActionParseError,
        ),
        (
            "mai-ui",
            '<thinking>x</thinking><tool_call>{"name": "mobile_use", "arguments": '
            '{"action": "type", "text": "unclosed}}</tool_call>',
            ActionParseError,
        ),
        ("ui-venus-1.5", venus("Type(content='unclosed)"), ActionParseError),
        ("agentcpm-gui", '{"TYPE": "unclosed}', ActionParseError),
        ("gelab-zero", gelab("action:SLIDE\tpoint1:1,2"), ActionParseError),
        ("gelab-zero", gelab("action:CLICK\tpoint:500.5,20"), ActionParseError),
        ("gelab-zero", gelab("action:CLICK\tpoint:1200,20"), InvalidActionError),
        ("gelab-zero", gelab("action:CLICK\tpoint:1,2\taction:BACK"), ActionParseError),
        ("gelab-zero", gelab("action:FLY"), ActionParseError),
        ("ui-venus-1.5", venus("Click(box=[500,500])"), ActionParseError),
        ("ui-venus-1.5", venus("Click(box=(500.5,500))"), ActionParseError),
        ("ui-venus-1.5", venus("Click(box=(1001,5))"), InvalidActionError),
        ("ui-venus-1.5", venus("I will Click(box=(5,5))"), ActionParseError),
        ("ui-venus-1.5", venus("PressBack() PressHome()"), ActionParseError),
        ("ui-venus-1.5", venus("Drag(direction='up')"), ActionParseError),
        ("ui-venus-1.5", "<think>Tap the icon.</think>", ActionParseError),
        ("agentcpm-gui", '{"POINT":[500.5,20]}', ActionParseError),
        ("agentcpm-gui", '{"POINT":[1001,20]}', InvalidActionError),
        ("agentcpm-gui", '{"POINT":[1,2]} {"PRESS":"BACK"}', ActionParseError),
        ("agentcpm-gui", '{"CLICK":[1,2]}', ActionParseError),
        ("agentcpm-gui", '{"POINT":[1,2],"to":"sideways"}', ActionParseError),
        ("agentcpm-gui", '{"PRESS":"POWER"}', ActionParseError),
        ("agentcpm-gui", '{"thought":"I will tap it"}', ActionParseError),
        ("gelab-zero", "<THINK>I should tap Settings.</THINK>", ActionParseError),
    ],
)
def test_malformed_and_impossible_replies(family, text, error):
    with pytest.raises(error):
        FAMILIES[get_family(family).name].read(text, PHONE)


def test_parse_action_cli_prints_the_convention():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "elderbench.cli",
            "parse-action",
            "--family",
            "gui-owl-1.5",
            "--screen",
            "1080x2400",
            owl({"action": "click", "coordinate": [500, 500]}),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["x"], out["y"]) == (544, 1200) and "16" in out["convention"]
    gemini = subprocess.run(
        [
            sys.executable,
            "-m",
            "elderbench.cli",
            "parse-action",
            "--family",
            "gemini-computer-use",
            "--screen",
            "1080x2400",
            gem("click_at", x=500, y=250),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(gemini.stdout)["y"] == 600
