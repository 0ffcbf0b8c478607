"""Calls each benchmark's own step-matching code on a conformance case.

The reference files are public but stay out of this repository: they are loaded from a
folder given on the command line (see benchmarks/matching_conformance.py for its layout).
Only what the files import and the harness never uses is stood in for: ``jax.numpy`` by
``numpy`` when jax is not installed (every operation the matcher uses has the same
meaning there), an image-drawing helper, an HTTP client, and a text-distance library
whose ratio only feeds a statistic, never a verdict. Each adaptor puts a case in the
benchmark's own input format, exactly as its data pipeline would, and returns its verdict
(None when the benchmark has no such step).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import json
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rapidfuzz import fuzz

from benchmarks.matching_cases import Case
from graph_builder.model import Action, ActionType, Bounds

Verdict = Callable[[Case], bool | None]


def _stub(name: str, **attrs: Any) -> None:
    if name in sys.modules:
        return
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    sys.modules[name] = module


def _import_from(folder: Path, name: str) -> Any:
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(folder))


def _function_from(path: Path, name: str, scope: dict[str, Any]) -> Any:
    """One top-level function of a file whose imports cannot be met (its own source)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    exec(compile(ast.Module([node], []), str(path), "exec"), scope)  # noqa: S102
    return scope[name]


def _yx(x: float, y: float) -> list[float]:
    return [y / 1000, x / 1000]


def _yxhw(b: Bounds) -> list[float]:
    return [b.top / 1000, b.left / 1000, b.height / 1000, b.width / 1000]


def _n(action: Action) -> Action:
    return action.normalized()


# -- AitW


def aitw(refs: Path) -> Verdict:
    try:
        import jax  # noqa: F401
    except ImportError:
        _stub("jax", numpy=np)
        sys.modules["jax.numpy"] = np
    matching = _import_from(refs / "aitw", "android_in_the_wild.action_matching")
    kinds = _import_from(refs / "aitw", "android_in_the_wild.action_type").ActionType

    def encode(action: Action) -> tuple[list[float], list[float], int] | None:
        t = action.type
        if t.is_pointed and t is not ActionType.DOUBLE_TAP:
            n = _n(action)
            return _yx(n.x, n.y), _yx(n.x, n.y), kinds.DUAL_POINT  # type: ignore[arg-type]
        if t is ActionType.SWIPE:
            x1, y1, x2, y2 = _n(action).segment()
            return _yx(x1, y1), _yx(x2, y2), kinds.DUAL_POINT
        simple = {
            ActionType.TYPE: kinds.TYPE,
            ActionType.BACK: kinds.PRESS_BACK,
            ActionType.HOME: kinds.PRESS_HOME,
        }
        if t in simple:
            return [-1.0, -1.0], [-1.0, -1.0], simple[t]
        if t is ActionType.KEY and action.text == "enter":
            return [-1.0, -1.0], [-1.0, -1.0], kinds.PRESS_ENTER
        return None

    def verdict(case: Case) -> bool | None:
        gold, agent = encode(case.gold), encode(case.agent)
        if gold is None or agent is None:
            return None
        boxes = case.elements().leaf_boxes()
        annotations = np.array([_yxhw(b) for b in boxes], dtype=float)
        return bool(matching.check_actions_match(*gold, *agent, annotations))

    return verdict


# -- GUI-Odyssey


def gui_odyssey(refs: Path) -> Verdict:
    folder = refs / "gui_odyssey"
    matcher = _import_from(folder, "GUIOdyssey_action_matching").action_matching
    decode_action = _import_from(folder, "format_converter").decode_action
    simple_decode = _function_from(folder / "evaluate_GUIOdyssey.py", "simple_decode", {})

    def encode(action: Action) -> str | None:
        t = action.type
        n = _n(action)
        if t is ActionType.TAP or t is ActionType.LONG_PRESS:
            name = "CLICK" if t is ActionType.TAP else "LONG_PRESS"
            return str(decode_action(name, [[n.x, n.y]]))
        if t is ActionType.SWIPE:
            x1, y1, x2, y2 = n.segment()
            return str(decode_action("SCROLL", [[x1, y1], [x2, y2]]))
        if t is ActionType.TYPE:
            return str(decode_action("TEXT", action.text))
        if t is ActionType.BACK:
            return str(decode_action("CLICK", "KEY_BACK"))
        if t is ActionType.HOME:
            return str(decode_action("CLICK", "KEY_HOME"))
        return None

    def verdict(case: Case) -> bool | None:
        gold, pred = encode(case.gold), encode(case.agent)
        if gold is None or pred is None:
            return None
        b = case.rule.bounds
        sam2_bbox = None if b is None else [b.left, b.top, b.right, b.bottom]
        # the per-sample steps of its action_matching_evaluation
        g = simple_decode(gold)
        try:
            p = simple_decode(pred)
        except Exception:  # noqa: BLE001 - the benchmark counts an unreadable reply wrong
            return False
        try:
            result = matcher(p["action"], p["info"], g["action"], g["info"], sam2_bbox)
        except Exception:  # noqa: BLE001 - as above
            return False
        return bool(result["is_correct"] == "yes")

    return verdict


# -- AndroidControl, as the shared evaluator scores it


def androidcontrol(refs: Path) -> Verdict:
    _stub("Levenshtein", ratio=lambda a, b: fuzz.ratio(a, b) / 100)
    _stub("utils.utils", annotate_and_save_image=lambda *a, **k: None)
    module = _import_from(refs / "agentcpm", "utils.evaluator")
    kinds = _import_from(refs / "agentcpm", "utils.action_type").ActionType
    evaluator = module.ActionEvaluator("/nonexistent", eval_android_control=True)

    def gold_of(case: Case) -> dict[str, Any] | None:
        rule, gold = case.rule, case.gold
        touch = lift = [-1.0, -1.0]
        t = rule.action_type
        if t.is_pointed:
            x, y = rule.points[0]
            touch = lift = _yx(x, y)
            kind = kinds.DUAL_POINT if t is ActionType.TAP else kinds.LONG_POINT
        elif t is ActionType.SWIPE:
            # its data pipeline: pixels over the screen's size
            x1, y1, x2, y2 = gold.segment()
            w, h = case.screen
            touch, lift, kind = [y1 / h, x1 / w], [y2 / h, x2 / w], kinds.DUAL_POINT
        else:
            simple = {
                ActionType.TYPE: kinds.TYPE,
                ActionType.BACK: kinds.PRESS_BACK,
                ActionType.HOME: kinds.PRESS_HOME,
                ActionType.KEY: kinds.PRESS_ENTER,
                ActionType.WAIT: kinds.NO_ACTION,
            }
            if t not in simple:
                return None
            kind = simple[t]
        boxes = case.elements().boxes
        return {
            "image_width": case.screen[0],
            "image_height": case.screen[1],
            "subset": "conformance",
            "episode_id": 0,
            "step_id": 0,
            "instruction": "",
            "result_action_type": kind,
            "result_touch_yx": json.dumps(touch),
            "result_lift_yx": json.dumps(lift),
            "ui_positions": json.dumps([_yxhw(b) for b in boxes]),
            "duration": 1000 if t is ActionType.LONG_PRESS else 200,
            "result_action_text": rule.texts[0] if t is ActionType.TYPE else "",
        }

    def pred_of(action: Action) -> dict[str, Any] | None:
        t = action.type
        n = _n(action)
        if t is ActionType.TAP:
            call: dict[str, Any] = {"ACTION": {"POINT": [n.x, n.y]}, "ARGS": {"duration": 200}}
        elif t is ActionType.LONG_PRESS:
            call = {"ACTION": {"POINT": [n.x, n.y]}, "ARGS": {"duration": 1000}}
        elif t is ActionType.SWIPE:
            x1, y1, x2, y2 = n.segment()
            call = {"ACTION": {"POINT": [x1, y1]}, "ARGS": {"to": [x2, y2], "duration": 200}}
        elif t is ActionType.TYPE:
            call = {"ACTION": {"TYPE": action.text}, "ARGS": {}}
        elif t in (ActionType.BACK, ActionType.HOME) or t is ActionType.KEY:
            name = action.text if t is ActionType.KEY else t.value
            call = {"ACTION": {"PRESS": str(name).upper()}, "ARGS": {}}
        elif t is ActionType.WAIT:
            call = {"ACTION": {}, "ARGS": {"duration": 1000}}
        else:
            return None
        call["STATUS"] = "continue"
        return {"action_predict": {"COA": {"txt": call}}}

    def verdict(case: Case) -> bool | None:
        gt, pred = gold_of(case), pred_of(case.agent)
        if gt is None or pred is None:
            return None
        with contextlib.redirect_stdout(io.StringIO()):
            return bool(evaluator(gt, pred)["exact_match"])

    return verdict


# -- ColorBench


def colorbench(refs: Path) -> Verdict:
    _stub("openai", OpenAI=object)
    module = _import_from(refs / "colorbench", "graph_tools")

    def pixels(action: Action, case: Case) -> Action:
        return action.rescaled(case.screen)

    def gold_of(case: Case) -> dict[str, Any] | None:
        rule, t = case.rule, case.rule.action_type
        if t in (ActionType.TAP, ActionType.LONG_PRESS):
            g = pixels(case.gold, case)
            out: dict[str, Any] = {"action_type": "click" if t is ActionType.TAP else "long_press"}
            out.update(x=g.x, y=g.y)
            if case.element is not None:
                e = case.element
                out["bbox"] = [int(e.left), int(e.top), int(e.right), int(e.bottom)]
            return out
        if t is ActionType.SWIPE and rule.direction is not None:
            return {"action_type": "swipe", "direction": rule.direction.value}
        if t is ActionType.TYPE:
            return {"action_type": "type", "text": rule.texts[0]}
        if t is ActionType.WAIT:
            return {"action_type": "wait"}
        return None

    def parsed_of(action: Action, case: Case) -> dict[str, Any] | None:
        t = action.type
        if t in (ActionType.TAP, ActionType.LONG_PRESS):
            p = pixels(action, case)
            kind = "click" if t is ActionType.TAP else "long_press"
            return {"action_type": kind, "x": p.x, "y": p.y}
        if t is ActionType.SWIPE:
            x1, y1, x2, y2 = pixels(action, case).segment()
            return {
                "action_type": "swipe",
                "direction": module.position_to_direction(x1, y1, x2, y2),
            }
        if t is ActionType.TYPE:
            return {"action_type": "type", "text": action.text}
        if t is ActionType.WAIT:
            return {"action_type": "wait"}
        return None

    def verdict(case: Case) -> bool | None:
        gold, parsed = gold_of(case), parsed_of(case.agent, case)
        if gold is None or parsed is None:
            return None
        walker = object.__new__(module.Graph_DataSet)
        walker.graph_data = {"home": {}, "here": {"there": [gold]}}
        walker.home_page = "home"
        walker.trajectory = [{"id": 0, "screenshot": "here", "action": None}]
        walker.history_stack = ["home", "here"]
        walker.apps = {}
        target, _, _ = walker.check_jump_condition(parsed)
        return bool(target == "there")

    return verdict


REFERENCES: dict[str, Callable[[Path], Verdict]] = {
    "aitw": aitw,
    "gui_odyssey": gui_odyssey,
    "androidcontrol": androidcontrol,
    "colorbench": colorbench,
}
