"""The virtual ADB server driven by the real, unmodified adbutils client."""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from collections.abc import Iterator

import adbutils
import pytest
from adbutils import AdbError, Network

from virtual_phone import AdbServer, VirtualPhone, fast_phone, running_server


def clickable_centers(xml: str) -> list[tuple[int, int]]:
    """Centers of the clickable nodes of a uiautomator dump, in document order."""
    centers = []
    for node in re.finditer(r"<node [^>]*>", xml):
        attributes = node.group()
        bounds = re.search(r'bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', attributes)
        if 'clickable="true"' in attributes and bounds:
            left, top, right, bottom = map(int, bounds.groups())
            centers.append(((left + right) // 2, (top + bottom) // 2))
    return centers


def start_echo_listener(server: AdbServer, address: str) -> None:
    """A device-side socket that echoes what it receives, like a small service on a phone."""

    def echo(sock: socket.socket) -> None:
        with sock:
            while data := sock.recv(4096):
                sock.sendall(data)

    server.device("virtual-1").listen(
        address, lambda sock: threading.Thread(target=echo, args=(sock,), daemon=True).start()
    )


def test_version_and_device_list(adb_client: adbutils.AdbClient) -> None:
    assert adb_client.server_version() == 41
    assert [d.serial for d in adb_client.device_list()] == ["virtual-1"]
    (info,) = adb_client.list(extended=True)
    assert info.state == "device"
    assert info.tags["model"] == "ElderPhone_Virtual"
    assert info.tags["transport_id"] == "1"


def test_device_info_and_features(adb_client: adbutils.AdbClient) -> None:
    device = adb_client.device("virtual-1")
    assert device.info == {
        "serialno": "virtual-1",
        "devpath": "virtual:virtual-1",
        "state": "device",
    }
    assert "shell_v2" in device.get_features().split(",")
    assert device.prop.model == "ElderPhone Virtual"


def test_unknown_serial_is_refused(adb_client: adbutils.AdbClient) -> None:
    with pytest.raises(AdbError, match="device 'nope' not found"):
        adb_client.device("nope").shell("echo hi")


def test_shell_v1_and_v2_report_output_and_exit_codes(adb_client: adbutils.AdbClient) -> None:
    device = adb_client.device("virtual-1")
    assert device.shell("echo hello; echo world") == "hello\nworld"
    assert device.shell2("false").returncode == 1
    result = device.shell2("echo out; ls /missing", v2=True)
    assert result.returncode == 1
    assert result.stdout == "out\n"
    assert result.stderr == "ls: /missing: No such file or directory\n"


def test_push_pull_round_trip(adb_client: adbutils.AdbClient, tmp_path) -> None:
    device = adb_client.device("virtual-1")
    payload = os.urandom(200_000)  # several 64 KiB sync chunks each way
    source = tmp_path / "blob.bin"
    source.write_bytes(payload)
    device.sync.push(source, "/sdcard/Download/new/blob.bin")
    info = device.sync.stat("/sdcard/Download/new/blob.bin")
    assert info.size == len(payload)
    assert "blob.bin" in [entry.path for entry in device.sync.list("/sdcard/Download/new")]
    target = tmp_path / "back.bin"
    device.sync.pull("/sdcard/Download/new/blob.bin", target)
    assert target.read_bytes() == payload


def test_pull_of_missing_file_fails(adb_client: adbutils.AdbClient) -> None:
    with pytest.raises(AdbError, match="No such file or directory"):
        adb_client.device("virtual-1").sync.read_bytes("/sdcard/none.txt")


def test_screenshot_is_the_phone_screen(
    virtual_server: AdbServer, adb_client: adbutils.AdbClient
) -> None:
    phone = virtual_server.phones[0]
    shot = adb_client.device("virtual-1").screenshot(error_ok=False)
    assert shot.size == (phone.width, phone.height)
    assert shot.tobytes() == phone.render().tobytes()


def test_framebuffer_is_the_phone_screen(
    virtual_server: AdbServer, adb_client: adbutils.AdbClient
) -> None:
    image = adb_client.device("virtual-1").framebuffer()
    assert image.convert("RGB").tobytes() == virtual_server.phones[0].render().tobytes()


def test_window_size_app_current_and_hierarchy(
    virtual_server: AdbServer, adb_client: adbutils.AdbClient
) -> None:
    phone = virtual_server.phones[0]
    device = adb_client.device("virtual-1")
    assert tuple(device.window_size()) == (phone.width, phone.height)
    package, _ = phone.focus()
    assert device.app_current().package == package
    xml = device.dump_hierarchy()
    assert xml == phone.hierarchy_xml()
    assert xml.startswith("<?xml")


def test_click_and_swipe_change_the_screen_like_direct_input(
    virtual_server: AdbServer, adb_client: adbutils.AdbClient
) -> None:
    phone = virtual_server.phones[0]
    reference = fast_phone("reference")
    device = adb_client.device("virtual-1")
    x, y = clickable_centers(phone.hierarchy_xml())[-1]
    before = phone.ground_truth()

    device.click(x, y)
    reference.tap(x, y)
    assert phone.ground_truth() == reference.ground_truth() != before

    device.swipe(300, 1800, 300, 600, 0.2)
    reference.swipe(300, 1800, 300, 600, 200)
    assert phone.ground_truth() == reference.ground_truth()

    device.keyevent("HOME")
    reference.key("HOME")
    assert phone.ground_truth() == reference.ground_truth()


class _SpyPhone(VirtualPhone):
    """The real phone, also remembering what text and keys reached it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.typed: list[str] = []
        self.keys: list[int | str] = []

    def input_text(self, text: str) -> None:
        self.typed.append(text)
        super().input_text(text)

    def key(self, keycode: int | str) -> None:
        self.keys.append(keycode)
        super().key(keycode)


@pytest.fixture
def spy_server() -> Iterator[AdbServer]:
    phone = _SpyPhone("virtual-1", settle_ms=(0, 0), frozen_clock=None)
    with running_server(phones=[phone]) as server:
        yield server


def test_send_keys_and_keyevent_reach_the_phone_verbatim(spy_server: AdbServer) -> None:
    phone = spy_server.phones[0]
    assert isinstance(phone, _SpyPhone)
    device = adbutils.AdbClient(host="127.0.0.1", port=spy_server.port).device("virtual-1")
    device.send_keys("it's 5 o'clock & $HOME")
    device.keyevent("KEYCODE_BACK")
    device.keyevent(66)
    assert phone.typed == ["it's 5 o'clock & $HOME"]
    assert phone.keys == ["KEYCODE_BACK", 66]


def test_forward_reaches_a_device_socket(
    virtual_server: AdbServer, adb_client: adbutils.AdbClient
) -> None:
    start_echo_listener(virtual_server, "localabstract:echo")
    device = adb_client.device("virtual-1")
    port = device.forward_port("localabstract:echo")
    assert [(f.serial, f.remote) for f in device.forward_list()] == [
        ("virtual-1", "localabstract:echo")
    ]
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"ping")
        assert sock.recv(4) == b"ping"
    device.forward_remove(f"tcp:{port}")
    assert device.forward_list() == []
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_create_connection_to_localabstract(
    virtual_server: AdbServer, adb_client: adbutils.AdbClient
) -> None:
    start_echo_listener(virtual_server, "localabstract:echo")
    device = adb_client.device("virtual-1")
    sock = device.create_connection(Network.LOCAL_ABSTRACT, "echo")
    with sock:
        sock.sendall(b"hello")
        assert sock.recv(5) == b"hello"
    with pytest.raises(AdbError):
        device.create_connection(Network.LOCAL_ABSTRACT, "nobody-listens")


def test_reverse_forwards_are_listed_and_removed(adb_client: adbutils.AdbClient) -> None:
    device = adb_client.device("virtual-1")
    device.reverse("tcp:1234", "tcp:5678")
    assert [(r.remote, r.local) for r in device.reverse_list()] == [("tcp:1234", "tcp:5678")]
    device.reverse_remove_all()
    assert device.reverse_list() == []


def test_two_devices_and_track_devices_sees_plugging() -> None:
    with running_server(phones=[fast_phone("virtual-1"), fast_phone("virtual-2")]) as server:
        client = adbutils.AdbClient(host="127.0.0.1", port=server.port)
        assert sorted(d.serial for d in client.device_list()) == ["virtual-1", "virtual-2"]
        for serial in ("virtual-1", "virtual-2"):
            assert client.device(serial).getprop("ro.serialno") == serial

        events = client.track_devices()
        assert {(e.present, e.serial) for e in (next(events), next(events))} == {
            (True, "virtual-1"),
            (True, "virtual-2"),
        }
        server.add_phone(fast_phone("virtual-3"))
        assert next(events) == adbutils.DeviceEvent(True, "virtual-3", "device")
        server.remove_phone("virtual-1")
        assert next(events) == adbutils.DeviceEvent(False, "virtual-1", "absent")
        assert sorted(d.serial for d in client.device_list()) == ["virtual-2", "virtual-3"]


def _request(text: str) -> bytes:
    return f"{len(text):04x}{text}".encode()


def _raw(port: int, data: bytes, *, read: bool = True) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        if not read:
            return b""
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
        return reply


def test_malformed_requests_leave_the_server_serving(
    virtual_server: AdbServer, adb_client: adbutils.AdbClient
) -> None:
    port = virtual_server.port
    transport = _request("host:transport:virtual-1")
    assert _raw(port, b"zzzzhost:version").startswith(b"FAIL")
    assert _raw(port, b"0000").startswith(b"FAIL")
    _raw(port, b"00ffhost:ver", read=False)  # the client vanishes mid-request
    assert _raw(port, _request("host:bogus")).startswith(b"FAIL")
    assert _raw(port, transport + _request("bogus:service")) == (
        b"OKAY" + b"FAIL" + _request("unknown service: bogus:service")
    )
    # A push whose client vanishes after the first data chunk leaves no file behind.
    path = b"/sdcard/partial,33188"
    push = b"SEND" + len(path).to_bytes(4, "little") + path + b"DATA\x10\x00\x00\x00abc"
    _raw(port, transport + _request("sync:") + push, read=False)
    bogus_sync = b"XXXX\x01\x00\x00\x00/"
    assert b"FAIL" in _raw(port, transport + _request("sync:") + bogus_sync)

    device = adb_client.device("virtual-1")
    assert device.shell("echo still here") == "still here"
    assert not device.sync.exists("/sdcard/partial")


def test_closing_the_server_disconnects_clients_at_once() -> None:
    with running_server() as server:
        device = adbutils.AdbClient(host="127.0.0.1", port=server.port).device("virtual-1")
        stream = device.shell("sleep 30", stream=True)
        stream.conn.settimeout(5)
        started = time.monotonic()
        server.close()
        assert stream.conn.recv(100) == b""
        assert time.monotonic() - started < 2  # generous: the test machine may be busy
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", server.port), timeout=1).close()


def test_kill_stops_the_server() -> None:
    with running_server() as server:
        client = adbutils.AdbClient(host="127.0.0.1", port=server.port)
        client.server_kill()
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
            except OSError:
                break
            time.sleep(0.02)
        else:
            pytest.fail("the server still accepts connections after host:kill")


def test_wait_for_device_returns_when_the_phone_is_plugged_in(
    virtual_server: AdbServer, adb_client: adbutils.AdbClient
) -> None:
    adb_client.wait_for("virtual-1", timeout=5)  # already there
    threading.Timer(0.2, virtual_server.add_phone, args=(fast_phone("virtual-2"),)).start()
    started = time.monotonic()
    adb_client.wait_for("virtual-2", timeout=5)
    assert 0.1 < time.monotonic() - started < 3
    threading.Timer(0.2, virtual_server.remove_phone, args=("virtual-2",)).start()
    adb_client.wait_for("virtual-2", state="disconnect", timeout=5)
    assert [d.serial for d in adb_client.device_list()] == ["virtual-1"]
