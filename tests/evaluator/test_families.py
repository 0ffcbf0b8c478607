"""The conformance corpus: each family's own example replies, read as the family means
them, landing on the intended device pixel after the family's own resize rule.

Sources (repository, file) of the example replies:
- UI-TARS: bytedance/UI-TARS README.md ("Usage": click(start_box='(100,200)') on a
  1920x1080 image, model_type qwen25vl), README_v1.md (1.0 mobile prompt),
  codes/ui_tars/prompt.py (MOBILE_USE_DOUBAO), codes/tests/action_parser_test.py
  (click(point='<point>200 300</point>')).
- AutoGLM: zai-org/Open-AutoGLM phone_agent/config/prompts_en.py and prompts_zh.py.
- Qwen2.5-VL: QwenLM/Qwen2.5-VL cookbooks/mobile_agent.ipynb (a 720x1280 screenshot,
  smart-resized to 728x1288, answered with click [639, 1095]; the history entry
  open "File Manager").
- Qwen3-VL: QwenLM/Qwen3-VL cookbooks/mobile_agent.ipynb (a 1440x3120 screenshot answered
  with click [447, 81] in the 0-999 space, with its Thought/Action lines).
- GUI-Owl: X-PLUG/MobileAgent Mobile-Agent-v3/android_world_v3/android_world/agents/
  gui_owl.py (the <thinking>/<tool_call>/<conclusion> layout, tap for click).
- Mobile-Agent-v2: X-PLUG/MobileAgent Mobile-Agent-v2/MobileAgent/prompt.py.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from evaluator.agents.families import FAMILIES, ActionParseError, InvalidActionError, read_reply
from evaluator.agents.families.space import GUI_OWL_RESIZE, QWEN25_RESIZE, UITARS_RESIZE
from graph_builder.model import NORMALIZED_SCREEN, Action, ActionType
from tests.evaluator.family_replies import reply_for
from tests.evaluator.test_families_2026 import KINDS as LATER_KINDS

PHONE = (1080, 2400)

# (family, reply, screenshot size, sent size or None, expected fields)
CORPUS = [
    # --- UI-TARS 1.5: pixels of the smart-resized image
    (
        "ui-tars-1.5",
        "Thought: Click the button\nAction: click(start_box='(100,200)')",
        (1920, 1080),
        None,
        {"type": "tap", "x": 99, "y": 198},
    ),
    (
        "ui-tars-1.5",
        "Thought: test\nAction: click(point='<point>200 300</point>')",
        PHONE,
        None,
        {"type": "tap", "x": 198, "y": 299},
    ),
    (
        "ui-tars-1.5",
        "Thought: hold it\nAction: long_press(point='<point>546 1204</point>')",
        PHONE,
        None,
        {"type": "long_press", "x": 540, "y": 1200},
    ),
    (
        "ui-tars-1.5",
        "Thought: see more\nAction: scroll(point='<point>546 1204</point>', direction='down')",
        PHONE,
        None,
        {"type": "swipe", "x": 540, "y": 1200, "direction": "up"},
    ),
    (
        "ui-tars-1.5",
        "Thought: move\nAction: drag(start_point='<point>546 1806</point>', "
        "end_point='<point>546 602</point>')",
        PHONE,
        None,
        {"type": "swipe", "x": 540, "y": 1800, "x2": 540, "y2": 600, "direction": "up"},
    ),
    (
        "ui-tars-1.5",
        "Thought: open clock\nAction: open_app(app_name='Clock')",
        PHONE,
        None,
        {"type": "launch", "text": "Clock"},
    ),
    (
        "ui-tars-1.5",
        "Thought: type\nAction: type(content='hello\\n')",
        PHONE,
        None,
        {"type": "type", "text": "hello\n"},
    ),
    ("ui-tars-1.5", "Thought: b\nAction: press_back()", PHONE, None, {"type": "back"}),
    ("ui-tars-1.5", "Thought: h\nAction: press_home()", PHONE, None, {"type": "home"}),
    (
        "ui-tars-1.5",
        "Thought: done\nAction: finished(content='It is 21 degrees.')",
        PHONE,
        None,
        {"type": "done", "text": "It is 21 degrees."},
    ),
    (
        "ui-tars-1.5",
        "Reflection: the menu did not open.\nAction_Summary: tap the menu again.\n"
        "Action: click(start_box='<|box_start|>(546,1204)<|box_end|>')",
        PHONE,
        None,
        {"type": "tap", "x": 540, "y": 1200},
    ),
    # --- UI-TARS 1.0: relative 0-1000, the 1.0 mobile prompt's box syntax
    (
        "ui-tars-1.0",
        "Thought: tap\nAction: click(start_box='<|box_start|>(500,250)<|box_end|>')",
        PHONE,
        None,
        {"type": "tap", "x": 540, "y": 600, "norm": [500.0, 250.0]},
    ),
    (
        "ui-tars-1.0",
        "Thought: list\nAction: scroll(start_box='<|box_start|>(500,750)<|box_end|>', "
        "end_box='<|box_start|>(500,250)<|box_end|>')",
        PHONE,
        None,
        {"type": "swipe", "x": 540, "y": 1800, "y2": 600, "direction": "up"},
    ),
    (
        "ui-tars-1.0",
        "Thought: hold\nAction: long_press(start_box='<|box_start|>(100,100)<|box_end|>', time='')",
        PHONE,
        None,
        {"type": "long_press", "x": 108, "y": 240},
    ),
    (
        "ui-tars-1.0",
        "Thought: box\nAction: click(start_box='(100,100,200,300)')",
        PHONE,
        None,
        {"type": "tap", "norm": [150.0, 200.0]},
    ),
    (
        "ui-tars-1.0",
        "Thought: twice\nAction: left_double(start_box='<|box_start|>(500,500)<|box_end|>')",
        PHONE,
        None,
        {"type": "double_tap", "x": 540, "y": 1200},
    ),
    ("ui-tars-1.0", "Thought: go\nAction: hotkey(key='enter')", PHONE, None, {"type": "key"}),
    ("ui-tars-1.0", "Thought: help\nAction: call_user()", PHONE, None, {"type": "ask_user"}),
    ("ui-tars-1.0", "Thought: w\nAction: wait()", PHONE, None, {"type": "wait"}),
    # --- AutoGLM: relative, divided by 1000
    (
        "autoglm",
        '<think>Open the app first.</think>\n<answer>do(action="Launch", app="Settings")</answer>',
        PHONE,
        None,
        {"type": "launch", "text": "Settings"},
    ),
    (
        "autoglm",
        # phone_agent/model/client.py: no tags, the thinking is what precedes do(action=
        'The Settings icon is on the home screen.\ndo(action="Tap", element=[500,500])',
        PHONE,
        None,
        {"type": "tap", "x": 540, "y": 1200},
    ),
    (
        "autoglm",
        'do(action="Tap", element=[500,500])',
        PHONE,
        None,
        {"type": "tap", "x": 540, "y": 1200},
    ),
    (
        "autoglm",
        'do(action="Tap", element=[500,900], message="important operation")',
        PHONE,
        None,
        {"type": "tap", "x": 540, "y": 2160},
    ),
    (
        "autoglm",
        'do(action="Double Tap", element=[250,250])',
        PHONE,
        None,
        {"type": "double_tap", "x": 270, "y": 600},
    ),
    (
        "autoglm",
        'do(action="Long Press", element=[250,250])',
        PHONE,
        None,
        {"type": "long_press", "x": 270, "y": 600},
    ),
    (
        "autoglm",
        'do(action="Swipe", start=[500,800], end=[500,200])',
        PHONE,
        None,
        {"type": "swipe", "direction": "up", "y": 1920, "y2": 480},
    ),
    (
        "autoglm",
        'do(action="Type", text="Hello World")',
        PHONE,
        None,
        {"type": "type", "text": "Hello World"},
    ),
    (
        "autoglm",
        'do(action="Type_Name", text="张三")',
        PHONE,
        None,
        {"type": "type", "text": "张三"},
    ),
    (
        "autoglm",
        'do(action="Type", text="他说"你好"")',
        PHONE,
        None,
        {"type": "type", "text": '他说"你好"'},
    ),
    ("autoglm", 'do(action="Interact")', PHONE, None, {"type": "ask_user"}),
    (
        "autoglm",
        'do(action="Take_over", message="请登录")',
        PHONE,
        None,
        {"type": "ask_user", "text": "请登录"},
    ),
    ("autoglm", 'do(action="Note", message="True")', PHONE, None, {"type": "wait"}),
    ("autoglm", 'do(action="Call_API", instruction="总结")', PHONE, None, {"type": "wait"}),
    ("autoglm", 'do(action="Back")', PHONE, None, {"type": "back"}),
    ("autoglm", 'do(action="Home")', PHONE, None, {"type": "home"}),
    (
        "autoglm",
        'do(action="Wait", duration="2 seconds")',
        PHONE,
        None,
        {"type": "wait", "duration_ms": 2000},
    ),
    (
        "autoglm",
        '<think>Done.</think><answer>finish(message="Task completed.")</answer>',
        PHONE,
        None,
        {"type": "done", "text": "Task completed."},
    ),
    # --- Qwen2.5-VL: pixels of the smart-resized image
    (
        "qwen2.5-vl",
        '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", '
        '"coordinate": [639, 1095]}}\n</tool_call>',
        (720, 1280),
        None,
        {"type": "tap", "x": 632, "y": 1088},
    ),
    (
        "qwen2.5-vl",
        '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "open", '
        '"text": "File Manager"}}\n</tool_call>',
        PHONE,
        None,
        {"type": "launch", "text": "File Manager"},
    ),
    (
        "qwen2.5-vl",
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "key", "text": "volume_up"}}'
        "</tool_call>",
        PHONE,
        None,
        {"type": "key", "text": "volume_up"},
    ),
    (
        "qwen2.5-vl",
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "system_button", '
        '"button": "Enter"}}</tool_call>',
        PHONE,
        None,
        {"type": "key", "text": "enter"},
    ),
    (
        "qwen2.5-vl",
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "system_button", '
        '"button": "Back"}}</tool_call>',
        PHONE,
        None,
        {"type": "back"},
    ),
    (
        "qwen2.5-vl",
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "swipe", '
        '"coordinate": [546, 1806], "coordinate2": [546, 602]}}</tool_call>',
        PHONE,
        None,
        {"type": "swipe", "x": 540, "y": 1800, "y2": 600, "direction": "up"},
    ),
    (
        "qwen2.5-vl",
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "long_press", '
        '"coordinate": [546, 1204], "time": 2}}</tool_call>',
        PHONE,
        None,
        {"type": "long_press", "x": 540, "y": 1200, "duration_ms": 2000},
    ),
    (
        "qwen2.5-vl",
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "terminate", '
        '"status": "failure"}}</tool_call>',
        PHONE,
        None,
        {"type": "give_up"},
    ),
    (
        "qwen2.5-vl",
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "terminate", '
        '"status": "success"}}</tool_call>',
        PHONE,
        None,
        {"type": "done"},
    ),
    # --- Qwen3-VL: relative 0-999
    (
        "qwen3-vl",
        "Thought: To search for Musk in X, I need to click on the search bar at the top of the "
        'screen.\nAction: "I tapped on the search bar to begin searching for Musk."\n'
        '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", '
        '"coordinate": [447, 81]}}\n</tool_call>',
        (1440, 3120),
        None,
        {"type": "tap", "x": 644, "y": 253},
    ),
    (
        "qwen3-vl",
        'Thought: t\nAction: a\n<tool_call>\n{"name": "mobile_use", "arguments": '
        '{"action": "answer", "text": "21°C and sunny"}}\n</tool_call>',
        PHONE,
        None,
        {"type": "answer", "text": "21°C and sunny"},
    ),
    (
        "qwen3-vl",
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "click", '
        '"coordinate": [999, 999]}}</tool_call>',
        PHONE,
        None,
        {"type": "tap", "x": 1080, "y": 2400},
    ),
    # --- GUI-Owl: pixels of its smart-resized image; tap and open_app
    (
        "gui-owl",
        "<thinking>\nThe alarm tab is at the bottom.\n</thinking>\n<tool_call>\n"
        '{"name": "mobile_use", "arguments": {"action": "tap", "coordinate": [546, 1204]}}\n'
        "</tool_call>\n<conclusion>\nTapped the alarm tab.\n</conclusion>",
        PHONE,
        None,
        {"type": "tap", "x": 540, "y": 1200},
    ),
    (
        "gui-owl",
        '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "open_app", '
        '"text": "clock"}}\n</tool_call>',
        PHONE,
        None,
        {"type": "launch", "text": "clock"},
    ),
    (
        "gui-owl",
        '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "answer", '
        '"text": "Tuesday at 10"}}\n</tool_call>',
        PHONE,
        None,
        {"type": "answer", "text": "Tuesday at 10"},
    ),
    # --- our JSON
    (
        "json",
        'Sure.\n```json\n{"thought": "open it", "action": "tap", "x": 500, "y": 250}\n```',
        PHONE,
        None,
        {"type": "tap", "x": 540, "y": 600},
    ),
    ("json", '{"action": "launch", "app": "Clock"}', PHONE, None, {"type": "launch"}),
    (
        "json",
        '{"action": "ask_user", "question": "Which Tom?"}',
        PHONE,
        None,
        {"type": "ask_user", "text": "Which Tom?"},
    ),
    ("json", '{"action": "terminate", "status": "failure"}', PHONE, None, {"type": "give_up"}),
    # --- Mobile-Agent-v2: pixels of the screenshot as sent (here shrunk to 461x1024)
    (
        "mobile-agent-v2",
        "### Thought ###\nOpen the clock.\n### Action ###\nTap (230, 512)\n"
        "### Operation ###\nTap the clock icon.",
        PHONE,
        (461, 1024),
        {"type": "tap", "x": 539, "y": 1200},
    ),
    (
        "mobile-agent-v2",
        "### Thought ###\nx\n### Action ###\nSwipe (230, 800), (230, 200)\n### Operation ###\ny",
        PHONE,
        None,
        {"type": "swipe", "direction": "up"},
    ),
    (
        "mobile-agent-v2",
        "### Thought ###\nx\n### Action ###\nOpen app (Clock)\n### Operation ###\ny",
        PHONE,
        None,
        {"type": "launch", "text": "Clock"},
    ),
    (
        "mobile-agent-v2",
        "### Thought ###\nx\n### Action ###\nType (hello)\n### Operation ###\ny",
        PHONE,
        None,
        {"type": "type", "text": "hello"},
    ),
    (
        "mobile-agent-v2",
        "### Thought ###\nx\n### Action ###\nStop\n### Operation ###\ny",
        PHONE,
        None,
        {"type": "done"},
    ),
]


@pytest.mark.parametrize(("family", "text", "screen", "sent", "expected"), CORPUS)
def test_corpus_reply_means_the_stated_device_action(family, text, screen, sent, expected):
    out = read_reply(family, text, screen, sent)
    assert {k: out.get(k) for k in expected} == expected, out


def test_the_smart_resize_rules_match_the_published_examples():
    assert QWEN25_RESIZE(1080, 2400) == (1092, 2408)  # Qwen2.5-VL cookbook, 1080x2400
    assert QWEN25_RESIZE(720, 1280) == (728, 1288)  # Qwen2.5-VL cookbook, 720x1280
    assert UITARS_RESIZE(1920, 1080) == (1932, 1092)
    assert UITARS_RESIZE(100, 100) == (280, 280)  # below 100 tokens: scaled up
    assert GUI_OWL_RESIZE(1440, 3120) == (1428, 3108)
    w, h = GUI_OWL_RESIZE(3000, 6000)  # above 12800 tokens: scaled down
    assert w * h <= 784 * 12800 < (w + 28) * (h + 28)
    big = QWEN25_RESIZE(4000, 8000)
    assert big[0] * big[1] <= 16384 * 28 * 28 and big[0] % 28 == 0 and big[1] % 28 == 0


# Every action kind every family emits, as that family writes it.
KINDS = {
    "ui-tars-1.0": ["tap", "double_tap", "long_press", "swipe", "type", "key", "launch"]
    + ["back", "home", "wait", "ask_user", "done"],
    "ui-tars-1.5": ["tap", "double_tap", "long_press", "swipe", "type", "key", "launch"]
    + ["back", "home", "wait", "ask_user", "done"],
    "autoglm": ["tap", "double_tap", "long_press", "swipe", "type", "launch", "back", "home"]
    + ["wait", "ask_user", "done"],
    "qwen2.5-vl": ["tap", "long_press", "swipe", "type", "key", "launch", "back", "home"]
    + ["wait", "give_up", "done"],
    "qwen3-vl": ["tap", "long_press", "swipe", "type", "key", "launch", "back", "home"]
    + ["wait", "answer", "give_up", "done"],
    "gui-owl": ["tap", "long_press", "swipe", "type", "launch", "back", "home", "wait"]
    + ["answer", "give_up", "done"],
    "json": [t.value for t in ActionType],
    "mobile-agent-v2": ["tap", "swipe", "type", "launch", "back", "home", "done"],
}
TEXTS = {"type": "a 'quoted' 文字", "key": "enter", "launch": "Clock", "answer": "21 degrees"}
SCREENS = [(1080, 2400), (720, 1280), (1440, 3120), (1080, 1920), (1920, 1080)]


def intended(kind: str, x: float, y: float) -> Action:
    n = NORMALIZED_SCREEN
    t = ActionType(kind)
    if t.is_pointed:
        return Action(t, x=x, y=y, screen=n)
    if t is ActionType.SWIPE:
        return Action.swipe(x, y, x, (y + 500) % 1000, screen=n)  # clearly vertical
    if t in TEXTS or t is ActionType.ASK_USER:
        return Action(t, text=TEXTS.get(kind, "Which one?"))
    return Action(t)


def test_every_family_is_in_the_coverage_table():
    assert set(KINDS) | set(LATER_KINDS) == set(FAMILIES)


@pytest.mark.parametrize("family", sorted(KINDS))
def test_every_action_kind_parses_and_lands_within_one_unit(family):
    fam = FAMILIES[family]
    targets = [(0.0, 0.0), (1000.0, 1000.0), (123.4, 876.5), (500.0, 500.0), (999.9, 3.3)]
    for screen in SCREENS:
        for sent in {fam.sent_size(screen), fam.sent_size(screen, 540)}:
            space = fam.space_size(sent)
            for kind in KINDS[family]:
                for x, y in targets if ActionType(kind).is_pointed or kind == "swipe" else [(0, 0)]:
                    want = intended(kind, x, y)
                    text = reply_for(family, want, sent)
                    got = fam.parse(text, space).action
                    assert got.type is want.type, (family, kind, text)
                    if want.text is not None and kind != "ask_user":
                        assert got.text == want.text, (family, text)
                    if want.point is not None:
                        n = got.normalized()
                        assert n.x is not None and n.y is not None
                        err = max(abs(n.x - want.x), abs(n.y - want.y))  # type: ignore[operator]
                        # within 1 unit; a model writing integers in a space smaller than
                        # 500 px (a shrunk image) cannot be closer than half its pixel
                        assert err <= max(1.0, 500 / min(space)) + 1e-9, (family, kind, sent, text)
                        if sent == fam.sent_size(screen):
                            assert err <= 1.0
                        # and the device pixel is the nearest one to that point
                        d = got.to_device(screen)
                        ideal = n.rescaled(screen)
                        assert abs(d.x - ideal.x) <= 0.5 and abs(d.y - ideal.y) <= 0.5  # type: ignore[operator]
                        if kind == "swipe":
                            assert got.direction is want.direction


MALFORMED = {
    "ui-tars-1.5": (
        "I think the button is there. Thought: x\nAction: click(point='<point>10 20</point>')",
        "Thought: two\nAction: click(point='<point>1 2</point>')\n\n"
        "click(point='<point>3 4</point>')",
        "Thought: x\nAction: click(start_box='(100,200))",
        "Thought: 我要输入\nAction: type(content='他说'你好'')",
        "Thought: I am not sure what to do next.",
    ),
    "autoglm": (
        'Let me look... <think>go</think><answer>do(action="Tap", element=[10,20])</answer>',
        'do(action="Tap", element=[1,2])\ndo(action="Back")',
        'do(action="Tap, element=[1,2])',
        'do(action="Type", text="输入"李明"的号码")',
        "<think>The screen is loading.</think>",
    ),
    "qwen2.5-vl": (
        'Sure! <tool_call>{"name": "mobile_use", "arguments": {"action": "click", '
        '"coordinate": [10, 20]}}</tool_call> hope that helps',
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "back"}}</tool_call>'
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "home"}}</tool_call>',
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "click, "coordinate": '
        "[1, 2]}}</tool_call>",
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "type", '
        '"text": "他说\\"你好\\""}}</tool_call>',
        "I should tap the search bar.",
    ),
    "json": (
        'Here: {"action": "tap", "x": 10, "y": 20} done.',
        '{"action": "back"} {"action": "home"}',
        '{"action": "type", "text": "missing}',
        '{"action": "type", "text": "他说\\"你好\\""}',
        "Thinking about it, the settings icon is best.",
    ),
}


CHINESE = {
    "ui-tars-1.5": "他说'你好'",
    "autoglm": '输入"李明"的号码',
    "qwen2.5-vl": '他说"你好"',
    "json": '他说"你好"',
}


@pytest.mark.parametrize("family", sorted(MALFORMED))
def test_malformed_variants(family):
    prose, two, broken, chinese, no_action = MALFORMED[family]
    typed = CHINESE[family]
    fam = FAMILIES[family]
    space = fam.space_size(fam.sent_size(PHONE))
    assert fam.parse(prose, space).action.type is ActionType.TAP  # extra prose is fine
    with pytest.raises(ActionParseError, match="one per step"):
        fam.parse(two, space)
    with pytest.raises(ActionParseError):
        fam.parse(broken, space)
    assert fam.parse(chinese, space).action.text == typed
    with pytest.raises(ActionParseError):
        fam.parse(no_action, space)


@pytest.mark.parametrize(
    ("family", "text"),
    [
        ("autoglm", 'do(action="Tap", element=[1200, 300])'),
        ("json", '{"action": "tap", "x": NaN, "y": 3}'),
        ("json", '{"action": "tap", "x": -5, "y": 3}'),
        (
            "qwen3-vl",
            '<tool_call>{"name": "mobile_use", "arguments": {"action": "click", '
            '"coordinate": [1500, 10]}}</tool_call>',
        ),
        ("ui-tars-1.5", "Thought: x\nAction: click(point='<point>5000 10</point>')"),
    ],
)
def test_off_screen_and_nan_points_are_invalid_actions(family, text):
    fam = FAMILIES[family]
    with pytest.raises(InvalidActionError):
        fam.parse(text, fam.space_size(fam.sent_size(PHONE)))


def test_parse_action_cli_prints_one_json_line():
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "elderbench.cli", "parse-action", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    ok = cli(
        "--family",
        "qwen2.5-vl",
        "--screen",
        "720x1280",
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "click", '
        '"coordinate": [639, 1095]}}</tool_call>',
    )
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    assert (out["type"], out["x"], out["y"]) == ("tap", 632, 1088)
    assert math.isclose(out["norm"][0], 877.7, abs_tol=0.1)
    sent = cli(
        "--family",
        "ui-tars-1.5",
        "--screen",
        "1080x2400",
        "--sent",
        "540x1200",
        "Thought: t\nAction: click(point='<point>266 602</point>')",
    )
    assert json.loads(sent.stdout)["x"] == 540 and json.loads(sent.stdout)["sent"] == [540, 1200]
    bad = cli("--family", "autoglm", "--screen", "1080x2400", "I would tap it")
    assert bad.returncode == 1 and "error" in json.loads(bad.stdout)
    unknown = cli("--family", "uitars", "--screen", "1080x2400", "x")
    assert unknown.returncode == 1 and "ui-tars-1.5" in json.loads(unknown.stdout)["error"]
