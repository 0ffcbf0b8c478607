"""One owner of each device at a time, across the studio's tabs and across processes.

Whoever drives a phone -- a demonstration being recorded, an online evaluation run --
holds the phone's lock: a file per device serial in a shared runtime folder, which also
names the holder (pid, which tab or program, what it is doing), so that anyone refused
can say who holds the phone. The lock is an advisory ``flock`` (see
``graph_builder.folder_lock``): the kernel drops it when its holder dies, and two holders
in one process (two tabs) exclude each other just as two processes do.

A device is known by its serial and the adb server it is reached through
(``SERIAL@HOST:PORT``; a bare serial is on the local server, ANDROID_ADB_SERVER_PORT or
5037): two phones of one serial on two servers (two virtual phone servers, a device farm)
are two devices, and one phone written as ``virtual-1`` or ``virtual-1@localhost:5037``
is one.

>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> folder = Path(tmp.name)
>>> with DeviceLock("virtual-1", owner="the Evaluate tab", command="a run", folder=folder):
...     try:
...         DeviceLock("virtual-1", owner="the Record tab", command="demo", folder=folder).acquire()
...     except DeviceBusyError as exc:
...         print(exc.holder.owner, exc.holder.in_this_process)
the Evaluate tab True
>>> device_holder("virtual-1", folder=folder) is None
True
>>> tmp.cleanup()
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from devices.address import DeviceAddress
from devices.device import Device
from devices.errors import DeviceError
from graph_builder.folder_lock import FolderLock, FolderLockedError, lock_holder

# Where the lock files live; tests and several users of one machine may point it elsewhere.
RUNTIME_ENV = "ELDERBENCH_RUNTIME_DIR"


def runtime_dir() -> Path:
    """``$ELDERBENCH_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/elderbench``, else a per-user
    folder in the system's temporary folder; created on first use."""
    chosen = os.environ.get(RUNTIME_ENV)
    if chosen:
        return Path(chosen)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return Path(xdg) / "elderbench"
    uid = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    return Path(tempfile.gettempdir()) / f"elderbench-{uid}"


def lock_name(address: str) -> str:
    """The lock file of a device address: its serial and the adb server it is reached
    through (``DeviceAddress.on_server``), so phones of one serial on two servers are two
    devices (``virtual-1`` with the local server on 5037 ->
    ``device-virtual-1@127.0.0.1_5037.lock``)."""
    key = str(DeviceAddress.parse(address).on_server())
    return "device-" + re.sub(r"[^A-Za-z0-9._@-]", "_", key) + ".lock"


@dataclass(frozen=True, slots=True)
class DeviceHolder:
    """Who holds a device, as its lock file says."""

    device: str
    owner: str  # "the Record tab", "the Evaluate tab", "elderbench eval"
    command: str  # what it is doing with the device
    pid: int
    host: str
    since: float

    @property
    def in_this_process(self) -> bool:
        return self.pid == os.getpid() and self.host == socket.gethostname()

    def describe(self) -> str:
        clock = time.strftime("%H:%M:%S", time.localtime(self.since))
        where = "this studio" if self.in_this_process else f"pid {self.pid} on {self.host}"
        return f"{self.owner} ({self.command}; {where}, since {clock})"

    @classmethod
    def from_lock(cls, device: str, data: dict[str, Any]) -> DeviceHolder:
        details = data.get("details") if isinstance(data.get("details"), dict) else {}
        assert isinstance(details, dict)
        try:
            pid, since = int(data.get("pid", 0)), float(data.get("started", 0.0))
        except (TypeError, ValueError):
            pid, since = 0, 0.0
        return cls(
            device=device,
            owner=str(details.get("owner") or data.get("purpose") or "another program"),
            command=str(details.get("command") or "it has not said what it does"),
            pid=pid,
            host=str(data.get("host") or "an unknown host"),
            since=since,
        )


class DeviceBusyError(DeviceError):
    """Another tab or process holds the device; ``holder`` says who."""

    def __init__(self, holder: DeviceHolder) -> None:
        self.holder = holder
        super().__init__(
            f"The phone {holder.device} is in use by {holder.describe()}. Wait until it is "
            "done or stop it there; a holder that dies frees the phone by itself."
        )


class DeviceLock:
    """Held from ``acquire()`` (or ``with``) until ``release()``; not reentrant."""

    def __init__(
        self, address: str, *, owner: str, command: str, folder: Path | None = None
    ) -> None:
        self.address = address
        self.owner = owner
        self.command = command
        self.folder = folder
        self._lock: FolderLock | None = None

    def acquire(self) -> Self:
        """Take the device, or raise DeviceBusyError naming its holder."""
        if self._lock is not None:
            return self
        folder = self.folder or runtime_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DeviceError(
                f"cannot create the folder for device locks {folder}: {exc.strerror or exc}. "
                f"Set {RUNTIME_ENV} to a writable folder."
            ) from exc
        lock = FolderLock(
            folder,
            purpose=f"{self.owner}: {self.command}",
            name=lock_name(self.address),
            details={"device": self.address, "owner": self.owner, "command": self.command},
        )
        try:
            for attempt in range(3):  # a holder that lets go between the two looks
                try:
                    lock.acquire()
                    break
                except FolderLockedError:
                    holder = device_holder(self.address, folder=folder)
                    if holder is not None or attempt == 2:
                        raise DeviceBusyError(
                            holder or DeviceHolder.from_lock(self.address, {})
                        ) from None
        except OSError as exc:
            raise DeviceError(
                f"cannot take the lock of {self.address} in {folder}: {exc.strerror or exc}"
            ) from exc
        self._lock = lock
        return self

    def release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    @property
    def held(self) -> bool:
        return self._lock is not None

    def __enter__(self) -> Self:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_address(device: Device) -> str:
    """The address a device object is locked under: ``SERIAL@HOST:PORT`` of the adb server
    it is reached through, or its serial when it has no server (an in-memory device)."""
    serial = device.serial
    server = getattr(device, "address", None)
    if not isinstance(server, tuple):
        return serial
    host, port = server
    return str(DeviceAddress(serial, str(host), int(port)))


def device_holder(address: str, *, folder: Path | None = None) -> DeviceHolder | None:
    """Who holds ``address`` now, or None when it is free (a snapshot: it may change)."""
    data = lock_holder((folder or runtime_dir()) / lock_name(address))
    return None if data is None else DeviceHolder.from_lock(address, data)


class DeviceLocks:
    """The locks of several devices, taken all together or not at all."""

    def __init__(self, locks: list[DeviceLock]) -> None:
        self._locks = locks

    @classmethod
    def take(
        cls, addresses: Iterable[str], *, owner: str, command: str, folder: Path | None = None
    ) -> DeviceLocks:
        """Every device's lock; DeviceBusyError (nothing held) when one is taken."""
        taken: list[DeviceLock] = []
        try:
            for address in dict.fromkeys(addresses):
                lock = DeviceLock(address, owner=owner, command=command, folder=folder)
                taken.append(lock.acquire())
        except BaseException:
            for lock in taken:
                lock.release()
            raise
        return cls(taken)

    def release(self) -> None:
        for lock in self._locks:
            lock.release()
        self._locks = []
