"""Run the virtual ADB server in the background: for tests, benchmarks and the studio.

>>> import adbutils
>>> with running_server() as server:
...     adbutils.AdbClient(host="127.0.0.1", port=server.port).device_list()
[AdbDevice(serial=virtual-1)]
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from datetime import datetime

from virtual_phone.adb_server import AdbServer
from virtual_phone.phone import VirtualPhone

# The clock a deterministic phone shows: the same pixels and XML on every run.
FROZEN_CLOCK = datetime(2025, 3, 14, 9, 30)


def fast_phone(serial: str = "virtual-1", **options: object) -> VirtualPhone:
    """A phone for tests: no transition delays and a frozen clock, unless overridden."""
    settings: dict[str, object] = {"settle_ms": (0, 0), "frozen_clock": FROZEN_CLOCK, **options}
    return VirtualPhone(serial, **settings)  # type: ignore[arg-type]


@contextlib.contextmanager
def running_server(
    phones: Sequence[VirtualPhone] | None = None,
    *,
    port: int = 0,
    realtime: bool = False,
) -> Iterator[AdbServer]:
    """An AdbServer serving `phones` in a background thread, closed on exit.

    Without `phones` it serves one phone, "virtual-1": a fast, frozen-clock one for tests,
    or with `realtime=True` one with the real clock and Android-like settle delays (the
    studio's `--virtual-phone`). `port=0` picks a free port; read it from `server.port`.
    """
    if phones is None:
        phones = [VirtualPhone("virtual-1") if realtime else fast_phone("virtual-1")]
    server = AdbServer(phones, port=port).start()
    try:
        yield server
    finally:
        server.close()
