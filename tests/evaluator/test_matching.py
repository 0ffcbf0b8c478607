"""Every matching rule at its boundary, and the choice between competing edges."""

from __future__ import annotations

import pytest

from evaluator.matching import (
    exact,
    match_edges,
    match_rule,
    normalize_text,
    profile_named,
    swipe_direction,
)
from graph_builder.model import NORMALIZED_SCREEN, Action, Bounds, Edge, MatchRule, SwipeDirection

N = NORMALIZED_SCREEN


def tap(x: float, y: float) -> Action:
    return Action.tap(x, y, screen=N)


@pytest.mark.parametrize(
    ("dx", "shown"),
    [(49.0, "49"), (50.0, "50"), (51.0, None), (49.999, "49.99"), (50.001, None)],
)
def test_radius_is_inclusive_at_exactly_fifty_units(dx, shown):
    rule = MatchRule("tap", points=((500, 500),))
    result = match_rule(rule, tap(500 + dx, 500))
    assert (result is not None) is (shown is not None)
    if shown is not None:  # a distance inside the radius is never printed above it
        assert result.reason == f"within {shown} of point"


def test_radius_is_euclidean_in_normalized_space():
    rule = MatchRule("tap", points=((500, 500),))
    assert match_rule(rule, tap(530, 540)).reason == "within 50 of point"  # 3-4-5 triangle
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
    assert match_rule(rule, press).reason == "within 40 of point"
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
    assert (m.edge.id, m.reason) == ("near", "within 10 of point")


def test_unmatched_explains_why():
    edges = [edge("e", MatchRule("tap", points=((500, 500),)))]
    m = match_edges(edges, tap(500, 600))
    assert not m.matched
    assert m.reason == "no tap edge here: 50 outside the nearest tolerance (edge e)"
    assert match_edges(edges, Action.back()).reason == "no outgoing back edge"


def test_the_miss_distance_is_to_the_tolerance_and_never_rounds_to_zero():
    edges = [
        edge("pt", MatchRule("tap", points=((500, 500),))),  # accepts up to 50 away
        edge("box", MatchRule("tap", bounds=Bounds(100, 100, 200, 200))),
    ]
    assert match_edges(edges, tap(500, 567.9)).reason.startswith(
        "no tap edge here: 17.9 outside the nearest tolerance (edge pt)"
    )
    assert "0.01 outside" in match_edges(edges, tap(550.001, 500)).reason
    assert "5 outside the nearest tolerance (edge box)" in match_edges(edges, tap(205, 150)).reason


def test_texts_are_compared_after_nfkc_casefold_and_whitespace():
    rule = MatchRule("type", texts=("Tom",), text_threshold=100)
    assert match_rule(rule, Action.type_text("tom")).reason == "text ratio 100"
    assert match_rule(rule, Action.type_text("  ＴＯＭ ")) is not None  # full-width letters
    spaced = MatchRule("type", texts=("see you  Sunday",), text_threshold=100)
    assert match_rule(spaced, Action.type_text("See\tyou sunday")) is not None
    assert normalize_text("Straße  ﬁne") == "strasse fine"


def test_the_best_ratio_is_printed_exactly_and_never_above_the_threshold():
    accepted = "a" * 200
    typed = "a" * 159 + "b" * 41  # indel distance 82 of 400 characters: ratio 79.5
    edges = [edge("t", MatchRule("type", texts=(accepted,)))]
    reason = match_edges(edges, Action.type_text(typed)).reason
    assert reason == "typed text matches no edge (best ratio 79.5, needs 80)"
    assert exact(79.999) == "79.99" and exact(80.0) == "80"


def test_swipe_direction_is_decided_in_device_pixels():
    rule = MatchRule("swipe", direction="down")
    # 100 px right and 150 px down on 1080x2400 is mostly down (in [0,1000] it was "right")
    swipe = Action.swipe(500, 1000, 600, 1150, screen=(1080, 2400))
    assert swipe_direction(swipe, (1080, 2400)) is SwipeDirection.DOWN
    assert match_rule(rule, swipe, screen=(1080, 2400)).reason == "direction down"
    # an agent's [0,1000] swipe is taken to the device's pixels first
    agent = Action.swipe(500, 500, 593, 562, screen=N)  # 100 px right, 149 px down
    assert match_rule(rule, agent, screen=(1080, 2400)) is not None


def test_a_swipe_shorter_than_the_minimum_has_no_direction():
    edges = [edge("s", MatchRule("swipe", direction="down"))]
    zero = Action.swipe(540, 1200, 540, 1200, screen=(1080, 2400))
    assert swipe_direction(zero, (1080, 2400)) is None
    m = match_edges(edges, zero, screen=(1080, 2400))
    assert not m.matched
    assert m.reason == "swipe of 0 px is shorter than 43.2 px and has no direction (expected down)"
    # judged in the whole pixels the device moves: 4% of 1080 is 43.2, the device does 43
    fraction = Action.swipe(540, 1200, 540, 1243.2, screen=(1080, 2400))
    m = match_edges(edges, fraction, screen=(1080, 2400))
    assert m.reason == "swipe of 43 px is shorter than 43.2 px and has no direction (expected down)"
    just = Action.swipe(540, 1200, 540, 1243.6, screen=(1080, 2400))  # the device does 44
    assert match_edges(edges, just, screen=(1080, 2400)).matched


def test_wait_without_a_wait_edge_stays_and_with_one_follows_it():
    m = match_edges([edge("b", MatchRule("back"))], Action.wait())
    assert not m.matched and m.stays
    assert m.reason == "wait: no wait edge here, stays on the node"
    assert match_edges([edge("w", MatchRule("wait"))], Action.wait()).edge.id == "w"
    assert not match_edges([edge("b", MatchRule("back"))], Action.home()).stays


def test_an_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="unknown matching profile 'x'; choose from: elderbench"):
        profile_named("x")


def test_a_self_loop_gives_way_to_an_edge_that_makes_progress():
    # A tap that once did nothing (START -> START) and once reached DONE, at the same point.
    loop = Edge("loop", "start", "start", MatchRule("tap", bounds=Bounds(450, 450, 550, 550)))
    ahead = Edge("ahead", "start", "done", MatchRule("tap", points=((520, 500),)))
    assert match_edges([loop, ahead], tap(500, 500)).edge.id == "ahead"
    assert match_edges([ahead, loop], tap(500, 500)).edge.id == "ahead"
    assert match_edges([loop, ahead], tap(460, 540)).edge.id == "loop"  # only the loop accepts
