"""The perceptual hash of a screenshot, with the status bar and other volatile regions masked.

The recorder computes it once at capture time and stores it on the Observation; the graph
builder reuses it and decodes no PNG when it is present. The string carries the method and
size (``"phash16:<hex>"``) so that a hash made with other settings is recognised and
recomputed instead of being compared with an incompatible one.

>>> from PIL import ImageDraw
>>> def screenshot(clock, title=(30, 90, 160)):  # a title bar under the status bar
...     image = Image.new("RGB", (270, 600), "white")
...     draw = ImageDraw.Draw(image)
...     draw.rectangle((0, 21, 270, 70), fill=title)
...     draw.text((4, 2), clock, fill="black")
...     return image
>>> digest = compute_phash(screenshot("12:00"))
>>> digest[:8], digest == compute_phash(screenshot("12:59"))  # the clock is masked
('phash16:', True)
>>> digest == compute_phash(screenshot("12:00", title=(160, 60, 30)))
False
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable

import numpy as np
from PIL import Image, ImageDraw

from graph_builder.errors import FormatError
from graph_builder.hierarchy import Hierarchy, UIElement
from graph_builder.settings import SimilaritySettings

# The three hashes of the ImageHash library (4.3), which defined the stored "phash16:..."
# strings; written here with numpy alone (the library pulls in SciPy and PyWavelets for one
# DCT). tests/graph_builder/test_phash.py recomputes every hash stored in the sample suite,
# all made by the library, and requires them bit for bit. Definitions: pHash as in
# hackerfactor.com's "Looks Like It" (the unnormalized DCT-II of a 4x larger grey image,
# the low-frequency block against its median), dHash as in "Kind of Like That" (each pixel
# brighter than its left neighbour), aHash (each pixel brighter than the mean).
_PHASH_FACTOR = 4


def _grey(image: Image.Image, width: int, height: int) -> np.ndarray:
    return np.asarray(image.convert("L").resize((width, height), Image.Resampling.LANCZOS))


@functools.lru_cache(maxsize=8)
def _dct_rows(size: int, keep: int) -> np.ndarray:
    """The first ``keep`` rows of the unnormalized DCT-II matrix of order ``size``
    (``y[k] = 2 * sum x[n] cos(pi k (2n + 1) / 2N)``, SciPy's ``dct`` type 2)."""
    k = np.arange(keep)[:, None]
    n = np.arange(size)[None, :]
    return 2.0 * np.cos(np.pi * k * (2 * n + 1) / (2 * size))


def _phash_bits(image: Image.Image, size: int) -> np.ndarray:
    side = size * _PHASH_FACTOR
    pixels = _grey(image, side, side).astype(np.float64)
    rows = _dct_rows(side, size)
    low = rows @ pixels @ rows.T  # the DCT along both axes, low frequencies only
    return low > np.median(low)


def _dhash_bits(image: Image.Image, size: int) -> np.ndarray:
    pixels = _grey(image, size + 1, size)
    return pixels[:, 1:] > pixels[:, :-1]


def _average_bits(image: Image.Image, size: int) -> np.ndarray:
    pixels = _grey(image, size, size)
    return pixels > np.mean(pixels)


def bits_to_hex(bits: np.ndarray) -> str:
    """Row-major bits as hex digits, the first bit the most significant, zero-padded."""
    flat = bits.flatten()
    value = int("".join("1" if b else "0" for b in flat), 2)
    return f"{value:0{-(-flat.size // 4)}x}"


HASHERS: dict[str, Callable[[Image.Image, int], np.ndarray]] = {
    "phash": _phash_bits,
    "dhash": _dhash_bits,
    "average": _average_bits,
}

SYSTEM_UI_PACKAGE = "com.android.systemui"
_STATUS_BAR_IDS = ("status_bar", "statusBarBackground", "status_bar_container")
_NAV_BAR_IDS = ("navigation_bar_frame", "navigationBarBackground", "navigation_bar")


def hash_prefix(settings: SimilaritySettings) -> str:
    """The prefix naming how a hash was made, e.g. ``"phash16"``."""
    return f"{settings.hash_method}{settings.hash_size}"


def hash_bits(value: str, settings: SimilaritySettings) -> int | None:
    """The hash as an integer, or None when it was made with other settings (or is malformed)."""
    prefix, sep, digits = value.partition(":")
    if not sep or prefix != hash_prefix(settings):
        return None
    try:
        return int(digits, 16)
    except ValueError:
        return None


def compute_phash(
    image: Image.Image | bytes,
    hierarchy: Hierarchy | None = None,
    *,
    settings: SimilaritySettings | None = None,
) -> str:
    """Hash a screenshot (a PIL image or PNG bytes) with its volatile regions masked.

    The status bar is taken from the hierarchy (System UI elements at the top, or a
    ``status_bar`` resource id) when it is there, else from a band of
    ``settings.status_bar_band`` of the height; the navigation bar likewise at the bottom.
    ``settings.volatile_regions`` (boxes in ``[0,1000]`` space) are filled with grey.
    """
    settings = settings or SimilaritySettings()
    if isinstance(image, bytes | bytearray):
        try:
            image = Image.open(io.BytesIO(image))
            image.load()
        except (OSError, Image.DecompressionBombError) as exc:
            raise FormatError(f"cannot decode the screenshot: {exc}") from exc
    width, height = image.size
    top, bottom = masked_bands(width, height, hierarchy, settings)
    gray = image.convert("L").crop((0, top, width, bottom))
    # A cheap box downscale first: the hashers resize again, but from a small image.
    side = settings.hash_size * 8
    small = gray.resize((side, side), Image.Resampling.BOX)
    if settings.volatile_regions:
        draw = ImageDraw.Draw(small)
        span = max(bottom - top, 1)
        for left, rtop, right, rbottom in settings.volatile_regions:
            # [0,1000] of the full screen -> pixels of the cropped, resized image.
            y0 = (rtop / 1000 * height - top) / span * side
            y1 = (rbottom / 1000 * height - top) / span * side
            draw.rectangle((left / 1000 * side, y0, right / 1000 * side, y1), fill=128)
    digest = bits_to_hex(HASHERS[settings.hash_method](small, settings.hash_size))
    return f"{hash_prefix(settings)}:{digest}"


def masked_bands(
    width: int, height: int, hierarchy: Hierarchy | None, settings: SimilaritySettings
) -> tuple[int, int]:
    """The rows ``[top, bottom)`` kept for hashing: the status and navigation bars cut off."""
    status = [
        e
        for e in _system_bars(hierarchy, _STATUS_BAR_IDS)
        if e.bounds.top <= height * 0.02 and e.bounds.height <= height * 0.1
    ]
    nav = [
        e
        for e in _system_bars(hierarchy, _NAV_BAR_IDS)
        if e.bounds.bottom >= height * 0.9 and e.bounds.height <= height * 0.15
    ]
    band_top = round(height * settings.status_bar_band)
    band_bottom = round(height * (1 - settings.nav_bar_band))
    top = max((int(e.bounds.bottom) for e in status), default=band_top)
    bottom = min((int(e.bounds.top) for e in nav), default=band_bottom)
    if bottom - top < height // 4:  # nonsense bars: fall back to the bands
        return band_top, band_bottom
    return top, bottom


def _system_bars(hierarchy: Hierarchy | None, ids: tuple[str, ...]) -> list[UIElement]:
    if hierarchy is None:
        return []
    return [
        e
        for e in hierarchy.elements
        if e.bounds.area > 0
        and (
            e.resource_id.rpartition("/")[2] in ids
            or (e.package == SYSTEM_UI_PACKAGE and e.parent is None and ids is _STATUS_BAR_IDS)
        )
    ]
