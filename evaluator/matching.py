"""Match an agent's action against a task graph's edges, using each edge's MatchRule.

The rules are data (``graph_builder.model.MatchRule``, geometry in ``[0,1000]`` space);
a ``MatchingProfile`` says how tolerant the geometry is. The default, ``elderbench``:

- tap / long press: inside the element ``bounds`` (left/top inclusive, right/bottom
  exclusive, as uiautomator), or within the edge's ``radius`` (default 50 units) of a
  demonstrated point (inclusive: a point exactly ``radius`` away matches);
- swipe: the same finger direction, decided in device pixels; a swipe shorter than
  ``min_swipe`` of the shorter screen side has no direction and matches no edge;
- type: a rapidfuzz ratio of at least ``text_threshold`` against any accepted text, both
  texts NFKC-normalized, case-folded and with runs of whitespace made one space;
- key: the same key, names compared in one form (``KEYCODE_ENTER``, ``enter``, ``66``);
- back, home, wait: by type. A ``wait`` where no wait edge leaves the node stays there.
  (``launch``, ``answer``, ``ask_user`` and ``give_up`` are handled by
  ``evaluator.task_actions``, not by rules.)

Other benchmarks' conventions are profiles too (``PROFILES``), so a run can be matched,
and re-matched, under each. Every match says in words which rule decided it, e.g.
``"within 37.2 of point"``; a miss says how far the action was from the nearest tolerance.

>>> from graph_builder.model import MatchRule, Action, NORMALIZED_SCREEN
>>> rule = MatchRule("tap", points=((500, 500),))
>>> match_rule(rule, Action.tap(530, 540, screen=NORMALIZED_SCREEN)).reason
'within 50 of point'
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz

from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    ActionType,
    Bounds,
    Edge,
    MatchRule,
    Size,
    SwipeDirection,
)


@dataclass(frozen=True, slots=True)
class MatchingProfile:
    """A tap-tolerance convention.

    ``radius`` None keeps each edge's own radius (in ``[0,1000]`` units). With
    ``pixels_at_width`` set, the radius is in device pixels of a screen that wide, scaled
    to the real width (ColorBench: 151 px at 1080 wide), and distances are measured in
    pixels; otherwise in ``[0,1000]`` units. ``bounds_scale`` enlarges element bounds
    about their centre (AitW 1.4); ``use_bounds`` False ignores them.
    """

    name: str
    description: str
    radius: float | None = None
    pixels_at_width: float | None = None
    bounds_scale: float = 1.0
    use_bounds: bool = True
    min_swipe: float = 0.04  # fraction of the shorter screen side

    def radius_for(self, rule: MatchRule) -> float:
        return rule.radius if self.radius is None else self.radius


ELDERBENCH = MatchingProfile(
    "elderbench", "inside the element bounds, or within 50 units of a demonstrated point"
)
PROFILES: dict[str, MatchingProfile] = {
    p.name: p
    for p in (
        ELDERBENCH,
        MatchingProfile(
            "aitw", "within 14% of the screen, or inside bounds enlarged 1.4x", 140.0, None, 1.4
        ),
        MatchingProfile(
            "gui_odyssey", "within 0.14 normalized of the point", 140.0, None, use_bounds=False
        ),
        MatchingProfile(
            "androidcontrol",
            "within 0.04 normalized, or inside bounds enlarged 1.2x",
            40.0,
            None,
            1.2,
        ),
        MatchingProfile(
            "colorbench", "inside the element bounds, or within 151 px at 1080 wide", 151.0, 1080.0
        ),
    )
}


def profile_named(name: str) -> MatchingProfile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"unknown matching profile {name!r}; choose from: {', '.join(PROFILES)}"
        ) from None


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """Why a rule accepted an action; ``rank`` orders competing edges (higher wins)."""

    reason: str
    rank: tuple[int, float]


@dataclass(frozen=True, slots=True)
class EdgeMatch:
    """The edge an action follows (None when it follows none) and the deciding reason.

    ``stays`` is True for an unmatched action that leaves the agent where it is without
    being a mistake the strict mode stops on (a ``wait`` where no wait edge exists).
    ``accepted`` lists every edge that accepts the action, best first.
    """

    edge: Edge | None
    reason: str
    stays: bool = False
    accepted: tuple[Edge, ...] = ()

    @property
    def matched(self) -> bool:
        return self.edge is not None


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


def swipe_direction(
    action: Action, screen: Size | None, min_fraction: float = 0.04
) -> SwipeDirection | None:
    """The finger's dominant direction in device pixels of ``screen`` (the action's own
    space when None); None when the swipe is shorter than ``min_fraction`` of the shorter
    side, e.g. 100 px right and 150 px down on 1080x2400 is ``down``."""
    if action.type is not ActionType.SWIPE:
        return None
    space = screen or action.screen or NORMALIZED_SCREEN
    d = action.rescaled(space)
    assert d.x is not None and d.y is not None and d.x2 is not None and d.y2 is not None
    dx, dy = d.x2 - d.x, d.y2 - d.y
    if math.hypot(dx, dy) < min_fraction * min(space):
        return None
    if abs(dy) >= abs(dx):
        return SwipeDirection.UP if dy < 0 else SwipeDirection.DOWN
    return SwipeDirection.LEFT if dx < 0 else SwipeDirection.RIGHT


def _swipe_length(action: Action, screen: Size | None) -> float:
    space = screen or action.screen or NORMALIZED_SCREEN
    return action.rescaled(space).distance


class _Geometry:
    """Distances for one pointed action under a profile, in units or device pixels."""

    def __init__(self, action: Action, screen: Size | None, profile: MatchingProfile) -> None:
        self.profile = profile
        n = action.normalized()
        assert n.x is not None and n.y is not None
        self.x, self.y = n.x, n.y
        # Without a known device, [0,1000] stands in for the screen's pixels.
        self.device = screen or action.screen or NORMALIZED_SCREEN
        self.unit = "" if profile.pixels_at_width is None else " px"

    def _scale(self) -> tuple[float, float]:
        if self.profile.pixels_at_width is None:
            return 1.0, 1.0
        return self.device[0] / 1000, self.device[1] / 1000

    def radius(self, rule: MatchRule) -> float:
        r = self.profile.radius_for(rule)
        if self.profile.pixels_at_width is not None:
            r *= self.device[0] / self.profile.pixels_at_width
        return r

    def bounds(self, rule: MatchRule) -> Bounds | None:
        b = rule.bounds
        if b is None or not self.profile.use_bounds:
            return None
        s = self.profile.bounds_scale
        if s == 1.0:
            return b
        cx, cy = b.center
        hw, hh = b.width * s / 2, b.height * s / 2
        return Bounds(cx - hw, cy - hh, cx + hw, cy + hh)

    def to_point(self, px: float, py: float) -> float:
        sx, sy = self._scale()
        return math.hypot((self.x - px) * sx, (self.y - py) * sy)

    def to_bounds(self, b: Bounds) -> float:
        sx, sy = self._scale()
        dx = max(b.left - self.x, 0.0, self.x - b.right) * sx
        dy = max(b.top - self.y, 0.0, self.y - b.bottom) * sy
        return math.hypot(dx, dy)

    def outside(self, rule: MatchRule) -> float:
        """How far the action is from the rule's accepted region (0 when inside it)."""
        gaps = [max(0.0, self.to_point(px, py) - self.radius(rule)) for px, py in rule.points]
        b = self.bounds(rule)
        if b is not None:
            gaps.append(self.to_bounds(b))
        return min(gaps, default=math.inf)


def match_rule(
    rule: MatchRule,
    action: Action,
    *,
    screen: Size | None = None,
    profile: MatchingProfile = ELDERBENCH,
) -> RuleMatch | None:
    """The reason ``rule`` accepts ``action`` (any coordinate space), or None.

    ``screen`` is the device's size in pixels (for swipe directions and pixel radii).
    """
    t = action.type
    if t is not rule.action_type:
        return None
    if t.is_pointed:
        g = _Geometry(action, screen, profile)
        b = g.bounds(rule)
        if b is not None and b.contains(g.x, g.y):
            return RuleMatch("inside bounds", (2, -b.area))
        best = min((g.to_point(px, py) for px, py in rule.points), default=math.inf)
        if best <= g.radius(rule):
            return RuleMatch(f"within {exact(best)}{g.unit} of point", (1, -best))
        return None
    if t is ActionType.SWIPE:
        direction = swipe_direction(action, screen, profile.min_swipe)
        if rule.direction is not None and direction is rule.direction:
            return RuleMatch(f"direction {direction.value}", (1, 0.0))
        return None
    if t is ActionType.TYPE:
        ratio = max((text_ratio(action.text or "", a) for a in rule.texts), default=0.0)
        if rule.texts and ratio >= rule.text_threshold:
            return RuleMatch(f"text ratio {exact(ratio)}", (1, ratio))
        return None
    if t is ActionType.KEY:
        key = canonical_key(action.text or "")
        if any(canonical_key(k) == key for k in rule.texts):
            return RuleMatch(f"key {key}", (1, 0.0))
        return None
    return RuleMatch(f"type {t.value}", (1, 0.0))


def match_edges(
    edges: Iterable[Edge],
    action: Action,
    *,
    screen: Size | None = None,
    profile: MatchingProfile = ELDERBENCH,
) -> EdgeMatch:
    """The best edge among ``edges`` that accepts ``action``.

    An edge that leaves the node beats a self-loop: when a demonstrated action once did
    nothing (a tap before the app was ready) and once made progress, the same action gives
    two edges, and the protocol credits the progress (so a replay of the graph reaches DONE).
    Then inside-bounds beats within-radius; among bounds the smallest element wins, among
    points the nearest, among texts the highest ratio; remaining ties go to the first edge.
    """
    ranked: list[tuple[bool, tuple[int, float], int, Edge, str]] = []
    candidates: list[Edge] = []
    for i, edge in enumerate(edges):
        if edge.rule.action_type is not action.type:
            continue
        candidates.append(edge)
        m = match_rule(edge.rule, action, screen=screen, profile=profile)
        if m is not None:
            ranked.append((edge.source != edge.target, m.rank, -i, edge, m.reason))
    if ranked:
        ranked.sort(key=lambda r: (r[0], r[1], r[2]), reverse=True)
        return EdgeMatch(ranked[0][3], ranked[0][4], accepted=tuple(r[3] for r in ranked))
    if action.type is ActionType.WAIT:
        return EdgeMatch(None, "wait: no wait edge here, stays on the node", stays=True)
    return EdgeMatch(None, _why_not(candidates, action, screen, profile))


def _why_not(
    candidates: list[Edge], action: Action, screen: Size | None, profile: MatchingProfile
) -> str:
    t = action.type
    if not candidates:
        return f"no outgoing {t.value} edge"
    if t.is_pointed:
        g = _Geometry(action, screen, profile)
        gap, edge = min(((g.outside(e.rule), e.id) for e in candidates), default=(math.inf, ""))
        return (
            f"no {t.value} edge here: {exact(gap, up=True)}{g.unit} outside the nearest tolerance "
            f"(edge {edge})"
        )
    if t is ActionType.SWIPE:
        wanted = sorted({e.rule.direction.value for e in candidates if e.rule.direction})
        direction = swipe_direction(action, screen, profile.min_swipe)
        if direction is None:
            space = screen or action.screen or NORMALIZED_SCREEN
            return (
                f"swipe of {exact(_swipe_length(action, screen))} px is shorter than "
                f"{exact(profile.min_swipe * min(space))} px and has no direction "
                f"(expected {', '.join(wanted)})"
            )
        return f"swipe {direction.value} matches no edge (expected {', '.join(wanted)})"
    if t is ActionType.TYPE:
        ratio = max(
            (text_ratio(action.text or "", a) for e in candidates for a in e.rule.texts),
            default=0.0,
        )
        threshold = min(e.rule.text_threshold for e in candidates)
        return f"typed text matches no edge (best ratio {exact(ratio)}, needs {exact(threshold)})"
    return f"no {t.value} edge"
