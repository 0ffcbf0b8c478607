"""The ``gui_odyssey`` profile: GUI-Odyssey's step rule, quirks included (docs/evaluation.md,
Matching profiles, cites the files and commit).

- click and long press (not each other): inside the step's segmentation box (here the
  edge's element ``bounds``, edges inclusive, in ``[0,1000]``), or at most 0.14 from the
  gold point in ``[0,1000]`` / 1000;
- swipe: its direction as the benchmark's converter decides it in ``[0,1000]``:
  horizontal only when strictly more horizontal than vertical, and no minimum length
  (a swipe that does not move is ``down``);
- type: the text up to its first ``:`` (the benchmark splits ``TYPE: text`` on every
  colon and keeps the second piece), stripped; a match when either contains the other or
  ``1 - edit distance / longer length >= 0.5``, case-sensitive;
- back and home by type (keys by name, wait by type).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

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
from graph_builder.model import Action, ActionType, MatchRule, SwipeDirection

CLICK_DISTANCE = 0.14
TEXT_SIMILARITY = 0.5


def converted_direction(action: Action) -> SwipeDirection:
    """The benchmark's direction of a swipe, from its ``[0,1000]`` coordinates."""
    x1, y1, x2, y2 = action.normalized().segment()
    dx, dy = x2 - x1, y2 - y1
    if abs(dx) > abs(dy):
        return SwipeDirection.LEFT if dx < 0 else SwipeDirection.RIGHT
    return SwipeDirection.UP if dy < 0 else SwipeDirection.DOWN


def typed_field(text: str) -> str:
    """What the benchmark compares of a typed text: up to the first colon, stripped."""
    return text.split(":")[0].strip()


def texts_match(gold: str, typed: str) -> bool:
    gold, typed = typed_field(gold), typed_field(typed)
    if gold in typed or typed in gold:
        return True
    length = max(len(gold), len(typed))
    similarity = 1 - (0.0 if length == 0 else Levenshtein.distance(gold, typed) / length)
    return similarity >= TEXT_SIMILARITY


@dataclass(frozen=True, slots=True)
class GuiOdysseyRules(StepRules):
    def judge(
        self, rule: MatchRule, action: Action, view: StepView, shown: Sequence[Action] = ()
    ) -> RuleMatch | None:
        t = action.type
        if t.is_pointed:
            n = action.normalized()
            assert n.x is not None and n.y is not None
            b = rule.bounds
            if b is not None and b.left <= n.x <= b.right and b.top <= n.y <= b.bottom:
                return RuleMatch("inside the segmentation box", (2, -b.area))
            found: list[RuleMatch | None] = []
            for x, y in gold_points(rule):
                dx, dy = n.x / 1000 - x / 1000, n.y / 1000 - y / 1000
                gap = math.sqrt(dx * dx + dy * dy)
                if gap <= CLICK_DISTANCE:
                    found.append(RuleMatch(f"within {gap:.4f} of the point", (1, -gap)))
            return best_match(found)
        if t is ActionType.SWIPE:
            direction = converted_direction(action)
            golds: set[SwipeDirection | None] = {
                converted_direction(a) for a in shown_swipes(rule, shown)
            }
            if direction in (golds or {rule.direction}):
                return RuleMatch(f"direction {direction.value}", (1, 0.0))
            return None
        if t is ActionType.TYPE:
            if any(texts_match(gold, action.text or "") for gold in rule.texts):
                return RuleMatch("text contained or similar", (1, 0.0))
            return None
        if t is ActionType.KEY:
            return key_match(rule, action)
        return by_type(action)
