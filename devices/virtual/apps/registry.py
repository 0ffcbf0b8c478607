"""The apps installed on the virtual phone, in launcher order."""

from __future__ import annotations

from devices.virtual.apps.base import App
from devices.virtual.apps.launcher import Launcher
from devices.virtual.apps.settings import SettingsApp

APP_TYPES: tuple[type[App], ...] = (Launcher, SettingsApp)


def make_apps() -> list[App]:
    return [cls() for cls in APP_TYPES]
