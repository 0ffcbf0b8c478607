"""An in-memory Device for tests: a set of screens and a script of how actions move between
them. No ADB, no threads, no waiting.

>>> from graph_builder.screen import Screen
>>> home, next_ = Screen((100, 200), png=b"home"), Screen((100, 200), png=b"next")
>>> phone = FakeDevice({"home": home, "next": next_}, "home", lambda at, action: "next")
>>> phone.perform(Action.back()); phone.observe() is next_
True
>>> [action.type.value for action in phone.performed]
['back']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from devices.device import PackageVersion
from devices.errors import DeviceDisconnectedError, DeviceError
from devices.health import Health, HealthCheck
from devices.hierarchy import HierarchyUse
from graph_builder.model import Action, ActionType, DeviceInfo, ResetRecipe
from graph_builder.screen import Screen

# Where an action leads: (current screen id, action) -> next screen id.
Transition = Callable[[str, Action], str]


@dataclass
class FakeDevice:
    """A phone showing ``screens[current]``; ``transition`` decides where actions lead.

    ``reset_app`` returns to ``start``. Every call is recorded (``performed``, ``resets``)
    and any call can be made to fail once with ``fail_next``, to test fault handling.
    """

    screens: Mapping[str, Screen]
    start: str
    transition: Transition
    serial: str = "fake-1"
    settled: bool = True
    current: str = ""
    performed: list[Action] = field(default_factory=list)
    resets: list[ResetRecipe] = field(default_factory=list)
    closed: bool = False
    versions: Mapping[str, PackageVersion] = field(default_factory=dict)  # installed apps
    _faults: dict[str, DeviceError] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.start not in self.screens:
            raise ValueError(f"start screen {self.start!r} is not one of the screens")
        self.current = self.current or self.start

    def fail_next(self, method: str, error: DeviceError | None = None) -> None:
        """Make the next call of ``method`` (e.g. ``"perform"``) raise ``error``
        (by default: the device was unplugged)."""
        self._faults[method] = error or DeviceDisconnectedError(f"{self.serial} was unplugged")

    def _call(self, method: str) -> None:
        if self.closed:
            raise DeviceDisconnectedError(f"{self.serial} was closed")
        fault = self._faults.pop(method, None)
        if fault is not None:
            raise fault

    @property
    def screen(self) -> Screen:
        return self.screens[self.current]

    def info(self) -> DeviceInfo:
        self._call("info")
        width, height = self.screen.size
        return DeviceInfo(self.serial, "FakeDevice", "14", width, height, 440)

    def observe(self) -> Screen:
        self._call("observe")
        return self.screen

    def perform(self, action: Action) -> None:
        self._call("perform")
        self.performed.append(action)
        if action.type is ActionType.DONE:
            return
        target = self.transition(self.current, action)
        if target not in self.screens:
            raise DeviceError(f"the script led from {self.current!r} to unknown {target!r}")
        self.current = target

    def wait_until_settled(self, timeout: float = 3.0) -> bool:
        self._call("wait_until_settled")
        return self.settled

    def reset_app(self, recipe: ResetRecipe) -> None:
        self._call("reset_app")
        self.resets.append(recipe)
        self.current = self.start

    def installed_packages(self) -> list[str]:
        """The packages of the scripted screens' activities."""
        self._call("installed_packages")
        return sorted({s.activity.partition("/")[0] for s in self.screens.values() if s.activity})

    def package_versions(self, packages: list[str]) -> dict[str, PackageVersion | None]:
        """The versions given in ``versions`` (None: a package it does not hold)."""
        self._call("package_versions")
        return {p: self.versions.get(p) for p in packages}

    def hierarchy_use(self) -> HierarchyUse:
        """No tool: the screens are held in memory."""
        return HierarchyUse("")

    def health(self, timeout: float = 10.0) -> Health:
        """Healthy while open; ``fail_next("health")`` makes the next check fail."""
        try:
            self._call("health")
        except DeviceError as exc:
            return Health((HealthCheck("adb", False, f"no answer: {exc}"),))
        return Health((HealthCheck("adb", True, "answers"),))

    def close(self) -> None:
        self.closed = True
