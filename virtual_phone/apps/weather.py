"""Weather (``com.elderphone.weather``): today's conditions for a city, a 7-day forecast,
a city picker and a °C/°F setting. The forecast is fixed per city, so runs repeat.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Any

from virtual_phone.apps.base import App, Screen, Ui
from virtual_phone.apps.icons import paint_icon
from virtual_phone.apps.kit import (
    ON_SURFACE_VARIANT,
    Column,
    list_page,
    list_row,
    scroll_list,
    text,
    text_line,
    toolbar,
    toolbar_action,
    toolbar_height,
    trailing_switch,
    trailing_text,
)
from virtual_phone.widgets import Color, Rect, View

PACKAGE = "com.elderphone.weather"
ACTIVITY = "com.elderphone.weather.MainActivity"
SKY: Color = (214, 234, 252)
CARD: Color = (236, 245, 253)


@dataclass(frozen=True, slots=True)
class Day:
    condition: str
    icon: str
    high: int  # °C
    low: int
    rain: int  # chance, %


_PATTERN = (
    Day("Partly cloudy", "partly", 21, 13, 10),
    Day("Sunny", "sun", 24, 14, 0),
    Day("Rain", "rain", 17, 11, 80),
    Day("Cloudy", "cloud", 18, 12, 30),
    Day("Sunny", "sun", 25, 15, 0),
    Day("Showers", "rain", 19, 13, 60),
    Day("Partly cloudy", "partly", 22, 14, 20),
)
CITIES: dict[str, int] = {
    "Springfield": 0,
    "Riverside": 3,
    "Lakewood": -4,
    "Fairview": 1,
    "Greenville": -2,
}


def forecast(city: str) -> list[Day]:
    """Seven days for ``city``: the shared pattern, rotated and shifted per city."""
    shift = CITIES.get(city, 0)
    start = sum(map(ord, city)) % len(_PATTERN)
    days = _PATTERN[start:] + _PATTERN[:start]
    return [Day(d.condition, d.icon, d.high + shift, d.low + shift, d.rain) for d in days]


def degrees(celsius: int, unit: str) -> str:
    return f"{round(celsius * 9 / 5 + 32) if unit == 'F' else celsius}°"


def _settings(ui: Ui) -> dict[str, Any]:
    return ui.host.app_data(PACKAGE)


def _day_name(ui: Ui, index: int) -> str:
    if index == 0:
        return "Today"
    if index == 1:
        return "Tomorrow"
    return (ui.now() + timedelta(days=index)).strftime("%A")


def _condition_icon(ui: Ui, col: Column, day: Day, *, rid: str = "") -> View:
    """The day's weather picture, 120 dp, centred in the next row of ``col``."""
    r = col.place(ui.dp(120))
    cx = r.center[0]
    return View(
        Rect(cx - ui.dp(60), r.top, cx + ui.dp(60), r.bottom),
        cls="android.widget.ImageView",
        rid=rid,
        desc=day.condition,
        paint=paint_icon,
        icon=day.icon,
        icon_color=(120, 144, 156),
    )


class TodayScreen(Screen):
    screen_id = "weather/today"
    activity = ACTIVITY

    def background(self) -> Color:
        return SKY

    def build(self, ui: Ui) -> View:
        c = ui.content
        data = _settings(ui)
        city, unit = data["city"], data["unit"]
        days = forecast(city)
        today = days[0]
        root = View(c, cls="android.widget.FrameLayout", rid=f"{PACKAGE}:id/main_layout", bg=SKY)
        bar_h = toolbar_height(ui)
        actions = [
            toolbar_action(
                ui,
                1,
                "search",
                "Change city",
                lambda: ui.push(CitiesScreen()),
                rid=f"{PACKAGE}:id/action_city",
            ),
            toolbar_action(
                ui,
                0,
                "settings",
                "Settings",
                lambda: ui.push(WeatherSettingsScreen()),
                rid=f"{PACKAGE}:id/action_settings",
            ),
        ]
        root.add(toolbar(ui, "Weather", rid=f"{PACKAGE}:id/toolbar", actions=actions))
        col = Column(c.left, c.top + bar_h, c.width)
        rows: list[View] = []
        city_view = text_line(
            ui,
            col,
            city,
            size=28,
            align="center",
            rid=f"{PACKAGE}:id/city_name",
        )
        city_view.clickable = city_view.focusable = True
        city_view.on_click = lambda: ui.push(CitiesScreen())
        rows.append(city_view)
        rows.append(_condition_icon(ui, col, today, rid=f"{PACKAGE}:id/condition_icon"))
        rows.append(
            text(
                ui,
                col.place(ui.sp(72) * 5 // 4),
                degrees(today.high - 3, unit),
                size=72,
                align="center",
                rid=f"{PACKAGE}:id/temperature",
            )
        )
        rows.append(
            text_line(
                ui,
                col,
                today.condition,
                size=20,
                align="center",
                rid=f"{PACKAGE}:id/condition",
            )
        )
        rows.append(
            text_line(
                ui,
                col,
                f"H:{degrees(today.high, unit)}  L:{degrees(today.low, unit)}",
                size=16,
                align="center",
                color=ON_SURFACE_VARIANT,
                rid=f"{PACKAGE}:id/high_low",
            )
        )
        col.skip(ui.dp(16))
        details = (("Humidity", "62%"), ("Wind", "12 km/h"), ("Rain", f"{today.rain}%"))
        dr = col.place(ui.sp(14) * 3 + ui.dp(32))
        box = View(
            Rect(dr.left + ui.dp(16), dr.top, dr.right - ui.dp(16), dr.bottom),
            cls="android.widget.LinearLayout",
            rid=f"{PACKAGE}:id/details",
            bg=CARD,
            radius=ui.dp(20),
        )
        slot = box.rect.width // 3
        for i, (label, value) in enumerate(details):
            left = box.rect.left + i * slot
            box.add(
                text(
                    ui,
                    Rect(
                        left,
                        dr.top + ui.dp(12),
                        left + slot,
                        dr.top + ui.dp(12) + ui.sp(14) * 3 // 2,
                    ),
                    label,
                    size=14,
                    align="center",
                    color=ON_SURFACE_VARIANT,
                )
            )
            box.add(
                text(
                    ui,
                    Rect(
                        left,
                        dr.top + ui.dp(12) + ui.sp(14) * 3 // 2,
                        left + slot,
                        dr.bottom - ui.dp(8),
                    ),
                    value,
                    size=18,
                    align="center",
                    bold=True,
                )
            )
        rows.append(box)
        col.skip(ui.dp(16))
        hr = col.place(ui.sp(16) * 2)
        rows.append(
            text(
                ui,
                Rect(hr.left + ui.dp(24), hr.top, hr.right, hr.bottom),
                "7-day forecast",
                size=16,
                bold=True,
                rid=f"{PACKAGE}:id/forecast_title",
            )
        )
        for i, day in enumerate(days):
            row = list_row(
                ui,
                col,
                _day_name(ui, i),
                summary=day.condition,
                icon_name=day.icon,
                on_click=partial(ui.push, DayScreen(i)),
                min_height=64,
                title_rid=f"{PACKAGE}:id/day_name",
                summary_rid=f"{PACKAGE}:id/day_condition",
                icon_rid=f"{PACKAGE}:id/day_icon",
                title_digest=False,
                icon_color=(120, 144, 156),
                trailing=trailing_text(
                    ui,
                    f"{degrees(day.high, unit)} / {degrees(day.low, unit)}",
                    ui.dp(120),
                    rid=f"{PACKAGE}:id/day_temps",
                ),
            )
            rows.append(row)
        root.add(
            scroll_list(
                ui,
                self,
                "today",
                Rect(c.left, c.top + bar_h, c.right, c.bottom),
                rows,
                rid=f"{PACKAGE}:id/forecast_list",
                bottom_pad=ui.dp(16),
            )
        )
        return root


class DayScreen(Screen):
    activity = "com.elderphone.weather.DayActivity"

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index
        self.screen_id = f"weather/day/{index}"

    def background(self) -> Color:
        return SKY

    def build(self, ui: Ui) -> View:
        c = ui.content
        data = _settings(ui)
        unit = data["unit"]
        day = forecast(data["city"])[self.index]
        bar = toolbar(ui, _day_name(ui, self.index), up=ui.pop, rid=f"{PACKAGE}:id/toolbar")
        col = Column(c.left, bar.rect.bottom + ui.dp(16), c.width)
        rows: list[View] = [
            text_line(
                ui,
                col,
                data["city"],
                size=20,
                align="center",
                rid=f"{PACKAGE}:id/city_name",
            ),
        ]
        rows.append(_condition_icon(ui, col, day))
        rows.append(
            text_line(
                ui,
                col,
                day.condition,
                size=24,
                align="center",
                rid=f"{PACKAGE}:id/condition",
            )
        )
        col.skip(ui.dp(16))
        for label, value in (
            ("High", degrees(day.high, unit)),
            ("Low", degrees(day.low, unit)),
            ("Chance of rain", f"{day.rain}%"),
            ("Sunrise", "6:48 AM"),
            ("Sunset", "7:21 PM"),
        ):
            rows.append(
                list_row(
                    ui, col, label, summary=value, min_height=64, summary_rid=f"{PACKAGE}:id/value"
                )
            )
        return list_page(
            ui,
            self,
            bar,
            rows,
            rid=f"{PACKAGE}:id/day_layout",
            list_rid=f"{PACKAGE}:id/day_details",
            key="day",
            bg=SKY,
        )


class CitiesScreen(Screen):
    screen_id = "weather/cities"
    activity = "com.elderphone.weather.CitiesActivity"

    def build(self, ui: Ui) -> View:
        c = ui.content
        data = _settings(ui)
        bar = toolbar(ui, "Choose city", up=ui.pop, rid=f"{PACKAGE}:id/toolbar")
        col = Column(c.left, bar.rect.bottom, c.width)

        def choose(city: str) -> None:
            data["city"] = city
            ui.pop()

        rows = [
            list_row(
                ui,
                col,
                city,
                icon_name="location",
                summary="Current city" if city == data["city"] else "",
                on_click=partial(choose, city),
                title_rid=f"{PACKAGE}:id/city_name",
            )
            for city in CITIES
        ]
        return list_page(
            ui,
            self,
            bar,
            rows,
            rid=f"{PACKAGE}:id/cities_layout",
            list_rid=f"{PACKAGE}:id/cities_list",
            key="cities",
        )


class WeatherSettingsScreen(Screen):
    screen_id = "weather/settings"
    activity = "com.elderphone.weather.SettingsActivity"

    def build(self, ui: Ui) -> View:
        c = ui.content
        data = _settings(ui)
        bar = toolbar(ui, "Settings", up=ui.pop, rid=f"{PACKAGE}:id/toolbar")
        col = Column(c.left, bar.rect.bottom, c.width)
        fahrenheit = data["unit"] == "F"

        def toggle() -> None:
            data["unit"] = "C" if fahrenheit else "F"

        rows = [
            list_row(
                ui,
                col,
                "Use Fahrenheit (°F)",
                summary="Temperatures in °F" if fahrenheit else "Temperatures in °C",
                on_click=toggle,
                checkable=True,
                checked=fahrenheit,
                trailing=trailing_switch(ui, fahrenheit),
            )
        ]
        return list_page(
            ui,
            self,
            bar,
            rows,
            rid=f"{PACKAGE}:id/settings_layout",
            list_rid=f"{PACKAGE}:id/settings_list",
            key="settings",
        )


class WeatherApp(App):
    package = PACKAGE
    label = "Weather"
    activity = ACTIVITY
    icon = "partly"
    icon_bg = (3, 155, 229)

    def default_data(self) -> dict[str, Any]:
        return {"city": "Springfield", "unit": "C"}

    def root(self) -> Screen:
        return TodayScreen()
