"""Every matching rule at its boundary, and the choice between competing edges."""

from __future__ import annotations

import pytest

from evaluator.matching import match_edges, match_rule
from graph_builder.model import NORMALIZED_SCREEN, Action, Bounds, Edge, MatchRule

N = NORMALIZED_SCREEN


def tap(x: float, y: float) -> Action:
    return Action.tap(x, y, screen=N)


@pytest.mark.parametrize(
    ("dx", "matched"),
    [(49.0, True), (50.0, True), (51.0, False), (49.999, True), (50.001, False)],
)
def test_radius_is_inclusive_at_exactly_fifty_units(dx, matched):
    rule = MatchRule("tap", points=((500, 500),))
    result = match_rule(rule, tap(500 + dx, 500))
    assert (result is not None) is matched
    if matched:
        assert result.reason == f"within {dx:.1f} of point"


def test_radius_is_euclidean_in_normalized_space():
    rule = MatchRule("tap", points=((500, 500),))
    assert match_rule(rule, tap(530, 540)).reason == "within 50.0 of point"  # 3-4-5 triangle
    assert match_rule(rule, tap(531, 540)) is None


def test_radius_applies_in_normalized_space_whatever_the_device():
    # 1080x2400 device: 54 px right is 50 units; 55 px is 50.9 units.
    rule = MatchRule("tap", points=((500, 500),))
    assert match_rule(rule, Action.tap(540 + 54, 1200, screen=(1080, 2400))) is not None
    assert match_rule(rule, Action.tap(540 + 55, 1200, screen=(1080, 2400))) is None


@pytest.mark.parametrize(
    ("x", "y", "inside"),
    [
        (100, 200, True),  # top-left corner: inclusive
        (299.9, 399.9, True),
        (300, 250, False),  # right edge: exclusive
        (150, 400, False),  # bottom edge: exclusive
        (99.9, 250, False),
    ],
)
def test_bounds_edges_left_top_inclusive_right_bottom_exclusive(x, y, inside):
    rule = MatchRule("tap", bounds=Bounds(100, 200, 300, 400), radius=0)
    result = match_rule(rule, tap(x, y))
    assert (result is not None) is inside
    if inside:
        assert result.reason == "inside bounds"


def test_bounds_or_radius_either_suffices():
    rule = MatchRule("long_press", bounds=Bounds(100, 100, 200, 200), points=((600, 600),))
    press = Action.long_press(640, 600, screen=N)
    assert match_rule(rule, press).reason == "within 40.0 of point"
    assert match_rule(rule, Action.long_press(150, 150, screen=N)).reason == "inside bounds"


def test_tap_does_not_match_long_press_rule():
    rule = MatchRule("long_press", points=((500, 500),))
    assert match_rule(rule, tap(500, 500)) is None


@pytest.mark.parametrize(
    ("end", "direction", "matched"),
    [
        ((500, 200), "up", True),
        ((500, 800), "up", False),
        ((200, 500), "left", True),
        ((800, 510), "right", True),
        ((510, 800), "down", True),
    ],
)
def test_swipe_matches_by_direction(end, direction, matched):
    rule = MatchRule("swipe", direction="up" if direction == "up" else direction)
    swipe = Action.swipe(500, 500, *end, screen=N)
    result = match_rule(rule, swipe)
    assert (result is not None) is matched
    if matched:
        assert result.reason == f"direction {direction}"


def test_text_threshold_boundary():
    rule = MatchRule("type", texts=("abcde",), text_threshold=80)
    assert match_rule(rule, Action.type_text("abcdx")).reason == "text ratio 80"  # exactly 80
    assert match_rule(rule, Action.type_text("abxyz")) is None  # 40
    strict = MatchRule("type", texts=("abcde",), text_threshold=80.1)
    assert match_rule(strict, Action.type_text("abcdx")) is None


def test_text_matches_any_accepted_variant():
    rule = MatchRule("type", texts=("see you on Sunday", "see you sunday"))
    assert match_rule(rule, Action.type_text("see you Sunday")) is not None


@pytest.mark.parametrize("kind", ["back", "home", "wait"])
def test_keys_match_by_type(kind):
    rule = MatchRule(kind)
    assert match_rule(rule, Action(kind)).reason == f"type {kind}"
    other = "home" if kind != "home" else "back"
    assert match_rule(rule, Action(other)) is None


def edge(edge_id: str, rule: MatchRule) -> Edge:
    return Edge(edge_id, "a", f"to_{edge_id}", rule)


def test_bounds_beat_points_and_smaller_bounds_win():
    edges = [
        edge("near_point", MatchRule("tap", points=((505, 505),))),
        edge("big", MatchRule("tap", bounds=Bounds(0, 0, 1000, 1000))),
        edge("small", MatchRule("tap", bounds=Bounds(450, 450, 550, 550))),
    ]
    assert match_edges(edges, tap(500, 500)).edge.id == "small"


def test_nearest_point_wins_among_radius_matches():
    edges = [
        edge("far", MatchRule("tap", points=((540, 500),))),
        edge("near", MatchRule("tap", points=((510, 500),))),
    ]
    m = match_edges(edges, tap(500, 500))
    assert (m.edge.id, m.reason) == ("near", "within 10.0 of point")


def test_unmatched_explains_why():
    edges = [edge("e", MatchRule("tap", points=((500, 500),)))]
    m = match_edges(edges, tap(500, 600))
    assert not m.matched
    assert m.reason == "no tap edge here: nearest target 100.0 away"
    assert match_edges(edges, Action.back()).reason == "no outgoing back edge"
