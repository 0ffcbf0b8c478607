"""Pure geometry for the mirror: letterboxing, widget <-> device mapping, gesture classes.

No Qt here: the mirror widget feeds plain numbers in, so the rules are easy to test.

>>> fit_rect((540, 1200), (600, 600))
Rect(x=165.0, y=0.0, width=270.0, height=600.0)
>>> classify_gesture((10, 10), (50, 10), held_ms=120, device_size=(1080, 2400))
<GestureKind.TAP: 'tap'>
>>> classify_gesture((10, 10), (60, 10), held_ms=120, device_size=(1080, 2400))
<GestureKind.SWIPE: 'swipe'>
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from graph_builder.model import Action, ElementRef, Size, reaches_swipe

LONG_PRESS_MS = 500  # a press held this long is a long press
MIN_SWIPE_MS = 100  # device-side duration floor, so a flick is still a swipe
MAX_SWIPE_MS = 2000


@dataclass(frozen=True, slots=True)
class Rect:
    x: float
    y: float
    width: float
    height: float

    def contains(self, px: float, py: float) -> bool:
        return self.x <= px < self.x + self.width and self.y <= py < self.y + self.height


def fit_rect(content: tuple[int, int], area: tuple[int, int]) -> Rect:
    """The largest rectangle with ``content``'s aspect ratio centred in ``area``."""
    cw, ch = content
    aw, ah = area
    if cw <= 0 or ch <= 0 or aw <= 0 or ah <= 0:
        return Rect(0.0, 0.0, 0.0, 0.0)
    scale = min(aw / cw, ah / ch)
    w, h = cw * scale, ch * scale
    return Rect((aw - w) / 2, (ah - h) / 2, w, h)


def widget_to_device(
    px: float, py: float, rect: Rect, device_size: tuple[int, int]
) -> tuple[int, int] | None:
    """Device pixel under a widget point, or None when the point is on the letterbox."""
    if rect.width <= 0 or not rect.contains(px, py):
        return None
    dw, dh = device_size
    x = int((px - rect.x) * dw / rect.width)
    y = int((py - rect.y) * dh / rect.height)
    return min(max(x, 0), dw - 1), min(max(y, 0), dh - 1)


def clamp_to_device(
    px: float, py: float, rect: Rect, device_size: tuple[int, int]
) -> tuple[int, int]:
    """Like ``widget_to_device`` but clamped to the screen (a swipe may end off it)."""
    cx = min(max(px, rect.x), rect.x + rect.width - 1e-6)
    cy = min(max(py, rect.y), rect.y + rect.height - 1e-6)
    point = widget_to_device(cx, cy, rect, device_size)
    assert point is not None
    return point


def device_to_widget(
    x: float, y: float, rect: Rect, device_size: tuple[int, int]
) -> tuple[float, float]:
    dw, dh = device_size
    return rect.x + x * rect.width / dw, rect.y + y * rect.height / dh


class GestureKind(StrEnum):
    TAP = "tap"
    LONG_PRESS = "long_press"
    SWIPE = "swipe"


def classify_gesture(
    press: tuple[int, int],
    release: tuple[int, int],
    *,
    held_ms: float,
    device_size: Size,
    long_press_ms: float = LONG_PRESS_MS,
) -> GestureKind:
    """Tap, long press or swipe, from device-pixel positions and how long the press lasted.

    A drag is a swipe by the matcher's own rule (``reaches_swipe``), so every recorded
    swipe can be matched by an agent repeating it; a shorter one is a tap or long press.
    """
    if reaches_swipe(press, release, device_size):
        return GestureKind.SWIPE
    if held_ms >= long_press_ms:
        return GestureKind.LONG_PRESS
    return GestureKind.TAP


def gesture_action(
    kind: GestureKind,
    start: tuple[int, int],
    end: tuple[int, int],
    *,
    held_ms: float,
    device_size: tuple[int, int],
    element: ElementRef | None = None,
) -> Action:
    """The Action a gesture stands for, in device pixels."""
    if kind is GestureKind.SWIPE:
        duration = int(min(max(held_ms, MIN_SWIPE_MS), MAX_SWIPE_MS))
        return Action.swipe(*start, *end, screen=device_size, duration_ms=duration)
    if kind is GestureKind.LONG_PRESS:
        return Action.long_press(
            *start, screen=device_size, duration_ms=int(max(held_ms, 800)), element=element
        )
    return Action.tap(*start, screen=device_size, element=element)
