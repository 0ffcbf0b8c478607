"""Action parsers for our JSON format, AutoGLM, UI-TARS and Qwen mobile_use."""

from __future__ import annotations

import pytest

from evaluator.agents.parsers import (
    ActionParseError,
    parse_autoglm,
    parse_json,
    parse_qwen_mobile_use,
    parse_uitars,
)
from graph_builder.model import NORMALIZED_SCREEN, ActionType

N = NORMALIZED_SCREEN


def tool_call(arguments: str) -> str:
    return f'<tool_call>{{"name": "mobile_use", "arguments": {arguments}}}</tool_call>'


def test_json_with_fences_and_prose():
    text = 'Sure.\n```json\n{"thought": "open it", "action": "tap", "x": 120, "y": 860}\n```'
    parsed = parse_json(text, N)
    assert parsed.action.type is ActionType.TAP
    assert (parsed.action.x, parsed.action.y, parsed.action.screen) == (120, 860, N)
    assert parsed.reasoning == "open it"


def test_json_swipe_by_direction_moves_the_finger_that_way():
    action = parse_json('{"action": "swipe", "direction": "up"}', N).action
    assert action.direction.value == "up"


def test_json_accepts_on_disk_action_form_and_memory():
    parsed = parse_json('{"type": "type", "text": "hello", "memory": "number 555"}', N)
    assert parsed.action.text == "hello" and parsed.memory == "number 555"


@pytest.mark.parametrize(
    "text",
    [
        "no json here",
        '{"action": "fly"}',
        '{"action": "tap", "x": 1}',
        '{"action": "type"}',
        '{"thought": "x"}',
        '{"action": "swipe", "direction": "sideways"}',
    ],
)
def test_json_rejects_with_a_reason(text):
    with pytest.raises(ActionParseError):
        parse_json(text, N)


def test_autoglm_styles():
    think = '<think>Need settings</think><answer>do(action="Tap", element=[500, 250])</answer>'
    parsed = parse_autoglm(think, N)
    assert parsed.action.type is ActionType.TAP and parsed.action.point == (500, 250)
    assert parsed.reasoning == "Need settings"
    assert parse_autoglm('do(action="Type", text="hi (there)")', N).action.text == "hi (there)"
    swipe = parse_autoglm('do(action="Swipe", start=[500, 800], end=[500, 200])', N).action
    assert swipe.direction.value == "up"
    assert parse_autoglm('finish(message="All set")', N).action.type is ActionType.DONE
    assert parse_autoglm('do(action="Back")', N).action.type is ActionType.BACK
    assert (
        parse_autoglm('do(action="Long Press", element=[1, 2])', N).action.type
        is ActionType.LONG_PRESS
    )


@pytest.mark.parametrize(
    "text",
    [
        'do(action="Launch", app="Clock")',
        'do(action="Tap", element=[1])',
        "do(action=",
        'do(action="Tap", element=__import__("os"))',
    ],
)
def test_autoglm_rejects(text):
    with pytest.raises(ActionParseError):
        parse_autoglm(text, N)


def test_uitars_styles():
    text = "Thought: open the menu\nAction: click(start_box='<|box_start|>(120,340)<|box_end|>')"
    parsed = parse_uitars(text, N)
    assert parsed.action.point == (120, 340) and parsed.reasoning == "open the menu"
    box = parse_uitars("Action: click(start_box='(100,100,200,300)')", N).action
    assert box.point == (150, 200)
    scroll = parse_uitars("Action: scroll(start_box='(500,500)', direction='down')", N).action
    assert scroll.direction.value == "up"  # content down = finger up
    assert parse_uitars("Action: type(content='hello')", N).action.text == "hello"
    assert parse_uitars("Action: press_back()", N).action.type is ActionType.BACK
    assert parse_uitars("Action: finished(content='done')", N).action.type is ActionType.DONE


def test_qwen_tool_call_in_image_pixels():
    text = (
        'I will open it.\n<tool_call>\n{"name": "mobile_use", "arguments": '
        '{"action": "click", "coordinate": [200, 400]}}\n</tool_call>'
    )
    parsed = parse_qwen_mobile_use(text, (400, 800))
    assert parsed.action.screen == (400, 800)
    assert parsed.action.normalized().point == (500, 500)
    assert parsed.reasoning == "I will open it."
    key = tool_call('{"action": "system_button", "button": "Back"}')
    assert parse_qwen_mobile_use(key, (400, 800)).action.type is ActionType.BACK
    end = tool_call('{"action": "terminate", "status": "success"}')
    assert parse_qwen_mobile_use(end, (400, 800)).action.type is ActionType.DONE


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>{broken</tool_call>",
        tool_call('{"action": "open", "text": "x"}'),
        tool_call('{"action": "system_button", "button": "Menu"}'),
    ],
)
def test_qwen_rejects(text):
    with pytest.raises(ActionParseError):
        parse_qwen_mobile_use(text, (400, 800))
