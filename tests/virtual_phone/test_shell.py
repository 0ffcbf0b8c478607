"""The virtual phone's shell and commands, through adbutils as agents and recorders use them."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import adbutils
import pytest

from virtual_phone import FROZEN_CLOCK, AdbServer, VirtualPhone, running_server

ADB_KEYBOARD = "com.android.adbkeyboard/.AdbIME"


class _SpyPhone(VirtualPhone):
    """The real phone, also remembering the text that reached it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.typed: list[str] = []
        self.committed: list[str] = []

    def input_text(self, text: str) -> None:
        self.typed.append(text)
        super().input_text(text)

    def commit_text(self, text: str) -> None:
        self.committed.append(text)
        super().commit_text(text)


@pytest.fixture
def spy() -> Iterator[tuple[_SpyPhone, adbutils.AdbDevice, AdbServer]]:
    phone = _SpyPhone("virtual-1", settle_ms=(0, 0))
    with running_server(phones=[phone]) as server:
        client = adbutils.AdbClient(host="127.0.0.1", port=server.port)
        yield phone, client.device("virtual-1"), server


@pytest.fixture
def device(adb_client: adbutils.AdbClient) -> adbutils.AdbDevice:
    return adb_client.device("virtual-1")


def run(device: adbutils.AdbDevice, command: str) -> adbutils.ShellReturn:
    return device.shell2(command, v2=True)


@pytest.mark.parametrize(
    ("command", "stdout"),
    [
        ("echo 'a  b'", "a  b\n"),
        ('echo "home=$HOME"', "home=/\n"),
        ("echo a\\ \\ b", "a  b\n"),
        ("echo 'it'\\''s'", "it's\n"),
        ('echo "say \\"hi\\" \\$HOME"', 'say "hi" $HOME\n'),
        ("X=1; echo $X", "1\n"),
        ("X=2 sh -c 'echo $X'; echo \"[$X]\"", "2\n[]\n"),
        ("true; echo $?; false; echo $?", "0\n1\n"),
        ("false && echo no || echo yes", "yes\n"),
        ("true || echo no; echo end", "end\n"),
        ("echo $(echo inner)", "inner\n"),
        ("echo `echo back`", "back\n"),
        ("echo '$(echo inner)'", "$(echo inner)\n"),
        ("echo \"$(echo 'in  ner')\"", "in  ner\n"),
        ("echo $(echo 'in  ner')", "in ner\n"),
        ("echo one | cat", "one\n"),
        ("echo hello | grep -c ell", "1\n"),
        ("echo hi > /sdcard/f.txt; echo more >> /sdcard/f.txt; cat /sdcard/f.txt", "hi\nmore\n"),
        ("ls /missing 2>/dev/null; echo $?", "1\n"),
        ("ls /missing 2>&1 | grep -c missing", "1\n"),
        ("touch /sdcard/a.txt /sdcard/b.txt; ls /sdcard/*.txt", "/sdcard/a.txt\n/sdcard/b.txt\n"),
        ("echo '*.txt'", "*.txt\n"),
        ("cd /sdcard && mkdir -p x/y && ls x", "y\n"),
        ("echo a; # a comment ; echo b", "a\n"),
    ],
)
def test_shell_language(device: adbutils.AdbDevice, command: str, stdout: str) -> None:
    result = run(device, command)
    assert (result.stdout, result.stderr) == (stdout, "")


def test_unknown_command_and_syntax_errors(device: adbutils.AdbDevice) -> None:
    missing = run(device, "frobnicate --now")
    assert missing.returncode == 127
    assert missing.stderr == "/system/bin/sh: frobnicate: inaccessible or not found\n"
    broken = run(device, "echo 'unterminated")
    assert broken.returncode != 0
    assert broken.stderr.startswith("/system/bin/sh: syntax error")
    assert run(device, "exit 7").returncode == 7


@pytest.mark.parametrize(
    ("command", "status", "message"),
    [
        ("head -n many", 1, "head: invalid number 'many'"),
        ("echo x | grep '('", 2, "grep: bad regex"),
        ("exit soon", 2, "exit: soon: bad number"),
        ("input tap 1", 1, "Error: input tap <x> <y>"),
        ("input keyevent NOT_A_KEY", 1, "unknown key code"),
        ("cat /nope", 1, "cat: /nope: No such file or directory"),
        ("cd /nope", 2, "cd: /nope"),
    ],
)
def test_bad_arguments_fail_with_a_message(
    device: adbutils.AdbDevice, command: str, status: int, message: str
) -> None:
    result = run(device, command)
    assert result.returncode == status
    assert message in result.stderr


@pytest.mark.parametrize(
    "text",
    ["'; rm -rf /sdcard; echo '", "$(reboot)", "`id`", 'say "hi" && exit 3', "a;b|c&d", "%%"],
)
def test_send_keys_types_hostile_text_literally(spy, text: str) -> None:
    phone, device, server = spy
    device.send_keys(text)
    assert phone.typed == [text]
    assert server.device("virtual-1").fs.is_dir("/sdcard/Download")


def test_input_text_follows_android_rules(spy) -> None:
    phone, device, _ = spy
    device.shell("input text hello%sworld")
    assert phone.typed == ["hello world"]
    result = device.shell2(["input", "text", "héllo"], v2=True)
    assert result.returncode == 255
    assert "NullPointerException" in result.stderr
    assert phone.typed == ["hello world"]  # non-ASCII text types nothing, as on Android


def test_adb_keyboard_broadcasts_need_the_ime(spy) -> None:
    phone, device, _ = spy
    encoded = base64.b64encode("héllo wörld 你好".encode()).decode()
    broadcast = ["am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", encoded]
    out = device.shell(broadcast)
    assert out.endswith("Broadcast completed: result=0")
    assert phone.committed == []  # another IME is active: the broadcast does nothing

    assert device.shell(["ime", "set", ADB_KEYBOARD]).startswith("Input method")
    assert phone.ime == ADB_KEYBOARD
    device.shell(broadcast)
    device.shell(["am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", "it's"])
    assert phone.committed == ["héllo wörld 你好", "it's"]


def test_ime_and_settings(virtual_server: AdbServer, device: adbutils.AdbDevice) -> None:
    phone = virtual_server.phones[0]
    assert device.shell("ime list -s").splitlines() == phone.ime_list()
    assert device.shell("settings get secure default_input_method") == phone.ime
    device.shell(f"settings put secure default_input_method {ADB_KEYBOARD}")
    assert phone.ime == ADB_KEYBOARD
    assert device.shell("settings get system no_such_key") == "null"
    device.shell("settings put system font_scale 1.3")
    assert phone.settings["system"]["font_scale"] == "1.3"
    assert run(device, "ime set com.example/.Nope").returncode == 1


def test_properties(virtual_server: AdbServer, device: adbutils.AdbDevice) -> None:
    phone = virtual_server.phones[0]
    assert device.shell("getprop debug.virtualphone.screen") == phone.ground_truth()
    assert device.getprop("ro.build.version.sdk") == str(phone.sdk)
    device.shell("setprop debug.test.value 42")
    assert device.getprop("debug.test.value") == "42"
    listing = device.shell("getprop")
    assert f"[ro.serialno]: [{phone.serial}]" in listing.splitlines()


def test_window_manager_and_dumpsys(virtual_server: AdbServer, device: adbutils.AdbDevice) -> None:
    phone = virtual_server.phones[0]
    assert device.shell("wm size") == f"Physical size: {phone.width}x{phone.height}"
    assert device.shell("wm density") == f"Physical density: {phone.density}"
    package, _ = phone.focus()
    assert "mCurrentFocus=Window{" in device.shell("dumpsys window windows")
    assert f"u0 {package}/" in device.shell("dumpsys window | grep mCurrentFocus")
    assert "mResumedActivity: ActivityRecord{" in device.shell("dumpsys activity activities")
    assert device.rotation() == 0
    assert device.is_screen_on()
    assert device.shell("dumpsys nothing") == "Can't find service: nothing"


def test_apps_start_stop_and_clear(virtual_server: AdbServer, device: adbutils.AdbDevice) -> None:
    phone = virtual_server.phones[0]
    packages = device.list_packages()
    assert packages == sorted(phone.packages())
    assert "com.android.settings" in packages

    device.app_start("com.android.settings")  # monkey -p ... 1
    assert device.app_current().package == "com.android.settings"
    _, activity = phone.focus()
    device.keyevent("HOME")
    assert device.app_current().package != "com.android.settings"
    device.shell(["am", "start", "-n", f"com.android.settings/{activity}"])
    assert device.app_current().package == "com.android.settings"
    device.keyevent("HOME")
    device.shell("am start -a android.settings.SETTINGS")
    assert device.app_current().package == "com.android.settings"
    device.shell("am start -a android.intent.action.MAIN -c android.intent.category.HOME")
    assert device.app_current().package == "com.android.launcher3"
    device.app_stop("com.android.settings")
    assert device.shell("pm clear com.android.settings") == "Success"

    bad = run(device, "am start -n com.example.none/.Main")
    assert bad.returncode == 1
    assert "Error" in bad.stderr
    assert run(device, "monkey -p com.example.none 1").returncode == 1


def test_uiautomator_and_screencap_write_files(
    virtual_server: AdbServer, device: adbutils.AdbDevice
) -> None:
    phone = virtual_server.phones[0]
    fs = virtual_server.device("virtual-1").fs
    assert device.shell("uiautomator dump") == "UI hierchary dumped to: /sdcard/window_dump.xml"
    assert fs.read_bytes("/sdcard/window_dump.xml").decode() == phone.hierarchy_xml()
    tty = device.shell("uiautomator dump --compressed /dev/tty")
    assert tty == phone.hierarchy_xml() + "UI hierchary dumped to: /dev/tty"
    device.shell("screencap -p /sdcard/shot.png")
    assert fs.read_bytes("/sdcard/shot.png") == phone.screencap_png()
    device.shell("screencap /sdcard/shot.raw")  # no -p and no .png: raw RGBA with a header
    raw = fs.read_bytes("/sdcard/shot.raw")
    header = int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:8], "little")
    assert header == (phone.width, phone.height)
    assert len(raw) == 16 + phone.width * phone.height * 4


def test_files_made_on_a_frozen_clock_phone_carry_its_time(device: adbutils.AdbDevice) -> None:
    device.shell("echo data > /sdcard/made.txt")
    assert device.sync.stat("/sdcard/made.txt").mtime == FROZEN_CLOCK
