"""The coordinate space a model family answers in, and the image it is sent.

Three kinds of space occur in the published families:

- ``relative``: 0..scale on both axes whatever the image (UI-TARS 1.0, AutoGLM: 1000;
  Qwen3-VL: 999, its reference code divides by 999);
- ``resized``: absolute pixels of the image the model saw after its processor's
  ``smart_resize`` (UI-TARS 1.5, Qwen2.5-VL, GUI-Owl), which rounds both sides to a
  multiple of ``factor`` and keeps the pixel count within ``[min_pixels, max_pixels]``;
- ``image``: pixels of the image as sent (Mobile-Agent-v2 gives the model the width and
  height of the screenshot).

>>> QWEN25_RESIZE(1080, 2400)
(1092, 2408)
>>> CoordinateSpace.relative(999).size_for((1080, 2400))
(999, 999)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from graph_builder.model import Size

_MAX_RATIO = 200


@dataclass(frozen=True, slots=True)
class SmartResize:
    """The Qwen-VL image processor's resize rule (qwen-vl-utils ``smart_resize``).

    Both sides are rounded to the nearest multiple of ``factor``; when the area then falls
    outside ``[min_pixels, max_pixels]`` the image is scaled by the square root of the
    ratio, flooring (too large) or ceiling (too small) to the factor. GUI-Owl's own copy
    first caps the longer side at ``max_long_side``.
    """

    factor: int
    min_pixels: int
    max_pixels: int
    max_long_side: int | None = None

    def __call__(self, width: int, height: int) -> Size:
        """The (width, height) the model sees for an image of ``width`` x ``height``."""
        if width < 1 or height < 1:
            raise ValueError(f"image size {width}x{height} must be positive")
        if max(width, height) / min(width, height) > _MAX_RATIO:
            raise ValueError(f"aspect ratio of {width}x{height} is above {_MAX_RATIO}")
        h, w = float(height), float(width)
        if self.max_long_side and max(h, w) > self.max_long_side:
            beta = max(h, w) / self.max_long_side
            h, w = float(int(h / beta)), float(int(w / beta))
        f = self.factor
        h_bar = max(f, round(h / f) * f)
        w_bar = max(f, round(w / f) * f)
        if h_bar * w_bar > self.max_pixels:
            beta = math.sqrt(h * w / self.max_pixels)
            h_bar = max(f, math.floor(h / beta / f) * f)
            w_bar = max(f, math.floor(w / beta / f) * f)
        elif h_bar * w_bar < self.min_pixels:
            beta = math.sqrt(self.min_pixels / (h * w))
            h_bar = math.ceil(h * beta / f) * f
            w_bar = math.ceil(w * beta / f) * f
        return int(w_bar), int(h_bar)

    def describe(self) -> str:
        side = f", longer side <= {self.max_long_side}" if self.max_long_side else ""
        return (
            f"smart_resize(factor {self.factor}, pixels {self.min_pixels}..{self.max_pixels}{side})"
        )


# UI-TARS 1.5 (bytedance/UI-TARS codes/ui_tars/action_parser.py: IMAGE_FACTOR, MIN_PIXELS,
# MAX_PIXELS).
UITARS_RESIZE = SmartResize(28, 100 * 28 * 28, 16384 * 28 * 28)
# Qwen2.5-VL's processor defaults (min_pixels 3136 = 4 * 28 * 28, max_pixels 12845056 =
# 16384 * 28 * 28), which the QwenLM cookbook's mobile agent passes to smart_resize.
QWEN25_RESIZE = SmartResize(28, 4 * 28 * 28, 16384 * 28 * 28)
# GUI-Owl (X-PLUG/MobileAgent Mobile-Agent-v3 .../agents/coordinate_resize.py
# update_image_size_: 14 px patches merged 2x2, 1..12800 tokens, longer side <= 50000).
GUI_OWL_RESIZE = SmartResize(28, 784, 784 * 12800, 50000)

# GUI-Owl 1.5's mobile runner (X-PLUG/MobileAgent Mobile-Agent-v3.5/mobile_use/
# run_gui_owl_1_5_for_mobile.py): the screenshot's sides rounded to multiples of 16, by
# which it scales the model's 0-1000 answers.
GUI_OWL15_RUNNER_ROUNDING = SmartResize(16, 3136, 1003520 * 200)

SpaceKind = Literal["relative", "resized", "image"]


@dataclass(frozen=True, slots=True)
class CoordinateSpace:
    kind: SpaceKind
    scale: int = 1000  # relative spaces run from 0 to ``scale``
    resize: SmartResize | None = None

    def __post_init__(self) -> None:
        if (self.kind == "resized") != (self.resize is not None):
            raise ValueError("a resized space, and only it, needs a resize rule")

    @classmethod
    def relative(cls, scale: int = 1000) -> CoordinateSpace:
        return cls("relative", scale=scale)

    @classmethod
    def resized(cls, rule: SmartResize) -> CoordinateSpace:
        return cls("resized", resize=rule)

    @classmethod
    def image(cls) -> CoordinateSpace:
        return cls("image")

    def size_for(self, sent: Size) -> Size:
        """The (width, height) the model's coordinates run over, for an image sent at ``sent``."""
        if self.kind == "relative":
            return (self.scale, self.scale)
        if self.resize is not None:
            return self.resize(int(sent[0]), int(sent[1]))
        return (int(sent[0]), int(sent[1]))

    def describe(self, sent: Size | None = None) -> str:
        """A short line for traces and docs: ``relative 0-999``, ``pixels of the ... image``."""
        if self.kind == "relative":
            return f"relative 0-{self.scale}"
        if self.resize is not None:
            where = f" {'x'.join(map(str, self.size_for(sent)))}" if sent else ""
            return f"pixels of the{where} image after {self.resize.describe()}"
        where = f" {sent[0]}x{sent[1]}" if sent else ""
        return f"pixels of the{where} image as sent"


def sent_size(screen: Size, max_side: int | None) -> Size:
    """The size of a ``screen``-sized screenshot after shrinking its longer side to ``max_side``
    (the rule of ``evaluator.request_image.shrink``)."""
    w, h = int(screen[0]), int(screen[1])
    if max_side and max(w, h) > max_side:
        scale = max_side / max(w, h)
        return max(1, round(w * scale)), max(1, round(h * scale))
    return w, h
