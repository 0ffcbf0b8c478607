"""Match an agent's action against a task graph's edges under a matching profile.

The choice between edges is ours in every profile (the benchmarks judge one gold step):
an edge that leaves the node beats a self-loop, then the rule's rank (inside bounds
beats within a radius, the smaller element and the nearer point win), then the first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evaluator.matching.base import RuleMatch, ScreenElements, StepView
from evaluator.matching.profiles import ELDERBENCH, MatchingProfile
from graph_builder.model import Action, ActionType, Edge, MatchRule, Size


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


def match_rule(
    rule: MatchRule,
    action: Action,
    *,
    screen: Size | None = None,
    profile: MatchingProfile = ELDERBENCH,
    elements: ScreenElements | None = None,
    shown: Sequence[Action] = (),
) -> RuleMatch | None:
    """The reason ``rule`` accepts ``action`` (any coordinate space), or None.

    ``screen`` is the device's size in pixels; ``elements`` the screen's elements, for
    the profiles that look at them (``profile.needs_elements``); ``shown`` the edge's
    demonstrated actions.
    """
    if not profile.rules.compatible(rule.action_type, action):
        return None
    return profile.rules.judge(rule, action, StepView(screen, elements), shown)


def match_edges(
    edges: Iterable[Edge],
    action: Action,
    *,
    screen: Size | None = None,
    profile: MatchingProfile = ELDERBENCH,
    elements: ScreenElements | None = None,
) -> EdgeMatch:
    """The best edge among ``edges`` that accepts ``action``.

    An edge that leaves the node beats a self-loop: when a demonstrated action once did
    nothing (a tap before the app was ready) and once made progress, the same action gives
    two edges, and the protocol credits the progress (so a replay of the graph reaches DONE).
    Then inside-bounds beats within-radius; among bounds the smallest element wins, among
    points the nearest, among texts the highest ratio; remaining ties go to the first edge.
    """
    view = StepView(screen, elements)
    rules = profile.rules
    ranked: list[tuple[bool, tuple[int, float], int, Edge, str]] = []
    candidates: list[Edge] = []
    all_edges = tuple(edges)
    for i, edge in enumerate(all_edges):
        if not rules.compatible(edge.rule.action_type, action):
            continue
        candidates.append(edge)
        m = rules.judge(edge.rule, action, view, [s.action for s in edge.support])
        if m is not None:
            ranked.append((edge.source != edge.target, m.rank, -i, edge, m.reason))
    if ranked:
        ranked.sort(key=lambda r: (r[0], r[1], r[2]), reverse=True)
        return EdgeMatch(ranked[0][3], ranked[0][4], accepted=tuple(r[3] for r in ranked))
    fallback = rules.fallback(all_edges)
    if fallback is not None:
        return EdgeMatch(fallback, f"no edge accepts it; follows wait edge {fallback.id}")
    if action.type is ActionType.WAIT:
        return EdgeMatch(None, "wait: no wait edge here, stays on the node", stays=True)
    if not candidates:
        return EdgeMatch(None, f"no outgoing {action.type.value} edge")
    return EdgeMatch(None, rules.miss(candidates, action, view))
