"""Live frames of a device's screen: scrcpy's H.264 stream, or screencap polling as a fallback.

>>> from devices.android import adb_client
>>> from virtual_phone import running_server
>>> with running_server() as server:
...     device = AndroidDevice("virtual-1", client=adb_client(port=server.port))
...     source = open_frame_source(device)
...     deadline = time.monotonic() + 20
...     while source.latest() is None and time.monotonic() < deadline:
...         time.sleep(0.05)
...     frame = source.latest()
...     source.stop()
>>> source.name, source.fallback_reason
('scrcpy', None)
>>> frame.size, frame.device_size  # the frame is scaled to max_size; clicks map back
((544, 1200), (1080, 2400))
>>> frame.array.shape  # RGB rows, ready for a QImage of Format_RGB888
(1200, 544, 3)

The scrcpy path pushes the scrcpy-server 3.3.4 jar that mysc-core ships and uses mysc-core's
launch command, then reads the stream itself: mysc-core's own connection helper polls for
the socket without noticing that the server already exited and gives no reason, and its
decoder reads a raw Annex-B stream, where the last frame stays in the parser until the
next one arrives (scrcpy sends nothing while the screen is still). Here the server sends
packet headers (``send_frame_meta=true``), so every packet is decoded as it arrives.
"""

from __future__ import annotations

import contextlib
import io
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from adbutils import AdbError, Network

from devices.android import AndroidDevice, png_size
from devices.errors import DeviceError, MirrorError
from graph_builder.model import Size

FPS_WINDOW = 2.0  # seconds of frames behind fps()
SCRCPY_START_TIMEOUT = 5.0
_CODEC_H264 = 0x68323634  # "h264"
_CONFIG_FLAG = 1 << 63
_KEY_FRAME_FLAG = 1 << 62
_PTS_MASK = _KEY_FRAME_FLAG - 1
_PACKET_HEADER = struct.Struct(">QI")
_CODEC_META = struct.Struct(">III")
_DEVICE_NAME_BYTES = 64
_STOP_JOIN_TIMEOUT = 3.0


@dataclass(frozen=True, slots=True, eq=False)
class Frame:
    """One decoded frame.

    ``array`` is uint8 RGB, shape (height, width, 3), C-contiguous, and belongs to this
    frame alone, so a QImage can wrap its buffer without copying. ``size`` is the frame's
    (width, height); ``device_size`` is the device screen's, for mapping clicks back.
    """

    array: np.ndarray
    index: int
    time: float
    size: Size
    device_size: Size


class FrameSource(Protocol):
    """A running mirror of one device's screen."""

    name: str  # "scrcpy" | "screencap"
    fallback_reason: str | None  # why this source replaced the preferred one
    error: str | None  # set when the source stopped by itself

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def latest(self) -> Frame | None: ...

    def fps(self) -> float: ...


def _oriented(device_size: Size, frame_size: Size) -> Size:
    """The device size turned like the frame (scrcpy follows rotation, wm size does not)."""
    w, h = device_size
    return (w, h) if (w >= h) == (frame_size[0] >= frame_size[1]) else (h, w)


class _FrameBuffer:
    """The latest frame, a frame counter and the frame times behind fps()."""

    name: str = ""

    def __init__(self, fallback_reason: str | None = None) -> None:
        self.fallback_reason = fallback_reason
        self.error: str | None = None
        self._latest: Frame | None = None
        self._count = 0
        self._times: deque[float] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._started_at = 0.0
        self._thread: threading.Thread | None = None

    def latest(self) -> Frame | None:
        return self._latest

    def fps(self) -> float:
        """Frames per second over the last FPS_WINDOW seconds (0 before the first frame)."""
        now = time.monotonic()
        with self._lock:
            while self._times and self._times[0] < now - FPS_WINDOW:
                self._times.popleft()
            count = len(self._times)
        span = min(FPS_WINDOW, now - self._started_at)
        return count / span if count and span > 0 else 0.0

    def _publish(self, array: np.ndarray, device_size: Size) -> None:
        array = np.ascontiguousarray(array)
        size = (array.shape[1], array.shape[0])
        with self._lock:
            index = self._count
            self._count += 1
            self._times.append(time.monotonic())
        self._latest = Frame(array, index, time.time(), size, _oriented(device_size, size))

    def _start_thread(self, target: Callable[[], None]) -> None:
        self._stopping.clear()
        self._started_at = time.monotonic()
        self._thread = threading.Thread(target=target, name=f"{self.name}-frames", daemon=True)
        self._thread.start()

    def _join(self) -> None:
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(_STOP_JOIN_TIMEOUT)


# --------------------------------------------------------------------------- screencap


def decode_png(png: bytes, max_size: int) -> np.ndarray:
    """RGB pixels of a PNG, scaled down so that its longer side is at most ``max_size``."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as opened:
        image = opened.convert("RGB")
    longer = max(image.size)
    if max_size and longer > max_size:
        scale = max_size / longer
        image = image.resize(
            (max(1, round(image.width * scale)), max(1, round(image.height * scale))),
            Image.Resampling.BILINEAR,
        )
    return np.asarray(image)


# The slowest polling on a still screen: a change shows within this many seconds.
STILL_SCREEN_INTERVAL = 0.25


class ScreencapFrameSource(_FrameBuffer):
    """Polls ``screencap -p``: slow (a PNG per frame) but works on every device."""

    name = "screencap"

    def __init__(
        self,
        device: AndroidDevice,
        *,
        max_size: int = 1200,
        max_fps: int = 30,
        fallback_reason: str | None = None,
    ) -> None:
        super().__init__(fallback_reason)
        self._device = device
        self._max_size = max_size
        self._interval = 1.0 / max_fps if max_fps > 0 else 0.0

    def start(self) -> None:
        self.error = None
        self._start_thread(self._poll)

    def stop(self) -> None:
        self._join()

    def _poll(self) -> None:
        previous: bytes | None = None
        interval = self._interval
        while not self._stopping.is_set():
            began = time.monotonic()
            try:
                png = self._device.screenshot()
            except DeviceError as exc:
                self.error = f"screen capture stopped: {exc}"
                return
            if png == previous:
                # A still screen: nothing to decode or show again, and polling slows down
                # step by step until the screen changes. fps() counts the look all the same:
                # it says how fresh the picture on show is.
                interval = min(max(interval, 0.02) * 1.5, STILL_SCREEN_INTERVAL)
                with self._lock:
                    self._times.append(time.monotonic())
            else:
                previous, interval = png, self._interval
                self._publish(decode_png(png, self._max_size), png_size(png))
            self._stopping.wait(max(0.0, interval - (time.monotonic() - began)))


# --------------------------------------------------------------------------- scrcpy


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise EOFError(f"the stream ended after {len(chunks)} of {size} bytes")
        chunks += chunk
    return bytes(chunks)


class _ServerOutput:
    """Reads what the scrcpy server prints; the server lives as long as this stream."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn  # an adbutils.AdbConnection
        self._lines: deque[str] = deque(maxlen=20)
        self._closing = False
        self.exited = threading.Event()
        threading.Thread(target=self._read, name="scrcpy-server-output", daemon=True).start()

    def _read(self) -> None:
        pending = b""
        try:
            while True:
                try:
                    chunk = self._conn.conn.recv(4096)
                except TimeoutError:
                    if self._closing:
                        break
                    continue
                if not chunk:
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                self._lines.extend(line.decode("utf-8", "replace").strip() for line in lines)
        except (OSError, AdbError):  # a closed or broken stream: the server is gone
            pass
        finally:
            if pending.strip():
                self._lines.append(pending.decode("utf-8", "replace").strip())
            self.exited.set()

    def text(self) -> str:
        return " | ".join(line for line in list(self._lines) if line) or "no output"

    def close(self) -> None:
        self._closing = True
        with contextlib.suppress(OSError, AdbError):  # already closed
            self._conn.conn.shutdown(socket.SHUT_RDWR)
        self._conn.close()


def _scrcpy_server() -> Any:
    """mysc-core's connection class: where its server jar is and how it launches it."""
    from mysc_core.connection import Connection

    return Connection


class ScrcpyFrameSource(_FrameBuffer):
    """scrcpy-server 3.3.4 (shipped by mysc-core) streaming H.264, decoded with PyAV."""

    name = "scrcpy"

    def __init__(
        self,
        device: AndroidDevice,
        *,
        max_size: int = 1200,
        max_fps: int = 30,
        start_timeout: float = SCRCPY_START_TIMEOUT,
        server_jar: Path | None = None,
        server_version: str | None = None,
    ) -> None:
        super().__init__()
        self._device = device
        self._max_size = max_size
        self._max_fps = max_fps
        self._start_timeout = start_timeout
        self._server_jar = server_jar
        self._server_version = server_version
        self._server: _ServerOutput | None = None
        self._video: socket.socket | None = None
        self._device_size: Size = (0, 0)
        self.device_name = ""

    def start(self) -> None:
        """Launch the server and read the stream header; raises MirrorError with the reason."""
        self.error = None
        try:
            self._launch()
        except MirrorError:
            self._close_streams()
            raise
        except (DeviceError, OSError, EOFError, struct.error) as exc:
            self._close_streams()
            raise MirrorError(f"scrcpy could not start: {exc}") from exc
        self._start_thread(self._decode)

    def stop(self) -> None:
        self._stopping.set()
        self._close_streams()
        self._join()

    def _launch(self) -> None:
        server = _scrcpy_server()
        jar = Path(self._server_jar or server.PATH_LOCAL_SCRCPY_SERVER_JAR)
        version = self._server_version or server.SCRCPY_SERVER_VERSION
        if not jar.is_file():
            raise MirrorError(f"the scrcpy server jar is missing at {jar}; reinstall mysc-core")
        scid = server.get_random_scid()
        remote = f"{server.PATH_PUSH_SCRCPY}_{scid}"
        adb = self._device.adb
        try:
            adb.sync.push(str(jar), remote)
            launch = [f"CLASSPATH={remote}", *server.START_CMD[:-1], version, *self._options(scid)]
            self._server = _ServerOutput(adb.shell(launch, stream=True))
        except AdbError as exc:
            raise MirrorError(f"could not push or launch the scrcpy server: {exc}") from exc
        self._video = self._connect(f"scrcpy_{scid}")
        self.device_name = (
            _recv_exact(self._video, _DEVICE_NAME_BYTES).rstrip(b"\0").decode("utf-8", "replace")
        )
        codec, width, height = _CODEC_META.unpack(_recv_exact(self._video, _CODEC_META.size))
        if codec != _CODEC_H264:
            raise MirrorError(f"the scrcpy server sent codec {codec:#x}, not H.264")
        self._video.settimeout(None)  # a still screen sends nothing; stop() closes the socket
        self._device_size = self._device.screen_size()

    def _options(self, scid: str) -> list[str]:
        options = {
            "scid": scid,
            "log_level": "info",
            "tunnel_forward": "true",
            "video": "true",
            "audio": "false",
            "control": "false",
            "video_codec": "h264",
            "send_frame_meta": "true",
            "max_size": str(self._max_size),
            "max_fps": str(self._max_fps),
            "cleanup": "true",
        }
        return [f"{key}={value}" for key, value in options.items()]

    def _connect(self, name: str) -> socket.socket:
        """Connect to the server's socket, retrying while it starts; fail fast if it exits."""
        assert self._server is not None
        deadline = time.monotonic() + self._start_timeout
        problem = "no answer"
        while True:
            if self._server.exited.is_set():
                raise MirrorError(f"the scrcpy server exited at start: {self._server.text()}")
            try:
                sock = self._device.adb.create_connection(Network.LOCAL_ABSTRACT, name)
                sock.settimeout(max(0.2, deadline - time.monotonic()))
                if sock.recv(1) == b"\0":
                    return sock
                sock.close()
                problem = "the socket closed before the server's first byte"
            except (AdbError, OSError) as exc:
                problem = str(exc) or type(exc).__name__
            if time.monotonic() >= deadline:
                raise MirrorError(
                    f"the scrcpy server did not accept a connection within "
                    f"{self._start_timeout:g} s ({problem}); it said: {self._server.text()}"
                )
            time.sleep(0.05)

    def _decode(self) -> None:
        import av

        video = self._video  # stop() clears the attribute while this thread still reads
        assert video is not None
        codec = av.CodecContext.create("h264", "r")
        config = b""
        try:
            while not self._stopping.is_set():
                pts, size = _PACKET_HEADER.unpack(_recv_exact(video, _PACKET_HEADER.size))
                payload = _recv_exact(video, size)
                if pts & _CONFIG_FLAG:
                    config = payload  # SPS/PPS: decoded together with the next packet
                    continue
                packet = av.Packet(config + payload)
                config = b""
                packet.pts = pts & _PTS_MASK
                try:
                    frames = codec.decode(packet)
                except av.FFmpegError:
                    continue  # one bad packet; the next key frame recovers
                for frame in frames:
                    self._publish(frame.to_ndarray(format="rgb24"), self._device_size)
        except (EOFError, OSError) as exc:
            if not self._stopping.is_set():
                said = self._server.text() if self._server else "no output"
                self.error = f"the scrcpy stream ended ({exc}); the server said: {said}"

    def _close_streams(self) -> None:
        video, self._video = self._video, None
        if video is not None:
            with contextlib.suppress(OSError):
                video.shutdown(socket.SHUT_RDWR)
            video.close()
        server, self._server = self._server, None
        if server is not None:
            server.close()


# --------------------------------------------------------------------------- opening


def _open_scrcpy(device: AndroidDevice, max_size: int, max_fps: int) -> FrameSource:
    source = ScrcpyFrameSource(device, max_size=max_size, max_fps=max_fps)
    source.start()
    return source


def _open_screencap(device: AndroidDevice, max_size: int, max_fps: int) -> FrameSource:
    source = ScreencapFrameSource(device, max_size=max_size, max_fps=max_fps)
    source.start()
    return source


FRAME_SOURCES: dict[str, Callable[[AndroidDevice, int, int], FrameSource]] = {
    "scrcpy": _open_scrcpy,
    "screencap": _open_screencap,
}


def open_frame_source(
    device: AndroidDevice, *, max_size: int = 1200, max_fps: int = 30, prefer: str = "scrcpy"
) -> FrameSource:
    """A started frame source: the preferred kind, else screencap polling with the reason."""
    opener = FRAME_SOURCES.get(prefer)
    if opener is None:
        raise ValueError(f"unknown frame source {prefer!r}; choose one of {sorted(FRAME_SOURCES)}")
    try:
        return opener(device, max_size, max_fps)
    except MirrorError as exc:
        if prefer == "screencap":
            raise
        fallback = ScreencapFrameSource(
            device, max_size=max_size, max_fps=max_fps, fallback_reason=str(exc)
        )
        fallback.start()
        return fallback
