"""The virtual ADB server driven by the `adb` 1.0.41 binary that ships in the adbutils wheel."""

from __future__ import annotations

import io
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import adbutils
import pytest
from PIL import Image

from virtual_phone import AdbServer, fast_phone, running_server

ADB = Path(adbutils.__file__).parent / "binaries" / "adb"

pytestmark = pytest.mark.skipif(not os.access(ADB, os.X_OK), reason=f"no adb binary at {ADB}")


def adb(port: int, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run the adb binary against a virtual server (which must be up, or adb starts one)."""
    env = {**os.environ, "ADB_MDNS": "0", "ADB_LIBUSB": "0"}
    return subprocess.run(
        [str(ADB), "-P", str(port), *args],
        capture_output=True, stdin=subprocess.DEVNULL, env=env, timeout=30, check=False,
    )  # fmt: skip


def test_devices(virtual_server: AdbServer) -> None:
    result = adb(virtual_server.port, "devices")
    assert result.returncode == 0
    assert result.stdout.decode().splitlines()[1] == "virtual-1\tdevice"


def test_shell_keeps_quoting_and_exit_status(virtual_server: AdbServer) -> None:
    # adb joins its arguments with spaces; the device shell then parses the line.
    result = adb(virtual_server.port, "shell", "echo", "'a  b'", "\\$HOME", '"x  y"')
    assert result.stdout == b"a  b $HOME x  y\n"
    assert adb(virtual_server.port, "shell", "exit 3").returncode == 3
    interactive = adb(virtual_server.port, "shell")
    assert interactive.returncode == 1
    assert b"no interactive shell" in interactive.stderr
    missing = adb(virtual_server.port, "shell", "nosuchtool")
    assert missing.returncode == 127
    assert missing.stderr == b"/system/bin/sh: nosuchtool: inaccessible or not found\n"


def test_exec_out_screencap(virtual_server: AdbServer) -> None:
    result = adb(virtual_server.port, "exec-out", "screencap", "-p")
    assert result.returncode == 0
    image = Image.open(io.BytesIO(result.stdout))
    assert image.convert("RGB").tobytes() == virtual_server.phones[0].render().tobytes()


def test_push_and_pull_files_and_directories(virtual_server: AdbServer, tmp_path: Path) -> None:
    port = virtual_server.port
    source = tmp_path / "notes.txt"
    source.write_bytes(os.urandom(150_000))
    assert adb(port, "push", str(source), "/sdcard/Download/").returncode == 0
    fs = virtual_server.device("virtual-1").fs
    assert fs.read_bytes("/sdcard/Download/notes.txt") == source.read_bytes()

    pulled = tmp_path / "pulled.txt"
    assert adb(port, "pull", "/sdcard/Download/notes.txt", str(pulled)).returncode == 0
    assert pulled.read_bytes() == source.read_bytes()

    assert adb(port, "pull", "/sdcard/Download", str(tmp_path / "copy")).returncode == 0
    assert (tmp_path / "copy" / "notes.txt").read_bytes() == source.read_bytes()

    missing = adb(port, "pull", "/sdcard/none.txt", str(tmp_path / "x"))
    assert missing.returncode == 1
    assert b"No such file or directory" in missing.stderr


def test_forward_connects_to_a_device_socket(virtual_server: AdbServer) -> None:
    def echo(sock: socket.socket) -> None:
        with sock:
            while data := sock.recv(4096):
                sock.sendall(data)

    virtual_server.device("virtual-1").listen(
        "localabstract:echo", lambda s: threading.Thread(target=echo, args=(s,)).start()
    )
    result = adb(virtual_server.port, "forward", "tcp:0", "localabstract:echo")
    port = int(result.stdout)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"hello")
        assert sock.recv(5) == b"hello"
    listing = adb(virtual_server.port, "forward", "--list").stdout.decode()
    assert f"virtual-1 tcp:{port} localabstract:echo" in listing
    assert adb(virtual_server.port, "forward", "--remove", f"tcp:{port}").returncode == 0
    assert adb(virtual_server.port, "forward", "--list").stdout.strip() == b""


def test_serial_selects_one_of_two_devices() -> None:
    with running_server(phones=[fast_phone("virtual-1"), fast_phone("virtual-2")]) as server:
        result = adb(server.port, "-s", "virtual-2", "shell", "getprop", "ro.serialno")
        assert result.stdout == b"virtual-2\n"
        ambiguous = adb(server.port, "shell", "echo", "hi")
        assert ambiguous.returncode == 1
        assert b"more than one device" in ambiguous.stderr


def test_phone_command_serves_until_interrupted() -> None:
    command = [sys.executable, "-m", "elderbench", "phone", "--port", "0", "--devices", "2"]
    root = Path(__file__).parents[2]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=root) as process:
        assert process.stdout is not None
        try:
            banner = "".join(process.stdout.readline() for _ in range(3))
            match = re.search(r"adb -P (\d+) devices", banner)
            assert match is not None, banner
            port = int(match[1])
            assert f"export ANDROID_ADB_SERVER_PORT={port}" in banner
            listing = adb(port, "devices").stdout.decode()
            assert "virtual-1\tdevice" in listing
            assert "virtual-2\tdevice" in listing
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=10) == 0
        finally:
            process.kill()


def test_push_refusals_name_the_reason(tmp_path: Path) -> None:
    phone = fast_phone("virtual-1", storage_bytes=1 << 20)
    with running_server(phones=[phone]) as server:
        payload = tmp_path / "payload.bin"
        payload.write_bytes(b"x" * 1000)
        refused = adb(server.port, "push", str(payload), "/system/bin/payload.bin")
        assert refused.returncode == 1
        assert b"Read-only file system" in refused.stderr
        payload.write_bytes(b"x" * (2 << 20))
        too_big = adb(server.port, "push", str(payload), "/sdcard/payload.bin")
        assert too_big.returncode == 1
        assert b"No space left on device" in too_big.stderr
        assert adb(server.port, "shell", "echo", "still here").stdout == b"still here\n"


def test_shell_commands_read_what_is_piped_into_adb_shell(virtual_server: AdbServer) -> None:
    def piped(data: bytes, *command: str) -> subprocess.CompletedProcess[bytes]:
        env = {**os.environ, "ADB_MDNS": "0", "ADB_LIBUSB": "0"}
        return subprocess.run(
            [str(ADB), "-P", str(virtual_server.port), "shell", *command],
            input=data, capture_output=True, env=env, timeout=30, check=False,
        )  # fmt: skip

    assert piped(b"hi\n", "cat").stdout == b"hi\n"
    assert piped(b"a\nb\nc\n", "wc -l").stdout == b"3\n"
    assert piped(b"one\ntwo\n", "echo first; grep t; cat").stdout == b"first\ntwo\n"
    assert piped(b"x" * 200_000, "cat > /sdcard/in.bin; wc -c < /sdcard/in.bin").stdout == (
        b"200000\n"
    )
    assert piped(b"ignored", "echo", "no reader").stdout == b"no reader\n"
