"""Shell and sync as Android 14 answers them, through the unmodified adbutils client and
the `adb` binary: `log` into what `logcat` shows, a Wi-Fi address the usual parsing
finds, folders pushed and pulled whole."""

from __future__ import annotations

import ipaddress
import os
import re
import stat
import subprocess
import time
from pathlib import Path

import adbutils
import pytest

from virtual_phone import AdbServer

ADB = Path(adbutils.__file__).parent / "binaries" / "adb"
needs_adb_binary = pytest.mark.skipif(not os.access(ADB, os.X_OK), reason=f"no adb at {ADB}")


def adb(port: int, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "ADB_MDNS": "0", "ADB_LIBUSB": "0"}
    return subprocess.run(
        [str(ADB), "-P", str(port), *args],
        capture_output=True, stdin=subprocess.DEVNULL, env=env, timeout=60, check=False,
    )  # fmt: skip


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


def make_tree(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """Nested folders of files with their own modes and times: {relative path: (data,
    mode, mtime)}."""
    files = {
        "1.txt": (b"1\n", 0o600, 1_600_000_000),
        "a/a1.txt": (b"a1\n", 0o644, 1_650_000_000),
        "a/run.sh": (b"#!/system/bin/sh\necho hi\n", 0o755, 1_660_000_000),
        "a/aa/aa1.bin": (bytes(range(256)) * 700, 0o640, 1_700_000_000),
        "c/ca/caa/deep.txt": ("d\u00e9j\u00e0 vu\n".encode(), 0o644, 1_710_000_000),
    }
    for relative, (data, mode, mtime) in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)
        os.utime(path, (mtime, mtime))
    return files


def read_tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@needs_adb_binary
def test_directory_trees_push_and_pull_with_modes_and_times(
    device: adbutils.AdbDevice, virtual_server: AdbServer, tmp_path: Path
) -> None:
    port = virtual_server.port
    files = make_tree(tmp_path / "src")
    pushed = adb(port, "push", str(tmp_path / "src"), "/data/local/tmp/tree")
    assert pushed.returncode == 0, pushed.stderr
    assert b"5 files pushed" in pushed.stdout + pushed.stderr
    fs = virtual_server.device("virtual-1").fs
    for relative, (data, mode, mtime) in files.items():
        found = fs.stat(f"/data/local/tmp/tree/{relative}")
        assert found is not None and found.size == len(data)
        assert (stat.S_IMODE(found.mode), found.mtime) == (mode, mtime)
    assert device.shell("ls -R /data/local/tmp/tree").splitlines()[:4] == [
        "/data/local/tmp/tree:", "1.txt", "a", "c",
    ]  # fmt: skip

    # adbutils pulls a folder whole, and the adb binary with -a keeps modes and times.
    expected = {relative: data for relative, (data, _, _) in files.items()}
    device.sync.pull_dir("/data/local/tmp/tree", tmp_path / "pulled")
    assert read_tree(tmp_path / "pulled") == expected
    device.sync.pull("/data/local/tmp/tree", tmp_path / "pulled2", exist_ok=True)
    assert read_tree(tmp_path / "pulled2") == expected
    copied = adb(port, "pull", "-a", "/data/local/tmp/tree", str(tmp_path / "copy"))
    assert copied.returncode == 0, copied.stderr
    assert read_tree(tmp_path / "copy") == expected
    for relative, (_, mode, mtime) in files.items():
        local = (tmp_path / "copy" / relative).stat()
        assert (stat.S_IMODE(local.st_mode), int(local.st_mtime)) == (mode, mtime)


def test_output_before_a_blocking_command_reaches_the_client_at_once(
    device: adbutils.AdbDevice,
) -> None:
    stream = device.shell("echo first; sleep 3; echo second", stream=True)
    stream.conn.settimeout(2)  # well before the sleep ends
    assert stream.conn.recv(64) == b"first\n"
    stream.close()
