"""Screen geometry: screen sizes, points, the one conversion between spaces, rectangles.

Actions are stored in the pixels of the screen they were taken on; agents speak the
normalized ``[0,1000]`` space (``NORMALIZED_SCREEN``).

>>> rescale_point(540, 1200, (1080, 2400), NORMALIZED_SCREEN)
(500.0, 500.0)
>>> Bounds(0, 0, 100, 40).contains(50, 39.5), Bounds(0, 0, 100, 40).contains(50, 40)
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass

from graph_builder.errors import RecordError
from graph_builder.model._json import num

NORMALIZED_SCREEN: tuple[int, int] = (1000, 1000)

Size = tuple[int, int]
Point = tuple[float, float]


def rescale_point(x: float, y: float, src: Size, dst: Size) -> Point:
    """Convert a point between two screen spaces (device pixels, ``[0,1000]``, ...)."""
    return x * dst[0] / src[0], y * dst[1] / src[1]


@dataclass(frozen=True, slots=True)
class Bounds:
    """An axis-aligned rectangle; ``right``/``bottom`` are exclusive, as in uiautomator."""

    left: float
    top: float
    right: float
    bottom: float

    def __post_init__(self) -> None:
        if self.right < self.left or self.bottom < self.top:
            raise RecordError(f"bounds {self.as_list()} have negative width or height")

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def area(self) -> float:
        return self.width * self.height

    @property
    def center(self) -> Point:
        return (self.left + self.right) / 2, (self.top + self.bottom) / 2

    def contains(self, x: float, y: float) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom

    def rescaled(self, src: Size, dst: Size) -> Bounds:
        left, top = rescale_point(self.left, self.top, src, dst)
        right, bottom = rescale_point(self.right, self.bottom, src, dst)
        return Bounds(left, top, right, bottom)

    def as_list(self) -> list[float | int]:
        return [num(v) for v in (self.left, self.top, self.right, self.bottom)]

    @classmethod
    def from_list(cls, value: object) -> Bounds:
        if (
            not isinstance(value, list)
            or len(value) != 4
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        ):
            raise RecordError(f"bounds must be [left, top, right, bottom], got {value!r}")
        return cls(*(float(v) for v in value))
