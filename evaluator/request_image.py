"""The image a chat request carries: a screenshot shrunk to the family's size, encoded,
as an ``image_url`` content part.

Preparing it is most of the harness's own time in a step (benchmarks/
bench_agent_overhead.py), so it is done as little and as cheaply as the pixels allow:

- once per screen (kept on the ``Screen``) and, for a screenshot read from a file, once
  per file in this process: the episodes of a run, its instruction variants and its
  trials revisit the same graph nodes. A file replaced or rewritten is a new key (its
  inode, size and modification time are part of it), so a stale image is never sent;
- offline, while the model is asked about a step, the screens that step can lead to are
  prepared in the background (``prepare_ahead``), and a step that reaches a screen being
  prepared waits for that preparation instead of repeating it;
- a PNG that needs no shrinking is sent as captured, never decoded;
- a shrunk image is written as a PNG with no row filter at zlib's fastest level. PNG is
  lossless, so the model gets exactly the pixels Pillow's encoder would give it, in
  30-50% less time: Pillow tries five row filters on every row.

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
from collections.abc import Callable, Sequence
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
    "prepare_ahead",
    "screen_part",
    "shrink",
]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Pillow modes written directly: (PNG colour type, bytes per pixel), all 8 bits deep.
_PNG_MODES = {"L": (0, 1), "RGB": (2, 3), "RGBA": (6, 4)}
# Characters of request images kept per screenshot file (a 1024 px PNG of a phone screen
# is some 100 kB of base64; a full-size photo-like screenshot a few MB).
FILE_CACHE_CHARS = 256 * 1024 * 1024
# How long a step waits for the same image being prepared by another thread, in seconds.
PREPARE_DEADLINE = 30.0
# Screens prepared ahead per step at most, and how long the idle preparer thread stays.
AHEAD_SCREENS = 4
AHEAD_IDLE_SECONDS = 30.0

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
    dropped first beyond ``chars`` characters; one preparation per key at a time. Safe to
    share between threads."""

    def __init__(self, chars: int) -> None:
        self.chars = chars
        self._kept: OrderedDict[tuple[object, ...], Part] = OrderedDict()
        self._size = 0
        self._preparing: dict[tuple[object, ...], threading.Event] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> Part | None:
        with self._lock:
            part = self._kept.get(key)
            if part is not None:
                self._kept.move_to_end(key)
            return part

    def put(self, key: tuple[object, ...], part: Part) -> None:
        with self._lock:
            if key in self._kept:
                self._size -= _chars(self._kept[key])
            self._kept[key] = part
            self._kept.move_to_end(key)
            self._size += _chars(part)
            while self._size > self.chars and len(self._kept) > 1:
                self._size -= _chars(self._kept.popitem(last=False)[1])

    def get_or_prepare(self, key: tuple[object, ...], prepare: Callable[[], Part]) -> Part:
        """The kept part, else the one another thread is preparing (waited for), else
        ``prepare()``'s, kept."""
        with self._lock:
            part = self._kept.get(key)
            if part is not None:
                self._kept.move_to_end(key)
                return part
            running = self._preparing.get(key)
            if running is None:
                self._preparing[key] = done = threading.Event()
        if running is not None:
            running.wait(PREPARE_DEADLINE)
            return self.get(key) or prepare()  # it failed or is stuck: prepare here
        try:
            part = prepare()
            self.put(key, part)
            return part
        finally:
            with self._lock:
                del self._preparing[key]
            done.set()

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._size = 0


def _chars(part: Part) -> int:
    return len(part[0]["image_url"]["url"])


FILE_CACHE = _FileCache(FILE_CACHE_CHARS)


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
        if key is None:
            return _prepare(screen, max_side, fmt.upper())
        return FILE_CACHE.get_or_prepare(key, lambda: _prepare(screen, max_side, fmt.upper()))

    return screen.derived("request_image", shape, prepare)


class _Ahead:
    """One background thread preparing the request images of the screens a step may lead
    to while the model is asked about it. Each submitting thread (a runner worker) keeps
    only its latest list: what was not started when its next step came is dropped."""

    def __init__(self) -> None:
        self._pending: dict[int, list[tuple[Screen, int | None, str]]] = {}
        self._busy = 0
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def submit(self, screens: Sequence[Screen], max_side: int | None, fmt: str) -> None:
        with self._changed:
            self._pending[threading.get_ident()] = [(s, max_side, fmt) for s in screens]
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._work, name="request-images-ahead", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()

    def _next(self) -> tuple[Screen, int | None, str] | None:
        with self._changed:
            if not self._changed.wait_for(lambda: any(self._pending.values()), AHEAD_IDLE_SECONDS):
                self._thread = None  # idle: the next submit starts another
                return None
            owner = next(k for k, v in self._pending.items() if v)
            self._busy += 1
            job = self._pending[owner].pop(0)
            if not self._pending[owner]:
                del self._pending[owner]  # workers come and go
            return job

    def _work(self) -> None:
        while (job := self._next()) is not None:
            screen, max_side, fmt = job
            try:
                screen_part(screen, max_side=max_side, fmt=fmt)
            except Exception:  # noqa: BLE001, S110 - the step that shows it says what is wrong
                pass
            finally:
                with self._changed:
                    self._busy -= 1
                    self._changed.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is pending or running; False when ``timeout`` passed first."""
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._busy and not any(self._pending.values()), timeout
            )


AHEAD = _Ahead()


def prepare_ahead(screens: Sequence[Screen], *, max_side: int | None, fmt: str = "PNG") -> None:
    """Prepare these screens' request images in the background (the first few), so a step
    that reaches one finds it ready; returns at once."""
    screens = screens[:AHEAD_SCREENS]
    if screens:
        AHEAD.submit(screens, max_side, fmt)
