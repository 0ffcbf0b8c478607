"""The phone's log buffer, which `logcat` reads: what the system says as apps start and stop."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

MAX_ENTRIES = 5000  # the oldest lines go first, as in logd's ring buffer
# A phone's log is never quiet for long: past this many seconds without a line, a reader
# that follows the log sees the system report its state (so line-by-line readers wake).
HEARTBEAT_S = 1.0


@dataclass(frozen=True, slots=True)
class LogEntry:
    index: int  # grows by one per line, never reused
    time: datetime
    pid: int
    tid: int
    priority: str  # V D I W E F
    tag: str
    message: str


class LogBuffer:
    """A bounded, thread-safe list of log lines that a reader can wait on."""

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self._clock = clock
        self._changed = threading.Condition()
        self._entries: deque[LogEntry] = deque(maxlen=MAX_ENTRIES)
        self._next = 0
        self._last_write = time.monotonic()
        self._beats = 0

    def write(self, priority: str, tag: str, message: str, *, pid: int, tid: int = 0) -> None:
        with self._changed:
            entry = LogEntry(self._next, self._clock(), pid, tid or pid, priority, tag, message)
            self._entries.append(entry)
            self._next += 1
            self._last_write = time.monotonic()
            self._changed.notify_all()

    def heartbeat(self, pid: int) -> None:
        """Write the battery service's periodic line (from `pid`) if the log was quiet for
        HEARTBEAT_S seconds."""
        with self._changed:
            if time.monotonic() - self._last_write < HEARTBEAT_S:
                return
            self._beats += 1
            level = 100 - (self._beats // 60) % 50
            message = (
                f"Processing new values: info={{chargerAcOnline=false, chargerUsbOnline=true,"
                f" batteryStatus=2, batteryHealth=2, batteryPresent=true, batteryLevel={level},"
                f" batteryVoltage=4321, batteryTemperature=250}}"
            )
        self.write("D", "BatteryService", message, pid=pid)

    def entries(self, after: int = -1) -> list[LogEntry]:
        """Lines with an index above ``after``."""
        with self._changed:
            return [entry for entry in self._entries if entry.index > after]

    def clear(self) -> None:
        with self._changed:
            self._entries.clear()

    def wait(self, after: int, timeout: float) -> None:
        """Until a line past ``after`` arrives or ``timeout`` seconds pass."""
        with self._changed:
            self._changed.wait_for(lambda: self._next - 1 > after, timeout=timeout)
