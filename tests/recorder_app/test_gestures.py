"""Mirror geometry and gesture classes (pure functions)."""

from __future__ import annotations

import pytest

from evaluator.matching import swipe_direction
from graph_builder.model import Action, ActionType
from recorder_app.qt.gestures import (
    GestureKind,
    Rect,
    clamp_to_device,
    classify_gesture,
    device_to_widget,
    fit_rect,
    gesture_action,
    widget_to_device,
)


def test_fit_rect_keeps_aspect_and_centres():
    assert fit_rect((1080, 2400), (500, 500)) == Rect(137.5, 0.0, 225.0, 500.0)
    assert fit_rect((1000, 500), (500, 500)) == Rect(0.0, 125.0, 500.0, 250.0)
    assert fit_rect((0, 10), (5, 5)).width == 0


def test_widget_device_round_trip_and_letterbox():
    rect = fit_rect((1080, 2400), (500, 500))
    assert widget_to_device(10, 250, rect, (1080, 2400)) is None  # on the letterbox
    x, y = widget_to_device(250, 250, rect, (1080, 2400))
    assert (x, y) == (540, 1200)
    wx, wy = device_to_widget(x, y, rect, (1080, 2400))
    assert (wx, wy) == pytest.approx((250, 250))
    assert clamp_to_device(9999, -50, rect, (1080, 2400)) == (1079, 0)


@pytest.mark.parametrize(
    ("release", "held", "kind"),
    [
        ((105, 100), 100, GestureKind.TAP),
        ((105, 100), 700, GestureKind.LONG_PRESS),
        ((100, 143), 100, GestureKind.TAP),  # 43 px: under 4% of 1080
        ((100, 143), 700, GestureKind.LONG_PRESS),
        ((100, 144), 100, GestureKind.SWIPE),  # 44 px: a swipe the matcher takes
        ((100, 160), 900, GestureKind.SWIPE),
    ],
)
def test_classify_gesture(release, held, kind):
    assert classify_gesture((100, 100), release, held_ms=held, device_size=(1080, 2400)) is kind


def test_a_drag_is_a_swipe_exactly_when_the_matcher_takes_it():
    for screen in ((1080, 2400), (2400, 1080), (720, 1280), (1000, 1000)):
        for length in range(30, 60):
            kind = classify_gesture(
                (300, 300), (300, 300 + length), held_ms=100, device_size=screen
            )
            swipe = Action.swipe(300, 300, 300, 300 + length, screen=screen)
            taken = swipe_direction(swipe.normalized(), screen) is not None
            assert (kind is GestureKind.SWIPE) == taken, (screen, length)


def test_gesture_action_is_in_device_pixels():
    swipe = gesture_action(
        GestureKind.SWIPE, (500, 1800), (500, 600), held_ms=40, device_size=(1080, 2400)
    )
    assert swipe.type is ActionType.SWIPE and swipe.direction == "up"
    assert swipe.duration_ms == 100 and swipe.screen == (1080, 2400)
    press = gesture_action(
        GestureKind.LONG_PRESS, (5, 6), (5, 6), held_ms=650, device_size=(1080, 2400)
    )
    assert press.type is ActionType.LONG_PRESS and (press.x, press.y) == (5, 6)
