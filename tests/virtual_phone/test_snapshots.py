"""Whole-phone snapshots through the shell command a client calls over ADB."""

from __future__ import annotations

import re
from collections.abc import Iterator

import adbutils
import pytest

from virtual_phone import VirtualPhone, fast_phone, running_server

MESSAGES = "com.android.messaging"


@pytest.fixture
def served() -> Iterator[tuple[VirtualPhone, adbutils.AdbDevice]]:
    phone = fast_phone("virtual-1")
    with running_server(phones=[phone]) as server:
        yield phone, adbutils.AdbClient(host="127.0.0.1", port=server.port).device("virtual-1")


def sh(device: adbutils.AdbDevice, command: str) -> adbutils.ShellReturn:
    return device.shell2(command, timeout=20)


def _tap_text(device: adbutils.AdbDevice, text: str) -> None:
    dump = device.shell("uiautomator dump /dev/tty", timeout=10)
    node = re.search(rf'<node [^>]*text="{re.escape(text)}"[^>]*>', dump)
    assert node is not None, dump[:2000]
    left, top, right, bottom = map(int, re.findall(r"\d+", node.group().split('bounds="')[1]))
    device.shell(f"input tap {(left + right) // 2} {(top + bottom) // 2}", timeout=10)


def _observe(device: adbutils.AdbDevice) -> dict[str, object]:
    """What a client can see of the phone's state."""
    return {
        "truth": device.shell("getprop debug.virtualphone.screen", timeout=10),
        "dump": device.shell("uiautomator dump /dev/tty", timeout=10),
        "pixels": device.shell("screencap -p", encoding=None, timeout=10),
        "focus": device.shell("dumpsys window | grep mCurrentFocus", timeout=10),
        "settings": device.shell("settings list system; settings list secure", timeout=10),
        "files": device.shell("ls -l /sdcard /sdcard/Download", timeout=10),
    }


def test_load_puts_back_every_part_of_the_phone(served) -> None:
    _phone, device = served
    sh(device, "settings put system font_scale 1.3")
    device.sync.push(b"kept", "/sdcard/Download/note.txt")
    sh(device, f"monkey -p {MESSAGES} 1")
    _tap_text(device, "Start chat")
    sh(device, "input text Rita")
    saved = _observe(device)
    assert sh(device, "virtualphone snapshot save clean").output == "OK\n"

    # Change everything a task could change.
    sh(device, "input text _and_more")
    sh(device, "settings put system font_scale 2.0; settings put secure ui_night_mode 2")
    sh(device, "rm /sdcard/Download/note.txt; echo new > /sdcard/other.txt")
    sh(device, f"pm clear {MESSAGES}; monkey -p com.android.settings 1")
    sh(device, "input keyevent POWER")
    assert _observe(device) != saved

    for _ in range(2):  # a snapshot can be loaded again and again
        assert sh(device, "virtualphone snapshot load clean").output == "OK\n"
        assert _observe(device) == saved
        assert device.sync.read_bytes("/sdcard/Download/note.txt") == b"kept"
        sh(device, "input text _x; input keyevent HOME")  # and used afterwards
        assert _observe(device) != saved


def test_the_phone_works_normally_after_a_load(served) -> None:
    _phone, device = served
    sh(device, f"monkey -p {MESSAGES} 1")
    _tap_text(device, "Start chat")
    sh(device, "virtualphone snapshot save compose")
    sh(device, "input keyevent HOME")
    sh(device, "virtualphone snapshot load compose")
    sh(device, "input text Tom")  # the restored field has the focus and takes typing
    assert 'text="Tom"' in device.shell("uiautomator dump /dev/tty", timeout=10)
    sh(device, "input keyevent BACK; input keyevent BACK")
    assert "messages/" in device.shell("getprop debug.virtualphone.screen", timeout=10)


def test_snapshot_names_are_listed_deleted_and_checked(served) -> None:
    _phone, device = served
    assert sh(device, "virtualphone snapshot save b; virtualphone snapshot save a").returncode == 0
    assert sh(device, "virtualphone snapshot list").output == "a\nb\n"
    assert sh(device, "virtualphone snapshot delete a").output == "OK\n"
    missing = sh(device, "virtualphone snapshot load a")
    assert missing.returncode == 1
    assert "no snapshot named 'a'" in missing.output
    bad = sh(device, "virtualphone snapshot save '../x'")
    assert bad.returncode == 1 and "bad snapshot name" in bad.output
    assert sh(device, "virtualphone snapshot").returncode == 1
    for index in range(15):
        sh(device, f"virtualphone snapshot save s{index}")
    full = sh(device, "virtualphone snapshot save one-too-many")
    assert full.returncode == 1 and "delete one first" in full.output
    assert sh(device, "virtualphone snapshot save b").returncode == 0  # replacing is fine


def test_snapshots_belong_to_their_phone() -> None:
    with running_server(phones=[fast_phone("virtual-1"), fast_phone("virtual-2")]) as server:
        client = adbutils.AdbClient(host="127.0.0.1", port=server.port)
        one, two = client.device("virtual-1"), client.device("virtual-2")
        sh(one, "virtualphone snapshot save mine")
        assert sh(two, "virtualphone snapshot list").output == ""
        assert sh(two, "virtualphone snapshot load mine").returncode == 1
