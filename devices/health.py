"""Is a device fit to run the next task? adb answers, the screen is on and unlocked, and
the launcher comes up on Home.

Each check is one bounded shell command; a check whose answer cannot be read on this
phone (an OEM build that prints no lock state) passes with its detail saying so, so a
farm is never stopped by a missing line, only by a phone that is really off, locked or
gone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from devices.errors import DeviceError

HOME_KEY = 3
_KEYGUARD = re.compile(r"(?:mDreamingLockscreen|isKeyguardShowing|mShowingLockscreen)=(true|false)")


class _Shell(Protocol):
    def shell(self, command: str, *, timeout: float | None = None, check: bool = True) -> str: ...


@dataclass(frozen=True, slots=True)
class HealthCheck:
    name: str
    ok: bool
    detail: str

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Health:
    checks: tuple[HealthCheck, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def summary(self) -> str:
        failed = [f"{c.name}: {c.detail}" for c in self.checks if not c.ok]
        return "healthy" if not failed else "; ".join(failed)

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "checks": [c.to_json() for c in self.checks]}


def check_health(device: _Shell, *, timeout: float = 10.0) -> Health:
    """Run the checks in order; after adb fails nothing else can be asked."""
    try:
        answer = device.shell("echo ok", timeout=timeout).strip()
    except DeviceError as exc:
        return Health((HealthCheck("adb", False, f"no answer: {exc}"),))
    checks = [HealthCheck("adb", answer == "ok", "answers" if answer == "ok" else answer[:80])]
    checks.append(_screen_on(device, timeout))
    checks.append(_unlocked(device, timeout))
    checks.append(_launcher(device, timeout))
    return Health(tuple(checks))


def _ask(device: _Shell, command: str, timeout: float) -> str | None:
    try:
        return device.shell(command, timeout=timeout, check=False)
    except DeviceError:
        return None


def _screen_on(device: _Shell, timeout: float) -> HealthCheck:
    text = _ask(device, "dumpsys power", timeout)
    if text is None:
        return HealthCheck("screen", False, "dumpsys power did not answer")
    m = re.search(r"mWakefulness=(\w+)", text) or re.search(r"Display Power: state=(\w+)", text)
    if m is None:
        return HealthCheck("screen", True, "state not reported (assumed on)")
    on = m.group(1) in ("Awake", "ON")
    return HealthCheck(
        "screen", on, "on" if on else f"off ({m.group(1)}); wake it with KEYCODE_WAKEUP"
    )


def _unlocked(device: _Shell, timeout: float) -> HealthCheck:
    text = _ask(device, "dumpsys deviceidle", timeout) or ""
    m = re.search(r"mScreenLocked=(true|false)", text)
    if m is None:
        window = _ask(device, "dumpsys window", timeout) or ""
        m = _KEYGUARD.search(window)
    if m is None:
        return HealthCheck("unlocked", True, "lock state not reported (assumed unlocked)")
    locked = m.group(1) == "true"
    return HealthCheck(
        "unlocked", not locked, "unlocked" if not locked else "the lock screen shows"
    )


def _launcher(device: _Shell, timeout: float) -> HealthCheck:
    from devices.android import parse_focus

    if _ask(device, f"input keyevent {HOME_KEY}", timeout) is None:
        return HealthCheck("launcher", False, "Home could not be pressed")
    focus = parse_focus(_ask(device, "dumpsys window", timeout) or "")
    if not focus:
        return HealthCheck("launcher", False, "no activity in front after Home")
    return HealthCheck("launcher", True, focus.split("/", 1)[0])
