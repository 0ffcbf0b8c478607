"""The apps installed on the virtual phone, in launcher order."""

from __future__ import annotations

from virtual_phone.apps.base import App
from virtual_phone.apps.clock import ClockApp
from virtual_phone.apps.contacts import ContactsApp
from virtual_phone.apps.dialer import DialerApp
from virtual_phone.apps.launcher import Launcher
from virtual_phone.apps.messages import MessagesApp
from virtual_phone.apps.pharmacy import PharmacyApp
from virtual_phone.apps.settings import SettingsApp
from virtual_phone.apps.weather import WeatherApp

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
