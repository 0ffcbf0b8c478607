"""A video of what happened on a phone: `screenrecord` on the device, pulled as an MP4.

The recording runs on the phone (H.264, the phone's own encoder) for at most
`time_limit` seconds (Android's screenrecord stops by itself at 180). The shell that starts
it stays open and waits for it, so that the recording lives exactly as long as it is
wanted, also on phones that end a shell's background processes when the shell ends. To
stop, it is interrupted (SIGINT, as Ctrl-C does): screenrecord then closes the file so
that it plays, and the file is pulled and removed from the phone.

    with recording(device, trace_folder / "screen.mp4"):
        ...  # the episode

`recording` never raises for the recording itself: a phone without screenrecord, a full
storage or a lost connection leave no video and a warning in the log, and the work inside
the block goes on (an episode is not spoiled by its video).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import adbutils

from devices.android import AndroidDevice
from devices.errors import DeviceCommandError, DeviceError

log = logging.getLogger(__name__)

MAX_TIME_LIMIT_S = 180  # what screenrecord accepts at most
REMOTE_DIR = "/data/local/tmp"
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 15.0  # the phone closes the file; a long recording takes a moment
# The whole pull of the video: 180 s at 4 Mbit/s is 90 MB, a few MB/s over Wi-Fi adb.
PULL_TIMEOUT_S = 120.0


class ScreenRecordingError(DeviceError):
    """screenrecord could not start on the device, or its video could not be fetched."""


class ScreenRecording:
    """One running `screenrecord`; `stop(out)` ends it and writes the MP4 to `out`."""

    def __init__(
        self,
        device: AndroidDevice,
        *,
        time_limit: int = MAX_TIME_LIMIT_S,
        bit_rate: str = "4M",
        pull_timeout: float = PULL_TIMEOUT_S,
    ) -> None:
        if not 1 <= time_limit <= MAX_TIME_LIMIT_S:
            raise ValueError(
                f"time_limit must be 1 to {MAX_TIME_LIMIT_S} seconds, not {time_limit}"
            )
        self._device = device
        self.pull_timeout = pull_timeout
        adb = self._adb = device.adb
        self.remote = f"{REMOTE_DIR}/elderbench-{os.getpid()}-{time.monotonic_ns()}.mp4"
        command = (
            f"screenrecord --time-limit {time_limit} --bit-rate {bit_rate} {self.remote}"
            " </dev/null >/dev/null 2>&1 & echo $!; wait"
        )
        try:
            self._stream: Any = adb.shell(command, stream=True)
            first = self._first_line()
        except (adbutils.AdbError, OSError) as exc:
            raise ScreenRecordingError(
                f"screenrecord did not start on {adb.serial}: {exc}"
            ) from exc
        if not re.fullmatch(r"\d+", first):
            self._close_stream()
            raise ScreenRecordingError(
                f"screenrecord did not start on {adb.serial}: the shell said {first!r}"
            )
        self.pid = int(first)
        self.started = time.monotonic()

    def _first_line(self) -> str:
        """What the shell printed first (the recording's pid), within START_TIMEOUT_S."""
        deadline = time.monotonic() + START_TIMEOUT_S
        data = b""
        while b"\n" not in data and len(data) < 64:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the shell printed no process id in time")
            self._stream.conn.settimeout(left)
            chunk = self._stream.conn.recv(64)
            if not chunk:
                break
            data += chunk
        return data.decode("ascii", "replace").strip()

    def _close_stream(self) -> None:
        with contextlib.suppress(OSError, adbutils.AdbError):
            self._stream.close()

    def stop(self, out: Path) -> Path:
        """Interrupt the recording, wait until the phone closed the file, pull it to `out`
        (atomically, within `pull_timeout` seconds in all) and remove it from the phone."""
        adb = self._adb
        try:
            adb.shell(f"kill -INT {self.pid} 2>/dev/null", timeout=START_TIMEOUT_S)
            self._stream.conn.settimeout(STOP_TIMEOUT_S)
            self._stream.read_until_close()  # the shell's `wait` ends with screenrecord
        except (adbutils.AdbError, OSError) as exc:
            raise ScreenRecordingError(
                f"screenrecord on {adb.serial} did not finish its file: {exc}"
            ) from exc
        finally:
            self._close_stream()
        try:
            if self._device.pull(self.remote, out, timeout=self.pull_timeout) == 0:
                out.unlink()
                raise ScreenRecordingError(f"screenrecord on {adb.serial} wrote no video")
        except DeviceCommandError as exc:  # the phone refused to open the file: none was made
            raise ScreenRecordingError(
                f"screenrecord on {adb.serial} wrote no video ({exc})"
            ) from exc
        except (DeviceError, OSError) as exc:
            raise ScreenRecordingError(
                f"the video could not be fetched from {adb.serial}: {exc}"
            ) from exc
        finally:
            with contextlib.suppress(adbutils.AdbError, OSError):
                adb.shell(f"rm -f {self.remote}", timeout=START_TIMEOUT_S)
        return out


def _android(device: object) -> AndroidDevice:
    if not isinstance(device, AndroidDevice):
        raise ScreenRecordingError(f"{type(device).__name__} has no adb connection to record on")
    return device


@contextlib.contextmanager
def recording(
    device: object,
    out: Path,
    *,
    time_limit: int = MAX_TIME_LIMIT_S,
    pull_timeout: float = PULL_TIMEOUT_S,
) -> Iterator[ScreenRecording | None]:
    """Record the screen while the block runs, into `out`; warn (never raise) when the
    recording fails. Yields the recording, or None when it could not start."""
    try:
        running: ScreenRecording | None = ScreenRecording(
            _android(device), time_limit=time_limit, pull_timeout=pull_timeout
        )
    except (ScreenRecordingError, DeviceCommandError) as exc:
        log.warning("no screen recording: %s", exc)
        running = None
    try:
        yield running
    finally:
        if running is not None:
            try:
                running.stop(out)
            except ScreenRecordingError as exc:
                log.warning("no screen recording: %s", exc)
