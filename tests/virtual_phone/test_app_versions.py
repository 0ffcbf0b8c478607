"""App updates the virtual phone plays (``app_versions`` / ``elderbench phone --app-version``)."""

from __future__ import annotations

import adbutils
import pytest

from graph_builder.hierarchy import parse_hierarchy
from tests.virtual_phone.test_phone import (
    center_of,
    element,
    make_phone,
    screen,
    scroll_to,
    tap,
    texts,
)
from virtual_phone import VirtualPhone, running_server
from virtual_phone.cli import run as run_phone_cli

SETTINGS = "com.android.settings"
PHARMACY = "com.elderphone.pharmacy"


def updated() -> VirtualPhone:
    return make_phone(app_versions={SETTINGS: 2, PHARMACY: 2})


def dialog_title(phone: VirtualPhone) -> str | None:
    found = parse_hierarchy(phone.hierarchy_xml()).find(resource_id="android:id/alertTitle")
    return found[0].text if found else None


def walk(phone: VirtualPhone) -> list[str]:
    """The XML of the screens the sample tasks visit, for comparing two phones."""
    seen = []
    phone.start(SETTINGS)
    seen.append(phone.hierarchy_xml())
    tap(phone, "Connected devices")
    seen.append(phone.hierarchy_xml())
    phone.key("BACK")
    tap(phone, "Display")
    tap(phone, "Brightness level")
    seen.append(phone.hierarchy_xml())
    phone.start(PHARMACY)
    seen.append(phone.hierarchy_xml())
    tap(phone, "Lisinopril 10 mg")
    seen.append(phone.hierarchy_xml())
    tap(phone, "Buy now")
    seen.append(phone.hierarchy_xml())
    return seen


def test_version_1_is_the_phone_as_it_was() -> None:
    assert walk(make_phone(app_versions={SETTINGS: 1, PHARMACY: 1})) == walk(make_phone())


def test_settings_2_renames_about_phone_everywhere() -> None:
    phone = updated()
    phone.start(SETTINGS)
    scroll_to(phone, "About device")
    assert "About phone" not in texts(phone)
    tap(phone, "About device")
    assert screen(phone) == "settings/about"
    assert "About device" in texts(phone)


def test_settings_2_moves_the_brightness_slider_below_adaptive_brightness() -> None:
    def slider_and_switch(phone: VirtualPhone) -> tuple[int, int]:
        phone.start(SETTINGS)
        tap(phone, "Display")
        tap(phone, "Brightness level")
        slider = element(phone, f"{SETTINGS}:id/seekbar").bounds.center[1]
        return slider, center_of(phone, "Adaptive brightness")[1]

    slider, switch = slider_and_switch(make_phone())
    assert slider < switch
    slider, switch = slider_and_switch(updated())
    assert slider > switch


def test_the_one_time_dialog_shows_once_and_again_after_clearing_data() -> None:
    phone = updated()
    phone.start(SETTINGS)
    tap(phone, "Connected devices")
    assert dialog_title(phone) == "New: Fast Pair"
    tap(phone, "Got it")
    assert dialog_title(phone) is None
    assert screen(phone) == "settings/connected"
    phone.key("BACK")
    tap(phone, "Connected devices")
    assert dialog_title(phone) is None
    phone.clear_data(SETTINGS)
    phone.start(SETTINGS)
    tap(phone, "Connected devices")
    assert dialog_title(phone) == "New: Fast Pair"


def test_pharmacy_2_moves_vitamin_d_renames_add_to_cart_and_announces_in_the_cart() -> None:
    old, new = make_phone(), updated()
    for phone in (old, new):
        phone.start(PHARMACY)
    assert center_of(new, "Vitamin D3 1000 IU")[1] > center_of(old, "Vitamin D3 1000 IU")[1]
    assert center_of(new, "Acetaminophen 500 mg")[1] < center_of(old, "Acetaminophen 500 mg")[1]
    tap(new, "Vitamin D3 1000 IU")
    assert "Add to basket" in texts(new) and "Add to cart" not in texts(new)
    tap(new, "Buy now")
    assert screen(new) == "pharmacy/cart/whats_new"
    assert dialog_title(new) == "Free delivery"
    tap(new, "Got it")
    assert screen(new) == "pharmacy/cart"


def test_only_known_apps_and_versions_are_accepted() -> None:
    with pytest.raises(ValueError, match="no app 'com.example.nothing'"):
        make_phone(app_versions={"com.example.nothing": 2})
    with pytest.raises(ValueError, match="has no version 3; it has 1, 2"):
        make_phone(app_versions={SETTINGS: 3})
    with pytest.raises(ValueError, match="has no version 2; it has 1"):
        make_phone(app_versions={"com.android.dialer": 2})


def test_the_phone_command_refuses_a_bad_app_version(capsys: pytest.CaptureFixture[str]) -> None:
    from elderbench.cli import build_parser

    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["phone", "--app-version", "settings"])
    assert exited.value.code == 2
    assert "expected PACKAGE=VERSION" in capsys.readouterr().err
    args = build_parser().parse_args(["phone", "--port", "0", "--app-version", f"{SETTINGS}=7"])
    assert args.app_version == [(SETTINGS, 7)]
    assert run_phone_cli(args) == 2
    assert "com.android.settings has no version 7" in capsys.readouterr().err


def test_dumpsys_package_shows_the_update() -> None:
    with running_server([make_phone(app_versions={SETTINGS: 2})]) as server:
        device = adbutils.AdbClient(host="127.0.0.1", port=server.port).device("virtual-1")
        settings = device.shell(f"dumpsys package {SETTINGS}")
        dialer = device.shell("dumpsys package com.android.dialer")
    assert "versionName=14.2" in settings and "versionCode=3402" in settings
    assert "versionName=14\n" in dialer and "versionCode=34 " in dialer


def test_the_phone_command_takes_transition_delays(capsys: pytest.CaptureFixture[str]) -> None:
    from elderbench.cli import build_parser

    assert build_parser().parse_args(["phone"]).settle_ms == (100, 300)
    assert build_parser().parse_args(["phone", "--settle-ms", "0", "0"]).settle_ms == [0, 0]
    backwards = build_parser().parse_args(["phone", "--port", "0", "--settle-ms", "300", "100"])
    assert run_phone_cli(backwards) == 2
    assert "--settle-ms needs 0 <= LOW <= HIGH, not 300 100" in capsys.readouterr().err
