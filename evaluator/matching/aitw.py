"""The ``aitw`` profile: the step rule of the Android-in-the-Wild action matcher, quirks
included (docs/evaluation.md, Matching profiles, cites the file and commit).

Everything is measured in ``[0,1]`` of each axis (``[0,1000]`` / 1000):

- a gesture is a tap when its finger moved at most 0.04 (``_SWIPE_DISTANCE_THRESHOLD``):
  a tiny swipe is a tap, can match a tap edge and cannot match a swipe edge; taps, long
  presses and double taps are all one dual-point gesture there, so they match each other;
- two taps match when one annotation box of the screen, enlarged by 1.4 of its size on
  each axis (2.4 times as wide and tall, "1.4 == 240% total increase") and clamped at 0
  keeping its enlarged size, holds both (edges inclusive), or when they are at most 0.14
  apart. The boxes are the screen's leaf elements, from the node's hierarchy; without
  one, the edge's own element;
- two swipes match when their main axis is the same (vertical on a tie): up matches down;
  a swipe edge whose demonstrations moved at most 0.04 is a tap there and takes no swipe;
- typing matches on the action type alone, whatever the text;
- back, home and enter by type (other keys by name, wait by type: it has neither).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evaluator.matching.base import (
    RuleMatch,
    StepRules,
    StepView,
    best_match,
    by_type,
    gold_points,
    key_match,
    shown_swipes,
)
from graph_builder.model import Action, ActionType, Bounds, MatchRule, SwipeDirection

TAP_DISTANCE = 0.14
BOX_AUGMENT = 1.4
SWIPE_DISTANCE = 0.04


def _yx(x: float, y: float) -> tuple[float, float]:
    return y / 1000, x / 1000


def _touch_lift(action: Action) -> tuple[tuple[float, float], tuple[float, float]]:
    n = action.normalized()
    assert n.x is not None and n.y is not None
    touch = _yx(n.x, n.y)
    if n.x2 is None or n.y2 is None:
        return touch, touch
    return touch, _yx(n.x2, n.y2)


def _norm(a: tuple[float, float], b: tuple[float, float]) -> float:
    d0, d1 = a[0] - b[0], a[1] - b[1]
    return math.sqrt(d0 * d0 + d1 * d1)


def is_tap(action: Action) -> bool:
    """Whether the benchmark sees a tap: a pointed action, or a swipe of at most 0.04."""
    if action.type.is_pointed:
        return True
    if action.type is not ActionType.SWIPE:
        return False
    touch, lift = _touch_lift(action)
    return _norm(touch, lift) <= SWIPE_DISTANCE


def main_axis_vertical(action: Action) -> bool:
    """The axis of greatest change in ``[0,1]``, the first (vertical) on a tie."""
    touch, lift = _touch_lift(action)
    return abs(lift[0] - touch[0]) >= abs(lift[1] - touch[1])


def enlarged(box: Bounds) -> tuple[float, float, float, float]:
    """``(top, left, height, width)`` in ``[0,1]``, enlarged and clamped as the benchmark."""
    top, left, h, w = box.top / 1000, box.left / 1000, box.height / 1000, box.width / 1000
    dh, dw = BOX_AUGMENT * h, BOX_AUGMENT * w
    return max(0, top - dh / 2), max(0, left - dw / 2), min(1, h + dh), min(1, w + dw)


def _inside(yx: tuple[float, float], box: tuple[float, float, float, float]) -> bool:
    top, left, h, w = box
    return top <= yx[0] <= top + h and left <= yx[1] <= left + w


@dataclass(frozen=True, slots=True)
class AitwRules(StepRules):
    needs_elements = True

    def compatible(self, rule_type: ActionType, action: Action) -> bool:
        if rule_type.is_pointed or rule_type is ActionType.SWIPE:
            if not (action.type.is_pointed or action.type is ActionType.SWIPE):
                return False
            return rule_type.is_pointed == is_tap(action)
        return rule_type is action.type

    def judge(
        self, rule: MatchRule, action: Action, view: StepView, shown: Sequence[Action] = ()
    ) -> RuleMatch | None:
        if rule.action_type.is_pointed:
            return self._tap(rule, action, view)
        if rule.action_type is ActionType.SWIPE:
            vertical = main_axis_vertical(action)
            demonstrated = shown_swipes(rule, shown)
            if demonstrated and all(is_tap(a) for a in demonstrated):
                return None  # the benchmark sees the gold as a tap
            golds = {main_axis_vertical(a) for a in demonstrated if not is_tap(a)}
            if not golds and rule.direction is not None:
                golds = {rule.direction in (SwipeDirection.UP, SwipeDirection.DOWN)}
            if vertical in golds:
                return RuleMatch(f"axis {'vertical' if vertical else 'horizontal'}", (1, 0.0))
            return None
        if rule.action_type is ActionType.KEY:
            return key_match(rule, action)
        return by_type(action)

    def _tap(self, rule: MatchRule, action: Action, view: StepView) -> RuleMatch | None:
        if view.elements is not None:
            boxes = view.elements.leaf_boxes()
        else:
            boxes = (rule.bounds,) if rule.bounds is not None else ()
        grown = [(b, enlarged(b)) for b in boxes]
        touch, _ = _touch_lift(action)
        found: list[RuleMatch | None] = []
        for x, y in gold_points(rule):
            gold = _yx(x, y)
            shared = [b for b, g in grown if _inside(touch, g) and _inside(gold, g)]
            if shared:
                smallest = min(shared, key=lambda b: b.area)
                found.append(RuleMatch("in one enlarged annotation box", (2, -smallest.area)))
            gap = _norm(touch, gold)
            if gap <= TAP_DISTANCE:
                found.append(RuleMatch(f"within {gap:.4f} of the screen", (1, -gap)))
        return best_match(found)
