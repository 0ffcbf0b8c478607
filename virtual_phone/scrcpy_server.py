"""Impersonation of scrcpy-server 3.3.4 on the virtual phone.

A scrcpy client pushes its server jar and runs, over a shell stream it keeps open,

    CLASSPATH=/data/local/tmp/scrcpy-server.jar app_process / com.genymobile.scrcpy.Server \
        3.3.4 scid=0123abcd tunnel_forward=true audio=false control=true max_size=1200 ...

This module is that server, started by `app_process` (virtual_phone/app_process.py). It
listens on `localabstract:scrcpy_<scid>` (or connects out through a reverse forward when
`tunnel_forward=false`), accepts the video, audio and control sockets in that order,
streams the phone's screen as H.264 (libx264 through PyAV) and applies control messages
to the phone. It lives until the shell stream or one of its sockets closes.

Video: a frame is encoded when `phone.frame_version()` changes, at most `max_fps` per
second, and repeated every `REPEAT_FRAME_S` on a still screen (as scrcpy's encoder
repeats frames), so clients keep receiving. In raw-stream mode (`send_frame_meta=false`)
each frame is followed by an access unit delimiter: a client feeding the bytes to an H.264
parser then gets every frame at once instead of one frame late.
"""

from __future__ import annotations

import contextlib
import functools
import queue
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Protocol

import av
import numpy as np
from PIL import Image

from virtual_phone.shell import Invocation
from virtual_phone.wire import Channel, PeerClosed, ProtocolError, close_socket

if TYPE_CHECKING:
    from virtual_phone.filesystem import MemoryFileSystem
    from virtual_phone.phone import VirtualPhone

SERVER_VERSION = "3.3.4"
SERVER_CLASS = "com.genymobile.scrcpy.Server"
DEVICE_NAME_LENGTH = 64
CODEC_ID_H264 = 0x68323634  # "h264"
PACKET_FLAG_CONFIG = 1 << 63
PACKET_FLAG_KEY_FRAME = 1 << 62
ACCESS_UNIT_DELIMITER = b"\x00\x00\x00\x01\x09\xf0"
REPEAT_FRAME_S = 0.5
DEFAULT_MAX_FPS = 60
KEY_FRAME_INTERVAL_S = 10
SCROLL_STEP_PX = 150
# The longest text and clipboard a scrcpy client sends in one control message; a longer
# length is damage or an attack, and reading it would buffer up to 4 GB.
MAX_INJECT_TEXT = 300
MAX_CLIPBOARD = (1 << 18) - 14
KEYCODE_BACK = 4
_ACTION_DOWN = 0
_TOUCH_ACTIONS = {0: "down", 1: "up", 2: "move", 3: "up", 5: "down", 6: "up"}


class ScrcpyHost(Protocol):
    """What the server needs from the device running it."""

    @property
    def phone(self) -> VirtualPhone: ...

    @property
    def fs(self) -> MemoryFileSystem: ...

    def listen(
        self, address: str, accept: Callable[[socket.socket], None]
    ) -> Callable[[], None]: ...

    def reverse_target(self, remote: str) -> str | None: ...


# ---------------------------------------------------------------- options


def _flag(value: str) -> bool:
    return value.lower() == "true"


@dataclass(slots=True)
class ServerOptions:
    """The `key=value` arguments of scrcpy-server that the virtual phone honours."""

    scid: str = ""
    video: bool = True
    audio: bool = True
    control: bool = True
    tunnel_forward: bool = False
    max_size: int = 0
    max_fps: float = 0.0
    video_codec: str = "h264"
    send_device_meta: bool = True
    send_frame_meta: bool = True
    send_dummy_byte: bool = True
    send_codec_meta: bool = True

    @property
    def socket_address(self) -> str:
        return f"localabstract:scrcpy_{self.scid}" if self.scid else "localabstract:scrcpy"

    @property
    def socket_count(self) -> int:
        return int(self.video) + int(self.audio) + int(self.control)


def _set_raw_stream(options: ServerOptions, value: str) -> None:
    """`raw_stream=true`: only the encoded bytes, no dummy byte, no meta of any kind."""
    if _flag(value):
        options.send_device_meta = False
        options.send_frame_meta = False
        options.send_dummy_byte = False
        options.send_codec_meta = False


_OPTION_PARSERS: dict[str, Callable[[ServerOptions, str], object]] = {
    "scid": lambda o, v: setattr(o, "scid", f"{int(v, 16):08x}"),
    "video": lambda o, v: setattr(o, "video", _flag(v)),
    "audio": lambda o, v: setattr(o, "audio", _flag(v)),
    "control": lambda o, v: setattr(o, "control", _flag(v)),
    "tunnel_forward": lambda o, v: setattr(o, "tunnel_forward", _flag(v)),
    "max_size": lambda o, v: setattr(o, "max_size", int(v) & ~7),
    "max_fps": lambda o, v: setattr(o, "max_fps", float(v)),
    "video_codec": lambda o, v: setattr(o, "video_codec", v),
    "send_device_meta": lambda o, v: setattr(o, "send_device_meta", _flag(v)),
    "send_frame_meta": lambda o, v: setattr(o, "send_frame_meta", _flag(v)),
    "send_dummy_byte": lambda o, v: setattr(o, "send_dummy_byte", _flag(v)),
    "send_codec_meta": lambda o, v: setattr(o, "send_codec_meta", _flag(v)),
    "raw_stream": _set_raw_stream,
}
# Accepted and without effect on a phone that has no real display, audio or power.
_IGNORED_OPTIONS = frozenset(
    [
        "log_level",
        "video_bit_rate",
        "audio_bit_rate",
        "audio_codec",
        "video_source",
        "audio_source",
        "stay_awake",
        "show_touches",
        "power_off_on_close",
        "clipboard_autosync",
        "downsize_on_error",
        "cleanup",
        "power_on",
        "display_id",
        "video_encoder",
        "audio_encoder",
        "video_codec_options",
        "audio_codec_options",
        "crop",
        "lock_video_orientation",
        "capture_orientation",
        "angle",
        "list_encoders",
        "list_displays",
        "camera_id",
        "camera_size",
        "camera_facing",
        "camera_ar",
        "camera_fps",
        "camera_high_speed",
        "new_display",
        "vd_system_decorations",
        "audio_dup",
    ]
)


def parse_options(arguments: list[str]) -> tuple[ServerOptions, list[str]]:
    """Options from `key=value` arguments, and warnings for the unknown ones."""
    options = ServerOptions()
    warnings = []
    for argument in arguments:
        key, sep, value = argument.partition("=")
        parser = _OPTION_PARSERS.get(key)
        if not sep:
            raise ValueError(f'Invalid key=value pair: "{argument}"')
        if parser is not None:
            parser(options, value)
        elif key not in _IGNORED_OPTIONS:
            warnings.append(f"[server] WARN: Unknown server option: {key}\n")
    return options, warnings


def video_size(width: int, height: int, max_size: int) -> tuple[int, int]:
    """The encoded size: longest side limited to max_size, then both sides made multiples of 8.

    >>> video_size(1080, 2400, 1200)
    (544, 1200)
    """
    portrait = height > width
    major, minor = (height, width) if portrait else (width, height)
    if max_size and major > max_size:
        minor = minor * max_size // major
        major = max_size
    major &= ~7
    minor = min((minor + 4) & ~7, major)
    return (minor, major) if portrait else (major, minor)


# ---------------------------------------------------------------- video


def _split_config(packet: bytes) -> tuple[bytes, bytes]:
    """Split the leading SPS/PPS NAL units (the codec config) from a key frame packet."""
    position = 0
    start_code = b"\x00\x00\x00\x01"
    while packet.startswith(start_code, position) and packet[position + 4] & 0x1F in (7, 8):
        following = packet.find(start_code, position + 4)
        if following < 0:
            break
        position = following
    return packet[:position], packet[position:]


def _video_frame(image: Image.Image, width: int, height: int) -> av.VideoFrame:
    """The screen as a YUV 4:2:0 frame of the video size.

    Shrinking by a whole factor with Pillow first (a box filter) leaves swscale a small
    image to convert: about ten times faster at 1080x2400 to 544x1200. The factor may
    leave the image a few percent smaller than the video (540 for 544, since video sides
    are multiples of 8); swscale stretches that back at little cost.
    """
    factor = int(min(image.width / width, image.height / height) * 1.05)
    if factor >= 2:
        image = image.reduce(factor)
    pixels = np.asarray(image if image.mode == "RGB" else image.convert("RGB"))
    return av.VideoFrame.from_ndarray(pixels, format="rgb24").reformat(
        width=width, height=height, format="yuv420p", interpolation="FAST_BILINEAR"
    )


class _VideoStreamer:
    """Encodes the phone's screen and writes it to the video socket."""

    def __init__(self, phone: VirtualPhone, channel: Channel, options: ServerOptions) -> None:
        self._phone = phone
        self._channel = channel
        self._options = options
        self._max_fps = options.max_fps if options.max_fps > 0 else DEFAULT_MAX_FPS
        self.width, self.height = video_size(phone.width, phone.height, options.max_size)
        self._encoder = av.CodecContext.create("libx264", "w")
        self._encoder.width = self.width
        self._encoder.height = self.height
        self._encoder.pix_fmt = "yuv420p"
        self._encoder.time_base = Fraction(1, 1_000_000)
        self._encoder.options = {
            "preset": "ultrafast",
            "tune": "zerolatency",
            "profile": "baseline",
            "keyint": str(int(self._max_fps * KEY_FRAME_INTERVAL_S)),
            "threads": "2",
        }
        self._started = time.monotonic()
        self.key_frame_requested = threading.Event()

    def run(self, stopped: threading.Event) -> None:
        """Stream until `stopped`; capture runs in its own thread, overlapping the encoding."""
        if self._options.send_codec_meta:
            self._channel.send(struct.pack(">III", CODEC_ID_H264, self.width, self.height))
        captured: queue.Queue[av.VideoFrame] = queue.Queue(maxsize=1)
        threading.Thread(
            target=self._capture, args=(captured, stopped), name="scrcpy-capture", daemon=True
        ).start()
        while not stopped.is_set():
            try:
                frame = captured.get(timeout=0.1)
            except queue.Empty:
                continue
            if self.key_frame_requested.is_set():
                self.key_frame_requested.clear()
                frame.pict_type = av.video.frame.PictureType.I
            for packet in self._encoder.encode(frame):
                self._write_packet(bytes(packet), packet.pts or 0, packet.is_keyframe)

    def _capture(self, captured: queue.Queue[av.VideoFrame], stopped: threading.Event) -> None:
        """Grab a frame when the pixels changed (or to repeat a still one), at most max_fps."""
        interval = 1.0 / self._max_fps
        last_version: int | None = None
        last_sent = 0.0
        try:
            while not stopped.is_set():
                tick = time.monotonic()
                version = self._phone.frame_version()
                if version != last_version or tick - last_sent >= REPEAT_FRAME_S:
                    frame = _video_frame(self._phone.render(), self.width, self.height)
                    frame.pts = int((tick - self._started) * 1_000_000)
                    while not stopped.is_set():
                        with contextlib.suppress(queue.Full):
                            captured.put(frame, timeout=0.1)
                            break
                    last_version, last_sent = version, tick
                stopped.wait(max(0.0, interval - (time.monotonic() - tick)))
        finally:
            stopped.set()  # a capture failure ends the session rather than freezing it

    def _write_packet(self, data: bytes, pts: int, key_frame: bool) -> None:
        if not self._options.send_frame_meta:
            self._channel.send(data + ACCESS_UNIT_DELIMITER)
            return
        out = bytearray()
        if key_frame:
            config, data = _split_config(data)
            if config:
                out += struct.pack(">QI", PACKET_FLAG_CONFIG, len(config)) + config
        flags = PACKET_FLAG_KEY_FRAME if key_frame else 0
        out += struct.pack(">QI", pts | flags, len(data)) + data
        self._channel.send(bytes(out))


# ---------------------------------------------------------------- control


class _Controller:
    """Reads scrcpy control messages and applies them to the phone."""

    def __init__(
        self, phone: VirtualPhone, channel: Channel, on_reset_video: Callable[[], None]
    ) -> None:
        self._phone = phone
        self._channel = channel
        self._on_reset_video = on_reset_video
        self._clipboard = ""
        self._handlers: dict[int, Callable[[], None]] = {
            0: self._inject_keycode,
            1: self._inject_text,
            2: self._inject_touch,
            3: self._inject_scroll,
            4: self._back_or_screen_on,
            5: lambda: None,  # expand notification panel
            6: lambda: None,  # expand settings panel
            7: lambda: None,  # collapse panels
            8: self._get_clipboard,
            9: self._set_clipboard,
            10: lambda: self._skip(1),  # display power: the virtual display is always on
            11: lambda: None,  # rotate device
            12: self._uhid_create,
            13: self._uhid_input,
            14: lambda: self._skip(2),  # uhid destroy
            15: lambda: None,  # open hard keyboard settings
            16: self._start_app,
            17: self._on_reset_video,
        }

    def run(self) -> None:
        while True:
            message_type = self._channel.read_exact(1)[0]
            handler = self._handlers.get(message_type)
            if handler is None:
                return  # scrcpy-server stops its controller on an unknown message
            handler()

    def _read(self, fmt: str) -> tuple[int, ...]:
        return struct.unpack(fmt, self._channel.read_exact(struct.calcsize(fmt)))

    def _read_text(self, length: int, limit: int) -> str:
        if length > limit:
            raise ProtocolError(
                f"a control message announces {length} bytes of text (at most {limit})"
            )
        return self._channel.read_exact(length).decode("utf-8", errors="replace")

    def _skip(self, size: int) -> None:
        self._channel.read_exact(size)

    def _scale(self, x: int, y: int, width: int, height: int) -> tuple[int, int] | None:
        if width == 0 or height == 0:
            return None
        phone = self._phone
        return x * phone.width // width, y * phone.height // height

    def _inject_keycode(self) -> None:
        action, keycode, _repeat, _meta = self._read(">Biii")
        if action == _ACTION_DOWN:
            self._phone.key(keycode)

    def _inject_text(self) -> None:
        (length,) = self._read(">I")
        text = self._read_text(length, MAX_INJECT_TEXT)
        # scrcpy types text through the key character map, which has only ASCII characters.
        typable = "".join(c for c in text if c.isascii())
        if typable:
            self._phone.input_text(typable)

    def _inject_touch(self) -> None:
        action, pointer_id, x, y, width, height, _pressure, _button, _buttons = self._read(
            ">BQiiHHHii"
        )
        kind = _TOUCH_ACTIONS.get(action)
        point = self._scale(x, y, width, height)
        if kind is not None and point is not None:
            self._phone.touch(kind, point[0], point[1], pointer_id)

    def _inject_scroll(self) -> None:
        x, y, width, height, hscroll, vscroll, _buttons = self._read(">iiHHhhi")
        point = self._scale(x, y, width, height)
        if point is None or (hscroll == 0 and vscroll == 0):
            return
        # The amounts are signed 16-bit fixed point in [-1, 1); scrolling up moves content down.
        dx = int(hscroll / 0x8000 * 16 * SCROLL_STEP_PX)
        dy = int(vscroll / 0x8000 * 16 * SCROLL_STEP_PX)
        self._phone.swipe(point[0], point[1], point[0] + dx, point[1] + dy, 100)

    def _back_or_screen_on(self) -> None:
        (action,) = self._read(">B")
        if action == _ACTION_DOWN:
            self._phone.key(KEYCODE_BACK)

    def _get_clipboard(self) -> None:
        self._skip(1)  # copy key
        data = self._clipboard.encode()
        self._channel.send(struct.pack(">BI", 0, len(data)) + data)

    def _set_clipboard(self) -> None:
        sequence, paste, length = self._read(">QBI")
        self._clipboard = self._read_text(length, MAX_CLIPBOARD)
        if paste:
            self._phone.commit_text(self._clipboard)
        if sequence:
            self._channel.send(struct.pack(">BQ", 1, sequence))

    def _uhid_create(self) -> None:
        _id, _vendor, _product, name_length = self._read(">HHHB")
        self._skip(name_length)
        (descriptor_length,) = self._read(">H")
        self._skip(descriptor_length)

    def _uhid_input(self) -> None:
        _id, size = self._read(">HH")
        self._skip(size)

    def _start_app(self) -> None:
        (length,) = self._read(">B")
        name = self._channel.read_exact(length).decode("utf-8", errors="replace")
        force_stop = name.startswith("+")
        package = name.lstrip("+")
        if package in self._phone.packages():
            if force_stop:
                self._phone.force_stop(package)
            self._phone.start(package)


# ---------------------------------------------------------------- session


def _drain(sock: socket.socket) -> None:
    """Return when the client closes a socket it never writes to."""
    while sock.recv(4096):
        pass


def _disabled_audio(sock: socket.socket) -> None:
    Channel(sock).send(struct.pack(">I", 0))  # codec id 0: the phone has no audio to stream
    _drain(sock)


class _MirrorSession:
    """One running server: its sockets and the threads that serve them."""

    def __init__(self, host: ScrcpyHost, options: ServerOptions) -> None:
        self.host = host
        self.options = options
        self.stopped = threading.Event()
        self._sockets: list[socket.socket] = []

    def connect(self, cancelled: threading.Event) -> bool:
        """Gather the video, audio and control sockets; False if the client went away first.

        Raises OSError when a reverse tunnel is missing or refuses, as the real server fails.
        """
        if self.options.tunnel_forward:
            return self._accept_all(cancelled)
        self._connect_reverse()
        return True

    def _accept_all(self, cancelled: threading.Event) -> bool:
        accepted: queue.Queue[socket.socket] = queue.Queue()
        unlisten = self.host.listen(self.options.socket_address, accepted.put)
        try:
            while len(self._sockets) < self.options.socket_count:
                try:
                    sock = accepted.get(timeout=0.05)
                except queue.Empty:
                    if cancelled.is_set():
                        return False
                    continue
                if not self._sockets and self.options.send_dummy_byte:
                    Channel(sock).send(b"\x00")  # lets the client detect a live connection
                self._sockets.append(sock)
            return True
        finally:
            unlisten()  # like scrcpy, stop listening once every socket is connected

    def _connect_reverse(self) -> None:
        address = self.options.socket_address
        target = self.host.reverse_target(address) or ""
        if not target.startswith("tcp:"):
            raise OSError(f"connect failed: ECONNREFUSED (no reverse tunnel for {address})")
        port = int(target.removeprefix("tcp:"))
        for _ in range(self.options.socket_count):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.settimeout(None)
            self._sockets.append(sock)

    def run(self, cancelled: threading.Event) -> None:
        """Serve until the shell stream or any of the sockets closes."""
        phone = self.host.phone
        pending = list(self._sockets)
        if self.options.send_device_meta:
            name = phone.model.encode()[: DEVICE_NAME_LENGTH - 1]
            Channel(pending[0]).send(name.ljust(DEVICE_NAME_LENGTH, b"\x00"))
        workers: list[Callable[[], None]] = []
        on_reset_video: Callable[[], None] = lambda: None  # noqa: E731
        if self.options.video:
            video_socket = pending.pop(0)
            streamer = _VideoStreamer(phone, Channel(video_socket), self.options)
            on_reset_video = streamer.key_frame_requested.set
            workers.append(functools.partial(streamer.run, self.stopped))
            workers.append(functools.partial(_drain, video_socket))
        if self.options.audio:
            workers.append(functools.partial(_disabled_audio, pending.pop(0)))
        if self.options.control:
            workers.append(_Controller(phone, Channel(pending.pop(0)), on_reset_video).run)
        for work in workers:
            threading.Thread(target=self._guard, args=(work,), daemon=True).start()
        while not self.stopped.wait(0.05):
            if cancelled.is_set():
                break
        self.close()

    def _guard(self, work: Callable[[], None]) -> None:
        """Run one worker; when it ends for any reason, the whole session ends."""
        try:
            work()
        except (OSError, PeerClosed, ProtocolError):
            pass  # the client disconnected, or sent what no client sends: the session ends
        finally:
            self.stopped.set()

    def close(self) -> None:
        self.stopped.set()
        for sock in self._sockets:
            close_socket(sock)


# ---------------------------------------------------------------- the server's main class


def main(inv: Invocation, server_args: list[str], host: ScrcpyHost) -> int:
    """The server's main class, run by `app_process` with `VERSION key=value...`."""
    client_version = server_args[0] if server_args else ""
    try:
        if client_version != SERVER_VERSION:
            raise ValueError(
                f"The server version ({SERVER_VERSION}) does not match the client "
                f"({client_version})"
            )
        options, warnings = parse_options(server_args[1:])
        if options.video and options.video_codec != "h264":
            raise ValueError(f"Unsupported video codec on the virtual phone: {options.video_codec}")
    except ValueError as exc:
        inv.error(
            "[server] ERROR: Exception on thread Thread[main,5,main]\n"
            f"java.lang.IllegalArgumentException: {exc}\n"
            "\tat com.genymobile.scrcpy.Options.parse(Options.java:311)\n"
        )
        return 1
    for warning in warnings:
        inv.error(warning)
    phone = host.phone
    brand = phone.props.get("ro.product.brand", "ElderBench")
    inv.write(f"[server] INFO: Device: [{brand}] {phone.model} (Android {phone.android_version})\n")
    inv.streams.flush()
    session = _MirrorSession(host, options)
    try:
        if options.socket_count and session.connect(inv.cancelled):
            session.run(inv.cancelled)
    except OSError as exc:
        inv.error(f"[server] ERROR: java.io.IOException: {exc}\n")
        return 1
    finally:
        session.close()
    return 0
