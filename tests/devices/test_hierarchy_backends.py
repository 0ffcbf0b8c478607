"""The hierarchy backends (uiautomator, u2, auto) on the virtual phone, through real adb."""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Iterator

import adbutils
import pytest

from devices.android import AndroidDevice, adb_client
from devices.errors import DeviceError, HierarchyBackendError, HierarchyDumpError
from devices.u2 import DEVICE_PORT, JAR_ON_DEVICE, bundled_jar, read_response
from graph_builder.hierarchy import parse_hierarchy
from virtual_phone import AdbServer, fast_phone, running_server

SERIAL = "virtual-1"
CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


@pytest.fixture
def open_device(virtual_server: AdbServer) -> Iterator:
    opened: list[AndroidDevice] = []

    def opener(hierarchy: str, timeout: float = 10.0) -> AndroidDevice:
        client = adb_client(port=virtual_server.port)
        device = AndroidDevice(SERIAL, client=client, hierarchy=hierarchy, timeout=timeout)
        opened.append(device)
        return device

    yield opener
    for device in opened:
        device.close()


def server_answers(adb: adbutils.AdbDevice) -> bool:
    try:
        adb.create_connection(adbutils.Network.TCP, DEVICE_PORT).close()
    except adbutils.AdbError:
        return False
    return True


@pytest.mark.parametrize(
    "opening",
    [
        "input keyevent HOME",
        "am start -n com.android.settings/.Settings",
        "monkey -p com.elderphone.pharmacy -c android.intent.category.LAUNCHER 1",
    ],
)
def test_u2_and_uiautomator_dump_the_same_screen(open_device, opening: str) -> None:
    by_dump = open_device("uiautomator")
    by_u2 = open_device("u2")
    by_dump.shell(opening)
    xml_dump, activity_dump = by_dump.dump_hierarchy()
    xml_u2, activity_u2 = by_u2.dump_hierarchy()
    elements = parse_hierarchy(xml_u2).elements
    assert len(elements) > 10
    assert elements == parse_hierarchy(xml_dump).elements
    assert activity_u2 == activity_dump is not None
    # observe() asks for the activity its own way with u2: the screens still agree
    seen_u2, seen_dump = by_u2.observe(), by_dump.observe()
    assert seen_u2.activity == seen_dump.activity == activity_dump
    assert seen_u2.png() == seen_dump.png()
    assert seen_u2.hierarchy().elements == seen_dump.hierarchy().elements == elements


def test_u2_pushes_the_bundled_jar_and_observes(open_device) -> None:
    device = open_device("u2")
    screen = device.observe()
    assert screen.activity == "com.android.launcher3/.uioverrides.QuickstepLauncher"
    hierarchy = screen.hierarchy()
    assert hierarchy is not None and len(hierarchy) > 10
    pushed = device.adb.sync.read_bytes(JAR_ON_DEVICE)
    assert hashlib.md5(pushed).digest() == hashlib.md5(bundled_jar().read_bytes()).digest()
    assert device.hierarchy_in_use == "u2" and device.hierarchy_note == ""
    # a second session finds the jar and the server in place and uses them
    again = open_device("u2")
    assert again.dump_hierarchy()[0] == device.dump_hierarchy()[0]


def test_closing_the_device_stops_its_server(open_device) -> None:
    device = open_device("u2")
    device.dump_hierarchy()
    assert server_answers(device.adb)
    device.close()
    deadline = time.monotonic() + 5
    while server_answers(device.adb) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not server_answers(device.adb)


def test_a_server_that_cannot_start_fails_u2_and_auto_falls_back_with_the_reason(
    virtual_server: AdbServer, open_device, caplog: pytest.LogCaptureFixture
) -> None:
    def crashing_server(inv):
        inv.error("java.lang.IllegalStateException: UiAutomationService already registered!\n")
        return 1

    virtual_server.device(SERIAL).commands["app_process"] = crashing_server
    with pytest.raises(HierarchyBackendError, match="already registered"):
        open_device("u2").dump_hierarchy()
    auto = open_device("auto")
    xml, activity = auto.dump_hierarchy()
    assert parse_hierarchy(xml).elements and activity is not None
    assert auto.hierarchy_in_use == "uiautomator"
    assert "already registered" in auto.hierarchy_note
    assert any("already registered" in r.getMessage() for r in caplog.records)


def test_a_server_that_never_answers_is_cut_at_the_whole_call_deadline(
    virtual_server: AdbServer, open_device
) -> None:
    def silent_server(inv):
        inv.write("[server] INFO: starting\n")
        inv.streams.flush()
        inv.cancelled.wait(30)
        return 0

    virtual_server.device(SERIAL).commands["app_process"] = silent_server
    device = open_device("u2", timeout=0.4)
    started = time.monotonic()
    with pytest.raises(HierarchyDumpError, match="did not start.*starting"):
        device.dump_hierarchy()
    assert time.monotonic() - started < 0.4 * 3 + 1.0
    # auto falls back in the same call and still answers within its deadline
    auto = open_device("auto", timeout=0.4)
    assert parse_hierarchy(auto.dump_hierarchy()[0]).elements


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(DeviceError, match="choose uiautomator, u2 or auto"):
        AndroidDevice(SERIAL, client=adbutils.AdbClient(port=1), hierarchy="fast")


@pytest.mark.parametrize(
    ("answer", "body", "closes"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npong", b"pong", False),
        (
            CHUNKED + b"2\r\npo\r\n2;x=1\r\nng\r\n0\r\n\r\n",
            b"pong",
            False,
        ),
        (
            CHUNKED + b"4\r\npong\r\n0\r\nX-T: 1\r\n\r\n",
            b"pong",
            False,
        ),
        (b"HTTP/1.0 200 OK\r\n\r\npong", b"pong", True),
        (b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", b"", True),
    ],
)
def test_answers_are_read_in_every_framing_a_server_may_use(answer, body, closes) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        for i in range(0, len(answer), 7):  # the answer arrives in small pieces
            theirs.sendall(answer[i : i + 7])
        if closes:
            theirs.shutdown(socket.SHUT_WR)
        response = read_response(ours)
    assert (response.body, response.closes) == (body, closes)
    assert response.status == int(answer.split()[1])


def test_a_damaged_answer_is_refused() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b"SSH-2.0-OpenSSH\r\n\r\n")
        with pytest.raises(ValueError, match="not an HTTP answer"):
            read_response(ours)


def test_a_trickling_answer_is_cut_at_the_deadline() -> None:
    ours, theirs = socket.socketpair()
    stop = threading.Event()

    def trickle() -> None:
        theirs.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        while not stop.wait(0.05):
            theirs.sendall(b"x")  # each byte would renew a per-read timeout

    sender = threading.Thread(target=trickle, daemon=True)
    sender.start()
    started = time.monotonic()
    try:
        with pytest.raises(TimeoutError):
            read_response(ours, deadline=started + 0.3)
        assert time.monotonic() - started < 1.0
    finally:
        stop.set()
        sender.join()
        ours.close()
        theirs.close()


def test_a_phone_without_room_for_the_jar_falls_back_under_auto() -> None:
    with running_server(phones=[fast_phone(SERIAL, storage_bytes=1_000_000)]) as server:
        client = adb_client(port=server.port)
        with pytest.raises(HierarchyBackendError, match="could not push the uiautomator2 server"):
            AndroidDevice(SERIAL, client=client, hierarchy="u2").dump_hierarchy()
        auto = AndroidDevice(SERIAL, client=client, hierarchy="auto")
        screen = auto.observe()
        assert screen.hierarchy() is not None and screen.activity is not None
        assert "could not push" in auto.hierarchy_note
        auto.close()
