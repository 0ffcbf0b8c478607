"""Socket plumbing shared by the virtual ADB server's host and device sides.

Every reply goes out in a single `sendall`: some clients read a reply with one `recv(n)`
and would see half of it if it arrived in pieces.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from collections.abc import Iterator

from virtual_phone.errors import VirtualPhoneError

MAX_REQUEST_LENGTH = 0xFFFF
# A client that formats a longer request's length with more than 4 hex digits sends bytes
# that read as a shorter request starting with the extra digits ("06shell:...").
_SPILLED_LENGTH = re.compile(
    r"[0-9a-fA-F]{1,3}(?:host[-:]|shell[,:]|exec:|sync:|tcp:|local[a-z]*:|framebuffer:|reverse:)"
)
_PURGE_AT = 256


class PeerClosed(VirtualPhoneError, ConnectionError):
    """The client closed its side before sending everything the protocol needs."""


class ProtocolError(VirtualPhoneError, ValueError):
    """The client sent bytes that do not follow the protocol."""


class IdleTimeout(VirtualPhoneError, TimeoutError):
    """A whole request did not arrive within the idle timeout (an idle or trickling client)."""


class Channel:
    """One client connection with the smart-socket helpers (`OKAY`, `FAIL`, hex blocks).

    `idle_timeout` (seconds, None: wait forever) bounds the wait for each whole request
    (`read_request`, `read_head`), however slowly its bytes trickle in; a service's own
    reads (a push's data, a mirror's stream) are not bounded by it.
    """

    def __init__(self, sock: socket.socket, *, idle_timeout: float | None = None) -> None:
        self.sock = sock
        self.idle_timeout = idle_timeout
        self._deadline: float | None = None

    def _recv(self, size: int) -> bytes:
        if self._deadline is None:
            return self.sock.recv(size)
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise IdleTimeout(f"no whole request within {self.idle_timeout:g} s")
        self.sock.settimeout(remaining)
        try:
            return self.sock.recv(size)
        except TimeoutError:
            raise IdleTimeout(f"no whole request within {self.idle_timeout:g} s") from None

    def read_exact(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = self._recv(size - len(data))
            if not chunk:
                raise PeerClosed(f"connection closed after {len(data)} of {size} bytes")
            data.extend(chunk)
        return bytes(data)

    @contextlib.contextmanager
    def _within_idle_timeout(self) -> Iterator[None]:
        if self.idle_timeout is None:
            yield
            return
        self._deadline = time.monotonic() + self.idle_timeout
        try:
            yield
        finally:
            self._deadline = None
            with contextlib.suppress(OSError):
                self.sock.settimeout(None)  # services read and write blocking

    def read_head(self, size: int) -> bytes:
        """The first `size` bytes of the next request (within the idle timeout), or b""
        when the client closed cleanly before sending any."""
        with self._within_idle_timeout():
            head = self._recv(size)
            if head and len(head) < size:
                head += self.read_exact(size - len(head))
            return head

    def read_request(self) -> str | None:
        """The next `LLLLpayload` request, or None when the client closed cleanly.

        The whole request must arrive within `idle_timeout` (IdleTimeout otherwise).
        """
        with self._within_idle_timeout():
            head = self._recv(4)
            if not head:
                return None
            head += self.read_exact(4 - len(head)) if len(head) < 4 else b""
            try:
                length = int(head.decode("ascii"), 16)
            except (UnicodeDecodeError, ValueError) as exc:
                raise ProtocolError(f"bad request length {head!r}") from exc
            if not 0 < length <= MAX_REQUEST_LENGTH:
                raise ProtocolError(f"bad request length {head!r}")
            request = self.read_exact(length).decode("utf-8", errors="replace")
        if _SPILLED_LENGTH.match(request):
            raise ProtocolError(
                f"request too long: its length must fit in 4 hex digits ({MAX_REQUEST_LENGTH} "
                "bytes); send long input through a file (adb push) or the shell's stdin"
            )
        return request

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def okay(self, extra: bytes = b"") -> None:
        self.send(b"OKAY" + extra)

    def fail(self, message: str) -> None:
        data = message.encode()
        if len(data) > MAX_REQUEST_LENGTH:  # a 4-hex-digit block cannot say more
            data = data[: MAX_REQUEST_LENGTH - 3] + b"..."
        self.send(b"FAIL" + encode_block(data))

    def close(self) -> None:
        close_socket(self.sock)


def encode_block(text: str | bytes) -> bytes:
    """A length-prefixed block: 4 hex digits, then the data."""
    data = text.encode() if isinstance(text, str) else text
    return f"{len(data):04x}".encode() + data


def close_socket(sock: socket.socket) -> None:
    """Shut down both directions first, so a peer blocked in recv sees EOF at once."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


class SocketSet:
    """The sockets one owner must close when it goes away (a server, an unplugged device)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._closed = False

    def add(self, sock: socket.socket) -> bool:
        """Track a socket; False (and the socket is closed) if the owner already closed."""
        with self._lock:
            if not self._closed:
                if len(self._sockets) >= _PURGE_AT:
                    # Sockets handed to listeners are closed by them; forget those.
                    self._sockets = {s for s in self._sockets if s.fileno() != -1}
                self._sockets.add(sock)
                return True
        close_socket(sock)
        return False

    def discard(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(sock)

    def close_all(self) -> None:
        with self._lock:
            self._closed = True
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            close_socket(sock)
