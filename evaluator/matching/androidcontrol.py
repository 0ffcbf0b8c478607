"""The ``androidcontrol`` profile: AndroidControl as its papers score it (the evaluator
they share, in its AndroidControl mode), quirks included (docs/evaluation.md, Matching
profiles, cites the file and commit).

Everything is measured in ``[0,1]`` of each axis (``[0,1000]`` / 1000):

- click and long press (not each other): the screen's elements are enlarged 1.2x about
  their position (the growth ``(1.2 - 1) * size``, half on each side), clamped at 0
  keeping their enlarged size; the 5 whose centres are nearest the gold point are kept
  (ties in the dump's order), and the tap matches inside any of them (edges inclusive),
  or at most 0.04 from the gold point. The elements come from the node's hierarchy;
  without one, the edge's own element; with none at all, only the distance counts;
- swipe: the nearest of up, down, left, right by cosine in ``[0,1000]`` (a tie goes to
  the first in that order, so an exact diagonal is vertical), no minimum length; a swipe
  that does not move has no direction and matches nothing; a swipe edge whose
  demonstrations moved at most 0.04 is a click there and takes no swipe;
- type: either text contains the other after ``lower().strip()``;
- back, home and enter by button (keys by name), wait by type.
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

TAP_DISTANCE = 0.04
TAP_MOVE = 0.04  # a gold gesture that moved no more is a click
BOX_FACTOR = 1.2
NEAREST = 5
_AXES = (
    (SwipeDirection.UP, (0, -1)),
    (SwipeDirection.DOWN, (0, 1)),
    (SwipeDirection.LEFT, (-1, 0)),
    (SwipeDirection.RIGHT, (1, 0)),
)

Box = tuple[float, float, float, float]  # top, left, height, width in [0,1]


def enlarged(box: Bounds) -> Box:
    top, left, h, w = box.top / 1000, box.left / 1000, box.height / 1000, box.width / 1000
    dh, dw = (BOX_FACTOR - 1) * h, (BOX_FACTOR - 1) * w
    return max(0, top - dh / 2), max(0, left - dw / 2), min(1, h + dh), min(1, w + dw)


def nearest_boxes(boxes: list[Box], x: float, y: float) -> list[Box]:
    """The ``NEAREST`` boxes whose centres are closest to ``(x, y)`` (``[0,1]``)."""

    def centre_distance(box: Box) -> float:
        top, left, h, w = box
        return float(((top + h / 2 - y) ** 2 + (left + w / 2 - x) ** 2) ** 0.5)

    return sorted(boxes, key=centre_distance)[:NEAREST]


def agent_vector(action: Action) -> tuple[float, float]:
    """A prediction's movement, in ``[0,1000]`` as the benchmark reads it."""
    x1, y1, x2, y2 = action.normalized().segment()
    return x2 - x1, y2 - y1


def gold_vector(action: Action) -> tuple[float, float]:
    """A demonstrated swipe's movement in ``[0,1]``: its pixels over its screen's size."""
    x1, y1, x2, y2 = action.segment()
    w, h = action.screen or (1, 1)
    return x2 / w - x1 / w, y2 / h - y1 / h


def nearest_direction(vector: tuple[float, float]) -> SwipeDirection | None:
    """The nearest of the four directions by cosine (the first on a tie)."""
    vx, vy = vector
    length = math.sqrt(vx**2 + vy**2)
    if length == 0:
        return None
    ux, uy = vx / length, vy / length
    best, chosen = -math.inf, None
    for direction, (dx, dy) in _AXES:
        cosine = (ux * dx + uy * dy) / math.sqrt(dx**2 + dy**2)
        if cosine > best:
            best, chosen = cosine, direction
    return chosen


@dataclass(frozen=True, slots=True)
class AndroidControlRules(StepRules):
    needs_elements = True

    def judge(
        self, rule: MatchRule, action: Action, view: StepView, shown: Sequence[Action] = ()
    ) -> RuleMatch | None:
        t = action.type
        if t.is_pointed:
            return self._tap(rule, action, view)
        if t is ActionType.SWIPE:
            direction = nearest_direction(agent_vector(action))
            demonstrated = [gold_vector(a) for a in shown_swipes(rule, shown)]
            swipes = [v for v in demonstrated if math.sqrt(v[0] ** 2 + v[1] ** 2) > TAP_MOVE]
            if demonstrated and not swipes:
                return None  # the benchmark sees the gold as a click
            golds = {nearest_direction(v) for v in swipes} or {rule.direction}
            if direction is not None and direction in golds:
                return RuleMatch(f"direction {direction.value}", (1, 0.0))
            return None
        if t is ActionType.TYPE:
            typed = (action.text or "").lower().strip()
            for gold in rule.texts:
                g = gold.lower().strip()
                if typed in g or g in typed:
                    return RuleMatch("text contained", (1, 0.0))
            return None
        if t is ActionType.KEY:
            return key_match(rule, action)
        return by_type(action)

    def _tap(self, rule: MatchRule, action: Action, view: StepView) -> RuleMatch | None:
        if view.elements is not None:
            boxes = list(view.elements.boxes)
        else:
            boxes = [rule.bounds] if rule.bounds is not None else []
        grown = [enlarged(b) for b in boxes]
        n = action.normalized()
        assert n.x is not None and n.y is not None
        px, py = n.x / 1000, n.y / 1000
        found: list[RuleMatch | None] = []
        for gx, gy in gold_points(rule):
            gx, gy = gx / 1000, gy / 1000
            for top, left, h, w in nearest_boxes(grown, gx, gy):
                if top <= py <= top + h and left <= px <= left + w:
                    found.append(RuleMatch("inside a nearby element", (2, -h * w)))
                    break
            dx, dy = gx - px, gy - py
            gap = math.sqrt(dx * dx + dy * dy)
            if gap <= TAP_DISTANCE:
                found.append(RuleMatch(f"within {gap:.4f} of the point", (1, -gap)))
        return best_match(found)
