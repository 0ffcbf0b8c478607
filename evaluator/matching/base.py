"""What every matching profile shares: the verdict, the screen a step is judged on, the
text and key forms, and the interface a profile's rules implement.

>>> elements = ScreenElements.from_boxes([Bounds(0, 0, 1080, 2400), Bounds(108, 240, 216, 480)],
...                                      leaves=[False, True], screen=(1080, 2400))
>>> elements.leaf_boxes()
(Bounds(left=100.0, top=100.0, right=200.0, bottom=200.0),)
"""

from __future__ import annotations

import math
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from graph_builder.hierarchy import Hierarchy
from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    ActionType,
    Bounds,
    Edge,
    MatchRule,
    Size,
)
from graph_builder.screen import Screen


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """Why a rule accepted an action; ``rank`` orders competing edges (higher wins)."""

    reason: str
    rank: tuple[int, float]


@dataclass(frozen=True, slots=True)
class ScreenElements:
    """The visible elements of the screen a step is judged on, in ``[0,1000]`` and in the
    dump's pre-order, with which of them have no visible child (the leaves): the per-step
    boxes some benchmarks look at besides the edge's own element."""

    boxes: tuple[Bounds, ...]
    leaves: tuple[bool, ...]

    @classmethod
    def from_boxes(
        cls, boxes: Sequence[Bounds], *, leaves: Sequence[bool], screen: Size
    ) -> ScreenElements:
        return cls(
            tuple(b.rescaled(screen, NORMALIZED_SCREEN) for b in boxes),
            tuple(bool(x) for x in leaves),
        )

    @classmethod
    def of(cls, hierarchy: Hierarchy, screen: Size) -> ScreenElements:
        """The visible, non-empty elements of ``hierarchy`` (a dump of a ``screen``-sized
        display)."""
        shown = list(hierarchy.visible())
        parents = {e.parent for e in shown}
        return cls.from_boxes(
            [e.bounds for e in shown], leaves=[e.index not in parents for e in shown], screen=screen
        )

    @classmethod
    def of_screen(cls, screen: Screen) -> ScreenElements | None:
        """The elements of an observed screen (None when it has no hierarchy), kept with it.
        An unreadable dump is a FormatError naming the file."""
        hierarchy = screen.hierarchy() if screen.has_hierarchy else None
        if hierarchy is None:
            return None
        return screen.derived("matching_elements", None, lambda: cls.of(hierarchy, screen.size))

    def leaf_boxes(self) -> tuple[Bounds, ...]:
        return tuple(b for b, leaf in zip(self.boxes, self.leaves, strict=True) if leaf)


@dataclass(frozen=True, slots=True)
class StepView:
    """What a rule may look at besides the edge and the action: the device's size in
    pixels (None: unknown, ``[0,1000]`` stands in) and the screen's elements (None: the
    node has no hierarchy)."""

    screen: Size | None = None
    elements: ScreenElements | None = None

    def device(self, action: Action) -> Size:
        return self.screen or action.screen or NORMALIZED_SCREEN


class StepRules(ABC):
    """One benchmark's way of judging a step. Subclasses are frozen dataclasses."""

    #: whether ``judge`` reads ``StepView.elements`` (callers load them only then)
    needs_elements: bool = False

    def compatible(self, rule_type: ActionType, action: Action) -> bool:
        """Whether an edge of ``rule_type`` is judged against ``action`` at all (the
        benchmark's own action types; by default ours, one to one)."""
        return rule_type is action.type

    @abstractmethod
    def judge(
        self, rule: MatchRule, action: Action, view: StepView, shown: Sequence[Action] = ()
    ) -> RuleMatch | None:
        """Whether ``rule`` accepts ``action``; ``shown`` are the edge's demonstrated
        actions (its supports), for the benchmarks that read the gold's coordinates."""

    def fallback(self, edges: Sequence[Edge]) -> Edge | None:
        """The edge an action that no edge accepted follows anyway (None: it follows none)."""
        return None

    def miss(self, edges: Sequence[Edge], action: Action, view: StepView) -> str:
        """Why none of ``edges`` (all compatible, at least one) accepted ``action``."""
        return f"no {action.type.value} edge accepts it"


# Android keycodes a model may give by number (android.view.KeyEvent).
_KEY_NUMBERS = {
    "3": "home",
    "4": "back",
    "24": "volume_up",
    "25": "volume_down",
    "26": "power",
    "27": "camera",
    "28": "clear",
    "61": "tab",
    "62": "space",
    "66": "enter",
    "67": "del",
    "82": "menu",
    "84": "search",
    "111": "escape",
    "112": "forward_del",
    "187": "app_switch",
}
_KEY_ALIASES = {"delete": "del", "backspace": "del", "return": "enter", "esc": "escape"}


def canonical_key(name: str) -> str:
    """``KEYCODE_ENTER``, ``Enter`` and ``66`` -> ``enter``."""
    key = name.strip().lower().removeprefix("keycode_")
    key = _KEY_NUMBERS.get(key, key)
    return _KEY_ALIASES.get(key, key)


def key_match(rule: MatchRule, action: Action) -> RuleMatch | None:
    """A key press matches a key edge of the same key (every profile: the benchmarks name
    their few keys, enter among them, as actions of their own)."""
    key = canonical_key(action.text or "")
    if any(canonical_key(k) == key for k in rule.texts):
        return RuleMatch(f"key {key}", (1, 0.0))
    return None


def by_type(action: Action) -> RuleMatch:
    return RuleMatch(f"type {action.type.value}", (1, 0.0))


def normalize_text(text: str) -> str:
    """NFKC, case folding and single spaces: how typed texts are compared."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def text_ratio(typed: str, accepted: str) -> float:
    return float(fuzz.ratio(normalize_text(typed), normalize_text(accepted)))


def exact(value: float, *, up: bool = False) -> str:
    """``value`` with up to two decimals, cut towards zero (or, with ``up``, rounded up) so
    that a printed figure never crosses the threshold it is compared with: 79.999 never
    reads as 80, a gap of 0.001 never as 0. ``exact(79.5) == '79.5'``, ``exact(80.0) == '80'``.
    """
    scaled = value * 100
    cut = (math.ceil(scaled - 1e-9) if up else math.floor(scaled + 1e-9)) / 100
    return f"{cut:.2f}".rstrip("0").rstrip(".")


def gold_points(rule: MatchRule) -> tuple[tuple[float, float], ...]:
    """The demonstrated points of a pointed rule in ``[0,1000]``; a rule with only bounds
    stands for a tap at their centre (the benchmarks' gold is always a point)."""
    if rule.points:
        return rule.points
    return (rule.bounds.center,) if rule.bounds is not None else ()


def shown_swipes(rule: MatchRule, shown: Sequence[Action]) -> tuple[Action, ...]:
    """The demonstrated swipes that agree with the rule's direction: a benchmark decides
    the gold direction from them in its own space, and a direction edited by hand (which
    they no longer agree with) stays the rule's."""
    return tuple(a for a in shown if a.type is ActionType.SWIPE and a.direction is rule.direction)


def best_match(matches: Iterable[RuleMatch | None]) -> RuleMatch | None:
    """The best of several matches (highest rank), or None."""
    found = [m for m in matches if m is not None]
    return max(found, key=lambda m: m.rank) if found else None
