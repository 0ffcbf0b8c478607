"""One HTTP POST whose whole exchange has a deadline: connect, send, and every byte of
the reply.

A socket timeout bounds each read, not the exchange: a server that sends one byte every
two seconds never trips a five-second read timeout and keeps a call alive for as long as
it likes. Here a watchdog shuts the socket down when the deadline passes, whatever the
call is doing, and the caller gets ``CallTimeout``. The reply body is read in pieces,
refused beyond ``max_bytes``, and checked against its Content-Length.

>>> import threading, time
>>> from http.server import BaseHTTPRequestHandler, HTTPServer
>>> class Trickle(BaseHTTPRequestHandler):
...     def do_POST(self):
...         self.rfile.read(int(self.headers["Content-Length"]))
...         self.send_response(200)
...         self.send_header("Content-Length", "100")
...         self.end_headers()
...         for _ in range(100):
...             self.wfile.write(b"x")
...             self.wfile.flush()
...             time.sleep(0.05)
...     def log_message(self, *args):
...         pass
>>> server = HTTPServer(("127.0.0.1", 0), Trickle)
>>> threading.Thread(target=server.handle_request, daemon=True).start()
>>> url = f"http://127.0.0.1:{server.server_port}/"
>>> post(url, b"{}", {}, seconds=0.3, max_bytes=1000)
Traceback (most recent call last):
...
evaluator.http_call.CallTimeout: no complete answer within 0.3 s
>>> server.server_close()
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

from evaluator.errors import EvaluatorError

_PIECE = 64 * 1024


class HttpCallError(EvaluatorError):
    """The exchange failed: no connection, a broken or short reply, or one too large."""


class CallTimeout(HttpCallError):  # noqa: N818 - named for what happened, like TimeoutError
    """The whole exchange did not finish within its deadline."""


class ReplyCutShort(HttpCallError):  # noqa: N818
    """The connection ended before the reply's announced Content-Length was read."""


class ReplyTooLarge(HttpCallError):  # noqa: N818
    """The reply is larger than the caller accepts."""


@dataclass(frozen=True, slots=True)
class HttpReply:
    status: int
    headers: Mapping[str, str]  # names in lower case
    body: bytes


def post(
    url: str, data: bytes, headers: Mapping[str, str], *, seconds: float, max_bytes: int
) -> HttpReply:
    """POST ``data`` to ``url``; the reply, whatever its status, within ``seconds`` in all."""
    parts = urllib.parse.urlsplit(url)
    https = parts.scheme == "https"
    kind = http.client.HTTPSConnection if https else http.client.HTTPConnection
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    connection = kind(parts.hostname or "", parts.port, timeout=seconds)
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        sock = connection.sock
        if sock is not None:
            # shutdown (not close) wakes a thread blocked in recv or send on this socket.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    watchdog = threading.Timer(seconds, expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.request("POST", path, body=data, headers=dict(headers))
        response = connection.getresponse()
        received = {k.lower(): v for k, v in response.getheaders()}
        body = _read_body(response, received, max_bytes, expired)
        if expired.is_set():
            raise CallTimeout(f"no complete answer within {seconds:g} s")
        return HttpReply(response.status, received, body)
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set() or isinstance(exc, TimeoutError):
            raise CallTimeout(f"no complete answer within {seconds:g} s") from None
        if isinstance(exc, http.client.IncompleteRead):
            raise ReplyCutShort(f"the reply was cut short: {exc}") from None
        if isinstance(exc, http.client.HTTPException):
            raise HttpCallError(f"broken reply: {type(exc).__name__} {exc}") from None
        raise HttpCallError(f"cannot connect: {exc}") from None
    finally:
        watchdog.cancel()
        connection.close()


def _read_body(
    response: http.client.HTTPResponse,
    headers: Mapping[str, str],
    max_bytes: int,
    expired: threading.Event,
) -> bytes:
    announced = _length(headers.get("content-length"))
    if announced is not None and announced > max_bytes:
        raise ReplyTooLarge(f"the reply announces {announced} bytes (at most {max_bytes})")
    pieces: list[bytes] = []
    size = 0
    while True:
        piece = response.read(_PIECE)
        if not piece:
            break
        size += len(piece)
        if size > max_bytes:
            raise ReplyTooLarge(f"the reply is larger than {max_bytes} bytes")
        pieces.append(piece)
    if announced is not None and size < announced and not expired.is_set():
        raise ReplyCutShort(f"the reply was cut short: {size} of {announced} bytes arrived")
    return b"".join(pieces)


def _length(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
