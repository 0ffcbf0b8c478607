"""A TCP proxy in front of an adb server that, once told to, passes the server's bytes on
a few at a time: a phone whose every read arrives in time but whose transfer never ends."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class TrickleProxy:
    target: tuple[str, int]
    piece: int = 16  # bytes passed on at a time while trickling
    interval: float = 0.1  # seconds between pieces while trickling
    trickling: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    _listener: socket.socket | None = None
    _closed: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._closed.set()
        if self._listener is not None:
            # close() alone leaves a thread blocked in accept() holding the socket: the port
            # would go on listening for the rest of the session and take other tests' calls.
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=10)
            except OSError:  # the adb server behind it is gone: the caller sees a refusal
                client.close()
                continue
            server.settimeout(None)
            threading.Thread(target=self._pass, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pass, args=(server, client, True), daemon=True).start()

    def _pass(self, source: socket.socket, sink: socket.socket, from_server: bool) -> None:
        try:
            while data := source.recv(65536):
                while data:
                    if from_server and self.trickling.is_set():
                        sink.sendall(data[: self.piece])
                        data = data[self.piece :]
                        time.sleep(self.interval)
                    else:
                        sink.sendall(data)
                        data = b""
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()


@contextlib.contextmanager
def trickle_proxy(port: int, *, piece: int = 16, interval: float = 0.1) -> Iterator[TrickleProxy]:
    """A proxy to the adb server on ``port`` (of this machine), closed on exit."""
    proxy = TrickleProxy(("127.0.0.1", port), piece, interval)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.close()
