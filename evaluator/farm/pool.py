"""A pool of devices that heals itself: health checks, restarts, retries and quarantine.

Before each task a device is checked (``devices.health``). A device that fails is closed,
healed with the farm's restart command (for example ``adb -s {serial} reboot``, an
emulator restart script, or waking the screen), reconnected and checked again. After
``quarantine_after`` failed attempts in a row it is quarantined: no more tasks go to it in
this run. A task whose device is lost mid-task goes back to the queue and runs on another
device, at most ``task_retries`` times. Everything is written to ``farm.jsonl`` in the run
folder (one JSON object a line) and summarized in the report.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from devices.address import DeviceAddress
from devices.device import Device
from devices.errors import DeviceError
from devices.health import Health
from evaluator.errors import ConfigError
from evaluator.farm.executors import EXECUTORS


@dataclass(frozen=True, slots=True)
class FarmSettings:
    """How the devices of a run are driven and kept healthy."""

    executor: str = "local"  # a name of evaluator.farm.executors.EXECUTORS
    ray_address: str | None = None  # an existing cluster ("auto", "ray://head:10001"); None: local
    task_retries: int = 2  # reruns of a task whose device was lost, each on another device
    restart_command: str | None = None  # {serial} {host} {port} {address} are filled in
    restart_timeout: float = 120.0
    quarantine_after: int = 3  # failed heals in a row
    health_timeout: float = 10.0
    health_check: bool = True

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise ConfigError(f"executor {self.executor!r}: choose {' or '.join(EXECUTORS)}")
        if self.task_retries < 0 or self.quarantine_after < 1:
            raise ConfigError("task_retries must be >= 0 and quarantine_after >= 1")
        if self.restart_timeout <= 0 or self.health_timeout <= 0:
            raise ConfigError("restart and health timeouts must be positive")

    def to_json(self) -> dict[str, Any]:
        return {
            "executor": self.executor,
            "ray_address": self.ray_address,
            "task_retries": self.task_retries,
            "restart_command": self.restart_command,
            "restart_timeout": self.restart_timeout,
            "quarantine_after": self.quarantine_after,
            "health_timeout": self.health_timeout,
            "health_check": self.health_check,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> FarmSettings:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in (data or {}).items() if k in names})


def restart_device(settings: FarmSettings, address: DeviceAddress) -> tuple[bool, str]:
    """Run the restart command for ``address``; (succeeded, what it printed)."""
    if not settings.restart_command:
        return False, "no restart command configured"
    values = {
        "serial": address.serial,
        "host": address.host or "127.0.0.1",
        "port": str(address.port or os.environ.get("ANDROID_ADB_SERVER_PORT", "5037")),
        "address": str(address),
    }
    try:
        argv = [part.format(**values) for part in shlex.split(settings.restart_command)]
    except (KeyError, ValueError, IndexError) as exc:
        raise ConfigError(f"restart command {settings.restart_command!r}: {exc}") from exc
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=settings.restart_timeout,
            check=False,
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{argv[0]}: {exc}"
    output = (done.stdout + done.stderr).strip()[-500:]
    return done.returncode == 0, output or f"exit status {done.returncode}"


@dataclass
class DeviceSlot:
    """One device of the pool and what the run learned about it."""

    address: DeviceAddress
    device: Device | None = None
    failures: int = 0  # failed heals in a row
    quarantined: bool = False
    health: Health | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return str(self.address)


Opener = Callable[[DeviceAddress], Device]
Recorder = Callable[..., Any]  # FarmLog.record, or a collector on a remote worker


def prepare(
    slot: DeviceSlot, settings: FarmSettings, open_device: Opener, record: Recorder
) -> Device | None:
    """A healthy device for the next task, healing it if needed; None when it is not
    fit (quarantined after too many failures in a row)."""
    if slot.quarantined:
        return None
    while True:
        problem = _problem(slot, settings, open_device)
        if problem is None:
            slot.failures = 0
            return slot.device
        record("unhealthy", slot.name, problem=problem)
        _close(slot)
        slot.failures += 1
        if slot.failures >= settings.quarantine_after:
            slot.quarantined = True
            record("quarantine", slot.name, after=slot.failures, problem=problem)
            return None
        ok, output = restart_device(settings, slot.address)
        record("restart", slot.name, ok=ok, output=output)
        if not ok and not settings.restart_command:
            time.sleep(min(2.0, settings.health_timeout / 5))  # a phone replugging itself


def _problem(slot: DeviceSlot, settings: FarmSettings, open_device: Opener) -> str | None:
    if slot.device is None:
        try:
            slot.device = open_device(slot.address)
        except (DeviceError, ConfigError, OSError) as exc:
            return f"cannot connect: {exc}"
    if not settings.health_check:
        return None
    slot.health = slot.device.health(settings.health_timeout)
    return None if slot.health.ok else slot.health.summary()


def lost(slot: DeviceSlot) -> None:
    """The device went away mid-task: drop the connection; the next prepare heals it."""
    _close(slot)


def _close(slot: DeviceSlot) -> None:
    device, slot.device = slot.device, None
    if device is not None:
        with contextlib.suppress(Exception):  # closing a dead connection may fail any way
            device.close()
