"""Shell commands as Android 14 answers them, through the unmodified adbutils client:
`log` into what `logcat` shows, and a Wi-Fi address the usual parsing finds."""

from __future__ import annotations

import ipaddress
import re
import time
from pathlib import Path

import adbutils
import pytest

from virtual_phone import AdbServer


@pytest.fixture
def device(adb_client: adbutils.AdbClient) -> adbutils.AdbDevice:
    return adb_client.device("virtual-1")


def test_log_writes_what_logcat_shows_in_its_formats(device: adbutils.AdbDevice) -> None:
    device.shell("logcat -c")
    device.shell(["log", "-p", "i", "-t", "TAG", "hello there"])
    device.shell("log -p w -t Other careful")
    device.shell("echo from stdin | log -t Piped")
    dump = device.shell("logcat -d -v time")
    assert re.search(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} I/TAG\(\s*\d+\): hello there$", dump, re.M)
    assert re.search(r"W/Other\(\s*\d+\): careful$", dump, re.M)
    assert re.search(r"I/Piped\(\s*\d+\): from stdin$", dump, re.M)
    assert device.shell("logcat -d -v tag TAG:I *:S").splitlines() == ["I/TAG: hello there"]
    assert device.shell("logcat -d -v raw -s Other").splitlines() == ["careful"]
    assert device.shell("logcat -d -v brief *:W").splitlines()[-1].startswith("W/Other(")
    assert "[ " in device.shell("logcat -d -v long TAG:I *:S")
    threadtime = device.shell("logcat -d TAG:I *:S")
    assert re.search(r"^\d\d-\d\d [\d:.]+\s+\d+\s+\d+ I TAG\s*: hello there$", threadtime, re.M)
    bad = device.shell2("log -p x -t T nope")
    assert bad.returncode == 2
    device.shell("logcat -c")
    assert device.shell("logcat -d -s TAG") == ""


def test_adbutils_logcat_follows_log_and_stops(device: adbutils.AdbDevice, tmp_path: Path) -> None:
    target = tmp_path / "logcat.txt"
    follower = device.logcat(target, clear=True, command="logcat -v time", re_filter="I/TAG")
    device.shell(["log", "-p", "i", "-t", "TAG", "hello"])
    deadline = time.monotonic() + 5
    while "hello" not in target.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    # The reader only looks at its stop flag between lines: the phone's log keeps moving.
    follower.stop(timeout=5)
    assert re.search(r"I/TAG.*hello", target.read_text())


def test_wlan_address_found_by_the_usual_parsing(
    device: adbutils.AdbDevice, virtual_server: AdbServer
) -> None:
    address = device.wlan_ip()
    assert ipaddress.ip_address(address) in ipaddress.ip_network("192.168.0.0/16")
    show = device.shell("ip addr show wlan0")
    assert re.search(rf"inet {re.escape(address)}/24 brd [\d.]+ scope global wlan0", show)
    inet = device.shell("ip -f inet addr show wlan0")
    assert "inet6" not in inet and f"inet {address}/24" in inet
    assert f"inet addr:{address}" in device.shell("ifconfig wlan0")
    route = device.shell("ip route")
    subnet = address.rsplit(".", 1)[0]
    assert re.search(rf"^{subnet}\.0/24 dev wlan0 .* src {re.escape(address)}", route, re.M)
    assert f"src {address}" in device.shell("ip route get 8.8.8.8")
    # The same phone keeps its address; Wi-Fi off takes it away.
    assert device.wlan_ip() == address
    device.shell("svc wifi disable")
    assert "inet " not in device.shell("ip addr show wlan0")
    assert device.shell("ip route") == ""
    with pytest.raises(adbutils.AdbError):
        device.wlan_ip()
    device.shell("svc wifi enable")
    assert device.wlan_ip() == address
    missing = device.shell2("ip addr show eth7")
    assert missing.returncode == 1
    assert 'Device "eth7" does not exist.' in missing.output
