"""Building one gold step and judging an agent's action on it, for the conformance tests of
the benchmark profiles (tests/evaluator/test_profile_*.py).

The steps are the harness's cases (benchmarks/matching_cases.py), so the verdicts written
in the tests can be checked against each benchmark's own code with the same adaptors
(benchmarks/matching_references.py); the tests themselves never need that code.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from benchmarks.matching_cases import Case
from evaluator.matching import PROFILES, match_edges
from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    ActionType,
    Bounds,
    Edge,
    EdgeSupport,
    MatchRule,
    MemberRef,
    Size,
)

PHONE: Size = (1080, 2400)
N = NORMALIZED_SCREEN
# a small leaf in the top-left corner, far from every case's points: a real screen always
# has elements, and one benchmark's matcher needs at least one
CORNER = Bounds(0, 0, 108, 96)
# demonstrated swipes (device pixels on PHONE) that several profiles' cases are judged on
RIGHT = (100, 1000, 700, 1200)  # right on the glass and in [0,1000]
DOWN = (540, 600, 560, 1800)


def _plain_screen(screen: Size) -> tuple[tuple[Bounds, ...], tuple[bool, ...]]:
    return (Bounds(0, 0, *screen), CORNER), (False, True)


def agent_tap(x: float, y: float) -> Action:
    return Action.tap(x, y, screen=N)


def agent_swipe(x1: float, y1: float, x2: float, y2: float) -> Action:
    return Action.swipe(x1, y1, x2, y2, screen=N)


def pointed(
    agent: Action,
    gold: tuple[float, float],
    *,
    element: Bounds | None = None,
    others: tuple[Bounds, ...] = (),
    screen: Size = PHONE,
    kind: ActionType = ActionType.TAP,
    with_bounds: bool = True,
) -> Case:
    """A demonstrated tap at ``gold`` (device pixels) on ``element`` (pixels), with the
    screen's other leaf elements ``others``, under a full-screen container."""
    g = Action(kind, x=gold[0], y=gold[1], screen=screen)
    n = g.normalized()
    assert n.x is not None and n.y is not None
    bounds = element.rescaled(screen, N) if element is not None and with_bounds else None
    rule = MatchRule(kind, bounds=bounds, points=((n.x, n.y),))
    leaves = (*([element] if element is not None else []), *others, CORNER)
    boxes = (Bounds(0, 0, *screen), *leaves)
    return Case(
        "test",
        screen,
        rule,
        g,
        agent,
        element if with_bounds else None,
        boxes,
        (False, *[True] * len(leaves)),
    )


def swiped(agent: Action, gold: tuple[float, float, float, float], screen: Size = PHONE) -> Case:
    """A demonstrated swipe (device pixels) and the edge the builder makes of it."""
    g = Action.swipe(*gold, screen=screen)
    rule = MatchRule(ActionType.SWIPE, direction=g.direction)
    return Case("test", screen, rule, g, agent, None, *_plain_screen(screen))


def typed(agent: str, gold: str) -> Case:
    rule = MatchRule(ActionType.TYPE, texts=(gold,))
    return Case(
        "test",
        PHONE,
        rule,
        Action.type_text(gold),
        Action.type_text(agent),
        None,
        *_plain_screen(PHONE),
    )


def keyed(agent: Action, gold: Action) -> Case:
    if gold.type is ActionType.KEY:
        rule = MatchRule(ActionType.KEY, texts=(gold.text or "",))
    else:
        rule = MatchRule(gold.type)
    return Case("test", PHONE, rule, gold, agent, None, *_plain_screen(PHONE))


def judged(profile: str, case: Case) -> bool:
    """Whether the one edge made from the gold step takes the agent's action."""
    edge = Edge("e", "here", "there", case.rule, (EdgeSupport(MemberRef("d", 0), case.gold),))
    return match_edges(
        [edge],
        case.agent,
        screen=case.screen,
        profile=PROFILES[profile],
        elements=case.elements(),
    ).matched


def verdict_cases(cases: Sequence[tuple[str, Case, bool]]) -> pytest.MarkDecorator:
    """Parametrize a test with ``case`` and ``verdict`` from ``(name, case, verdict)`` rows,
    each test named by its row's name."""
    return pytest.mark.parametrize(
        ("case", "verdict"), [c[1:] for c in cases], ids=[c[0] for c in cases]
    )
