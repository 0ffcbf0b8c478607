"""The ``colorbench`` profile: ColorBench's graph-walk step rule, quirks included
(docs/evaluation.md, Matching profiles, cites the file and commit). Geometry is in device
pixels (the node's screen):

- click and long press: when the edge has element ``bounds``, only they count (every
  click of the benchmark's graphs has a box): ``int(left) <= int(x) <= int(right)`` and
  the same for y, edges inclusive (the point cut to whole pixels); without bounds,
  strictly less than ``1080 * 0.14`` px from a demonstrated point, whatever the width;
- swipe: horizontal when strictly more horizontal than vertical, else vertical; no
  minimum length; a swipe that does not move has no direction;
- type: the benchmark's own normalization (lower case, spaces removed, ``，。/:*?"“”<>|``
  made commas), which it applies to the edge's text in place; a match when every comma
  piece of the edge's text is in the typed text as typed, or every piece of the typed
  text is in the edge's, or either (lower-cased) contains the other;
- back, home and wait by type (keys by name); an action no edge accepts follows a wait
  edge when the node has one (the benchmark's walk: "no match, choose wait").
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
from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    ActionType,
    Edge,
    MatchRule,
    SwipeDirection,
)

POINT_DISTANCE = 1080 * 0.14
_TO_COMMA = ("，", "。", "/", ":", "*", "?", '"', "“", "”", "<", ">", "|")


def _whole(value: float) -> int:
    """A box edge back in whole pixels: the benchmark's boxes are whole pixels, which the
    trip through ``[0,1000]`` may leave a hair under (the agent's point is cut by ``int``
    as the benchmark cuts it)."""
    return math.floor(value + 1e-6) if value >= 0 else int(value)


def normalized_text(text: str) -> str:
    out = text.lower().replace(" ", "")
    for mark in _TO_COMMA:
        out = out.replace(mark, ",")
    return out.lower()


def texts_match(gold: str, typed: str) -> bool:
    gold = normalized_text(gold)
    if all(piece in typed for piece in gold.split(",")):
        return True
    if all(piece in gold for piece in normalized_text(typed).split(",")):
        return True
    return typed.lower() in gold.lower() or gold.lower() in typed.lower()


def pixel_direction(action: Action, view: StepView) -> SwipeDirection | None:
    x1, y1, x2, y2 = action.rescaled(view.device(action)).segment()
    if x1 == x2 and y1 == y2:
        return None
    if abs(x1 - x2) > abs(y1 - y2):
        return SwipeDirection.RIGHT if x2 > x1 else SwipeDirection.LEFT
    return SwipeDirection.DOWN if y2 > y1 else SwipeDirection.UP


@dataclass(frozen=True, slots=True)
class ColorBenchRules(StepRules):
    def judge(
        self, rule: MatchRule, action: Action, view: StepView, shown: Sequence[Action] = ()
    ) -> RuleMatch | None:
        t = action.type
        if t.is_pointed:
            return self._click(rule, action, view)
        if t is ActionType.SWIPE:
            direction = pixel_direction(action, view)
            golds = {pixel_direction(a, view) for a in shown_swipes(rule, shown)}
            if direction is not None and direction in (golds or {rule.direction}):
                return RuleMatch(f"direction {direction.value}", (1, 0.0))
            return None
        if t is ActionType.TYPE:
            if any(texts_match(gold, action.text or "") for gold in rule.texts):
                return RuleMatch("text matches", (1, 0.0))
            return None
        if t is ActionType.KEY:
            return key_match(rule, action)
        return by_type(action)

    def fallback(self, edges: Sequence[Edge]) -> Edge | None:
        """The benchmark's walk follows a wait edge when nothing matched."""
        return next((e for e in edges if e.rule.action_type is ActionType.WAIT), None)

    def _click(self, rule: MatchRule, action: Action, view: StepView) -> RuleMatch | None:
        screen = view.device(action)
        on_device = action.rescaled(screen)
        assert on_device.x is not None and on_device.y is not None
        x, y = on_device.x, on_device.y
        if rule.bounds is not None:
            b = rule.bounds.rescaled(NORMALIZED_SCREEN, screen)
            inside = _whole(b.left) <= int(x) <= _whole(b.right)
            if inside and _whole(b.top) <= int(y) <= _whole(b.bottom):
                return RuleMatch("inside bbox", (2, -b.area))
            return None
        found: list[RuleMatch | None] = []
        for gx, gy in gold_points(rule):
            px, py = gx * screen[0] / 1000, gy * screen[1] / 1000
            gap = math.sqrt((x - px) ** 2 + (y - py) ** 2)
            if gap < POINT_DISTANCE:
                found.append(RuleMatch(f"within {gap:.1f} px of point", (1, -gap)))
        return best_match(found)
