"""Idle, trickling and greedy clients cannot take the virtual ADB server from real ones:
a whole request must arrive within the idle timeout, idle connections hold no slot of the
connection cap, and a shell v2 stdin packet is never gathered whole in memory."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import adbutils
import pytest

from virtual_phone import AdbServer, fast_phone
from virtual_phone.adbd import MAX_PENDING_OUTPUT, MAX_STDIN
from virtual_phone.wire import encode_block

IDLE_S = 0.4


@pytest.fixture
def server() -> Iterator[AdbServer]:
    with AdbServer([fast_phone("virtual-1")], max_connections=3, idle_timeout=IDLE_S) as srv:
        srv.start()
        yield srv


def _connect(server: AdbServer) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    """True when the server closes ``sock`` within 10 s (EOF or reset), False on timeout."""
    sock.settimeout(10)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _request(sock: socket.socket, text: str) -> bytes:
    sock.sendall(encode_block(text))
    return sock.recv(4)


def test_a_connection_that_sends_nothing_is_closed_after_the_idle_timeout(server) -> None:
    sock = _connect(server)
    started = time.monotonic()
    assert _closed_by_server(sock)
    assert IDLE_S * 0.9 <= time.monotonic() - started < 5
    sock.close()


def test_a_trickling_request_is_closed_however_often_its_bytes_arrive(server) -> None:
    sock = _connect(server)
    request = encode_block("host:version" + " " * 40)
    started = time.monotonic()
    closed = False
    for byte in request:  # one byte every IDLE_S / 4: each read alone would be in time
        try:
            sock.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
        time.sleep(IDLE_S / 4)
    assert closed or _closed_by_server(sock)
    assert time.monotonic() - started < len(request) * IDLE_S / 4
    sock.close()


def test_a_slow_but_whole_request_between_requests_is_served(server) -> None:
    sock = _connect(server)
    assert _request(sock, "host:transport:virtual-1") == b"OKAY"
    time.sleep(IDLE_S / 2)  # each request gets its own idle timeout
    assert _request(sock, "shell:echo hi") == b"OKAY"
    sock.settimeout(10)
    assert sock.recv(100) == b"hi\n"
    sock.close()


@pytest.fixture
def patient_server() -> Iterator[AdbServer]:
    """Idle connections would wait a minute here: only the cap's rule can free a slot."""
    with AdbServer([fast_phone("virtual-1")], max_connections=3, idle_timeout=60) as srv:
        srv.start()
        yield srv


def test_idle_connections_do_not_lock_out_real_clients(patient_server) -> None:
    server = patient_server
    idle = [_connect(server) for _ in range(4 * server.max_connections)]
    client = adbutils.AdbClient(host="127.0.0.1", port=server.port)
    assert [d.serial for d in client.device_list()] == ["virtual-1"]
    assert client.device("virtual-1").shell("echo ok") == "ok"
    # The longest-waiting idle ones were closed to make room; at most the cap wait.
    assert (
        sum(_closed_by_server(sock) for sock in idle[: -server.max_connections])
        == len(idle) - server.max_connections
    )
    for sock in idle:
        sock.close()


def test_the_cap_counts_connections_being_served(server) -> None:
    trackers = [_connect(server) for _ in range(server.max_connections)]
    for sock in trackers:  # served for as long as they stay open
        assert _request(sock, "host:track-devices") == b"OKAY"
    client = adbutils.AdbClient(host="127.0.0.1", port=server.port)
    with pytest.raises(adbutils.AdbError, match="too many connections"):
        client.device_list()
    trackers.pop().close()
    deadline = time.monotonic() + 10
    while True:
        try:
            assert [d.serial for d in client.device_list()] == ["virtual-1"]
            break
        except adbutils.AdbError:
            assert time.monotonic() < deadline, "the freed slot was never reused"
            time.sleep(0.05)
    for sock in trackers:
        sock.close()


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_shell_v2_stdin_header_claiming_4_gb_is_not_buffered(server) -> None:
    sock = _connect(server)
    assert _request(sock, "host:transport:virtual-1") == b"OKAY"
    assert _request(sock, "shell,v2,raw:sleep 1000") == b"OKAY"
    before = _rss_bytes()
    sock.sendall(struct.pack("<BI", 0, 0xFFFFFFFF))  # stdin, 4 GB announced
    block = bytes(1 << 20)
    sent = 256 << 20
    grown = 0
    for _ in range(sent // len(block)):
        sock.sendall(block)
        grown = max(grown, _rss_bytes() - before)
    # What the command may keep of its stdin (16 MiB) and socket buffers; before, all of it.
    assert grown < MAX_STDIN + (32 << 20), f"RSS grew by {grown >> 20} MiB for {sent >> 20} MiB"
    sock.close()
    client = adbutils.AdbClient(host="127.0.0.1", port=server.port)
    assert client.device("virtual-1").shell("echo still here") == "still here"


def test_shell_v2_stdin_still_arrives_in_pieces_and_whole(server) -> None:
    sock = _connect(server)
    assert _request(sock, "host:transport:virtual-1") == b"OKAY"
    assert _request(sock, "shell,v2,raw:cat") == b"OKAY"
    packets = struct.pack("<BI", 0, 5) + b"hello" + struct.pack("<BI", 0, 6) + b" world"
    packets += struct.pack("<BI", 4, 0)  # close stdin
    for i in range(len(packets)):  # byte by byte: headers and payloads split anywhere
        sock.sendall(packets[i : i + 1])
    sock.settimeout(10)
    reply = b""
    while not reply.endswith(struct.pack("<BI", 3, 1) + b"\x00"):
        chunk = sock.recv(4096)
        assert chunk, f"closed early after {reply!r}"
        reply += chunk
    assert reply.startswith(struct.pack("<BI", 1, 11) + b"hello world")
    sock.close()


def test_a_command_that_prints_without_end_streams_its_output(server) -> None:
    sock = _connect(server)
    assert _request(sock, "host:transport:virtual-1") == b"OKAY"
    assert _request(sock, "shell:while true; do echo 0123456789; done") == b"OKAY"
    sock.settimeout(10)
    received = 0
    while received < 4 * MAX_PENDING_OUTPUT:  # before, nothing came and memory grew
        chunk = sock.recv(65536)
        assert chunk, "the server closed the stream"
        assert set(chunk) <= set(b"0123456789\n")
        received += len(chunk)
    sock.close()
    client = adbutils.AdbClient(host="127.0.0.1", port=server.port)
    assert client.device("virtual-1").shell("echo still here") == "still here"
