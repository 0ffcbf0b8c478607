"""The uiautomator2 test-server impersonation, driven by the unmodified uiautomator2 client."""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import adbutils
import numpy as np
import pytest
import uiautomator2
from uiautomator2.exceptions import RPCUnknownError, UiObjectNotFoundError

from virtual_phone import AdbServer, u2_server

SERIAL = "virtual-1"
JAR = "/data/local/tmp/u2.jar"
PHARMACY = "com.elderphone.pharmacy"


def pings(device: adbutils.AdbDevice) -> bool:
    sock = device.create_connection(adbutils.Network.TCP, 9008)
    try:
        sock.settimeout(5)
        sock.sendall(b"GET /ping HTTP/1.1\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    finally:
        sock.close()
    return answer.endswith(b"pong")


def elements(xml: str) -> list[dict[str, str]]:
    return [dict(node.attrib) for node in ET.fromstring(xml.encode("utf-8")).iter("node")]


@pytest.fixture
def u2(adb_client: adbutils.AdbClient) -> Iterator[uiautomator2.Device]:
    device = uiautomator2.connect(adb_client.device(SERIAL))
    yield device
    device.stop_uiautomator()


def test_the_client_pushes_its_jar_and_starts_the_server(
    u2: uiautomator2.Device, adb_client: adbutils.AdbClient
) -> None:
    device = adb_client.device(SERIAL)
    assert device.shell(f"ls {JAR}").strip() == JAR
    # the server listens on the device's tcp:9008 and answers HTTP there
    sock = device.create_connection(adbutils.Network.TCP, 9008)
    try:
        sock.sendall(b"GET /ping HTTP/1.1\r\nHost: device\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"\r\n\r\npong")


def test_dump_hierarchy_is_the_uiautomator_dump_of_the_same_screen(
    u2: uiautomator2.Device, adb_client: adbutils.AdbClient
) -> None:
    u2.app_start(PHARMACY)
    by_u2 = u2.dump_hierarchy()
    by_dump = adb_client.device(SERIAL).shell("uiautomator dump /dev/tty")
    by_dump = by_dump[: by_dump.rindex("</hierarchy>") + len("</hierarchy>")]
    assert elements(by_u2) == elements(by_dump)
    assert any(e["text"] == "CarePlus Pharmacy" for e in elements(by_u2))


def test_info_window_size_and_app_current(
    u2: uiautomator2.Device, virtual_server: AdbServer
) -> None:
    phone = virtual_server.device(SERIAL).phone
    info = u2.info
    assert (info["displayWidth"], info["displayHeight"]) == (phone.width, phone.height)
    assert info["currentPackageName"] == "com.android.launcher3"
    assert info["screenOn"] is True and info["sdkInt"] == 34
    assert u2.window_size() == (phone.width, phone.height)
    assert u2.app_current()["package"] == "com.android.launcher3"


def test_selectors_find_and_click(u2: uiautomator2.Device) -> None:
    assert u2(text="Settings").exists
    assert not u2(text="No such app").exists
    assert u2(textStartsWith="Sett", clickable=True).count == 1
    u2(text="Settings").click()
    assert u2.app_current()["package"] == "com.android.settings"
    assert u2(text="Network & internet").wait(timeout=2)
    assert u2(resourceIdMatches=r".*:id/title", text="Battery").info["text"] == "Battery"
    with pytest.raises(UiObjectNotFoundError):
        u2(text="No such row").get_text(timeout=0)


def test_keys_coordinates_and_text(u2: uiautomator2.Device) -> None:
    u2.app_start(PHARMACY)
    field = u2(className="android.widget.EditText")
    field.set_text("aspirin")
    assert field.get_text() == "aspirin"
    u2.press("home")
    assert u2.app_current()["package"] == "com.android.launcher3"
    left, top, right, bottom = u2(text="Settings").bounds()
    u2.click((left + right) // 2, (top + bottom) // 2)
    assert u2.app_current()["package"] == "com.android.settings"


def test_screenshot_is_the_screen(u2: uiautomator2.Device, virtual_server: AdbServer) -> None:
    shot = u2.screenshot()
    screen = virtual_server.device(SERIAL).phone.render()
    assert shot.size == screen.size
    difference = np.abs(np.asarray(shot, dtype=int) - np.asarray(screen, dtype=int)).mean()
    assert difference < 4  # JPEG at quality 80, not another picture


def test_unknown_method_and_bad_requests(
    u2: uiautomator2.Device, adb_client: adbutils.AdbClient
) -> None:
    with pytest.raises(RPCUnknownError, match="-32601"):
        u2.jsonrpc.noSuchMethod()
    sock = adb_client.device(SERIAL).create_connection(adbutils.Network.TCP, 9008)
    try:
        body = b"{not json"
        head = f"POST /jsonrpc/0 HTTP/1.1\r\nContent-Length: {len(body)}\r\n"
        sock.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    finally:
        sock.close()
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]["code"] == -32700


def test_server_lives_as_long_as_its_shell_stream(
    u2: uiautomator2.Device, adb_client: adbutils.AdbClient
) -> None:
    device = adb_client.device(SERIAL)
    u2.stop_uiautomator()
    with pytest.raises(adbutils.AdbError):
        device.create_connection(adbutils.Network.TCP, 9008).close()
    assert u2.info["displayWidth"] > 0  # the client starts it again on its next call


def test_without_its_jar_the_class_is_not_found(adb_client: adbutils.AdbClient) -> None:
    device = adb_client.device(SERIAL)
    result = device.shell2(f"CLASSPATH={JAR} app_process / com.wetest.uia2.Main -p 9008")
    assert result.returncode == 1
    assert 'ClassNotFoundException: Didn\'t find class "com.wetest.uia2.Main"' in result.output


def test_xpath_swipes_and_the_shade_work_through_the_client(u2: uiautomator2.Device) -> None:
    u2.xpath('//*[@text="Settings"]').click()
    assert u2.app_current()["package"] == "com.android.settings"
    u2.press("back")
    assert u2.app_current()["package"] == "com.android.launcher3"
    u2.open_notification()
    assert u2.info["currentPackageName"] == "com.android.systemui"
    u2.press("back")
    assert u2.info["currentPackageName"] == "com.android.launcher3"


def test_a_method_that_breaks_answers_an_error_and_the_server_goes_on(
    u2: uiautomator2.Device, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(phone, *args):
        raise KeyError("no such thing")

    monkeypatch.setitem(u2_server.METHODS, "broken", broken)
    with pytest.raises(RPCUnknownError, match="KeyError"):
        u2.jsonrpc.broken()
    assert u2(text="Settings").exists


def test_connections_past_the_limit_are_closed_and_the_server_goes_on(
    u2: uiautomator2.Device, adb_client: adbutils.AdbClient
) -> None:
    device = adb_client.device(SERIAL)
    held = [
        device.create_connection(adbutils.Network.TCP, 9008)
        for _ in range(u2_server.MAX_CONNECTIONS)
    ]
    try:
        extra = device.create_connection(adbutils.Network.TCP, 9008)
        extra.settimeout(5)
        extra.sendall(b"GET /ping HTTP/1.1\r\n\r\n")
        assert extra.recv(100) == b""  # closed without an answer
        extra.close()
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 5
    while not pings(device) and time.monotonic() < deadline:
        time.sleep(0.02)  # the server notices the closed connections
    assert pings(device)
    assert u2(text="Settings").exists
