"""A replayed demonstration always matches the edge built from it (elderbench profile),
however diagonal its swipe and whatever the screen: the builder's ``Action.direction``
and the matcher decide the direction by one rule, in the device's pixels."""

from __future__ import annotations

import math
import random

import pytest

from evaluator.agents.replay import action_for_edge
from evaluator.matching import match_edges
from graph_builder.merge import merge_demonstrations
from graph_builder.model import (
    MIN_SWIPE,
    Action,
    ActionType,
    Edge,
    EdgeSupport,
    MatchRule,
    MemberRef,
    Size,
    SwipeDirection,
)
from graph_builder.similarity import SimilaritySettings
from tests.graph_builder.gb_synthetic import SIZE, Sketch, demo, tap_row

SCREENS: tuple[Size, ...] = (
    (720, 1280),
    (1080, 2400),
    (1440, 3200),
    (800, 1280),
    (1200, 1920),
    (2400, 1080),
    (1080, 1080),
    (270, 600),
)


def demonstrated_swipes(screen: Size, rnd: random.Random) -> list[Action]:
    """Swipes of every whole degree and the exact diagonals on the glass, from the
    shortest the matcher takes to most of the screen, as the recorder stores them."""
    w, h = screen
    shortest = MIN_SWIPE * min(w, h)
    swipes = []
    for degree in [*range(360), 45, 135, 225, 315]:
        a = math.radians(degree)
        for length in (math.ceil(shortest) + 1, rnd.uniform(shortest + 1, 0.9 * min(w, h))):
            dx, dy = round(length * math.cos(a)), round(length * math.sin(a))
            if math.hypot(dx, dy) < shortest:
                continue
            x1 = rnd.randint(max(0, -dx), min(w, w - dx))
            y1 = rnd.randint(max(0, -dy), min(h, h - dy))
            swipes.append(Action.swipe(x1, y1, x1 + dx, y1 + dy, screen=screen))
        k = rnd.randint(int(shortest) + 1, min(w, h) // 2)  # |dx| == |dy| exactly
        swipes.append(Action.swipe(w // 2, h // 2, w // 2 + k, h // 2 - k, screen=screen))
    return swipes


@pytest.mark.parametrize("screen", SCREENS, ids=[f"{w}x{h}" for w, h in SCREENS])
def test_a_replayed_swipe_always_matches_its_own_edge(screen):
    rnd = random.Random(f"{screen}")
    for swipe in demonstrated_swipes(screen, rnd):
        # the edge the builder makes of it (graph_builder.merge: the first support's
        # direction), with every other direction's edge beside it
        edges = [
            Edge(f"e_{d.value}", "a", f"to_{d.value}", MatchRule(ActionType.SWIPE, direction=d))
            for d in SwipeDirection
            if d is not swipe.direction
        ]
        own = Edge(
            "own",
            "a",
            "b",
            MatchRule(ActionType.SWIPE, direction=swipe.direction),
            (EdgeSupport(MemberRef("d", 0), swipe),),
        )
        replayed = action_for_edge(own)
        for again in (replayed, replayed.normalized(), replayed.to_device(screen)):
            m = match_edges([*edges, own], again, screen=screen)
            assert m.edge is own, (screen, swipe.to_json(), again.to_json(), m.reason)


def test_the_builder_stores_the_direction_on_the_glass():
    # 60 px right and 60 px up on a 270x600 screen: a tie on the glass (up), but in
    # [0,1000] it is 222 right and 100 up (right): the edge must say up
    home, settings = Sketch("Home", ("Settings", "Contacts")), Sketch("Settings", ("Display",))
    diagonal = Action.swipe(100, 300, 160, 240, screen=SIZE)
    item = demo(
        "d1",
        [(home, diagonal), (settings, tap_row(settings, "Display")), (settings, Action.done())],
    )
    graph = merge_demonstrations([item], settings=SimilaritySettings()).graph
    (edge,) = [e for e in graph.edges if e.rule.action_type is ActionType.SWIPE]
    assert edge.rule.direction is SwipeDirection.UP
    node = graph.node(edge.source)
    assert (
        match_edges(graph.out_edges(edge.source), action_for_edge(edge), screen=node.screen).edge
        == edge
    )
    assert (
        match_edges(graph.out_edges(edge.source), diagonal.normalized(), screen=node.screen).edge
        == edge
    )
