"""The ``elderbench`` profile: the physically sensible rule, and the default.

- tap / long press: inside the element ``bounds`` (left/top inclusive, right/bottom
  exclusive, as uiautomator), or within the edge's ``radius`` (default 50 units) of a
  demonstrated point (inclusive: a point exactly ``radius`` away matches), in ``[0,1000]``;
- swipe: the same finger direction, decided in device pixels by ``Action.direction`` (the
  one rule the graph builder used for the edge); a swipe shorter than ``shortest_swipe``
  (``MIN_SWIPE`` of the shorter screen side, in whole device pixels: the recorder's rule
  for a drag that is a swipe) has no direction and matches no edge;
- type: a rapidfuzz ratio of at least ``text_threshold`` against any accepted text, both
  texts NFKC-normalized, case-folded and with runs of whitespace made one space;
- key: the same key, names compared in one form (``KEYCODE_ENTER``, ``enter``, ``66``);
- back, home, wait: by type.

>>> from graph_builder.model import MatchRule, Action, NORMALIZED_SCREEN
>>> rule = MatchRule("tap", points=((500, 500),))
>>> ElderbenchRules().judge(rule, Action.tap(530, 540, screen=NORMALIZED_SCREEN), StepView()).reason
'within 50 of point'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evaluator.matching.base import (
    RuleMatch,
    StepRules,
    StepView,
    by_type,
    exact,
    key_match,
    text_ratio,
)
from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    ActionType,
    Bounds,
    Edge,
    MatchRule,
    Size,
    SwipeDirection,
    shortest_swipe,
)


def swipe_direction(action: Action, screen: Size | None) -> SwipeDirection | None:
    """The finger's dominant direction in device pixels of ``screen`` (the action's own
    space when None); None when the swipe is shorter than ``shortest_swipe`` (the
    recorder's rule), e.g. 100 px right and 150 px down on 1080x2400 is ``down``.

    The direction is ``Action.direction`` (the builder's rule for an edge) of the swipe the
    device performs, in whole pixels: a demonstration repeated in ``[0,1000]`` comes back
    to the very pixels it was recorded in, and an exact diagonal stays one.
    """
    if action.type is not ActionType.SWIPE:
        return None
    space = screen or action.screen or NORMALIZED_SCREEN
    if not action.is_long_swipe(space):
        return None
    return action.to_device(space).direction


def _to_bounds(x: float, y: float, b: Bounds) -> float:
    return math.hypot(max(b.left - x, 0.0, x - b.right), max(b.top - y, 0.0, y - b.bottom))


@dataclass(frozen=True, slots=True)
class ElderbenchRules(StepRules):
    """Bounds or the edge's radius in ``[0,1000]``; swipes in pixels with a minimum."""

    def judge(
        self, rule: MatchRule, action: Action, view: StepView, shown: Sequence[Action] = ()
    ) -> RuleMatch | None:
        t = action.type
        if t.is_pointed:
            n = action.normalized()
            assert n.x is not None and n.y is not None
            if rule.bounds is not None and rule.bounds.contains(n.x, n.y):
                return RuleMatch("inside bounds", (2, -rule.bounds.area))
            best = min((math.dist((n.x, n.y), p) for p in rule.points), default=math.inf)
            if best <= rule.radius:
                return RuleMatch(f"within {exact(best)} of point", (1, -best))
            return None
        if t is ActionType.SWIPE:
            direction = swipe_direction(action, view.screen)
            if rule.direction is not None and direction is rule.direction:
                return RuleMatch(f"direction {direction.value}", (1, 0.0))
            return None
        if t is ActionType.TYPE:
            ratio = max((text_ratio(action.text or "", a) for a in rule.texts), default=0.0)
            if rule.texts and ratio >= rule.text_threshold:
                return RuleMatch(f"text ratio {exact(ratio)}", (1, ratio))
            return None
        if t is ActionType.KEY:
            return key_match(rule, action)
        return by_type(action)

    def miss(self, edges: Sequence[Edge], action: Action, view: StepView) -> str:
        t = action.type
        rules = [e.rule for e in edges]
        if t.is_pointed:
            n = action.normalized()
            assert n.x is not None and n.y is not None
            gap, edge = min((self._outside(e.rule, n.x, n.y), e.id) for e in edges)
            return (
                f"no {t.value} edge here: {exact(gap, up=True)} outside the nearest tolerance "
                f"(edge {edge})"
            )
        if t is ActionType.SWIPE:
            wanted = ", ".join(sorted({r.direction.value for r in rules if r.direction}))
            direction = swipe_direction(action, view.screen)
            if direction is None:
                space = view.device(action)
                return (
                    f"swipe of {exact(action.to_device(space).distance)} px is shorter than "
                    f"{exact(shortest_swipe(space))} px and has no direction "
                    f"(expected {wanted})"
                )
            return f"swipe {direction.value} matches no edge (expected {wanted})"
        if t is ActionType.TYPE:
            ratio = max(
                (text_ratio(action.text or "", a) for r in rules for a in r.texts), default=0.0
            )
            threshold = min(r.text_threshold for r in rules)
            return (
                f"typed text matches no edge (best ratio {exact(ratio)}, needs {exact(threshold)})"
            )
        return f"no {t.value} edge"

    @staticmethod
    def _outside(rule: MatchRule, x: float, y: float) -> float:
        """How far a point is from the rule's accepted region (0 when inside it)."""
        gaps = [max(0.0, math.dist((x, y), p) - rule.radius) for p in rule.points]
        if rule.bounds is not None:
            gaps.append(_to_bounds(x, y, rule.bounds))
        return min(gaps, default=math.inf)
