"""Match an agent's action against a task graph's edges, using each edge's MatchRule.

The rules are data (``graph_builder.model.MatchRule``, geometry in ``[0,1000]`` space):

- tap / long press: inside the element ``bounds`` (left/top inclusive, right/bottom
  exclusive, as uiautomator), or within ``radius`` of a demonstrated point (inclusive: a
  point exactly ``radius`` away matches);
- swipe: the same finger direction;
- type: a rapidfuzz ratio of at least ``text_threshold`` against any accepted text;
- back, home, wait: by type alone.

Every match says in words which rule decided it, e.g. ``"within 37.2 of point"``.

>>> from graph_builder.model import MatchRule, Action, NORMALIZED_SCREEN
>>> rule = MatchRule("tap", points=((500, 500),))
>>> match_rule(rule, Action.tap(530, 540, screen=NORMALIZED_SCREEN)).reason
'within 50.0 of point'
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz

from graph_builder.model import Action, ActionType, Bounds, Edge, MatchRule


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """Why a rule accepted an action; ``rank`` orders competing edges (higher wins)."""

    reason: str
    rank: tuple[int, float]


@dataclass(frozen=True, slots=True)
class EdgeMatch:
    """The edge an action follows (None when it follows none) and the deciding reason."""

    edge: Edge | None
    reason: str

    @property
    def matched(self) -> bool:
        return self.edge is not None


def _distance_to_bounds(b: Bounds, x: float, y: float) -> float:
    dx = max(b.left - x, 0.0, x - b.right)
    dy = max(b.top - y, 0.0, y - b.bottom)
    return math.hypot(dx, dy)


def match_rule(rule: MatchRule, action: Action) -> RuleMatch | None:
    """The reason ``rule`` accepts ``action`` (any coordinate space), or None."""
    t = action.type
    if t is not rule.action_type:
        return None
    if t.is_pointed:
        n = action.normalized()
        assert n.x is not None and n.y is not None
        if rule.bounds is not None and rule.bounds.contains(n.x, n.y):
            return RuleMatch("inside bounds", (2, -rule.bounds.area))
        best = min((math.hypot(n.x - px, n.y - py) for px, py in rule.points), default=math.inf)
        if best <= rule.radius:
            return RuleMatch(f"within {best:.1f} of point", (1, -best))
        return None
    if t is ActionType.SWIPE:
        direction = action.direction
        if rule.direction is not None and direction is rule.direction:
            return RuleMatch(f"direction {direction.value}", (1, 0.0))
        return None
    if t is ActionType.TYPE:
        text = (action.text or "").strip()
        ratio = max((fuzz.ratio(text, accepted.strip()) for accepted in rule.texts), default=0.0)
        if rule.texts and ratio >= rule.text_threshold:
            return RuleMatch(f"text ratio {ratio:.0f}", (1, ratio))
        return None
    return RuleMatch(f"type {t.value}", (1, 0.0))


def match_edges(edges: Iterable[Edge], action: Action) -> EdgeMatch:
    """The best edge among ``edges`` that accepts ``action``.

    Inside-bounds beats within-radius; among bounds the smallest element wins, among points
    the nearest, among texts the highest ratio; remaining ties go to the first edge.
    """
    best: tuple[tuple[int, float], Edge, str] | None = None
    candidates: list[Edge] = []
    for edge in edges:
        if edge.rule.action_type is not action.type:
            continue
        candidates.append(edge)
        m = match_rule(edge.rule, action)
        if m is not None and (best is None or m.rank > best[0]):
            best = (m.rank, edge, m.reason)
    if best is not None:
        return EdgeMatch(best[1], best[2])
    return EdgeMatch(None, _why_not(candidates, action))


def _why_not(candidates: list[Edge], action: Action) -> str:
    t = action.type
    if not candidates:
        return f"no outgoing {t.value} edge"
    if t.is_pointed:
        n = action.normalized()
        assert n.x is not None and n.y is not None
        nearest = math.inf
        for e in candidates:
            r = e.rule
            nearest = min(
                nearest,
                *(math.hypot(n.x - px, n.y - py) for px, py in r.points),
                _distance_to_bounds(r.bounds, n.x, n.y) if r.bounds else math.inf,
            )
        return f"no {t.value} edge here: nearest target {nearest:.1f} away"
    if t is ActionType.SWIPE:
        wanted = sorted({e.rule.direction.value for e in candidates if e.rule.direction})
        return f"swipe {action.direction} matches no edge (expected {', '.join(wanted)})"
    if t is ActionType.TYPE:
        text = (action.text or "").strip()
        ratio = max(
            (fuzz.ratio(text, a.strip()) for e in candidates for a in e.rule.texts), default=0.0
        )
        return f"typed text matches no edge (best ratio {ratio:.0f})"
    return f"no {t.value} edge"
