"""The Device seam: what the recorder and the online protocol need from a phone.

Two implementations: ``devices.android.AndroidDevice`` (real and virtual phones, over
adbutils) and ``devices.fake.FakeDevice`` (screens held in memory, for tests of the code
above the device layer). Every method may raise a ``devices.errors.DeviceError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from devices.health import Health
from devices.hierarchy import HierarchyUse
from graph_builder.model import Action, DeviceInfo, ResetRecipe
from graph_builder.screen import Screen


@dataclass(frozen=True, slots=True)
class PackageVersion:
    """An installed app's version, as `dumpsys package` reports it."""

    name: str
    code: int

    def to_json(self) -> dict[str, Any]:
        return {"version_name": self.name, "version_code": self.code}


class Device(Protocol):
    """One phone: observe its screen, act on it, reset an app."""

    @property
    def serial(self) -> str: ...

    def info(self) -> DeviceInfo:
        """Model, Android version, natural screen size and density."""
        ...

    def observe(self) -> Screen:
        """The screen now: screenshot, hierarchy and activity, taken back to back."""
        ...

    def perform(self, action: Action) -> None:
        """Carry out one action (coordinates in any space, see ``Action.screen``)."""
        ...

    def wait_until_settled(self, timeout: float = 3.0) -> bool:
        """True once the screen stopped changing; False when ``timeout`` ran out."""
        ...

    def reset_app(self, recipe: ResetRecipe) -> None:
        """Put an app in its start state."""
        ...

    def installed_packages(self) -> list[str]:
        """The packages installed (to start an app an agent names by its label)."""
        ...

    def package_versions(self, packages: list[str]) -> dict[str, PackageVersion | None]:
        """versionName and versionCode of each package (None: not installed)."""
        ...

    def hierarchy_use(self) -> HierarchyUse:
        """Which hierarchy tool was chosen and which have read its screens so far."""
        ...

    def health(self, timeout: float = 10.0) -> Health:
        """Is it fit for the next task (answers, screen on and unlocked, launcher up)?"""
        ...

    def close(self) -> None:
        """Release what the device holds; it is not used afterwards."""
        ...
