"""Whole-phone snapshots, as emulators keep them: save the phone, later load it back.

A snapshot holds the phone's state (apps' data and screens, text fields, focus,
settings, properties, the shade, Overview, the screen's power) and its files. Clients
reach it through the shell, so the same ADB connection that drives the phone resets it:

    virtualphone snapshot save NAME      OK, or an error naming the problem
    virtualphone snapshot load NAME      the phone is as it was when NAME was saved
    virtualphone snapshot list           one saved name per line
    virtualphone snapshot delete NAME

On a real phone the command does not exist (exit status 127), which is how a client tells
the two apart. Loading drops what a snapshot cannot hold: a touch in progress, a running
transition. Open connections (a screen mirror, forwards) stay open.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from virtual_phone.filesystem import FileSystemState
from virtual_phone.phone import PhoneState
from virtual_phone.shell import CommandFailed, Invocation

if TYPE_CHECKING:
    from virtual_phone.adbd import VirtualDevice

COMMAND = "virtualphone"
MAX_SNAPSHOTS = 16  # each holds a copy of the phone's files
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
_USAGE = f"usage: {COMMAND} snapshot save|load|delete NAME, or {COMMAND} snapshot list"


@dataclass(frozen=True, slots=True)
class DeviceSnapshot:
    phone: PhoneState
    files: FileSystemState


class SnapshotStore:
    """The named snapshots of one device."""

    def __init__(self, device: VirtualDevice) -> None:
        self._device = device
        self._lock = threading.Lock()
        self._saved: dict[str, DeviceSnapshot] = {}

    def save(self, name: str) -> None:
        _check_name(name)
        with self._lock:
            if name not in self._saved and len(self._saved) >= MAX_SNAPSHOTS:
                raise CommandFailed(
                    f"{COMMAND}: {MAX_SNAPSHOTS} snapshots are saved already; delete one first"
                )
            self._saved[name] = DeviceSnapshot(
                self._device.phone.snapshot(), self._device.fs.snapshot()
            )

    def load(self, name: str) -> None:
        with self._lock:
            snapshot = self._saved.get(name)
        if snapshot is None:
            raise CommandFailed(f"{COMMAND}: no snapshot named '{name}' (see: snapshot list)")
        self._device.fs.restore(snapshot.files)
        self._device.phone.restore(snapshot.phone)

    def delete(self, name: str) -> None:
        with self._lock:
            if self._saved.pop(name, None) is None:
                raise CommandFailed(f"{COMMAND}: no snapshot named '{name}'")

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._saved)

    def saved(self) -> dict[str, DeviceSnapshot]:
        """Every saved snapshot by name (to carry them over to a restarted phone)."""
        with self._lock:
            return dict(self._saved)

    def adopt(self, saved: dict[str, DeviceSnapshot]) -> None:
        """Keep ``saved`` (from ``saved()`` of the same phone before a restart)."""
        with self._lock:
            self._saved.update(saved)


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise CommandFailed(
            f"{COMMAND}: bad snapshot name '{name}': use 1-64 letters, digits, '.', '_' or '-'"
        )


def virtualphone(inv: Invocation) -> int:
    """The `virtualphone snapshot ...` shell command."""
    args = inv.args[1:]
    if args[:1] != ["snapshot"] or len(args) < 2:
        raise CommandFailed(_USAGE)
    verb, operands = args[1], args[2:]
    store = inv.device.snapshots
    if verb == "list" and not operands:
        inv.write("".join(name + "\n" for name in store.names()))
        return 0
    if verb not in ("save", "load", "delete") or len(operands) != 1:
        raise CommandFailed(_USAGE)
    {"save": store.save, "load": store.load, "delete": store.delete}[verb](operands[0])
    inv.write("OK\n")
    return 0
