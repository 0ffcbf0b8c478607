"""Clock (``com.android.deskclock``): alarms with on/off switches, a time picker to add or
edit one, and a clock tab. Alarms are app data, kept until ``pm clear``.
"""

from __future__ import annotations

from datetime import timedelta
from functools import partial
from typing import Any

from virtual_phone.apps.base import App, Dialog, Screen, Ui
from virtual_phone.apps.kit import (
    ON_SURFACE_VARIANT,
    PRIMARY,
    PRIMARY_CONTAINER,
    SURFACE_CONTAINER,
    Column,
    TabbedScreen,
    alert,
    cancel_and,
    fab,
    icon_button,
    radio,
    scroll_list,
    switch,
    tabs_height,
    text,
    toolbar,
)
from virtual_phone.widgets import Rect, TextBuffer, View

PACKAGE = "com.android.deskclock"
ACTIVITY = "com.android.deskclock.DeskClock"
TABS = (("alarm", "Alarm"), ("clock", "Clock"))
TAB_IDS = ("clock/alarms", "clock/clock")
DEFAULT_ALARMS: list[dict[str, Any]] = [
    {"hour": 6, "minute": 30, "on": True, "label": "", "days": "Mon, Tue, Wed, Thu, Fri"},
    {"hour": 8, "minute": 0, "on": False, "label": "Take pills", "days": "Every day"},
    {"hour": 21, "minute": 0, "on": True, "label": "Evening pills", "days": "Every day"},
]
WORLD = (("New York", 0), ("London", 5), ("Tokyo", 14))


def alarm_text(hour: int, minute: int) -> str:
    return f"{hour % 12 or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def alarms(ui: Ui) -> list[dict[str, Any]]:
    return ui.host.app_data(PACKAGE).setdefault("alarms", [])


def _until(ui: Ui, hour: int, minute: int) -> str:
    now = ui.now()
    target = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if target <= now:
        target += timedelta(days=1)
    minutes = int((target - now).total_seconds() // 60)
    h, m = divmod(minutes, 60)
    parts = ([f"{h} hour{'s' if h != 1 else ''}"] if h else []) + (
        [f"{m} minute{'s' if m != 1 else ''}"] if m or not h else []
    )
    return f"Alarm set for {' and '.join(parts)} from now."


class ClockScreen(TabbedScreen):
    activity = ACTIVITY
    tab_items = TABS
    tab_ids = TAB_IDS

    def build(self, ui: Ui) -> View:
        c = ui.content
        root = View(c, cls="android.widget.FrameLayout", rid=f"{PACKAGE}:id/desk_clock_pager")
        th = tabs_height(ui)
        bar = toolbar(ui, TABS[self.tab][1], rid=f"{PACKAGE}:id/toolbar", size=24)
        root.add(bar)
        body = Rect(c.left, bar.rect.bottom, c.right, c.bottom - th)
        if self.tab == 0:
            root.add(self._alarms(ui, body))
            root.add(
                fab(
                    ui,
                    "plus",
                    "Add alarm",
                    lambda: ui.show_dialog(TimePickerDialog(None, 7, 0)),
                    rid=f"{PACKAGE}:id/fab",
                    bottom=body.bottom - ui.dp(16),
                )
            )
        else:
            root.add(self._clock(ui, body))
        root.add(
            self.tab_bar(ui, rid=f"{PACKAGE}:id/bottom_view", item_rid=f"{PACKAGE}:id/tab_item")
        )
        return root

    def _alarms(self, ui: Ui, body: Rect) -> View:
        col = Column(body.left, body.top + ui.dp(8), body.width)
        cards: list[View] = []
        items = alarms(ui)
        for index, alarm in enumerate(items):
            time_h = ui.sp(44) * 5 // 4
            label_h = ui.sp(14) * 3 // 2
            r = col.place(time_h + 2 * label_h + ui.dp(40))
            col.skip(ui.dp(12))
            card = View(
                Rect(r.left + ui.dp(12), r.top, r.right - ui.dp(12), r.bottom),
                cls="android.widget.FrameLayout",
                rid=f"{PACKAGE}:id/alarm_item",
                bg=SURFACE_CONTAINER,
                radius=ui.dp(24),
            )
            cr = card.rect
            top = cr.top + ui.dp(16)
            if alarm["label"]:
                card.add(
                    text(
                        ui,
                        Rect(cr.left + ui.dp(20), top, cr.right - ui.dp(120), top + label_h),
                        alarm["label"],
                        size=14,
                        color=ON_SURFACE_VARIANT,
                        rid=f"{PACKAGE}:id/edit_label",
                    )
                )
            tt = top + label_h
            digital = text(
                ui,
                Rect(cr.left + ui.dp(20), tt, cr.right - ui.dp(120), tt + time_h),
                alarm_text(alarm["hour"], alarm["minute"]),
                size=44,
                color=PRIMARY if alarm["on"] else ON_SURFACE_VARIANT,
                rid=f"{PACKAGE}:id/digital_clock",
            )
            digital.clickable = digital.focusable = True
            digital.on_click = partial(
                ui.show_dialog, TimePickerDialog(index, alarm["hour"], alarm["minute"])
            )
            card.add(digital)
            card.add(
                text(
                    ui,
                    Rect(
                        cr.left + ui.dp(20),
                        tt + time_h,
                        cr.right - ui.dp(120),
                        tt + time_h + label_h,
                    ),
                    alarm["days"],
                    size=14,
                    color=ON_SURFACE_VARIANT,
                    rid=f"{PACKAGE}:id/days_of_week",
                )
            )

            def toggle(a: dict[str, Any] = alarm) -> None:
                a["on"] = not a["on"]
                if a["on"]:
                    ui.toast(_until(ui, a["hour"], a["minute"]))

            sy = tt + (time_h - ui.dp(32)) // 2
            card.add(
                switch(
                    ui,
                    Rect(cr.right - ui.dp(84), sy, cr.right - ui.dp(20), sy + ui.dp(32)),
                    alarm["on"],
                    toggle,
                    rid=f"{PACKAGE}:id/onoff",
                    desc=f"{alarm_text(alarm['hour'], alarm['minute'])} alarm",
                )
            )
            card.add(
                icon_button(
                    ui,
                    Rect(
                        cr.right - ui.dp(72),
                        cr.bottom - ui.dp(56),
                        cr.right - ui.dp(24),
                        cr.bottom - ui.dp(8),
                    ),
                    "delete",
                    "Delete",
                    partial(items.remove, alarm),
                    rid=f"{PACKAGE}:id/delete",
                )
            )
            cards.append(card)
        if not cards:
            cards.append(
                text(
                    ui,
                    col.place(ui.dp(160)),
                    "No alarms",
                    size=18,
                    align="center",
                    color=ON_SURFACE_VARIANT,
                    rid=f"{PACKAGE}:id/alarms_empty_view",
                )
            )
        return scroll_list(
            ui,
            self,
            "alarms",
            body,
            cards,
            rid=f"{PACKAGE}:id/alarm_recycler_view",
            bottom_pad=ui.dp(96),
        )

    def _clock(self, ui: Ui, body: Rect) -> View:
        now = ui.now()
        col = Column(body.left, body.top + ui.dp(32), body.width)
        views: list[View] = []
        big = ui.sp(64) * 5 // 4
        views.append(
            text(
                ui,
                col.place(big),
                f"{now.hour % 12 or 12}:{now.minute:02d}",
                size=64,
                align="center",
                rid=f"{PACKAGE}:id/digital_clock",
                digest=False,
            )
        )
        views.append(
            text(
                ui,
                col.place(ui.sp(16) * 2),
                now.strftime("%a, %b ") + str(now.day),
                size=16,
                align="center",
                color=ON_SURFACE_VARIANT,
                rid=f"{PACKAGE}:id/date",
                digest=False,
            )
        )
        col.skip(ui.dp(24))
        for city, offset in WORLD:
            t = now + timedelta(hours=offset)
            r = col.place(ui.dp(72))
            row = View(r, cls="android.widget.LinearLayout", rid=f"{PACKAGE}:id/city_view")
            row.add(
                text(
                    ui,
                    Rect(r.left + ui.dp(24), r.top, r.center[0], r.bottom),
                    city,
                    size=18,
                    rid=f"{PACKAGE}:id/city_name",
                )
            )
            row.add(
                text(
                    ui,
                    Rect(r.center[0], r.top, r.right - ui.dp(24), r.bottom),
                    alarm_text(t.hour, t.minute),
                    size=18,
                    align="end",
                    digest=False,
                    rid=f"{PACKAGE}:id/digital_clock",
                )
            )
            views.append(row)
        return scroll_list(ui, self, "clock", body, views, rid=f"{PACKAGE}:id/cities")


class TimePickerDialog(Dialog):
    """Hour and minute fields with +/- buttons (or typed digits), AM/PM, Cancel and OK."""

    dialog_id = "time_picker"

    def __init__(self, index: int | None, hour: int, minute: int) -> None:
        self.index = index
        self.pm = hour >= 12
        self.hour = TextBuffer(
            str(hour % 12 or 12), max_length=2, digits_only=True, select_all_on_focus=True
        )
        self.minute = TextBuffer(
            f"{minute:02d}", max_length=2, digits_only=True, select_all_on_focus=True
        )

    def _values(self) -> tuple[int, int]:
        hour = int(self.hour.value or "12")
        minute = int(self.minute.value or "0")
        return max(1, min(12, hour)), max(0, min(59, minute))

    def _step(self, hours: int, minutes: int) -> None:
        hour, minute = self._values()
        hour = (hour - 1 + hours) % 12 + 1
        minute = (minute + minutes) % 60
        self.hour.set(str(hour))
        self.minute.set(f"{minute:02d}")

    def _set_pm(self, pm: bool) -> None:
        self.pm = pm

    def build(self, ui: Ui) -> View:
        def body(col: Column) -> list[View]:
            views: list[View] = []
            b = ui.dp(56)
            field_h = ui.sp(48) * 5 // 4 + ui.dp(8)
            width = col.width
            half = width // 2
            top = col.y
            for i, (buffer, unit, rid) in enumerate(
                (
                    (self.hour, "hour", "android:id/input_hour"),
                    (self.minute, "minute", "android:id/input_minute"),
                )
            ):
                left = col.left + i * half
                cx = left + half // 2
                hours, minutes = (1, 0) if unit == "hour" else (0, 1)
                views.append(
                    icon_button(
                        ui,
                        Rect(cx - b // 2, top, cx + b // 2, top + b),
                        "plus",
                        f"Increase {unit}",
                        partial(self._step, hours, minutes),
                        rid=f"{PACKAGE}:id/{unit}_up",
                    )
                )
                fr = Rect(cx - ui.dp(56), top + b, cx + ui.dp(56), top + b + field_h)
                field = View(
                    fr,
                    cls="android.widget.EditText",
                    rid=rid,
                    text=buffer.value,
                    desc=unit.capitalize(),
                    clickable=True,
                    focusable=True,
                    focused=ui.is_focused(buffer),
                    field=buffer,
                    bg=PRIMARY_CONTAINER,
                    radius=ui.dp(8),
                    font_px=ui.sp(48),
                    align="center",
                    max_lines=1,
                    on_click=partial(ui.focus, buffer),
                )
                views.append(field)
                views.append(
                    icon_button(
                        ui,
                        Rect(cx - b // 2, fr.bottom, cx + b // 2, fr.bottom + b),
                        "minus",
                        f"Decrease {unit}",
                        partial(self._step, -hours, -minutes),
                        rid=f"{PACKAGE}:id/{unit}_down",
                    )
                )
            views.append(
                text(
                    ui,
                    Rect(
                        col.left + half - ui.dp(12),
                        top + b,
                        col.left + half + ui.dp(12),
                        top + b + field_h,
                    ),
                    ":",
                    size=48,
                    align="center",
                )
            )
            col.place(2 * b + field_h)
            col.skip(ui.dp(12))
            rh = max(ui.dp(48), ui.sp(16) + ui.dp(20))
            rr = col.place(rh)
            views.append(
                radio(
                    ui,
                    Rect(rr.left, rr.top, rr.left + half, rr.bottom),
                    "AM",
                    not self.pm,
                    lambda: self._set_pm(False),
                    rid="android:id/am_label",
                )
            )
            views.append(
                radio(
                    ui,
                    Rect(rr.left + half, rr.top, rr.right, rr.bottom),
                    "PM",
                    self.pm,
                    lambda: self._set_pm(True),
                    rid="android:id/pm_label",
                )
            )
            return views

        return alert(
            ui,
            title="Set alarm" if self.index is None else "Edit alarm",
            body=body,
            buttons=cancel_and(ui, "OK", lambda: self._save(ui)),
        )

    def _save(self, ui: Ui) -> None:
        hour, minute = self._values()
        hour = hour % 12 + (12 if self.pm else 0)
        items = alarms(ui)
        if self.index is None or self.index >= len(items):
            items.append(
                {"hour": hour, "minute": minute, "on": True, "label": "", "days": "Not scheduled"}
            )
        else:
            items[self.index].update(hour=hour, minute=minute, on=True)
        items.sort(key=lambda a: (a["hour"], a["minute"]))
        ui.close_dialog()
        ui.hide_keyboard()
        ui.toast(_until(ui, hour, minute))


class ClockApp(App):
    package = PACKAGE
    label = "Clock"
    activity = ACTIVITY
    icon = "alarm"
    icon_bg = (66, 133, 244)

    def default_data(self) -> dict[str, Any]:
        return {"alarms": DEFAULT_ALARMS}

    def root(self) -> Screen:
        return ClockScreen()
