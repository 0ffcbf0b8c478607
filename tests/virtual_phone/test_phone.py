"""The simulated phone on its own (no ADB): screens, input, state, pixels vs. hierarchy."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from datetime import datetime

import pytest
from lxml import etree
from PIL import Image

from graph_builder.hierarchy import UIElement, parse_hierarchy
from virtual_phone import VirtualPhone
from virtual_phone.errors import PhoneCommandError, PhoneInputError

FROZEN = datetime(2024, 3, 5, 9, 41)
ATTRIBUTES = (
    "index",
    "text",
    "resource-id",
    "class",
    "package",
    "content-desc",
    "checkable",
    "checked",
    "clickable",
    "enabled",
    "focusable",
    "focused",
    "scrollable",
    "long-clickable",
    "password",
    "selected",
    "visible-to-user",
    "bounds",
)
LAUNCHABLE = (
    "com.android.settings",
    "com.android.messaging",
    "com.android.dialer",
    "com.android.contacts",
    "com.android.deskclock",
    "com.elderphone.weather",
    "com.elderphone.pharmacy",
)


class FakeTime:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_phone(**kwargs: object) -> VirtualPhone:
    options: dict[str, object] = {"settle_ms": (0, 0), "frozen_clock": FROZEN}
    options.update(kwargs)
    return VirtualPhone(**options)  # type: ignore[arg-type]


def screen(phone: VirtualPhone) -> str:
    return phone.ground_truth().split()[0]


def center_of(phone: VirtualPhone, label: str) -> tuple[int, int]:
    """Centre of the first element whose text or content-desc is ``label``."""
    h = parse_hierarchy(phone.hierarchy_xml())
    for e in h:
        if label in (e.text, e.content_desc):
            return (e.bounds.left + e.bounds.right) // 2, (e.bounds.top + e.bounds.bottom) // 2
    raise AssertionError(f"{label!r} is not on screen {phone.ground_truth()}: {h.texts()}")


def tap(phone: VirtualPhone, label: str) -> None:
    phone.tap(*center_of(phone, label))


def element(phone: VirtualPhone, resource_id: str) -> UIElement:
    """The first element with ``resource_id`` on the current screen."""
    found = parse_hierarchy(phone.hierarchy_xml()).find(resource_id=resource_id)
    assert found, f"no {resource_id} on {phone.ground_truth()}"
    return found[0]


def texts(phone: VirtualPhone) -> list[str]:
    return parse_hierarchy(phone.hierarchy_xml()).texts()


def scroll_to(phone: VirtualPhone, label: str, *, max_swipes: int = 8) -> None:
    for _ in range(max_swipes):
        if label in texts(phone):
            return
        phone.swipe(540, 1700, 540, 900, 300)
    raise AssertionError(f"{label!r} never scrolled into view")


def pixel(phone: VirtualPhone, x: int, y: int) -> tuple[int, ...]:
    return phone.render().getpixel((x, y))


# ------------------------------------------------------------------ hierarchy


@pytest.mark.parametrize("package", ("com.android.launcher3", *LAUNCHABLE))
def test_every_first_screen_dumps_a_complete_hierarchy_inside_the_screen(package: str) -> None:
    phone = make_phone()
    phone.start(package)
    root = etree.fromstring(phone.hierarchy_xml().encode())
    assert root.tag == "hierarchy" and root.get("rotation") == "0"
    nodes = list(root.iter("node"))
    assert len(nodes) > 10
    packages = {n.get("package") for n in nodes}
    assert {package, "com.android.systemui"} <= packages
    for node in nodes:
        assert [a for a in ATTRIBUTES if node.get(a) is None] == []
        left, top, right, bottom = map(int, re.findall(r"-?\d+", node.get("bounds")))
        if node.get("clickable") == "true":
            assert 0 <= left < right <= phone.width and 0 <= top < bottom <= phone.height


def test_the_dump_starts_like_a_real_one_and_shows_the_status_bar_clock() -> None:
    phone = make_phone()
    xml = phone.hierarchy_xml()
    assert xml.startswith(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    )
    clock = parse_hierarchy(xml).find(resource_id="com.android.systemui:id/clock")
    assert [e.text for e in clock] == ["9:41"]
    assert {"Back", "Home", "Overview"} <= set(texts(phone))


def test_ground_truth_is_not_revealed_by_the_hierarchy() -> None:
    phone = make_phone()
    phone.start("com.android.settings")
    screen_id, digest = phone.ground_truth().split()
    assert screen_id == "settings/main"
    assert screen_id not in phone.hierarchy_xml() and digest not in phone.hierarchy_xml()


# ------------------------------------------------------------------ main flows


def _font_via_display(phone: VirtualPhone) -> None:
    scroll_to(phone, "Display")  # below the fold once the font is large
    tap(phone, "Display")
    tap(phone, "Font size")


def _font_via_accessibility(phone: VirtualPhone) -> None:
    scroll_to(phone, "Accessibility")
    tap(phone, "Accessibility")
    tap(phone, "Display size and text")


def _font_via_search(phone: VirtualPhone) -> None:
    tap(phone, "Search Settings")
    phone.input_text("font")
    tap(phone, "Font size")


def _call_from_contacts_tab(phone: VirtualPhone) -> None:
    tap(phone, "Contacts")
    scroll_to(phone, "Son (Tom)")
    tap(phone, "Son (Tom)")
    tap(phone, "Call")


KEYPAD = {"0": "0,+", "1": "1", "2": "2,ABC", "5": "5,JKL"}


def _call_from_keypad(phone: VirtualPhone) -> None:
    tap(phone, "key pad")
    for digit in "2025550105":  # Daughter (Emma)
        tap(phone, KEYPAD[digit])
    tap(phone, "dial")


def _call_from_recents(phone: VirtualPhone) -> None:
    tap(phone, "Recents")
    tap(phone, "Call Son (Tom)")


def _call_from_favorites(phone: VirtualPhone) -> None:
    tap(phone, "Call Son (Tom)")


def _call_from_contacts_app(phone: VirtualPhone) -> None:
    phone.start("com.android.contacts")
    tap(phone, "Search contacts")
    phone.input_text("tom")
    tap(phone, "Son (Tom)")
    tap(phone, "Call")


FLOWS: dict[str, tuple[str, Callable[[VirtualPhone], None], str]] = {
    "font size via Display": (
        "com.android.settings",
        _font_via_display,
        "settings/display/font_size",
    ),
    "font size via Accessibility": (
        "com.android.settings",
        _font_via_accessibility,
        "settings/display/font_size",
    ),
    "font size via search": (
        "com.android.settings",
        _font_via_search,
        "settings/display/font_size",
    ),
    "brightness": (
        "com.android.settings",
        lambda p: (tap(p, "Display"), tap(p, "Brightness level")),
        "settings/display/brightness",
    ),
    "sound": ("com.android.settings", lambda p: tap(p, "Sound & vibration"), "settings/sound"),
    "call from the contacts tab": ("com.android.dialer", _call_from_contacts_tab, "dialer/in_call"),
    "call from the keypad": ("com.android.dialer", _call_from_keypad, "dialer/in_call"),
    "call from recents": ("com.android.dialer", _call_from_recents, "dialer/in_call"),
    "call from favorites": ("com.android.dialer", _call_from_favorites, "dialer/in_call"),
    "call from the Contacts app": ("com.android.dialer", _call_from_contacts_app, "dialer/in_call"),
    "open a thread": (
        "com.android.messaging",
        lambda p: tap(p, "Dr. Lee"),
        "messages/thread/dr_lee",
    ),
    "start a chat": (
        "com.android.messaging",
        lambda p: (tap(p, "Start chat"), p.input_text("tom"), tap(p, "Son (Tom)")),
        "messages/thread/son_tom",
    ),
    "add an alarm": (
        "com.android.deskclock",
        lambda p: tap(p, "Add alarm"),
        "clock/alarms/time_picker",
    ),
    "forecast day": ("com.elderphone.weather", lambda p: tap(p, "Tomorrow"), "weather/day/1"),
    "change city": (
        "com.elderphone.weather",
        lambda p: (tap(p, "Change city"), tap(p, "Lakewood")),
        "weather/today",
    ),
    "checkout": (
        "com.elderphone.pharmacy",
        lambda p: (tap(p, "Lisinopril 10 mg"), tap(p, "Buy now"), tap(p, "Place order")),
        "pharmacy/cart/confirm_payment",
    ),
    "launcher icon": ("com.android.launcher3", lambda p: tap(p, "Weather"), "weather/today"),
}


@pytest.mark.parametrize("flow", FLOWS)
def test_tapping_elements_found_by_text_reaches_the_expected_screen(flow: str) -> None:
    package, steps, expected = FLOWS[flow]
    phone = make_phone()
    phone.start(package)
    steps(phone)
    assert screen(phone) == expected


def test_a_call_shows_the_callee_and_end_call_returns_and_logs_it() -> None:
    phone = make_phone()
    phone.start("com.android.dialer")
    _call_from_keypad(phone)
    assert "Daughter (Emma)" in texts(phone)  # the number is hers
    tap(phone, "End call")
    assert screen(phone) == "dialer/dialpad"
    phone.key("KEYCODE_BACK")
    tap(phone, "Recents")
    assert texts(phone).index("Outgoing · 9:41 AM") < texts(phone).index("Incoming · Yesterday")


def test_a_sent_message_appears_in_the_thread_and_survives_a_restart() -> None:
    phone = make_phone()
    phone.start("com.android.messaging")
    tap(phone, "Daughter (Emma)")
    tap(phone, "Text message")
    field = element(phone, "com.android.messaging:id/compose_message_text")
    assert field.focused
    phone.input_text("See you on Sunday")
    assert "See you on Sunday" in texts(phone)
    tap(phone, "Send SMS")
    assert element(phone, "com.android.messaging:id/compose_message_text").text == "Text message"
    phone.force_stop("com.android.messaging")
    phone.start("com.android.messaging")
    assert screen(phone) == "messages/list"
    assert "You: See you on Sunday" in texts(phone)
    phone.clear_data("com.android.messaging")
    phone.start("com.android.messaging")
    assert "You: See you on Sunday" not in texts(phone)


def test_a_new_alarm_is_saved_and_its_switch_state_persists() -> None:
    phone = make_phone()
    phone.start("com.android.deskclock")
    tap(phone, "Add alarm")
    phone.key("BACK")  # closes the dialog, not the app
    assert screen(phone) == "clock/alarms"
    tap(phone, "Add alarm")
    tap(phone, "Increase minute")
    tap(phone, "PM")
    tap(phone, "OK")
    assert screen(phone) == "clock/alarms"
    assert "7:01 PM" in texts(phone)
    switch = parse_hierarchy(phone.hierarchy_xml()).find(content_desc="6:30 AM alarm")[0]
    assert switch.checked and switch.checkable
    tap(phone, "6:30 AM alarm")
    phone.force_stop("com.android.deskclock")
    phone.start("com.android.deskclock")
    assert not parse_hierarchy(phone.hierarchy_xml()).find(content_desc="6:30 AM alarm")[0].checked


def test_paying_places_the_order_and_shows_a_toast_that_goes_away() -> None:
    clock = FakeTime()
    phone = make_phone(time_source=clock)
    phone.start("com.elderphone.pharmacy")
    tap(phone, "Refill Metformin 500 mg")
    tap(phone, "Cart, 1 item")
    tap(phone, "Place order")
    assert screen(phone) == "pharmacy/cart/confirm_payment"
    assert "Pay $11.89 with Visa ****4242?" in texts(phone)
    tap(phone, "Pay")
    assert screen(phone) == "pharmacy/orders"
    assert "Order placed" in texts(phone)
    clock.advance(1.0)
    assert "Order placed" in texts(phone)
    clock.advance(1.5)
    assert "Order placed" not in texts(phone)
    assert "Order #1001 - $11.89" in texts(phone)


def test_cancel_and_a_tap_outside_close_the_payment_dialog_without_ordering() -> None:
    phone = make_phone()
    phone.start("com.elderphone.pharmacy")
    tap(phone, "Lisinopril 10 mg")
    tap(phone, "Buy now")
    tap(phone, "Place order")
    tap(phone, "Cancel")
    assert screen(phone) == "pharmacy/cart"
    tap(phone, "Place order")
    phone.tap(540, 300)  # on the dimmed screen, outside the dialog
    assert screen(phone) == "pharmacy/cart"
    phone.key(4)
    phone.key(4)
    tap(phone, "My orders")
    assert "No orders yet" in texts(phone)


# ------------------------------------------------------------------ state


def test_font_size_persists_across_force_stop_and_resets_on_clear_data() -> None:
    phone = make_phone()
    phone.start("com.android.settings")
    _font_via_display(phone)
    before = phone.ground_truth()
    preview = element(phone, "com.android.settings:id/preview_text")
    tap(phone, "Make larger")
    tap(phone, "Make larger")
    assert phone.settings["system"]["font_scale"] == "1.3"
    assert phone.ground_truth() != before
    bigger = element(phone, "com.android.settings:id/preview_text")
    assert bigger.bounds.height > preview.bounds.height  # the preview text really grew
    phone.force_stop("com.android.settings")
    phone.start("com.android.settings")
    assert screen(phone) == "settings/main"
    _font_via_display(phone)
    assert "Larger" in texts(phone)
    phone.clear_data("com.android.settings")
    assert phone.settings["system"]["font_scale"] == "1.0"
    phone.start("com.android.settings")
    _font_via_display(phone)
    assert phone.ground_truth() == before


def test_the_font_size_slider_takes_taps_and_drags() -> None:
    phone = make_phone()
    phone.start("com.android.settings")
    _font_via_display(phone)
    bar = element(phone, "com.android.settings:id/seekbar")
    cy = (bar.bounds.top + bar.bounds.bottom) // 2
    phone.tap(bar.bounds.right - 5, cy)
    assert phone.settings["system"]["font_scale"] == "2"
    bar = element(phone, "com.android.settings:id/seekbar")
    cy = (bar.bounds.top + bar.bounds.bottom) // 2
    phone.swipe(bar.bounds.right - 5, cy, bar.bounds.left + 5, cy, 400)
    assert phone.settings["system"]["font_scale"] == "0.85"


def test_a_larger_font_makes_other_apps_text_bigger() -> None:
    phone = make_phone()
    phone.start("com.android.messaging")
    small = parse_hierarchy(phone.hierarchy_xml()).find(text="Dr. Lee")[0]
    phone.settings["system"]["font_scale"] = "1.5"  # as `settings put system font_scale 1.5`
    large = parse_hierarchy(phone.hierarchy_xml()).find(text="Dr. Lee")[0]
    assert large.bounds.height > small.bounds.height


def test_scrolling_the_contact_list_changes_which_names_are_in_the_hierarchy() -> None:
    phone = make_phone()
    phone.start("com.android.dialer")
    tap(phone, "Contacts")
    first = set(texts(phone))
    assert "Alice Brown" in first and "Walter Evans" not in first
    phone.swipe(540, 1700, 540, 500, 300)
    second = set(texts(phone))
    assert "Alice Brown" not in second
    assert second - first  # new names came into view
    scroll_to(phone, "Walter Evans")
    phone.swipe(540, 600, 540, 2000, 300)
    phone.swipe(540, 600, 540, 2000, 300)
    phone.swipe(540, 600, 540, 2000, 300)
    phone.swipe(540, 600, 540, 2000, 300)
    assert "Alice Brown" in texts(phone)


def test_a_scrolled_list_only_dumps_items_inside_its_bounds() -> None:
    phone = make_phone()
    phone.start("com.android.contacts")
    phone.swipe(540, 1700, 540, 1000, 300)
    h = parse_hierarchy(phone.hierarchy_xml())
    lists = h.find(resource_id="com.android.contacts:id/contacts_list")
    assert lists and lists[0].scrollable
    box = lists[0].bounds
    for e in h:
        if e.resource_id == "com.android.contacts:id/cliv_name_textview":
            assert box.top <= e.bounds.top and e.bounds.bottom <= box.bottom


def test_back_pops_screens_then_goes_home_and_home_keeps_the_stack() -> None:
    phone = make_phone()
    phone.start("com.android.settings")
    tap(phone, "Display")
    assert phone.focus() == ("com.android.settings", "com.android.settings.SubSettings")
    phone.key(3)
    assert screen(phone) == "launcher/home"
    assert phone.focus()[0] == "com.android.launcher3"
    tap(phone, "Settings")
    assert screen(phone) == "settings/display"  # resumed
    phone.key(4)
    assert phone.focus() == ("com.android.settings", "com.android.settings.Settings")
    phone.key(4)
    assert screen(phone) == "launcher/home"
    phone.start("com.android.settings")
    tap(phone, "Display")
    phone.force_stop("com.android.settings")
    assert screen(phone) == "launcher/home"
    phone.start("com.android.settings")
    assert screen(phone) == "settings/main"


def test_back_hides_the_keyboard_before_closing_the_screen() -> None:
    phone = make_phone()
    phone.start("com.android.messaging")
    tap(phone, "Start chat")
    packages = {e.package for e in parse_hierarchy(phone.hierarchy_xml())}
    assert "com.android.inputmethod.latin" in packages
    phone.key("BACK")
    packages = {e.package for e in parse_hierarchy(phone.hierarchy_xml())}
    assert "com.android.inputmethod.latin" not in packages
    assert screen(phone) == "messages/new"
    phone.key("BACK")
    assert screen(phone) == "messages/list"


def test_the_on_screen_keyboard_types_into_the_focused_field() -> None:
    phone = make_phone()
    phone.start("com.android.settings")
    tap(phone, "Search Settings")
    keyboard = element(phone, "com.android.inputmethod.latin:id/keyboard_view").bounds
    row_h = (keyboard.bottom - keyboard.top - 110) // 4
    y = keyboard.top + 110 + row_h // 2  # the q..p row
    phone.tap(keyboard.left + 3 * 108 + 54, y)  # r
    phone.tap(keyboard.left + 4 * 108 + 54, y)  # t
    assert element(phone, "com.android.settings.intelligence:id/search_src_text").text == "rt"


def test_the_adb_keyboard_ime_shows_its_bar_and_commit_text_takes_any_unicode() -> None:
    phone = make_phone()
    assert "com.android.adbkeyboard/.AdbIME" in phone.ime_list()
    phone.ime = "com.android.adbkeyboard/.AdbIME"
    phone.start("com.android.contacts")
    tap(phone, "Search contacts")
    assert "ADB Keyboard {ON}" in texts(phone)
    phone.commit_text("Zoë")
    phone.input_text("é!")  # `input text` types ASCII only
    assert "Zoë!" in texts(phone)
    with pytest.raises(PhoneCommandError):
        phone.ime = "com.example/.Missing"
    assert "com.android.adbkeyboard/.AdbIME" not in make_phone(adb_keyboard=False).ime_list()


def test_recents_lists_the_apps_used_and_resumes_one() -> None:
    phone = make_phone()
    phone.start("com.elderphone.weather")
    phone.start("com.android.settings")
    tap(phone, "Display")
    phone.key("KEYCODE_APP_SWITCH")
    assert screen(phone) == "launcher/recents"
    assert {"Settings", "Weather"} <= set(texts(phone))
    tap(phone, "Settings")
    assert screen(phone) == "settings/display"
    phone.key(187)
    tap(phone, "Clear all")
    phone.start("com.android.settings")
    assert screen(phone) == "settings/main"


def test_swiping_up_on_home_opens_the_app_drawer() -> None:
    phone = make_phone()
    phone.swipe(540, 1500, 540, 600, 200)
    assert screen(phone) == "launcher/all_apps"
    tap(phone, "Contacts")
    assert screen(phone) == "contacts/list"


def test_start_accepts_known_activities_and_refuses_unknown_ones() -> None:
    phone = make_phone()
    phone.start("com.android.settings", ".Settings$DisplaySettingsActivity")
    assert screen(phone) == "settings/display"
    phone.key(4)
    assert screen(phone) == "launcher/home"
    with pytest.raises(PhoneCommandError):
        phone.start("com.android.settings", ".NoSuchActivity")
    with pytest.raises(PhoneCommandError):
        phone.start("com.example.missing")
    assert "com.android.settings" in phone.packages()


def test_unknown_key_names_are_an_input_error() -> None:
    phone = make_phone()
    with pytest.raises(PhoneInputError):
        phone.key("KEYCODE_NOT_A_KEY")
    with pytest.raises(PhoneInputError):
        phone.touch("hover", 1, 1)


def test_power_turns_the_screen_black_and_ignores_taps_until_woken() -> None:
    phone = make_phone()
    phone.key(26)
    assert phone.render().getbbox() is None  # all black
    tap(phone, "Settings")
    phone.key("KEYCODE_WAKEUP")
    assert screen(phone) == "launcher/home"


def test_volume_keys_change_media_volume_and_show_a_panel() -> None:
    clock = FakeTime()
    phone = make_phone(time_source=clock)
    phone.key("KEYCODE_VOLUME_UP")
    assert phone.settings["system"]["volume_music"] == "9"
    ids = {e.resource_id for e in parse_hierarchy(phone.hierarchy_xml())}
    assert "com.android.systemui:id/volume_dialog" in ids
    clock.advance(4)
    ids = {e.resource_id for e in parse_hierarchy(phone.hierarchy_xml())}
    assert "com.android.systemui:id/volume_dialog" not in ids


# ------------------------------------------------------------------ touch classification


def test_raw_touches_are_classified_as_tap_long_press_and_drag() -> None:
    clock = FakeTime()
    phone = make_phone(time_source=clock)
    phone.start("com.android.deskclock")
    x, y = center_of(phone, "Add alarm")
    phone.touch("down", x, y)
    clock.advance(0.05)
    phone.touch("up", x, y)
    assert screen(phone) == "clock/alarms/time_picker"
    phone.key(4)
    phone.start("com.android.dialer")
    # a press held past the timeout fires a long press on a favorite tile
    x, y = center_of(phone, "Call Dr. Lee")
    phone.touch("down", x, y)
    clock.advance(0.6)
    assert screen(phone) == "contacts/detail/dr_lee"  # fired while still held
    phone.touch("up", x, y)
    assert screen(phone) == "contacts/detail/dr_lee"
    phone.key(4)
    tap(phone, "Contacts")
    before = set(texts(phone))
    phone.touch("down", 540, 1800)
    for y in range(1750, 700, -50):
        clock.advance(0.016)
        phone.touch("move", 540, y)
    phone.touch("up", 540, 700)
    assert screen(phone) == "dialer/contacts"
    assert set(texts(phone)) != before


def test_a_short_swipe_is_a_tap_and_a_slow_one_a_long_press() -> None:
    phone = make_phone()
    phone.start("com.android.dialer")
    x, y = center_of(phone, "Call Dr. Lee")
    phone.swipe(x, y, x + 3, y, 600)
    assert screen(phone) == "contacts/detail/dr_lee"
    phone.key(4)
    phone.swipe(x, y, x, y + 2, 50)
    assert screen(phone) == "dialer/in_call"


# ------------------------------------------------------------------ pixels


def test_pixels_agree_with_the_hierarchy() -> None:
    phone = make_phone()
    phone.start("com.android.messaging")
    fab = parse_hierarchy(phone.hierarchy_xml()).find(content_desc="Start chat")[0].bounds
    background = pixel(phone, 5, (fab.top + fab.bottom) // 2)
    inside = pixel(phone, fab.left + 10, (fab.top + fab.bottom) // 2)
    assert inside != background
    tap(phone, "Daughter (Emma)")
    send = parse_hierarchy(phone.hierarchy_xml()).find(content_desc="Send SMS")[0]
    assert not send.enabled
    cx, cy = (send.bounds.left + send.bounds.right) // 2, send.bounds.top + 8
    disabled = pixel(phone, cx, cy)
    tap(phone, "Text message")
    phone.input_text("Hi")
    send = parse_hierarchy(phone.hierarchy_xml()).find(content_desc="Send SMS")[0]
    assert send.enabled and pixel(phone, cx, cy) != disabled


def test_a_dialog_dims_the_screen_under_it() -> None:
    phone = make_phone()
    phone.start("com.android.deskclock")
    before = pixel(phone, 20, 400)
    tap(phone, "Add alarm")
    after = pixel(phone, 20, 400)
    assert sum(after) < sum(before) * 0.7


def test_same_inputs_on_a_frozen_clock_give_identical_pictures_and_dumps() -> None:
    def run() -> VirtualPhone:
        phone = make_phone(seed=3)
        phone.start("com.android.messaging")
        tap(phone, "Son (Tom)")
        tap(phone, "Text message")
        phone.input_text("On my way")
        return phone

    a, b = run(), run()
    assert a.screencap_png() == b.screencap_png()
    assert a.hierarchy_xml() == b.hierarchy_xml()
    assert a.ground_truth() == b.ground_truth()
    png = Image.open(io.BytesIO(a.screencap_png()))
    assert png.size == (1080, 2400) and png.mode == "RGB"


def test_the_status_bar_clock_follows_real_time_without_a_frozen_clock() -> None:
    phone = VirtualPhone(settle_ms=(0, 0))
    before = datetime.now()
    clock = parse_hierarchy(phone.hierarchy_xml()).find(resource_id="com.android.systemui:id/clock")
    after = datetime.now()
    assert clock[0].text in {f"{t.hour % 12 or 12}:{t.minute:02d}" for t in (before, after)}


def test_the_clock_changes_pixels_but_not_the_ground_truth() -> None:
    a = make_phone(frozen_clock=datetime(2024, 3, 5, 9, 41))
    b = make_phone(frozen_clock=datetime(2024, 3, 5, 9, 42))
    assert a.screencap_png() != b.screencap_png()
    assert a.ground_truth() == b.ground_truth()


def test_settling_shows_intermediate_frames_until_the_delay_has_passed() -> None:
    clock = FakeTime()
    phone = make_phone(settle_ms=(200, 200), time_source=clock)
    start = phone.render()
    version = phone.frame_version()
    tap(phone, "Settings")
    middle = phone.render()
    assert phone.frame_version() > version
    assert screen(phone) == "settings/main"  # the hierarchy is already the new screen
    clock.advance(0.1)
    later = phone.render()
    clock.advance(0.15)
    settled = phone.render()
    assert len({start.tobytes(), middle.tobytes(), later.tobytes(), settled.tobytes()}) == 4
    version = phone.frame_version()
    clock.advance(1)
    assert phone.render().tobytes() == settled.tobytes()
    assert phone.frame_version() == version


def test_settle_delays_are_reproducible_from_the_seed() -> None:
    def settle_times(seed: int) -> list[int]:
        """For each tap, the 10 ms tick at which the frame last changed."""
        clock = FakeTime()
        phone = make_phone(settle_ms=(100, 300), seed=seed, time_source=clock)
        out = []
        for label in ("Settings", "Display", "Brightness level"):
            tap(phone, label)
            versions = []
            for _ in range(50):
                versions.append(phone.frame_version())
                clock.advance(0.01)
            out.append(max(i for i in range(1, 50) if versions[i] != versions[i - 1]))
        return out

    first = settle_times(1)
    assert first == settle_times(1)
    assert all(10 <= t <= 31 for t in first + settle_times(2))
    assert first != settle_times(2)


# ------------------------------------------------------------------ system UI


def test_quick_settings_toggle_the_same_settings_as_the_settings_app() -> None:
    phone = make_phone()
    phone.start("com.android.settings")
    tap(phone, "Network & internet")
    phone.swipe(540, 20, 540, 1200, 300)  # down from the status bar
    assert screen(phone) == "systemui/shade"
    assert phone.focus() == ("com.android.systemui", "NotificationShade")
    tap(phone, "Airplane mode")
    assert phone.settings["global"]["airplane_mode_on"] == "1"
    assert "Airplane mode." in texts(phone)  # the status bar icon
    phone.key(4)
    assert screen(phone) == "settings/network"
    row = parse_hierarchy(phone.hierarchy_xml()).find(text="Airplane mode")[0]
    switch = next(
        e
        for e in parse_hierarchy(phone.hierarchy_xml())
        if e.class_name == "android.widget.Switch"
        and e.bounds.top >= row.bounds.top - 60
        and e.bounds.bottom <= row.bounds.bottom + 60
    )
    assert switch.checked


def test_a_notification_opens_its_thread_and_clear_all_empties_the_shade() -> None:
    phone = make_phone()
    phone.swipe(540, 900, 540, 1600, 300)  # down on the home screen
    assert screen(phone) == "systemui/shade"
    tap(phone, "Dr. Lee")
    assert screen(phone) == "messages/thread/dr_lee"
    phone.swipe(540, 20, 540, 1200, 300)
    tap(phone, "Clear all")
    assert "No notifications" in texts(phone)
    phone.tap(540, 2200)  # empty space closes the shade
    assert screen(phone) == "messages/thread/dr_lee"


def test_app_info_from_a_long_pressed_icon_can_clear_the_apps_data() -> None:
    phone = make_phone()
    phone.start("com.android.messaging")
    tap(phone, "Son (Tom)")
    tap(phone, "Text message")
    phone.input_text("Hello")
    tap(phone, "Send SMS")
    phone.key(3)
    phone.long_press(*center_of(phone, "Messages"))
    assert screen(phone) == "launcher/home/shortcuts"
    tap(phone, "App info")
    assert screen(phone) == "settings/apps/com.android.messaging"
    tap(phone, "Clear storage")
    assert screen(phone) == "settings/apps/com.android.messaging/clear_storage_dialog"
    tap(phone, "Delete")
    assert screen(phone) == "settings/apps/com.android.messaging"
    phone.start("com.android.messaging")
    assert "You: Hello" not in texts(phone)


def test_concurrent_input_and_rendering_from_several_threads() -> None:
    import threading

    phone = make_phone(settle_ms=(5, 20))
    phone.start("com.android.contacts")
    errors: list[BaseException] = []

    def drive() -> None:
        try:
            for i in range(8):
                phone.swipe(540, 1700, 540, 900 if i % 2 else 2000, 100)
                phone.tap(540, 400)
                phone.key(4)
                phone.start("com.android.contacts")
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    def watch() -> None:
        try:
            for _ in range(15):
                phone.frame_version()
                phone.render()
                parse_hierarchy(phone.hierarchy_xml())
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=drive), threading.Thread(target=watch)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert screen(phone).startswith("contacts/")
