"""Every online task starts from the same device state.

When a worker opens a phone it saves a whole-phone snapshot (``virtualphone snapshot save``,
as emulators keep them); before each task the snapshot is loaded back, then the task's
reset recipe runs. A phone without snapshots (a real phone answers exit status 127) relies
on the reset recipes alone, which must then restore every package and setting the suite
touches. Either way the first screen is compared with the graph's START before the agent
acts; a mismatch is a ``dirty_start`` error, never a silent run.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from devices.errors import DeviceCommandError, DeviceError

SNAPSHOT = "elderbench-clean-start"
COMMAND_TIMEOUT = 30.0


@runtime_checkable
class _Shell(Protocol):
    def shell(self, command: str, *, timeout: float | None = None, check: bool = True) -> str: ...


def save_clean_state(device: object) -> str | None:
    """Save the device's whole state as the run's clean start; None when the device has no
    snapshots (a real phone refuses the command) or no shell (an in-memory device).

    A device that stops answering raises DeviceDisconnectedError: it is lost, not a phone
    without snapshots, and the next task on it once healed must still save one."""
    if not isinstance(device, _Shell):
        return None
    try:
        device.shell(f"virtualphone snapshot save {SNAPSHOT}", timeout=COMMAND_TIMEOUT)
    except DeviceCommandError:
        return None
    return SNAPSHOT


def restore_clean_state(device: object, name: str) -> None:
    """Load the snapshot ``name`` back (DeviceError when the device refuses)."""
    if not isinstance(device, _Shell):
        raise DeviceError("the device has no shell to restore a snapshot with")
    device.shell(f"virtualphone snapshot load {name}", timeout=COMMAND_TIMEOUT)
