"""Device addresses, health checks and `elderbench devices`, on the virtual phone."""

from __future__ import annotations

import json

import pytest

from devices.address import DeviceAddress, open_device, parse_server
from devices.errors import DeviceError
from devices.health import check_health
from elderbench.cli import main as elderbench


@pytest.mark.parametrize(
    ("text", "serial", "host", "port"),
    [
        ("emulator-5554", "emulator-5554", None, None),
        ("R58M12345@farm-2:5037", "R58M12345", "farm-2", 5037),
        ("192.168.1.20:5555@10.0.0.7:5038", "192.168.1.20:5555", "10.0.0.7", 5038),
        ("virtual-1@[::1]:5099", "virtual-1", "::1", 5099),
    ],
)
def test_addresses_name_the_serial_and_its_adb_server(text, serial, host, port):
    address = DeviceAddress.parse(text)
    assert (address.serial, address.host, address.port) == (serial, host, port)
    assert DeviceAddress.parse(str(address)) == address


@pytest.mark.parametrize("bad", ["", "a b", "x@host", "x@host:0", "x@host:99999", "@h:1"])
def test_bad_addresses_say_how_to_write_one(bad):
    with pytest.raises(DeviceError, match="SERIAL|HOST:PORT"):
        DeviceAddress.parse(bad)
    with pytest.raises(DeviceError):
        parse_server("nohost")


def test_a_healthy_phone_passes_every_check(virtual_server):
    address = DeviceAddress("virtual-1", "127.0.0.1", virtual_server.port)
    with open_device(address) as device:
        report = check_health(device)
    assert report.ok, report.summary()
    assert [c.name for c in report.checks] == ["adb", "screen", "unlocked", "launcher"]
    assert report.checks[-1].detail == "com.android.launcher3"


def test_a_dark_screen_fails_and_names_the_cure(virtual_server):
    with open_device(DeviceAddress("virtual-1", "127.0.0.1", virtual_server.port)) as device:
        device.shell("input keyevent KEYCODE_SLEEP")
        report = check_health(device)
        assert not report.ok and "screen: off" in report.summary()
        assert "KEYCODE_WAKEUP" in report.summary()
        device.shell("input keyevent KEYCODE_WAKEUP")
        assert check_health(device).ok


def test_a_vanished_phone_fails_the_adb_check(virtual_server):
    device = open_device(DeviceAddress("virtual-1", "127.0.0.1", virtual_server.port))
    virtual_server.remove_phone("virtual-1")
    try:
        report = check_health(device, timeout=3)
    finally:
        device.close()
    assert not report.ok and report.checks[0].name == "adb" and len(report.checks) == 1


def test_devices_command_lists_every_server(virtual_server, capsys):
    from virtual_phone import fast_phone

    virtual_server.add_phone(fast_phone("virtual-2"))
    with open_device(DeviceAddress("virtual-2", "127.0.0.1", virtual_server.port)) as device:
        device.shell("input keyevent KEYCODE_SLEEP")
    server = f"127.0.0.1:{virtual_server.port}"
    code = elderbench(["devices", "--server", server, "--server", "127.0.0.1:1", "--json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1  # one server did not answer
    by_address = {r.get("address"): r for r in rows}
    healthy = by_address[f"virtual-1@{server}"]
    assert healthy["state"] == "device" and healthy["size"] == "1080x2400"
    assert healthy["health"] == "healthy"
    assert "screen: off" in by_address[f"virtual-2@{server}"]["health"]
    assert any("127.0.0.1:1" in r.get("server", "") and "error" in r for r in rows)
