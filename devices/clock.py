"""Where the device layer reads the time and waits, so tests and scripts can replace it.

``AndroidDevice(clock=...)`` uses ``wall`` for the capture times it reports,
``monotonic`` for ages and deadlines, and ``sleep`` for every pause (dump retries, wait
actions, settling). A test can count the pauses instead of timing them; the sample
generator gives its captures fixed times.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DeviceClock:
    wall: Callable[[], float] = time.time
    monotonic: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


SYSTEM_CLOCK = DeviceClock()
