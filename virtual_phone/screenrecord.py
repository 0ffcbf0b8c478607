"""`screenrecord`: an H.264 video of the screen into the phone's files, as Android's does.

    screenrecord [--time-limit SECONDS] [--size WxH] [--bit-rate RATE]
                 [--output-format mp4|h264] [--verbose] FILE|-

Like the real one it records until the time limit (180 s at most, the default), an
interrupt (`kill -INT`, `pkill -INT screenrecord`, the client going away) or the end of
the phone's storage, and then closes the file so that it plays. Frames are taken when the
screen changes, up to `POLL_HZ` times a second, each stamped with the time it was shown
(variable frame rate, as the real encoder gets frames from the compositor); the last
frame is shown until the recording stops. The MP4 is written into the phone's files when
the recording ends; `-` with `--output-format h264` streams raw H.264 to stdout instead.
"""

from __future__ import annotations

import io
import re
import time
from dataclasses import dataclass
from fractions import Fraction

import av

from virtual_phone.filesystem import FileSystemError
from virtual_phone.shell import CommandFailed, Invocation

MAX_TIME_LIMIT_S = 180
DEFAULT_BIT_RATE = 20_000_000
POLL_HZ = 10
_TIME_BASE = Fraction(1, 1000)  # frame times in milliseconds
_SIZE_RE = re.compile(r"^(\d+)x(\d+)$")
_RATE_RE = re.compile(r"^(\d+)([kKmM]?)$")
USAGE = """Usage: screenrecord [options] <filename>

Android screenrecord v1.3.  Records the device's display to a .mp4 file.

Options:
--size WIDTHxHEIGHT
    Set the video size, e.g. "1280x720".  Default is the device's main
    display resolution (if supported), 1280x720 if not.  For best results,
    use a size supported by the AVC encoder.
--bit-rate RATE
    Set the video bit rate, in bits per second.  Value may be specified as
    bits or megabits, e.g. '4000000' is equivalent to '4M'.  Default 20Mbps.
--time-limit TIME
    Set the maximum recording time, in seconds.  Default / maximum is 180.
--output-format FORMAT
    Format of the output: "mp4" (the default) or "h264" (raw H.264).
--verbose
    Display interesting information on stderr.
--help
    Show this message.

Recording continues until Ctrl-C is hit or the time limit is reached.
"""


@dataclass(frozen=True, slots=True)
class Options:
    target: str
    time_limit: int = MAX_TIME_LIMIT_S
    size: tuple[int, int] | None = None
    bit_rate: int = DEFAULT_BIT_RATE
    output_format: str = "mp4"
    verbose: bool = False


def _bit_rate(text: str) -> int:
    match = _RATE_RE.match(text)
    if match is None:
        raise CommandFailed(f"Invalid bit rate '{text}'", 2)
    scale = {"": 1, "k": 1000, "m": 1_000_000}[match.group(2).lower()]
    return int(match.group(1)) * scale


def parse_options(args: list[str]) -> Options:
    """The command line, refused with the real tool's wording where it has one."""
    values: dict[str, object] = {}
    rest = list(args)
    target: str | None = None
    while rest:
        arg = rest.pop(0)
        name, eq, inline = arg.partition("=")
        if name in ("--help", "-h"):
            raise CommandFailed(USAGE, 0)
        if name == "--verbose":
            values["verbose"] = True
            continue
        if name in ("--time-limit", "--size", "--bit-rate", "--output-format"):
            if not eq and not rest:
                raise CommandFailed(f"screenrecord: option '{name}' requires an argument", 2)
            value = inline if eq else rest.pop(0)
            if name == "--time-limit":
                if not value.isdigit() or not 0 < int(value) <= MAX_TIME_LIMIT_S:
                    raise CommandFailed(
                        f"Time limit {value}s outside acceptable range [1,{MAX_TIME_LIMIT_S}]", 2
                    )
                values["time_limit"] = int(value)
            elif name == "--size":
                match = _SIZE_RE.match(value)
                if match is None or 0 in (int(match.group(1)), int(match.group(2))):
                    raise CommandFailed(f"Invalid size '{value}', must be width x height", 2)
                width, height = int(match.group(1)), int(match.group(2))
                if width % 2 or height % 2:
                    raise CommandFailed(
                        f"ERROR: unable to configure video/avc codec at {width}x{height}"
                        " (the encoder takes even sizes)", 1
                    )  # fmt: skip
                values["size"] = (width, height)
            elif name == "--bit-rate":
                values["bit_rate"] = _bit_rate(value)
            else:
                if value not in ("mp4", "h264"):
                    raise CommandFailed(f"Unknown format '{value}'", 2)
                values["output_format"] = value
            continue
        if arg.startswith("--"):
            raise CommandFailed(f"screenrecord: unrecognized option '{arg}'\n{USAGE}", 2)
        if target is not None:
            raise CommandFailed("Must specify output file (see --help).", 2)
        target = arg
    if target is None:
        raise CommandFailed("Must specify output file (see --help).", 2)
    if target == "-" and values.get("output_format", "mp4") == "mp4":
        raise CommandFailed("Cannot write mp4 to stdout: use --output-format h264", 2)
    return Options(target, **values)  # type: ignore[arg-type]


class _Encoder:
    """Frames in, an H.264 stream (MP4 or raw) out, into memory."""

    def __init__(self, options: Options, size: tuple[int, int]) -> None:
        self.buffer = io.BytesIO()
        container_format = "mp4" if options.output_format == "mp4" else "h264"
        self._container = av.open(self.buffer, mode="w", format=container_format)
        stream = self._container.add_stream("libx264", rate=POLL_HZ)
        stream.width, stream.height = size
        stream.pix_fmt = "yuv420p"
        stream.bit_rate = options.bit_rate
        stream.codec_context.time_base = _TIME_BASE
        stream.options = {"preset": "ultrafast", "tune": "zerolatency"}
        self._stream = stream
        self._size = size
        self._last_pts = -1

    def add(self, image: object, at_ms: int) -> None:
        pts = max(at_ms, self._last_pts + 1)  # strictly increasing, as muxers want
        frame = av.VideoFrame.from_image(image)  # type: ignore[arg-type]
        frame.pts, frame.time_base = pts, _TIME_BASE
        for packet in self._stream.encode(frame):
            self._container.mux(packet)
        self._last_pts = pts

    def close(self) -> bytes:
        for packet in self._stream.encode():
            self._container.mux(packet)
        self._container.close()
        return self.buffer.getvalue()


def _target_path(inv: Invocation, options: Options) -> str | None:
    if options.target == "-":
        return None
    path = inv.path(options.target)
    try:
        inv.device.fs.write_bytes(path, b"")  # created at once, as the real tool opens it
    except FileSystemError as exc:
        reason = str(exc).rpartition(": ")[2]
        raise CommandFailed(f"Unable to open '{options.target}': {reason}", 1) from exc
    return path


def screenrecord(inv: Invocation) -> int:
    options = parse_options(inv.args[1:])
    phone = inv.device.phone
    fs = inv.device.fs
    path = _target_path(inv, options)
    size = options.size or (phone.width, phone.height)
    if options.verbose:
        inv.error(
            f"Main display is {phone.width}x{phone.height} @60.00fps (orientation=ROTATION_0)\n"
            f"Configuring recorder for {size[0]}x{size[1]} video/avc at"
            f" {options.bit_rate / 1e6:.2f}Mbps\n"
        )
    encoder = _Encoder(options, size)
    started = time.monotonic()
    deadline = started + options.time_limit
    previous: bytes | None = None
    last_image = None
    sent = 0
    out_of_room = False
    while True:
        image = phone.render()
        if image.size != size:
            image = image.resize(size)
        pixels = image.tobytes()
        if pixels != previous:
            encoder.add(image.convert("RGB"), int((time.monotonic() - started) * 1000))
            previous, last_image = pixels, image
        if path is None:
            fresh = encoder.buffer.getvalue()[sent:]
            if fresh:
                inv.write(fresh)
                inv.streams.flush()
                sent += len(fresh)
        elif encoder.buffer.tell() > fs.free:
            out_of_room = True
            break
        remaining = deadline - time.monotonic()
        if remaining <= 0 or inv.cancelled.wait(min(1 / POLL_HZ, remaining)):
            break
    if last_image is not None:  # the last picture lasts until the recording stopped
        encoder.add(last_image.convert("RGB"), int((time.monotonic() - started) * 1000))
    data = encoder.close()
    if options.verbose and time.monotonic() >= deadline:
        inv.error("Time limit reached\n")
    if path is None:
        inv.write(data[sent:])
        return 0
    try:
        if out_of_room:
            raise FileSystemError(f"{path}: No space left on device")
        fs.write_bytes(path, data)
    except FileSystemError as exc:
        raise CommandFailed(f"screenrecord: {exc}", 1) from exc
    return 0
