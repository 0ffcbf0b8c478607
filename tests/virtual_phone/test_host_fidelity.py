"""Host services as a real adb server answers them: disconnect and wait-for, through the
unmodified adbutils client and, when the wheel ships it, the `adb` binary."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import adbutils
import pytest
from adbutils import AdbError, AdbTimeout

from virtual_phone import AdbServer, fast_phone, running_server

ADB = Path(adbutils.__file__).parent / "binaries" / "adb"
needs_adb_binary = pytest.mark.skipif(not os.access(ADB, os.X_OK), reason=f"no adb at {ADB}")


def adb(port: int, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "ADB_MDNS": "0", "ADB_LIBUSB": "0"}
    return subprocess.run(
        [str(ADB), "-P", str(port), *args],
        capture_output=True, stdin=subprocess.DEVNULL, env=env, timeout=timeout, check=False,
    )  # fmt: skip


def raw_request(port: int, request: str, replies: int) -> bytes:
    """Send one host request and read `replies` 4-byte statuses (and nothing more)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(f"{len(request):04x}{request}".encode())
        data = b""
        while len(data) < 4 * replies:
            chunk = sock.recv(4 * replies - len(data))
            if not chunk:
                break
            data += chunk
        return data


def test_disconnect_of_an_address_not_connected_fails_like_adb(
    adb_client: adbutils.AdbClient,
) -> None:
    with pytest.raises(AdbError, match=r"no such device '127\.0\.0\.1:1234'"):
        adb_client.disconnect("127.0.0.1:1234", raise_error=True)
    with pytest.raises(AdbError, match=r"no such device '10\.1\.2\.3:5555'"):
        adb_client.disconnect("10.1.2.3", raise_error=True)  # the default port is added
    with pytest.raises(AdbError, match=r"couldn't parse '1\.2\.3\.4:x': bad port number 'x'"):
        adb_client.disconnect("1.2.3.4:x", raise_error=True)
    assert adb_client.disconnect("", raise_error=True) == "disconnected everything"


def test_disconnect_unplugs_a_phone_reached_over_the_network() -> None:
    phones = [fast_phone("virtual-1"), fast_phone("192.168.1.23:5555")]
    with running_server(phones=phones) as server:
        client = adbutils.AdbClient(host="127.0.0.1", port=server.port)
        assert client.disconnect("192.168.1.23", raise_error=True) == "disconnected 192.168.1.23"
        assert [d.serial for d in client.device_list()] == ["virtual-1"]
        with pytest.raises(AdbError, match="no such device"):
            client.disconnect("192.168.1.23:5555", raise_error=True)


def test_wait_for_sends_okay_at_once_and_again_when_the_wait_is_over(
    virtual_server: AdbServer,
) -> None:
    port = virtual_server.port
    assert raw_request(port, "host:wait-for-any-device", 2) == b"OKAYOKAY"
    assert raw_request(port, "host:wait-for-usb-any", 2) == b"OKAYOKAY"
    # A serial holding host:port is read as a serial, not as a service.
    request = "host-serial:127.0.0.1:1234:wait-for-any-disconnect"
    assert raw_request(port, request, 2) == b"OKAYOKAY"
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        request = "host:wait-for-any-recovery"  # the phones never reboot into recovery
        sock.sendall(f"{len(request):04x}{request}".encode())
        assert sock.recv(4) == b"OKAY"
        sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            sock.recv(4)
    assert raw_request(port, "host:wait-for-any-nap", 1) == b"FAIL"


def test_wait_for_transport_kinds_through_adbutils(
    virtual_server: AdbServer, adb_client: adbutils.AdbClient
) -> None:
    adb_client.wait_for("127.0.0.1:1234", state="disconnect", timeout=2)
    adb_client.wait_for(transport="usb", state="device", timeout=2)
    with pytest.raises(AdbTimeout):
        adb_client.wait_for(transport="usb", state="disconnect", timeout=0.5)
    with pytest.raises(AdbTimeout):
        adb_client.wait_for(transport="local", state="device", timeout=0.5)
    threading.Timer(0.2, virtual_server.add_phone, args=(fast_phone("emulator-5554"),)).start()
    started = time.monotonic()
    adb_client.wait_for(transport="local", state="device", timeout=5)
    assert time.monotonic() - started < 4
    # Two phones now: a wait without a serial cannot tell which one is meant.
    with pytest.raises(AdbError, match="more than one device/emulator"):
        adb_client.wait_for(state="device", timeout=2)
    threading.Timer(0.2, virtual_server.remove_phone, args=("virtual-1",)).start()
    adb_client.wait_for("virtual-1", transport="usb", state="disconnect", timeout=5)


@needs_adb_binary
def test_adb_binary_disconnect_and_wait_for(virtual_server: AdbServer) -> None:
    port = virtual_server.port
    missing = adb(port, "disconnect", "127.0.0.1:1234")
    assert missing.returncode == 1
    assert b"no such device '127.0.0.1:1234'" in missing.stdout + missing.stderr
    assert adb(port, "wait-for-device", timeout=10).returncode == 0
    assert adb(port, "wait-for-usb-device", timeout=10).returncode == 0
    gone = adb(port, "-s", "10.9.8.7:5555", "wait-for-disconnect", timeout=10)
    assert gone.returncode == 0
    with pytest.raises(subprocess.TimeoutExpired):
        adb(port, "wait-for-local-device", timeout=1.5)
