"""A finger that keeps the virtual phone's screen moving, for the mirror benchmarks.

It drags the Settings list up and down with touch events at ``FINGER_HZ``, so the screen
changes faster than any mirror's ``max_fps``: the frames a mirror shows per second are then
bounded by the mirror, not by how often the screen changes.
"""

from __future__ import annotations

import threading

from virtual_phone import VirtualPhone

SCROLL_TOP, SCROLL_BOTTOM = 800, 1900
FINGER_HZ = 60


def drag_forever(phone: VirtualPhone, stop: threading.Event) -> None:
    """Scroll the list up and down with touch events until ``stop`` is set."""
    x, y, step = 540, SCROLL_BOTTOM, -24
    phone.touch("down", x, y, 0)
    while not stop.wait(1 / FINGER_HZ):
        y += step
        if not SCROLL_TOP <= y <= SCROLL_BOTTOM:
            phone.touch("up", x, y - step, 0)
            step = -step
            y += 2 * step
            phone.touch("down", x, y, 0)
        phone.touch("move", x, y, 0)
    phone.touch("up", x, y, 0)
