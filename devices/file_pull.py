"""Pulling a file from a phone with a deadline for the whole call.

A socket timeout bounds each read, not the transfer: a phone or adb server that sends a
few bytes now and then never trips it and keeps a pull going for as long as it likes.
Here every read waits at most for the time left of the call, so ``pull_file`` returns
or raises ``DeviceTimeoutError`` within ``seconds`` (connecting included), however the
bytes arrive. It speaks adb's sync protocol (``RECV``) on its own connection to the adb
server, and writes the file atomically: ``OUT.part``, then renamed to ``OUT``; a pull
that fails leaves nothing.
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import time
from pathlib import Path
from typing import Self

from devices.errors import (
    AdbUnavailableError,
    DeviceCommandError,
    DeviceDisconnectedError,
    DeviceTimeoutError,
)

SYNC_DATA_MAX = 64 * 1024  # the largest DATA record adb sends
_LENGTH = struct.Struct("<I")


class _Wire:
    """One connection to an adb server whose every read and write ends by ``deadline``."""

    def __init__(self, server: tuple[str, int], deadline: float, late: str) -> None:
        self.server = server
        self.deadline = deadline
        self.late = late  # the DeviceTimeoutError's message
        self._sock: socket.socket | None = None

    def __enter__(self) -> Self:
        host, port = self.server
        try:
            self._sock = socket.create_connection((host, port), timeout=self._left())
        except TimeoutError as exc:
            raise DeviceTimeoutError(self.late) from exc
        except OSError as exc:
            raise AdbUnavailableError(
                f"No adb server answers at {host}:{port} ({exc.strerror or exc})."
            ) from exc
        return self

    def __exit__(self, *exc: object) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise DeviceTimeoutError(self.late)
        return left

    def send(self, data: bytes) -> None:
        assert self._sock is not None
        try:
            self._sock.settimeout(self._left())
            self._sock.sendall(data)  # the timeout bounds the whole sendall
        except TimeoutError as exc:
            raise DeviceTimeoutError(self.late) from exc
        except OSError as exc:
            raise DeviceDisconnectedError(f"the connection broke: {exc}") from exc

    def read(self, size: int) -> bytes:
        """Exactly ``size`` bytes, each piece waited for at most the time left."""
        assert self._sock is not None
        data = bytearray()
        while len(data) < size:
            try:
                self._sock.settimeout(self._left())
                piece = self._sock.recv(min(size - len(data), SYNC_DATA_MAX))
            except TimeoutError as exc:
                raise DeviceTimeoutError(self.late) from exc
            except OSError as exc:
                raise DeviceDisconnectedError(f"the connection broke: {exc}") from exc
            if not piece:
                raise DeviceDisconnectedError("the adb server closed the connection")
            data += piece
        return bytes(data)

    def request(self, service: str) -> None:
        """Ask the adb server for ``service``; DeviceDisconnectedError with its reason when
        it refuses (an unknown serial, a phone that went away)."""
        encoded = service.encode("utf-8")
        self.send(f"{len(encoded):04x}".encode("ascii") + encoded)
        status = self.read(4)
        if status == b"OKAY":
            return
        if status == b"FAIL":
            said = self.read(int(self.read(4), 16)).decode("utf-8", "replace")
            raise DeviceDisconnectedError(f"adb refused {service}: {said}")
        raise DeviceDisconnectedError(f"adb answered {status!r} to {service}")


def pull_file(
    server: tuple[str, int], serial: str, remote: str, out: Path, *, seconds: float
) -> int:
    """Copy the phone's file ``remote`` to ``out`` through the adb server at ``server``
    (host, port), all of it within ``seconds``; returns its size in bytes.

    Raises DeviceTimeoutError when the deadline passes, DeviceCommandError when the phone
    cannot read the file, and another DeviceError when the connection fails; ``out`` is
    then untouched. A local file that cannot be written raises OSError.
    """
    if seconds <= 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    late = f"{serial} did not finish sending {remote} within {seconds:g} s"
    part = out.with_name(out.name + ".part")
    try:
        with _Wire(server, time.monotonic() + seconds, late) as wire, part.open("wb") as file:
            wire.request(f"host:transport:{serial}")
            wire.request("sync:")
            path = remote.encode("utf-8")
            wire.send(b"RECV" + _LENGTH.pack(len(path)) + path)
            size = 0
            while (kind := wire.read(4)) != b"DONE":
                (length,) = _LENGTH.unpack(wire.read(4))
                if kind == b"FAIL":
                    said = wire.read(length).decode("utf-8", "replace")
                    raise DeviceCommandError(f"cannot pull {remote} from {serial}: {said}")
                if kind != b"DATA" or length > SYNC_DATA_MAX:
                    raise DeviceDisconnectedError(
                        f"{serial} sent {kind!r} of {length} bytes while sending {remote}"
                    )
                file.write(wire.read(length))
                size += length
            file.flush()
            os.fsync(file.fileno())
        os.replace(part, out)
        return size
    finally:
        part.unlink(missing_ok=True)
