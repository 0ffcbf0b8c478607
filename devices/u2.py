"""The uiautomator2 test server on a phone: a fast hierarchy dump that tolerates animation.

The uiautomator2 package (a dependency) ships an on-device server jar. ``U2Server`` pushes
that jar to ``/data/local/tmp`` when the phone lacks it (or has another build), starts it
with ``app_process`` over a shell stream it keeps open, and reaches its HTTP port through
the adb transport's ``tcp:PORT`` service (a forward per connection, no host port taken).
Calls are JSON-RPC 2.0 over HTTP/1.1 on one kept-alive connection; the server stops when
``close()`` ends the shell stream.

Every call takes a deadline (``time.monotonic()`` seconds) that bounds the whole call,
start-up and reconnects included; past it ``DeviceTimeoutError`` is raised. A server that
cannot start raises ``HierarchyBackendError`` with what the phone said.

>>> from devices.android import AndroidDevice, adb_client
>>> from virtual_phone import running_server
>>> with running_server() as server:
...     device = AndroidDevice("virtual-1", client=adb_client(port=server.port))
...     with U2Server(device.adb) as u2:
...         xml = u2.call("dumpWindowHierarchy", [False, 50], deadline=time.monotonic() + 10)
>>> xml.startswith("<?xml") and "</hierarchy>" in xml
True
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Self

import adbutils
from adbutils.errors import AdbError, AdbTimeout

from devices.errors import DeviceDisconnectedError, DeviceTimeoutError, HierarchyBackendError

JAR_ON_DEVICE = "/data/local/tmp/u2.jar"
MAIN_CLASS = "com.wetest.uia2.Main"
DEVICE_PORT = 9008
# The server answers /ping once its UiAutomation connection is up; a phone needs 1-3 s.
PING_INTERVAL_S = 0.1
MAX_HEAD = 64 * 1024  # an answer's status line and headers
_LAUNCH = f"CLASSPATH={JAR_ON_DEVICE} app_process / {MAIN_CLASS} -p {{port}}"
Beside = Callable[[], object]
_INSTALL_HINT = "Install the uiautomator2 package (pip install uiautomator2), a dependency."


@functools.cache
def bundled_jar() -> Path:
    """The server jar inside the installed uiautomator2 package (not imported: only found)."""
    spec = importlib.util.find_spec("uiautomator2")
    if spec is None or not spec.submodule_search_locations:
        raise HierarchyBackendError(f"the uiautomator2 package is not installed. {_INSTALL_HINT}")
    jar = Path(next(iter(spec.submodule_search_locations))) / "assets" / "u2.jar"
    if not jar.is_file():
        raise HierarchyBackendError(
            f"{jar} is missing from the uiautomator2 package. {_INSTALL_HINT}"
        )
    return jar


@functools.cache
def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def _left(deadline: float, what: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeviceTimeoutError(f"the uiautomator2 server did not finish {what} in time")
    return left


class _UntilDeadline:
    """A file whose reads fail once the deadline has passed: a push stops on time."""

    def __init__(self, data: BinaryIO, deadline: float) -> None:
        self._data = data
        self._deadline = deadline

    def read(self, size: int = -1) -> bytes:
        if time.monotonic() >= self._deadline:
            raise TimeoutError("the push ran past its deadline")
        return self._data.read(size)


class _ServerOutput:
    """What the server prints on its shell stream, and whether that stream has ended."""

    def __init__(self, conn: adbutils.AdbConnection) -> None:
        self.conn = conn
        self._sock = conn.conn
        self.text = ""
        self.ended = threading.Event()
        self._sock.settimeout(None)  # the stream lives as long as the server
        threading.Thread(target=self._read, daemon=True, name="u2-server-output").start()

    def _read(self) -> None:
        try:
            while chunk := self._sock.recv(4096):
                self.text = (self.text + chunk.decode("utf-8", "replace"))[-4000:]
        except OSError:
            pass
        self.ended.set()

    def close(self) -> None:
        # A socket closed while the reader waits in recv stays open underneath; shutting
        # it down first ends the stream at once, and with it the server.
        _shutdown(self._sock)
        self.conn.close()


class U2Server:
    """One phone's uiautomator2 server, started on first use; see the module docstring."""

    def __init__(
        self, adb: adbutils.AdbDevice, *, port: int = DEVICE_PORT, jar: Path | None = None
    ) -> None:
        self._adb = adb
        self._port = port
        self._jar = jar
        self._lock = threading.RLock()
        self._output: _ServerOutput | None = None
        self._sock: socket.socket | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def serial(self) -> str:
        return self._adb.serial or "the phone"

    # -- HTTP over the adb transport

    def _connect(self, deadline: float) -> socket.socket:
        try:
            sock = self._adb.create_connection(adbutils.Network.TCP, self._port)
        except (AdbError, OSError) as exc:
            raise ConnectionError(f"nothing answers on the phone's tcp:{self._port}") from exc
        sock.settimeout(_left(deadline, "connecting"))
        return sock

    def _drop(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        self._sock = None

    def _exchange(
        self, method: str, path: str, body: bytes, deadline: float, beside: list[Beside]
    ) -> bytes:
        """One request on the kept connection (a new one if there is none); returns the body.
        A function in ``beside`` (taken out, so it runs once) runs while the server works."""
        if self._sock is None:
            self._sock = self._connect(deadline)
        sock = self._sock
        sock.settimeout(_left(deadline, f"{method} {path}"))
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self._port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        try:
            sock.sendall(head.encode("ascii") + body)
            if beside:
                try:
                    beside.pop()()
                except BaseException:
                    self._drop()  # its answer is left unread on the connection
                    raise
            response = read_response(sock, deadline)
        except (OSError, ValueError) as exc:
            self._drop()
            if time.monotonic() >= deadline or isinstance(exc, TimeoutError):
                raise DeviceTimeoutError(
                    f"the uiautomator2 server on {self.serial} did not answer {path} in time"
                ) from exc
            raise ConnectionError(f"the connection to the server broke: {exc}") from exc
        if response.closes:
            self._drop()
        if response.status != 200:
            raise HierarchyBackendError(
                f"the uiautomator2 server on {self.serial} answered {path} with HTTP "
                f"{response.status} {response.reason}"
            )
        return response.body

    def _request(
        self, method: str, path: str, body: bytes, deadline: float, beside: list[Beside]
    ) -> bytes:
        """A request; a kept connection that went stale is replaced once."""
        reused = self._sock is not None
        try:
            return self._exchange(method, path, body, deadline, beside)
        except ConnectionError:
            if not reused:
                raise
            return self._exchange(method, path, body, deadline, beside)

    # -- the server's life

    def alive(self, deadline: float) -> bool:
        """True when the server answers /ping."""
        try:
            return self._request("GET", "/ping", b"", deadline, []) == b"pong"
        except (ConnectionError, HierarchyBackendError):
            return False

    def _push_jar(self, deadline: float) -> None:
        """Push the jar unless the phone has this build (md5 compared)."""
        jar = self._jar or bundled_jar()
        try:
            found = self._adb.shell(f"md5sum {JAR_ON_DEVICE}", timeout=_left(deadline, "md5sum"))
            if _md5(jar) in found:
                return
            with jar.open("rb") as data:
                self._adb.sync.push(_UntilDeadline(data, deadline), JAR_ON_DEVICE)
        except (AdbTimeout, TimeoutError) as exc:
            raise DeviceTimeoutError(
                f"pushing the uiautomator2 server to {self.serial} did not finish in time"
            ) from exc
        except (AdbError, OSError) as exc:
            raise HierarchyBackendError(
                f"could not push the uiautomator2 server to {self.serial}: {exc}"
            ) from exc

    def start(self, deadline: float) -> None:
        """Start the server unless it already answers; HierarchyBackendError if it cannot."""
        with self._lock:
            if self.alive(deadline):
                return
            self._push_jar(deadline)
            self.stop()
            try:
                conn = self._adb.shell(_LAUNCH.format(port=self._port), stream=True)
            except (AdbError, OSError) as exc:
                raise DeviceDisconnectedError(
                    f"could not start the uiautomator2 server on {self.serial}: {exc}"
                ) from exc
            self._output = output = _ServerOutput(conn)
            while time.monotonic() < deadline:
                if self.alive(deadline):
                    return
                if output.ended.wait(PING_INTERVAL_S) and not self.alive(deadline):
                    break
            said = " ".join(output.text.split())[-600:] or "nothing"
            self.stop()
            if "already registered" in said:
                said += " (another UI automation runs on the phone: stop it and retry)"
            raise HierarchyBackendError(
                f"the uiautomator2 server did not start on {self.serial} (it said: {said})"
            )

    def stop(self) -> None:
        """End the server this object started (its shell stream) and the kept connection."""
        with self._lock:
            self._drop()
            if self._output is not None:
                self._output.close()
                self._output = None

    close = stop

    # -- calls

    def call(
        self, method: str, params: Any, *, deadline: float, beside: Beside | None = None
    ) -> Any:
        """One JSON-RPC call, starting the server first when it does not answer.

        ``beside`` runs once while the server works on the call (or before the call when
        the server has to be started): a phone does both at once."""
        payload = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        body = json.dumps(payload).encode("utf-8")
        once = [beside] if beside is not None else []
        with self._lock:
            try:
                data = self._request("POST", "/jsonrpc/0", body, deadline, once)
            except ConnectionError:
                self.start(deadline)
                try:
                    data = self._request("POST", "/jsonrpc/0", body, deadline, once)
                except ConnectionError as exc:
                    raise HierarchyBackendError(
                        f"the uiautomator2 server on {self.serial} stopped answering: {exc}"
                    ) from exc
        try:
            answer = json.loads(data)
        except ValueError as exc:
            raise HierarchyBackendError(
                f"the uiautomator2 server on {self.serial} answered {method} with no JSON"
            ) from exc
        if not isinstance(answer, dict) or ("error" not in answer and "result" not in answer):
            raise HierarchyBackendError(f"the uiautomator2 server answered {method} oddly")
        if "error" in answer:
            error = answer["error"] or {}
            raise HierarchyBackendError(
                f"the uiautomator2 server on {self.serial} refused {method}: "
                f"{error.get('message') or error}"
            )
        return answer["result"]


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    reason: str
    body: bytes
    closes: bool  # the server closes the connection after it


class _Reader:
    def __init__(self, sock: socket.socket, deadline: float | None) -> None:
        self.sock = sock
        self.deadline = deadline
        self.buffer = bytearray()

    def more(self) -> None:
        if self.deadline is not None:
            # Each wait gets what is left of the call: a trickling answer cannot renew it.
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the answer did not arrive in time")
            self.sock.settimeout(left)
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionResetError("the server closed the connection mid-answer")
        self.buffer += chunk

    def until(self, mark: bytes, limit: int) -> bytes:
        while (end := self.buffer.find(mark)) < 0:
            if len(self.buffer) > limit:
                raise ValueError(f"no {mark!r} within {limit} bytes")
            self.more()
        line = bytes(self.buffer[:end])
        del self.buffer[: end + len(mark)]
        return line

    def exactly(self, length: int) -> bytes:
        while len(self.buffer) < length:
            self.more()
        data = bytes(self.buffer[:length])
        del self.buffer[:length]
        return data

    def rest(self) -> bytes:
        try:
            while True:
                self.more()
        except ConnectionResetError:
            return bytes(self.buffer)


def read_response(sock: socket.socket, deadline: float | None = None) -> Response:
    """One HTTP/1.1 response: a fixed length, chunked, or up to the connection's end;
    TimeoutError once ``deadline`` (``time.monotonic()``) has passed."""
    reader = _Reader(sock, deadline)
    lines = reader.until(b"\r\n\r\n", MAX_HEAD).decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise ValueError(f"not an HTTP answer: {lines[0][:80]!r}")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    closes = version == "HTTP/1.0" or headers.get("connection", "").lower() == "close"
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = bytearray()
        while size := int(reader.until(b"\r\n", 1024).split(b";")[0], 16):
            body += reader.exactly(size)
            reader.until(b"\r\n", 2)
        while reader.until(b"\r\n", MAX_HEAD):
            pass  # trailer lines, up to the empty line that ends the answer
        return Response(int(code), reason, bytes(body), closes)
    if "content-length" in headers:
        return Response(int(code), reason, reader.exactly(int(headers["content-length"])), closes)
    return Response(int(code), reason, reader.rest(), True)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
