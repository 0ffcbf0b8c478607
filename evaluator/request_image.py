"""The image a chat request carries: a screenshot shrunk to the family's size, encoded,
as an ``image_url`` content part.

Preparing it is most of the harness's own time in a step (benchmarks/
bench_agent_overhead.py), so it is done as little and as cheaply as the pixels allow:

- once per screen (kept on the ``Screen``) and, for a screenshot read from a file, once
  per file in this process: the episodes of a run, its instruction variants and its
  trials revisit the same graph nodes. A file replaced or rewritten is a new key (its
  inode, size and modification time are part of it), so a stale image is never sent;
- a PNG that needs no shrinking is sent as captured, never decoded;
- a shrunk image is written as a PNG with no row filter at zlib's fastest level. PNG is
  lossless, so the model gets exactly the pixels Pillow's encoder would give it, for a
  fraction of the time: Pillow tries five row filters on every row.

The shrink itself is Pillow's bicubic resize (its default filter, the one the
``max_image_side`` rule has always used): the pixels a family's model sees are unchanged.
"""

from __future__ import annotations

import base64
import io
import os
import struct
import threading
import zlib
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from PIL import Image

if TYPE_CHECKING:
    from graph_builder.screen import Screen

__all__ = [
    "content_part",
    "encode",
    "encode_png",
    "image_part",
    "png_header_size",
    "screen_part",
    "shrink",
]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Pillow modes written directly: (PNG colour type, bytes per pixel), all 8 bits deep.
_PNG_MODES = {"L": (0, 1), "RGB": (2, 3), "RGBA": (6, 4)}
# Request images kept per screenshot file (a 1024 px PNG screen is some 100 kB of text).
FILE_CACHE_ENTRIES = 512

Part = tuple[dict[str, Any], tuple[int, int]]


def shrink(image: Image.Image, max_side: int | None) -> Image.Image:
    """``image`` shrunk (bicubic) so its longer side fits ``max_side``; as is when it fits."""
    if not max_side or max(image.size) <= max_side:
        return image
    scale = max_side / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.BICUBIC)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(image: Image.Image) -> bytes:
    """A PNG of ``image``: 8-bit grey, RGB or RGBA rows unfiltered, deflated at level 1.

    Lossless like every PNG; other modes go through Pillow's own encoder."""
    mode = _PNG_MODES.get(image.mode)
    if mode is None:
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", compress_level=1)
        return buffer.getvalue()
    colour, channels = mode
    width, height = image.size
    pixels = memoryview(image.tobytes())
    stride = width * channels
    # Each row starts with its filter type: 0, none.
    rows = b"".join(b"\0" + pixels[y * stride : (y + 1) * stride] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    return (
        PNG_SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows, 1))
        + _chunk(b"IEND", b"")
    )


def encode(image: Image.Image, fmt: str = "PNG") -> tuple[bytes, str]:
    """``image`` encoded as ``fmt`` (PNG or JPEG; any other format Pillow writes), and
    its MIME type."""
    fmt = fmt.upper()
    if fmt == "PNG":
        return encode_png(image), "image/png"
    buffer = io.BytesIO()
    if fmt == "JPEG":
        image.convert("RGB").save(buffer, format=fmt)
        return buffer.getvalue(), "image/jpeg"
    image.save(buffer, format=fmt)
    return buffer.getvalue(), f"image/{fmt.lower()}"


def content_part(data: bytes, mime: str) -> dict[str, Any]:
    """An ``image_url`` content part carrying ``data`` as a base64 data URL."""
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


def image_part(image: Image.Image, *, max_side: int | None = 1024, fmt: str = "PNG") -> Part:
    """An ``image_url`` content part holding ``image`` (shrunk so its longer side fits
    ``max_side``), and the size actually sent (pixel-space models answer in it)."""
    sent = shrink(image, max_side)
    data, mime = encode(sent, fmt)
    return content_part(data, mime), (sent.width, sent.height)


def png_header_size(png: bytes) -> tuple[int, int] | None:
    """The width and height a PNG's header states (None: not a PNG), without decoding.

    >>> png_header_size(PNG_SIGNATURE + b"\\0\\0\\0\\rIHDR" + (1080).to_bytes(4, "big")
    ...                 + (2400).to_bytes(4, "big"))
    (1080, 2400)
    """
    if len(png) < 24 or not png.startswith(PNG_SIGNATURE) or png[12:16] != b"IHDR":
        return None
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


class _FileCache:
    """Request images by screenshot file and request shape, the least recently used
    dropped first. Safe to share between threads."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self._kept: OrderedDict[tuple[object, ...], Part] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> Part | None:
        with self._lock:
            part = self._kept.get(key)
            if part is not None:
                self._kept.move_to_end(key)
            return part

    def put(self, key: tuple[object, ...], part: Part) -> None:
        with self._lock:
            self._kept[key] = part
            self._kept.move_to_end(key)
            while len(self._kept) > self.entries:
                self._kept.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


FILE_CACHE = _FileCache(FILE_CACHE_ENTRIES)


def _file_key(screen: Screen, shape: tuple[object, ...]) -> tuple[object, ...] | None:
    """What identifies the screenshot file's content, or None (in memory only, or gone:
    then the screen's own reading says what is wrong)."""
    if screen.screenshot_path is None:
        return None
    try:
        st = os.stat(screen.screenshot_path)
    except OSError:
        return None
    path = os.path.abspath(screen.screenshot_path)
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, *shape)


def _prepare(screen: Screen, max_side: int | None, fmt: str) -> Part:
    if fmt == "PNG":
        png = screen.png()
        size = png_header_size(png)
        if size is not None and (not max_side or max(size) <= max_side):
            return content_part(png, "image/png"), size
    return image_part(screen.image(), max_side=max_side, fmt=fmt)


def screen_part(screen: Screen, *, max_side: int | None, fmt: str = "PNG") -> Part:
    """``image_part`` of a screen's screenshot, prepared once per screen and per file."""
    shape = (max_side, fmt.upper())

    def prepare() -> Part:
        key = _file_key(screen, shape)
        part = FILE_CACHE.get(key) if key is not None else None
        if part is None:
            part = _prepare(screen, max_side, fmt.upper())
            if key is not None:
                FILE_CACHE.put(key, part)
        return part

    return screen.derived("request_image", shape, prepare)
