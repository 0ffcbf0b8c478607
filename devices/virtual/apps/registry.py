"""The apps installed on the virtual phone, in launcher order."""

from __future__ import annotations

from devices.virtual.apps.base import App
from devices.virtual.apps.clock import ClockApp
from devices.virtual.apps.contacts import ContactsApp
from devices.virtual.apps.dialer import DialerApp
from devices.virtual.apps.launcher import Launcher
from devices.virtual.apps.messages import MessagesApp
from devices.virtual.apps.pharmacy import PharmacyApp
from devices.virtual.apps.settings import SettingsApp
from devices.virtual.apps.weather import WeatherApp

APP_TYPES: tuple[type[App], ...] = (
    Launcher,
    ClockApp,
    WeatherApp,
    PharmacyApp,
    SettingsApp,
    DialerApp,
    MessagesApp,
    ContactsApp,
)


def make_apps() -> list[App]:
    return [cls() for cls in APP_TYPES]
