"""The virtual phone under stress: long and hostile input, many clients, big pushes.

Every test drives the phone through an unmodified adbutils client, as agents and the
studio do, and checks that the server still answers afterwards.
"""

from __future__ import annotations

import base64
import hashlib
import re
import socket
import struct
import threading
import time
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator

import adbutils
import pytest
from PIL import ImageFont

from virtual_phone import AdbServer, fast_phone, running_server
from virtual_phone.phone import VirtualPhone

MESSAGES = "com.android.messaging"


@pytest.fixture
def thread_errors(monkeypatch: pytest.MonkeyPatch) -> list[BaseException]:
    """Exceptions that escaped any thread while the test ran."""
    errors: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    return errors


@pytest.fixture
def served() -> Iterator[tuple[VirtualPhone, adbutils.AdbDevice, AdbServer]]:
    phone = fast_phone("virtual-1")
    with running_server(phones=[phone]) as server:
        client = adbutils.AdbClient(host="127.0.0.1", port=server.port)
        yield phone, client.device("virtual-1"), server


def _still_serving(device: adbutils.AdbDevice) -> None:
    assert device.shell("echo alive", timeout=10) == "alive"


def _tap_text(device: adbutils.AdbDevice, text: str) -> None:
    dump = device.shell("uiautomator dump /dev/tty", timeout=10)
    node = re.search(rf'<node [^>]*text="{re.escape(text)}"[^>]*>', dump)
    assert node is not None, dump[:2000]
    left, top, right, bottom = map(int, re.findall(r"\d+", node.group().split('bounds="')[1]))
    device.shell(f"input tap {(left + right) // 2} {(top + bottom) // 2}", timeout=10)


def _open_recipient_field(device: adbutils.AdbDevice) -> None:
    device.shell(f"monkey -p {MESSAGES} 1", timeout=10)
    _tap_text(device, "Start chat")


def _font_measurements_while(action) -> int:  # type: ignore[no-untyped-def]
    original = ImageFont.FreeTypeFont.getlength
    calls = 0

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        return original(self, *args, **kwargs)

    ImageFont.FreeTypeFont.getlength = counting  # type: ignore[method-assign]
    try:
        action()
    finally:
        ImageFont.FreeTypeFont.getlength = original  # type: ignore[method-assign]
    return calls


def test_a_long_typed_text_costs_no_more_to_draw_than_a_short_one(served) -> None:
    """1000 typed characters once made the next screencap take 10 s (layout measured every
    prefix of the long word); drawing now measures as often as for 10 characters."""
    _phone, device, _server = served
    _open_recipient_field(device)
    device.shell("input text " + "a" * 10, timeout=10)
    short = _font_measurements_while(lambda: device.shell("screencap -p", encoding=None))
    device.shell("input text " + "a" * 990, timeout=10)
    long = _font_measurements_while(lambda: device.shell("screencap -p", encoding=None))
    assert long <= short + 40
    assert 'text="' + "a" * 1000 + '"' in device.shell("uiautomator dump /dev/tty", timeout=10)


def test_a_typed_nul_character_keeps_every_dump_valid_xml(served) -> None:
    _phone, device, _server = served
    device.shell("ime set com.android.adbkeyboard/.AdbIME", timeout=10)
    _open_recipient_field(device)
    message = base64.b64encode(b"a\x00b\x07c").decode()
    device.shell(f"am broadcast -a ADB_INPUT_B64 --es msg {message}", timeout=10)
    for _ in range(2):
        dump = device.shell("uiautomator dump /dev/tty", timeout=10)
        root = ET.fromstring(dump[: dump.rindex("</hierarchy>") + len("</hierarchy>")])
        texts = [node.get("text") for node in root.iter("node")]
        assert "a.b.c" in texts  # shown as uiautomator shows control characters


def test_a_request_longer_than_the_protocol_allows_is_refused_in_plain_words(
    served, thread_errors
) -> None:
    _phone, device, _server = served
    for size in (70_000, 1 << 20):
        with pytest.raises(adbutils.AdbError, match="request too long") as caught:
            device.shell("echo " + "a" * size, timeout=10)
        assert len(str(caught.value)) < 500  # not the megabyte echoed back
    _still_serving(device)
    assert not thread_errors


def test_deeply_nested_substitutions_are_refused_by_the_shell(served, thread_errors) -> None:
    _phone, device, _server = served
    depth = 400
    nested = "$(echo " * depth + "x" + ")" * depth
    result = device.shell2(f"echo {nested}; echo done", timeout=20)
    # The innermost allowed level fails; the echo around it still succeeds, as in mksh.
    assert result.output == "/system/bin/sh: command substitutions nested too deeply\n\ndone\n"
    nested_shells = "sh -c 'sh -c \"sh -c true\"'"
    assert device.shell2(nested_shells, timeout=10).returncode == 0
    assert device.shell2("echo $(echo $(echo deep))", timeout=10).output == "deep\n"
    _still_serving(device)
    assert not thread_errors


def _connection_threads() -> int:
    return sum(thread.name == "adb-connection" for thread in threading.enumerate())


def test_a_sleep_of_any_length_ends_when_the_client_goes(served, thread_errors) -> None:
    _phone, device, _server = served
    before = _connection_threads()
    for duration in ("1e300", "inf", "99999d"):
        with pytest.raises(adbutils.AdbTimeout):
            device.shell(f"sleep {duration}", timeout=0.5)
    deadline = time.monotonic() + 10
    while _connection_threads() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _connection_threads() <= before  # every sleeping command noticed the close
    bad = device.shell2("sleep nan; sleep -1; sleep 0.01s; echo $?", timeout=10)
    assert bad.output.count("sleep: invalid number") == 2
    assert bad.output.endswith("0\n")
    assert not thread_errors


def test_connections_beyond_the_cap_are_refused_until_one_closes(thread_errors) -> None:
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        server_with_cap = AdbServer([fast_phone("virtual-2")], max_connections=3).start()
        try:
            # Served connections count; idle ones do not (test_connection_limits.py).
            served = [
                socket.create_connection(("127.0.0.1", server_with_cap.port)) for _ in range(3)
            ]
            for sock in served:
                sock.sendall(b"0012host:track-devices")
                assert sock.recv(4) == b"OKAY"
            client = adbutils.AdbClient(host="127.0.0.1", port=server_with_cap.port)
            with pytest.raises(adbutils.AdbError, match="too many connections"):
                client.device_list()
            served.pop().close()
            deadline = time.monotonic() + 10
            while True:
                try:
                    serials = [d.serial for d in client.device_list()]
                    break
                except adbutils.AdbError:
                    assert time.monotonic() < deadline, "the freed slot was never reused"
                    time.sleep(0.05)
            assert serials == ["virtual-2"]
            for sock in served:
                sock.close()
        finally:
            server_with_cap.close()
        other = adbutils.AdbClient(host="127.0.0.1", port=server.port)
        assert [d.serial for d in other.device_list()] == ["virtual-1"]
    assert not thread_errors


def test_a_push_larger_than_the_phone_storage_is_refused(thread_errors) -> None:
    phone = fast_phone("virtual-1", storage_bytes=1 << 20)
    with running_server(phones=[phone]) as server:
        device = adbutils.AdbClient(host="127.0.0.1", port=server.port).device("virtual-1")
        with pytest.raises(adbutils.AdbError):  # adbutils shows only FAIL; adb the reason
            device.sync.push(b"x" * (3 << 20), "/sdcard/big.bin")
        assert device.shell2("ls /sdcard/big.bin", timeout=10).returncode == 1
        device.sync.push(b"y" * 1000, "/sdcard/small.bin")  # the session is still in step
        assert device.sync.read_bytes("/sdcard/small.bin") == b"y" * 1000
        full = device.shell2("screencap /sdcard/raw; echo x > /sdcard/small.bin", timeout=20)
        assert full.output == "screencap: /sdcard/raw: No space left on device\n"
        _still_serving(device)
    assert not thread_errors


def test_system_partitions_are_read_only(served) -> None:
    _phone, device, _server = served
    with pytest.raises(adbutils.AdbError):  # adbutils shows only FAIL; adb the reason
        device.sync.push(b"payload", "/system/bin/evil")
    assert device.shell2("ls /system/bin/evil", timeout=10).returncode == 1
    redirect = device.shell2("echo x > /system/x; mkdir /system/y; rm -r /system/bin", timeout=10)
    assert redirect.output == (
        "/system/bin/sh: can't create /system/x: Read-only file system\n"
        "mkdir: /system/y: Read-only file system\n"
        "rm: /system/bin: Read-only file system\n"
    )
    assert device.shell2("ls /system/bin", timeout=10).returncode == 0
    device.sync.push(b"payload", "/data/local/tmp/ok")
    assert device.sync.read_bytes("/data/local/tmp/ok") == b"payload"


# ---------------------------------------------------------------- what real tools rely on


def test_ps_and_pidof_list_the_started_apps(served) -> None:
    _phone, device, _server = served
    device.shell(f"monkey -p {MESSAGES} 1", timeout=10)
    listing = device.shell("ps -A", timeout=10)
    header, *rows = listing.splitlines()
    assert header.split() == ["USER", "PID", "PPID", "VSZ", "RSS", "WCHAN", "ADDR", "S", "NAME"]
    by_name = {row.split()[-1]: row.split()[1] for row in rows}
    assert {"init", "system_server", "com.android.systemui", MESSAGES} <= set(by_name)
    assert device.shell(f"pidof {MESSAGES}", timeout=10) == by_name[MESSAGES]
    assert [row.split()[-1] for row in device.shell("ps", timeout=10).splitlines()[1:]] == [
        "sh",
        "ps",
    ]
    device.shell(f"am force-stop {MESSAGES}", timeout=10)
    assert device.shell2(f"pidof {MESSAGES}", timeout=10).returncode == 1
    assert MESSAGES not in device.shell("ps -A", timeout=10)


def test_logcat_dumps_filters_clears_and_follows(served, thread_errors) -> None:
    _phone, device, _server = served
    device.shell(f"monkey -p {MESSAGES} 1", timeout=10)
    dump = device.shell("logcat -d", timeout=10)
    assert re.search(rf"I ActivityManager: Start proc \d+:{MESSAGES}/u0a\d+ for ", dump)
    brief = device.shell("logcat -d -v brief -s ActivityTaskManager", timeout=10).splitlines()
    assert brief and all(line.startswith("I/ActivityTaskManager(") for line in brief)
    device.shell("logcat -c", timeout=10)
    assert device.shell("logcat -d", timeout=10) == ""

    stream = device.shell("logcat -v tag", stream=True, timeout=10)
    stream.conn.settimeout(10)
    device.shell(f"am start -n {MESSAGES}/.ui.conversationlist.ConversationListActivity")
    line = stream.conn.makefile("rb").readline().decode()
    assert line.startswith("I/ActivityTaskManager: START u0 {cmp=com.android.messaging/")
    stream.close()
    before = time.monotonic()
    while _connection_threads() > 0 and time.monotonic() - before < 10:
        time.sleep(0.05)
    assert _connection_threads() == 0  # the follower stopped with its client
    assert not thread_errors


def test_cut_and_checksums(served) -> None:
    _phone, device, _server = served
    device.sync.push(b"alpha:beta:gamma\nno delimiter\n", "/sdcard/t.txt")
    assert device.shell("cut -d: -f2- /sdcard/t.txt", timeout=10) == "beta:gamma\nno delimiter"
    assert device.shell("cut -s -d : -f1,3 /sdcard/t.txt", timeout=10) == "alpha:gamma"
    assert device.shell("echo hello | cut -c2-4", timeout=10) == "ell"
    digest = hashlib.md5(b"alpha:beta:gamma\nno delimiter\n").hexdigest()
    assert device.shell("md5sum /sdcard/t.txt", timeout=10) == f"{digest}  /sdcard/t.txt"
    assert device.shell("cat /sdcard/t.txt | md5sum", timeout=10) == f"{digest}  -"
    sha = hashlib.sha256(b"x\n").hexdigest()
    assert device.shell("echo x | sha256sum", timeout=10) == f"{sha}  -"
    assert device.shell2("md5sum /sdcard/missing", timeout=10).returncode == 1


def _apk(path, package: str, version_name: str, version_code: int) -> None:  # type: ignore[no-untyped-def]
    """A zip with a binary AndroidManifest.xml (layout of AOSP's ResourceTypes.h)."""
    no_index = 0xFFFFFFFF
    strings = ["manifest", "package", "versionName", "versionCode", package, version_name]
    pool_data, offsets = b"", []
    for text in strings:
        offsets.append(len(pool_data))
        encoded = text.encode()
        pool_data += bytes([len(text), len(encoded)]) + encoded + b"\0"
    pool_data += b"\0" * (-len(pool_data) % 4)
    start = 28 + 4 * len(strings)
    pool = struct.pack(
        "<HHIIIIII", 0x0001, 28, start + len(pool_data), len(strings), 0, 0x100, start, 0
    )
    pool += struct.pack(f"<{len(strings)}I", *offsets) + pool_data
    attributes = [(1, 4, 0x03, 4), (2, 5, 0x03, 5), (3, no_index, 0x10, version_code)]
    attrs = b"".join(
        struct.pack("<IIIHBBI", no_index, name, raw, 8, 0, kind, value)
        for name, raw, kind, value in attributes
    )
    ext = struct.pack("<IIHHHHHH", no_index, 0, 20, 20, len(attributes), 0, 0, 0)
    element = struct.pack("<HHIII", 0x0102, 16, 16 + len(ext) + len(attrs), 1, no_index)
    body = pool + element + ext + attrs
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            "AndroidManifest.xml", struct.pack("<HHI", 0x0003, 8, 8 + len(body)) + body
        )
        archive.writestr("classes.dex", b"dex\n035\0")


def test_pm_install_and_uninstall_through_adbutils(served, tmp_path) -> None:
    _phone, device, _server = served
    apk = tmp_path / "notes.apk"
    _apk(apk, "org.example.notes", "2.5.1", 251)
    device.install(str(apk), nolaunch=True, silent=True)
    assert "org.example.notes" in device.list_packages()
    info = device.app_info("org.example.notes")
    assert info is not None and (info.version_name, info.version_code) == ("2.5.1", 251)
    again = device.shell("pm install /data/local/tmp/missing.apk", timeout=10)
    assert "Unable to open file" in again
    device.sync.push(apk.read_bytes(), "/data/local/tmp/notes.apk")
    assert "INSTALL_FAILED_ALREADY_EXISTS" in device.shell(
        "pm install /data/local/tmp/notes.apk", timeout=10
    )
    device.sync.push(b"not a zip", "/data/local/tmp/bad.apk")
    assert "INSTALL_PARSE_FAILED_NOT_APK" in device.shell(
        "pm install -r /data/local/tmp/bad.apk", timeout=10
    )
    assert device.shell("pm uninstall org.example.notes", timeout=10) == "Success"
    assert "org.example.notes" not in device.list_packages()
    assert device.app_info("org.example.notes") is None
    builtin = device.shell(f"pm uninstall {MESSAGES}", timeout=10)
    assert builtin == "Failure [DELETE_FAILED_INTERNAL_ERROR]"
    assert MESSAGES in device.list_packages()


@pytest.mark.parametrize(
    ("script", "output"),
    [
        ("for i in 1 2 3; do echo $i; done", "1\n2\n3\n"),
        ("for f in /sdcard/D*; do echo $f; done", "/sdcard/DCIM\n/sdcard/Download\n"),
        ("i=0; while [ $i -lt 3 ]; do echo w$i; i=$((i + 1)); done", "w0\nw1\nw2\n"),
        ("n=3; until [ $n -eq 0 ]; do n=$((n-1)); done; echo $n", "0\n"),
        ("if [ -d /sdcard ]; then echo dir; else echo none; fi", "dir\n"),
        ("if false; then echo a; elif test 3 -gt 2; then echo b; else echo c; fi", "b\n"),
        ("for i in 1 2 3 4; do if [ $i = 3 ]; then break; fi; echo $i; done", "1\n2\n"),
        ("for i in a b; do for j in c d; do echo $i$j; continue 2; done; done", "ac\nbc\n"),
        (
            "echo $((2 * (3 + 4))) $((7 % 3)) $((1 << 4)) $((-7 / 2)) $((5 > 3 ? 10 : 20))",
            "14 1 16 -3 10\n",
        ),
        ("x=5; echo $(( x += 2 )) $x $((${x}*2))", "7 7 14\n"),
        ("(X=5; cd /sdcard; echo $X); echo [$X] $(pwd)", "5\n[] /\n"),
        ("{ echo a; echo b; } | wc -l", "2\n"),
        ("echo 'x y z' | while read a b; do echo [$b] [$a]; done", "[y z] [x]\n"),
        ("for i in 1 2; do echo $i; done > /sdcard/o; cat /sdcard/o", "1\n2\n"),
        ("echo $((2 ** 64)) $((9223372036854775807 + 1))", "0 -9223372036854775808\n"),
    ],
)
def test_shell_control_flow_and_arithmetic(served, script: str, output: str) -> None:
    _phone, device, _server = served
    result = device.shell2(script, timeout=10, v2=True)
    assert (result.returncode, result.output) == (0, output)


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("if true; then echo", "unexpected end of file"),
        ("for 1x in a; do :; done", "1x: bad identifier"),
        ("echo $((1 / 0))", "divide by zero"),
        ("echo $((2 ** -1))", "exponent less than 0"),
        ("fi", "'fi' unexpected"),
        ("if " * 100 + "true" + "; then :; fi" * 100, "nested too deeply"),
    ],
)
def test_shell_syntax_and_arithmetic_errors_are_reported(served, thread_errors, script, message):
    _phone, device, _server = served
    result = device.shell2(script, timeout=10, v2=True)
    assert message in result.output
    _still_serving(device)
    assert not thread_errors


def test_an_endless_loop_ends_when_the_client_goes(served, thread_errors) -> None:
    _phone, device, _server = served
    before = _connection_threads()
    with pytest.raises(adbutils.AdbTimeout):
        device.shell("while true; do :; done", timeout=0.5)
    deadline = time.monotonic() + 10
    while _connection_threads() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _connection_threads() <= before
    _still_serving(device)
    assert not thread_errors
