"""Deciding when a screen has stopped changing, from successive screenshots.

Two screenshots "match" when their PNG bytes are equal, or when their coarse grey
thumbnails differ in only a handful of cells: a blinking text cursor or a ticking seconds
digit must not keep a real phone "busy" forever, while any screen transition, scroll or
dialog changes far more cells than that.

>>> screens_match(b"same", b"same")
True
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PIL import Image

# One thumbnail cell per 16x16 block: a 1080x2400 screen becomes 67x150 cells.
THUMBNAIL_FACTOR = 16
# A cell counts as changed when its mean grey level moved by more than this.
CELL_TOLERANCE = 12
# A text cursor (a few pixels wide, one line tall) touches at most about this many cells.
MAX_CHANGED_CELLS = 8


def _thumbnail(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("L").reduce(THUMBNAIL_FACTOR), dtype=np.int16)


def changed_cells(png_a: bytes, png_b: bytes) -> int:
    """How many thumbnail cells differ between two screenshots (all of them if sizes differ)."""
    if png_a == png_b:
        return 0
    return _changed(_thumbnail(png_a), _thumbnail(png_b))


def _changed(a: np.ndarray, b: np.ndarray) -> int:
    if a.shape != b.shape:
        return max(a.size, b.size)
    return int(np.count_nonzero(np.abs(a - b) > CELL_TOLERANCE))


def screens_match(png_a: bytes, png_b: bytes) -> bool:
    """True when two screenshots show the same screen, up to a blinking cursor."""
    return changed_cells(png_a, png_b) <= MAX_CHANGED_CELLS


@dataclass(frozen=True, slots=True)
class SettleResult:
    settled: bool
    screenshot: bytes  # the last screenshot taken
    taken_at: float  # its wall-clock time
    captures: int


# Two matching screenshots must be at least this far apart: an animation that moves in
# steps (or a phone's frame pacing) can show the same picture twice in quick succession.
MIN_GAP = 0.1


def wait_until_stable(
    capture: Callable[[], bytes],
    timeout: float,
    *,
    min_gap: float = MIN_GAP,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    wall: Callable[[], float] = time.time,
) -> SettleResult:
    """Capture until two consecutive screenshots match, or until ``timeout`` seconds pass.

    Consecutive captures start at least ``min_gap`` seconds apart. At least two captures
    are always taken, so a result always compares two screens.
    """
    deadline = clock() + timeout
    started = clock()
    previous = capture()
    previous_thumb: np.ndarray | None = None  # decoded once, kept for the next comparison
    captures = 1
    while True:
        wait = min_gap - (clock() - started)
        if wait > 0:
            sleep(wait)
        started = clock()
        current = capture()
        taken_at = wall()
        captures += 1
        if current == previous:
            return SettleResult(True, current, taken_at, captures)
        if previous_thumb is None:
            previous_thumb = _thumbnail(previous)
        current_thumb = _thumbnail(current)
        if _changed(previous_thumb, current_thumb) <= MAX_CHANGED_CELLS:
            return SettleResult(True, current, taken_at, captures)
        if clock() >= deadline:
            return SettleResult(False, current, taken_at, captures)
        previous, previous_thumb = current, current_thumb
