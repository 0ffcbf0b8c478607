"""Test-wide guards and the virtual phone fixtures.

No test may start a real adb server: adbutils runs `adb start-server` by itself when
nothing answers on its port, and that server would take port 5037. So for the whole
session `ADBUTILS_ADB_PATH` names a harmless program and the default client port is one
nothing listens on. Device tests talk to the virtual server on a random port instead.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import adbutils

    from virtual_phone import AdbServer

HARMLESS_PROGRAM = shutil.which("false") or "/bin/false"
UNUSED_ADB_PORT = "1"  # tcpmux: refused at once, never an adb server


@pytest.fixture(scope="session", autouse=True)
def _no_real_adb_server(tmp_path_factory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ADBUTILS_ADB_PATH", HARMLESS_PROGRAM)
        patch.setenv("ANDROID_ADB_SERVER_PORT", UNUSED_ADB_PORT)
        # Module-scoped fixtures run before a test's own lock folder exists: they get the
        # session's, never the user's (where a running studio may hold a phone's name).
        patch.setenv("ELDERBENCH_RUNTIME_DIR", str(tmp_path_factory.mktemp("session-runtime")))
        yield


@pytest.fixture(autouse=True)
def _private_device_locks(tmp_path_factory, monkeypatch) -> None:
    """Each test its own folder of device locks: tests running side by side (and the
    user's own studio) never see each other's phones as taken."""
    monkeypatch.setenv("ELDERBENCH_RUNTIME_DIR", str(tmp_path_factory.mktemp("runtime")))


@pytest.fixture
def virtual_server() -> Iterator[AdbServer]:
    """A virtual ADB server on a free port with one fresh, fast, frozen-clock phone."""
    from virtual_phone import fast_phone, running_server

    with running_server(phones=[fast_phone("virtual-1")]) as server:
        yield server


@pytest.fixture
def adb_client(virtual_server: AdbServer) -> adbutils.AdbClient:
    """An unmodified adbutils client pointed at `virtual_server`."""
    import adbutils

    return adbutils.AdbClient(host="127.0.0.1", port=virtual_server.port)
