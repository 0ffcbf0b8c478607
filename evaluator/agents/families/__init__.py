"""Model families: how each published agent model speaks, and how to read it exactly.

A family is its reply grammar (a parser), the coordinate space its numbers run over, the
image pre-processing its reference code applies before sending, and its prompt. The
adapter turns a reply into our Action in that space; ``Action.rescaled`` then maps it to
the device. See docs/agents.md for the table and the source of every format.

>>> family = get_family("qwen2.5-vl")
>>> family.space_size((1080, 2400))
(1092, 2408)
>>> reply = ('<tool_call>{"name": "mobile_use", "arguments": {"action": "click", '
...     '"coordinate": [546, 1204]}}</tool_call>')
>>> family.parse(reply, (1092, 2408)).action.to_device((1080, 2400)).point
(540.0, 1200.0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from evaluator.agents.families.agentcpm_gui import parse_agentcpm_gui
from evaluator.agents.families.autoglm import parse_autoglm
from evaluator.agents.families.gelab_zero import parse_gelab_zero
from evaluator.agents.families.gemini_cu import parse_gemini_cu
from evaluator.agents.families.generic import parse_json, parse_mobile_agent_v2
from evaluator.agents.families.grammar import ActionParseError, InvalidActionError, Parsed
from evaluator.agents.families.gui_owl15 import parse_gui_owl15, place_like_runner
from evaluator.agents.families.mai_ui import parse_mai_ui
from evaluator.agents.families.mobile_use import parse_gui_owl, parse_qwen
from evaluator.agents.families.space import (
    GUI_OWL_RESIZE,
    QWEN25_RESIZE,
    UITARS_RESIZE,
    CoordinateSpace,
    sent_size,
)
from evaluator.agents.families.ui_venus import parse_ui_venus
from evaluator.agents.families.uitars import parse_uitars
from evaluator.errors import ConfigError
from graph_builder.model import Action, Size

Parser = Callable[[str, Size], Parsed]


@dataclass(frozen=True, slots=True)
class Family:
    """One model family's conventions.

    ``max_image_side`` is the pre-processing applied before sending (None: the screenshot
    as captured, as the family's reference code sends it); the family's own processor
    resizes further on the server, which ``space`` accounts for.
    """

    name: str
    parse: Parser
    space: CoordinateSpace
    prompt: str
    actions: tuple[str, ...]
    source: str
    max_image_side: int | None = None
    image_format: str = "PNG"
    # Where the family's sources disagree, the reading we follow (printed by parse-action).
    convention: str = ""
    # How the family's reference executor places a parsed action on the image it was
    # sent, when that is more than a plain rescale of the coordinate space (None: none).
    placement: Callable[[Action, Size], Action] | None = None

    def sent_size(self, screen: Size, max_image_side: int | None = -1) -> Size:
        """The size of the image sent for a ``screen``-sized screenshot (``-1``: the
        family's own pre-processing)."""
        side = self.max_image_side if max_image_side == -1 else max_image_side
        return sent_size(screen, side)

    def space_size(self, sent: Size) -> Size:
        return self.space.size_for(sent)

    def read(self, text: str, sent: Size) -> Parsed:
        """The action ``text`` means for an image sent at ``sent``: parsed in the family's
        coordinate space, then placed as its reference executor places it."""
        parsed = self.parse(text, self.space_size(sent))
        if self.placement is None:
            return parsed
        return replace(parsed, action=self.placement(parsed.action, sent))

    def with_pixels(self, min_pixels: int | None, max_pixels: int | None) -> Family:
        """This family served with other processor limits (e.g. vLLM's
        ``--mm-processor-kwargs '{"max_pixels": ...}'``): only resized spaces change."""
        rule = self.space.resize
        if rule is None or (min_pixels is None and max_pixels is None):
            return self
        rule = replace(
            rule,
            min_pixels=rule.min_pixels if min_pixels is None else int(min_pixels),
            max_pixels=rule.max_pixels if max_pixels is None else int(max_pixels),
        )
        if not 0 < rule.min_pixels <= rule.max_pixels:
            raise ConfigError("min_pixels must be positive and at most max_pixels")
        return replace(self, space=CoordinateSpace.resized(rule))


_MOBILE_USE = (
    "key",
    "click",
    "long_press",
    "swipe",
    "type",
    "system_button",
    "open",
    "wait",
    "terminate",
)

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "ui-tars-1.0",
            parse_uitars,
            CoordinateSpace.relative(1000),
            "agent_ui-tars-1.0.md",
            (
                "click",
                "long_press",
                "type",
                "scroll",
                "press_home",
                "press_back",
                "finished",
                "left_double",
                "drag",
                "hotkey",
                "wait",
                "call_user",
                "open_app",
            ),
            "bytedance/UI-TARS README_v1.md; codes/ui_tars/action_parser.py",
        ),
        Family(
            "ui-tars-1.5",
            parse_uitars,
            CoordinateSpace.resized(UITARS_RESIZE),
            "agent_ui-tars-1.5.md",
            (
                "click",
                "long_press",
                "type",
                "scroll",
                "open_app",
                "drag",
                "press_home",
                "press_back",
                "finished",
                "left_double",
                "hotkey",
                "wait",
                "call_user",
            ),
            "bytedance/UI-TARS codes/ui_tars/prompt.py (MOBILE_USE_DOUBAO); "
            "codes/ui_tars/action_parser.py; README_coordinates.md",
        ),
        Family(
            "autoglm",
            parse_autoglm,
            CoordinateSpace.relative(1000),
            "agent_autoglm.md",
            (
                "Launch",
                "Tap",
                "Type",
                "Type_Name",
                "Interact",
                "Swipe",
                "Note",
                "Call_API",
                "Long Press",
                "Double Tap",
                "Take_over",
                "Back",
                "Home",
                "Wait",
                "finish",
            ),
            "zai-org/Open-AutoGLM phone_agent/config/prompts_zh.py; "
            "phone_agent/actions/handler.py; phone_agent/model/client.py",
        ),
        Family(
            "qwen2.5-vl",
            parse_qwen,
            CoordinateSpace.resized(QWEN25_RESIZE),
            "agent_qwen2.5-vl.md",
            _MOBILE_USE,
            "QwenLM/Qwen2.5-VL cookbooks/mobile_agent.ipynb; "
            "cookbooks/utils/agent_function_call.py",
        ),
        Family(
            "qwen3-vl",
            parse_qwen,
            CoordinateSpace.relative(999),
            "agent_qwen3-vl.md",
            (*_MOBILE_USE, "answer"),
            "QwenLM/Qwen3-VL cookbooks/mobile_agent.ipynb; cookbooks/utils/agent_function_call.py",
        ),
        Family(
            "gui-owl",
            parse_gui_owl,
            CoordinateSpace.resized(GUI_OWL_RESIZE),
            "agent_gui-owl.md",
            ("click", "tap", "long_press", "swipe", "type", "answer", "system_button", "open_app")
            + ("wait", "terminate"),
            "X-PLUG/MobileAgent Mobile-Agent-v3/android_world_v3/android_world/agents/"
            "gui_owl.py, mobile_agent_utils_new.py, coordinate_resize.py",
        ),
        Family(
            "gui-owl-1.5",
            parse_gui_owl15,
            CoordinateSpace.relative(1000),
            "agent_gui-owl-1.5.md",
            ("key", "click", "long_press", "swipe", "type", "system_button", "open", "wait")
            + ("answer", "interact", "terminate"),
            "X-PLUG/MobileAgent Mobile-Agent-v3.5/mobile_use/utils.py (prompt), "
            "run_gui_owl_1_5_for_mobile.py (runner), README.md",
            convention=(
                "relative 0-1000 scaled by the screenshot's sides rounded to multiples of 16 "
                "and taken as device pixels, as the reference runner taps (the prompt says "
                "1000x1000 of the screen)"
            ),
            placement=place_like_runner,
        ),
        Family(
            "mai-ui",
            parse_mai_ui,
            CoordinateSpace.relative(999),
            "agent_mai-ui.md",
            ("click", "double_click", "long_press", "type", "swipe", "drag", "open")
            + ("system_button", "wait", "terminate", "answer", "ask_user"),
            "Tongyi-MAI/MAI-UI src/prompt.py, src/mai_naivigation_agent.py; executor "
            "Tongyi-MAI/MobileWorld agents/utils/action_translation.py, core/server.py",
            convention=(
                "relative 0-999 (divided by 999); swipe(direction) moves the finger that way "
                "from the screen's centre, as the executor does (its coordinate is ignored)"
            ),
        ),
        Family(
            "gemini-computer-use",
            parse_gemini_cu,
            CoordinateSpace.relative(1000),
            "agent_gemini-computer-use.md",
            ("click_at", "double_click", "long_press", "type_text_at", "scroll_at")
            + ("drag_and_drop", "go_back", "press_key", "open_app", "wait_5_seconds")
            + ("answer", "done"),
            "Tongyi-MAI/MobileWorld agents/implementations/gemini_cua_agent.py; "
            "google-gemini/computer-use-preview agent.py",
            convention=(
                "relative, divided by 1000 as both executors do (the Android agent's "
                "docstring says 0-999); points past the edge are clamped to it; scroll "
                "direction is the content's, the finger moves the other way"
            ),
        ),
        Family(
            "gelab-zero",
            parse_gelab_zero,
            CoordinateSpace.relative(1000),
            "agent_gelab-zero.md",
            ("CLICK", "LONGPRESS", "SLIDE", "TYPE", "AWAKE", "WAIT", "INFO", "COMPLETE")
            + ("ABORT", "BACK", "HOME", "HOT_KEY", "SCROLL"),
            "stepfun-ai/gelab-zero copilot_tools/parser_0920_summary.py; "
            "copilot_front_end/pu_frontend_executor.py; copilot_agent_client/pu_client.py",
        ),
        Family(
            "ui-venus-1.5",
            parse_ui_venus,
            CoordinateSpace.relative(1000),
            "agent_ui-venus-1.5.md",
            ("Click", "LongPress", "Drag", "Scroll", "Type", "Launch", "Wait", "Finished")
            + ("CallUser", "PressBack", "PressHome", "PressEnter", "PressRecent"),
            "inclusionAI/UI-Venus Venus_framework/processor/uivenus_processor.py; "
            "Venus_framework/policy/ui_venus_policy.py; Venus_framework/README.md",
            convention=(
                "relative, divided by 1000 as the executor does (the prompt says 0-999); a "
                "Scroll without start/end moves the finger up from the executor's preset; "
                "typed ( ) | become full-width"
            ),
        ),
        Family(
            "agentcpm-gui",
            parse_agentcpm_gui,
            CoordinateSpace.relative(1000),
            "agent_agentcpm-gui.md",
            ("POINT", "to", "duration", "PRESS", "TYPE", "STATUS"),
            "OpenBMB/AgentCPM-GUI README.md; eval/utils/schema/schema.json; "
            "eval/utils/evaluator.py",
            max_image_side=1120,
        ),
        Family(
            "json",
            parse_json,
            CoordinateSpace.relative(1000),
            "agent_json.md",
            ("tap", "double_tap", "long_press", "swipe", "type", "key", "launch", "back")
            + ("home", "wait", "answer", "ask_user", "give_up", "terminate", "done"),
            "ElderBench Studio (this project)",
            max_image_side=1024,
        ),
        Family(
            "mobile-agent-v2",
            parse_mobile_agent_v2,
            CoordinateSpace.image(),
            "mobile_agent_v2_decision.md",
            ("Open app", "Tap", "Swipe", "Type", "Back", "Home", "Stop"),
            "X-PLUG/MobileAgent Mobile-Agent-v2/MobileAgent/prompt.py; Mobile-Agent-v2/run.py",
        ),
    )
}

# Families published under a second name with the very same grammar and conventions.
ALIASES = {"open-autoglm": "autoglm"}

# Earlier names of the output styles, so old agent configs fail with a pointer.
_RENAMED = {"uitars": "ui-tars-1.5", "qwen_mobile_use": "qwen2.5-vl"}


def family_name(family: str, version: str | None = None) -> str:
    """``("ui-tars", "1.5")`` or ``"ui-tars-1.5"`` -> ``"ui-tars-1.5"``."""
    name = family.strip().lower()
    if version:
        name = f"{name}-{str(version).strip().lower()}"
    return name


def get_family(family: str, version: str | None = None) -> Family:
    name = family_name(family, version)
    name = ALIASES.get(name, name)
    try:
        return FAMILIES[name]
    except KeyError:
        hint = f" (now called {_RENAMED[name]!r})" if name in _RENAMED else ""
        raise ConfigError(
            f"unknown model family {name!r}{hint}; choose one of: "
            f"{', '.join([*FAMILIES, *ALIASES])}"
        ) from None


def _size(value: Size) -> list[int]:
    return [int(value[0]), int(value[1])]


def read_reply(family: str, text: str, screen: Size, sent: Size | None = None) -> dict[str, Any]:
    """What ``text`` means, as ``elderbench parse-action`` prints it: the action type,
    device pixels (``x``, ``y``; ``x2``, ``y2`` for a swipe's end) for a ``screen``-sized
    screenshot, the point in ``[0,1000]`` (``norm``), ``direction``, ``text``. ``sent`` is
    the size of the image sent (default: what the agent sends). Raises ActionParseError.

    >>> read_reply("ui-tars-1.0", "Action: click(start_box='(500,250)')", (1080, 2400))["x"]
    540
    """
    fam = get_family(family)
    sent = sent or fam.sent_size(screen)
    action = fam.read(text, sent).action
    out: dict[str, Any] = {"type": action.type.value}
    if action.x is not None and action.y is not None:
        device, norm = action.to_device(screen), action.normalized()
        assert device.x is not None and device.y is not None
        assert norm.x is not None and norm.y is not None
        out.update(x=int(device.x), y=int(device.y), norm=[round(norm.x, 1), round(norm.y, 1)])
        if device.x2 is not None and device.y2 is not None:
            assert norm.x2 is not None and norm.y2 is not None
            out.update(
                x2=int(device.x2),
                y2=int(device.y2),
                norm2=[round(norm.x2, 1), round(norm.y2, 1)],
                direction=str(device.direction),  # on the glass, as the matcher decides
            )
    if action.text is not None:
        out["text"] = action.text
    if action.duration_ms is not None:
        out["duration_ms"] = action.duration_ms
    out.update(
        family=fam.name,
        sent=_size(sent),
        coordinate_space=fam.space.describe(sent),
    )
    if fam.convention:
        out["convention"] = fam.convention
    if family_name(family) in ALIASES:
        out["convention"] = (
            f"{family_name(family)} is read with the {fam.name} grammar (one source)"
        )
    return out


__all__ = [
    "ALIASES",
    "FAMILIES",
    "ActionParseError",
    "CoordinateSpace",
    "Family",
    "InvalidActionError",
    "Parsed",
    "family_name",
    "get_family",
    "read_reply",
]
