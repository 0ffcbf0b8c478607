"""An evaluation run owns its devices from start to end (pauses included), so that no
demonstration and no other run drives a phone under it (``devices.device_lock``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from devices.device_lock import DeviceLocks
from devices.errors import DeviceError
from evaluator.errors import ConfigError


def hold_run_devices(devices: Sequence[str], out: Path, owner: str) -> DeviceLocks:
    """The locks of a run's devices; ConfigError naming the holder when one is in use."""
    try:
        return DeviceLocks.take(devices, owner=owner, command=f"online run → {out}")
    except DeviceError as exc:
        raise ConfigError(str(exc)) from exc
