"""Impersonation of the uiautomator2 on-device test server on the virtual phone.

A uiautomator2 client pushes its server jar and runs, over a shell stream it keeps open,

    CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008

This module is that server, started by `app_process` (virtual_phone/app_process.py). It
listens on the device's `tcp:PORT` (clients reach it through the `tcp:PORT` service or an
`adb forward`) and answers HTTP/1.1: `GET /ping` says `pong`, and `POST /jsonrpc/0` takes
JSON-RPC 2.0 calls (`METHODS`): the hierarchy dump, device facts, screenshots, clicks,
swipes, keys and UiSelector queries. It lives until the shell stream closes.

An unknown method answers JSON-RPC error -32601; a selector that matches nothing answers
the UiObjectNotFoundException error, as the real server does.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from virtual_phone import ui_selector
from virtual_phone.errors import VirtualPhoneError
from virtual_phone.phone import LONG_PRESS_MS
from virtual_phone.shell import Invocation
from virtual_phone.wire import close_socket

if TYPE_CHECKING:
    from virtual_phone.phone import VirtualPhone
    from virtual_phone.scrcpy_server import ScrcpyHost

SERVER_CLASS = "com.wetest.uia2.Main"
DEFAULT_PORT = 9008
# A connection that sends nothing for this long is closed (the real server's read timeout).
IDLE_TIMEOUT_S = 30.0
MAX_CONNECTIONS = 64  # open at once; a connection past it is closed at once
# waitForExists and waitUntilGone poll the screen this often, and wait at most this long.
POLL_S = 0.05
MAX_WAIT_MS = 60_000
SWIPE_STEP_MS = 5  # uiautomator throttles each swipe step to 5 ms
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_ERROR = -32001
NOT_FOUND_EXCEPTION = "androidx.test.uiautomator.UiObjectNotFoundException"
KEY_NAMES: dict[str, int] = {
    "home": 3,
    "back": 4,
    "up": 19,
    "down": 20,
    "left": 21,
    "right": 22,
    "center": 23,
    "volume_up": 24,
    "volume_down": 25,
    "power": 26,
    "camera": 27,
    "enter": 66,
    "delete": 67,
    "del": 67,
    "menu": 82,
    "search": 84,
    "volume_mute": 164,
    "recent": 187,
}


class RpcError(VirtualPhoneError):
    """A JSON-RPC call the server answers with an error object."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# ---------------------------------------------------------------- the methods


def _dump(phone: VirtualPhone, *_: Any) -> str:
    # compressed, maxDepth and rootInActive: the virtual screens have no unimportant views
    # and are shallower than any depth a client asks for.
    return phone.hierarchy_xml()


def _device_info(phone: VirtualPhone, *_: Any) -> dict[str, Any]:
    package, _activity = phone.focus()
    dp = 160 / phone.density
    return {
        "currentPackageName": package,
        "displayWidth": phone.width,
        "displayHeight": phone.height,
        "displayRotation": 0,
        "displaySizeDpX": round(phone.width * dp),
        "displaySizeDpY": round(phone.height * dp),
        "naturalOrientation": True,
        "productName": phone.props.get("ro.product.name", ""),
        "screenOn": phone.screen_on,
        "sdkInt": int(phone.props.get("ro.build.version.sdk", "34")),
    }


def _screenshot(phone: VirtualPhone, scale: float = 1.0, quality: int = 100, *_: Any) -> str:
    image = phone.render()
    if scale and scale != 1:
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(size)
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="JPEG", quality=max(1, min(int(quality), 100)))
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _click(phone: VirtualPhone, x: float, y: float, duration_ms: int = 0, *_: Any) -> bool:
    if duration_ms >= LONG_PRESS_MS:
        phone.long_press(round(x), round(y), int(duration_ms))
    else:
        phone.tap(round(x), round(y))
    return True


def _swipe(phone: VirtualPhone, fx: int, fy: int, tx: int, ty: int, steps: int = 100) -> bool:
    phone.swipe(int(fx), int(fy), int(tx), int(ty), max(1, int(steps)) * SWIPE_STEP_MS)
    return True


def _press_key(phone: VirtualPhone, name: str, *_: Any) -> bool:
    code = KEY_NAMES.get(str(name).lower())
    if code is None:
        raise RpcError(SERVER_ERROR, f"java.lang.IllegalArgumentException: unknown key {name}")
    phone.key(code)
    return True


def _press_key_code(phone: VirtualPhone, code: int, *_: Any) -> bool:
    phone.key(int(code))
    return True


def _touch(phone: VirtualPhone, action: int, x: float, y: float, *_: Any) -> bool:
    kinds = {0: "down", 1: "up", 2: "move"}
    if action not in kinds:
        raise RpcError(INVALID_PARAMS, f"unknown motion event action {action}")
    phone.touch(kinds[action], round(x), round(y))
    return True


def _matches(phone: VirtualPhone, selector: dict[str, Any]) -> list[Any]:
    try:
        return ui_selector.match(phone.hierarchy_xml(), selector)
    except ui_selector.SelectorError as exc:
        raise RpcError(INVALID_PARAMS, f"java.lang.IllegalArgumentException: {exc}") from exc


def _one(phone: VirtualPhone, selector: dict[str, Any]) -> Any:
    found = _matches(phone, selector)
    if not found:
        raise RpcError(SERVER_ERROR, f"{NOT_FOUND_EXCEPTION}: {ui_selector.describe(selector)}")
    return found[0]


def _wait(phone: VirtualPhone, selector: dict[str, Any], timeout_ms: int, present: bool) -> bool:
    deadline = time.monotonic() + min(max(int(timeout_ms), 0), MAX_WAIT_MS) / 1000
    while True:
        if bool(_matches(phone, selector)) == present:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)


def _set_text(phone: VirtualPhone, selector: dict[str, Any], text: str = "") -> bool:
    """Focus the field with a tap, empty it and type: what setText does to an EditText."""
    node = _one(phone, selector)
    box = ui_selector.bounds(node)
    phone.tap((box["left"] + box["right"]) // 2, (box["top"] + box["bottom"]) // 2)
    for _ in range(len(node.get("text", ""))):
        phone.key(67)  # the tap leaves the cursor at the end: DEL empties the field
    if text:
        phone.commit_text(text)
    return True


def _pull_shade(phone: VirtualPhone) -> bool:
    """The shade comes down as a person pulls it: a swipe from the status bar."""
    middle = phone.width // 2
    phone.swipe(middle, 2, middle, phone.height // 2, 200)
    return True


Method = Callable[..., Any]
METHODS: dict[str, Method] = {
    "dumpWindowHierarchy": _dump,
    "deviceInfo": _device_info,
    "takeScreenshot": _screenshot,
    "click": _click,
    "swipe": _swipe,
    "drag": _swipe,
    "pressKey": _press_key,
    "pressKeyCode": _press_key_code,
    "injectInputEvent": _touch,
    "wakeUp": lambda phone, *_: _press_key_code(phone, 224),
    "sleep": lambda phone, *_: _press_key_code(phone, 223),
    "openNotification": lambda phone, *_: _pull_shade(phone),
    "openQuickSettings": lambda phone, *_: _pull_shade(phone),
    "exist": lambda phone, sel, *_: bool(_matches(phone, sel)),
    "count": lambda phone, sel, *_: len(_matches(phone, sel)),
    "objInfo": lambda phone, sel, *_: ui_selector.node_info(_one(phone, sel)),
    "objInfoOfAllInstances": lambda phone, sel, *_: [
        ui_selector.node_info(n) for n in _matches(phone, sel)
    ],
    "getText": lambda phone, sel, *_: _one(phone, sel).get("text", ""),
    "setText": _set_text,
    "clearTextField": lambda phone, sel, *_: _set_text(phone, sel, ""),
    "waitForExists": lambda phone, sel, ms=0, *_: _wait(phone, sel, ms, True),
    "waitUntilGone": lambda phone, sel, ms=0, *_: _wait(phone, sel, ms, False),
}


def call(phone: VirtualPhone, request: Any) -> dict[str, Any]:
    """One JSON-RPC request object in, its response object out."""
    request_id = request.get("id") if isinstance(request, dict) else None
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    try:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            raise RpcError(-32600, "Invalid Request")
        method = METHODS.get(request["method"])
        if method is None:
            raise RpcError(METHOD_NOT_FOUND, "Method not found")
        params = request.get("params") or []
        args = params if isinstance(params, list) else list(params.values())
        reply["result"] = method(phone, *args)
    except RpcError as exc:
        reply["error"] = {"code": exc.code, "message": exc.message, "data": exc.message}
    except (TypeError, ValueError, VirtualPhoneError) as exc:
        message = f"java.lang.IllegalArgumentException: {exc}"
        reply["error"] = {"code": INVALID_PARAMS, "message": message, "data": message}
    except Exception as exc:  # noqa: BLE001 - a server answers every call, as the real one does
        message = f"java.lang.RuntimeException: {type(exc).__name__}: {exc}"
        reply["error"] = {"code": SERVER_ERROR, "message": message, "data": message}
    return reply


# ---------------------------------------------------------------- HTTP


MAX_HEAD = 64 * 1024  # request line and headers; past this the request is refused
MAX_BODY = 16 * 1024 * 1024
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Payload Too Large"}


class _BadRequest(VirtualPhoneError):
    def __init__(self, status: int) -> None:
        super().__init__(_REASONS[status])
        self.status = status


class _HttpConnection:
    """One client connection, HTTP/1.1 with keep-alive: requests are answered in turn
    until the client closes, asks to close, or stays silent for IDLE_TIMEOUT_S."""

    def __init__(self, sock: socket.socket, phone: VirtualPhone) -> None:
        self._sock = sock
        self._phone = phone
        self._buffer = bytearray()

    def _fill(self) -> bool:
        chunk = self._sock.recv(65536)
        self._buffer += chunk
        return bool(chunk)

    def _head(self) -> list[str] | None:
        """The request line and header lines; None when the client closed between requests."""
        while (end := self._buffer.find(b"\r\n\r\n")) < 0:
            if len(self._buffer) > MAX_HEAD:
                raise _BadRequest(413)
            if not self._fill():
                if self._buffer:
                    raise _BadRequest(400)
                return None
        head = bytes(self._buffer[:end]).decode("latin-1")
        del self._buffer[: end + 4]
        return head.split("\r\n")

    def _body(self, length: int) -> bytes:
        if length > MAX_BODY:
            raise _BadRequest(413)
        if len(self._buffer) < length and hasattr(socket, "TCP_QUICKACK"):
            # A client may send the head and the body in two packets; acknowledging the
            # first at once lets the second leave without waiting out a delayed ACK.
            with contextlib.suppress(OSError):
                self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        while len(self._buffer) < length:
            if not self._fill():
                raise _BadRequest(400)
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return body

    def _send(self, status: int, body: bytes, content_type: str, close: bool) -> None:
        closing = "Connection: close\r\n" if close else ""
        head = (
            f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n{closing}\r\n"
        )
        # Head and body in one send: two would wait out the client's delayed ACK.
        self._sock.sendall(head.encode("latin-1") + body)

    def _answer(self, method: str, path: str, body: bytes) -> tuple[int, bytes, str]:
        if method == "GET" and path == "/ping":
            return 200, b"pong", "text/plain"
        if method != "POST" or path != "/jsonrpc/0":
            return 404, b"Not Found", "text/plain"
        try:
            request = json.loads(body)
        except ValueError:
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": "Parse error"},
            }
        else:
            reply = call(self._phone, request)
        return 200, json.dumps(reply).encode("utf-8"), "application/json"

    def serve(self) -> None:
        self._sock.settimeout(IDLE_TIMEOUT_S)
        while True:
            try:
                lines = self._head()
                if lines is None:
                    return
                parts = lines[0].split(" ")
                if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
                    raise _BadRequest(400)
                method, path, version = parts
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                try:
                    length = int(headers.get("content-length") or 0)
                except ValueError as exc:
                    raise _BadRequest(400) from exc
                body = self._body(max(length, 0))
            except _BadRequest as exc:
                self._send(exc.status, str(exc).encode(), "text/plain", close=True)
                return
            close = version == "HTTP/1.0" or headers.get("connection", "").lower() == "close"
            self._send(*self._answer(method, path, body), close=close)
            if close:
                return


class _Session:
    """The running server: its listening address and the connections it serves."""

    def __init__(self, phone: VirtualPhone) -> None:
        self.phone = phone
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._closed = False

    def accept(self, sock: socket.socket) -> None:
        with self._lock:
            if self._closed or len(self._open) >= MAX_CONNECTIONS:
                close_socket(sock)
                return
            self._open.add(sock)
        threading.Thread(target=self._serve, args=(sock,), daemon=True, name="u2-http").start()

    def _serve(self, sock: socket.socket) -> None:
        try:
            _HttpConnection(sock, self.phone).serve()
        except OSError:
            pass  # the client went away mid-request
        finally:
            with self._lock:
                self._open.discard(sock)
            close_socket(sock)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            sockets, self._open = list(self._open), set()
        for sock in sockets:
            close_socket(sock)


def _port(args: list[str]) -> int:
    port = DEFAULT_PORT
    for flag, value in zip(args, args[1:], strict=False):
        if flag == "-p":
            port = int(value)
    if not 0 < port < 65536:
        raise ValueError(f"port {port} is out of range")
    return port


def main(inv: Invocation, server_args: list[str], host: ScrcpyHost) -> int:
    """The server's main class, run by `app_process` with `-p PORT`."""
    try:
        port = _port(server_args)
    except ValueError as exc:
        inv.error(f"java.lang.IllegalArgumentException: {exc}\n")
        return 1
    session = _Session(host.phone)
    try:
        unlisten = host.listen(f"tcp:{port}", session.accept)
    except OSError as exc:
        inv.error(f"java.net.BindException: {exc}\n")
        return 1
    inv.write("[server] INFO: [UiAutomator2Server] Starting Server\n")
    inv.streams.flush()
    try:
        inv.cancelled.wait()
    finally:
        unlisten()
        session.close()
    return 0
