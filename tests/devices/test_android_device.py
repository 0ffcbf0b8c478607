"""AndroidDevice against the virtual phone, through the real adbutils client.

Screens are found by text in the parsed hierarchy, as an agent or a recorder would; the
phone's ground truth (`getprop debug.virtualphone.screen`) is read only to check results.
"""

from __future__ import annotations

import io
import stat
import threading
import time
from collections.abc import Iterator

import pytest
from PIL import Image

from devices.android import AndroidDevice, adb_client, list_devices
from devices.clock import DeviceClock
from devices.errors import (
    AdbUnavailableError,
    DeviceCommandError,
    DeviceDisconnectedError,
    DeviceError,
    HierarchyDumpError,
    InputError,
)
from devices.settle import MIN_GAP
from graph_builder.hierarchy import UIElement
from graph_builder.model import NORMALIZED_SCREEN, Action, ResetRecipe, SettingValue
from graph_builder.screen import Screen
from virtual_phone import AdbServer, fast_phone, running_server

SERIAL = "virtual-1"
SCREEN_PROP = "debug.virtualphone.screen"


class Driver:
    """Drives one phone through AndroidDevice the way a person at the mirror would."""

    def __init__(self, device: AndroidDevice) -> None:
        self.device = device
        self.device.ime_switch_delay = 0.0  # the virtual phone binds keyboards at once
        self.capture: Screen = device.observe()

    def screen(self) -> str:
        """Ground truth: the logical screen id (tests only)."""
        return self.device.shell(f"getprop {SCREEN_PROP}").split()[0]

    def find(self, **query: str) -> UIElement:
        found = self.capture.hierarchy().find(**query)
        assert found, f"no element with {query} among {self.capture.hierarchy().texts()}"
        return found[0]

    def act(self, action: Action) -> Screen:
        self.device.perform(action)
        assert self.device.wait_until_settled(timeout=3.0)
        self.capture = self.device.observe()
        assert self.capture.stable
        return self.capture

    def tap(self, **query: str) -> Screen:
        element = self.find(**query)
        x, y = element.bounds.center
        return self.act(Action.tap(x, y, screen=self.capture.size, element=element.ref()))

    def type(self, text: str) -> Screen:
        return self.act(Action.type_text(text))

    def open(self, package: str, **recipe: object) -> Screen:
        self.device.reset_app(ResetRecipe(package, **recipe))  # type: ignore[arg-type]
        assert self.device.wait_until_settled()
        self.capture = self.device.observe()
        return self.capture

    def texts(self) -> list[str]:
        return self.capture.hierarchy().texts()


@pytest.fixture
def device(virtual_server: AdbServer) -> Iterator[AndroidDevice]:
    with AndroidDevice(SERIAL, client=adb_client(port=virtual_server.port), timeout=5.0) as d:
        yield d


@pytest.fixture
def driver(device: AndroidDevice) -> Driver:
    return Driver(device)


class ManualClock:
    """A DeviceClock whose time moves only when the device sleeps; sleeps are listed."""

    def __init__(self, wall: float = 1_700_000_000.0) -> None:
        self.now = 0.0
        self.wall_start = wall
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def device_clock(self) -> DeviceClock:
        return DeviceClock(
            wall=lambda: self.wall_start + self.now, monotonic=lambda: self.now, sleep=self.sleep
        )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def clocked(virtual_server: AdbServer, clock: ManualClock) -> Iterator[AndroidDevice]:
    """The device on a ManualClock."""
    client = adb_client(port=virtual_server.port)
    with AndroidDevice(SERIAL, client=client, timeout=5.0, clock=clock.device_clock()) as d:
        yield d


# --------------------------------------------------------------------------- connecting


def test_list_devices_describes_every_phone(virtual_server, adb_client):
    virtual_server.add_phone(fast_phone("virtual-2"))
    summaries = {s.serial: s for s in list_devices(adb_client)}
    assert set(summaries) == {"virtual-1", "virtual-2"}
    for summary in summaries.values():
        assert summary.ready
        assert summary.model == "ElderPhone Virtual"
        assert summary.android_version == "14"
        assert summary.size == (1080, 2400)


def test_info_reports_model_version_size_and_density(device):
    info = device.info()
    assert (info.serial, info.model, info.android_version) == (SERIAL, "ElderPhone Virtual", "14")
    assert (info.width, info.height, info.density) == (1080, 2400, 440)


@pytest.fixture
def spawn_marker(tmp_path, monkeypatch):
    """ADBUTILS_ADB_PATH points at a script that leaves a file if anything runs it."""
    marker = tmp_path / "adb-was-run"
    script = tmp_path / "fake-adb"
    script.write_text(f'#!/bin/sh\necho "$@" > {marker}\nexit 1\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(script))
    return marker


def _free_port() -> int:
    with running_server(phones=[]) as server:
        return server.port  # closed on exit: nothing listens there any more


def test_no_adb_server_raises_adb_unavailable_and_never_starts_one(spawn_marker, monkeypatch):
    port = _free_port()
    with pytest.raises(AdbUnavailableError, match="elderbench phone"):
        adb_client(port=port)
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
    with pytest.raises(AdbUnavailableError, match=f"127.0.0.1:{port}"):
        AndroidDevice(SERIAL)
    with pytest.raises(AdbUnavailableError):
        list_devices()
    assert not spawn_marker.exists(), "adbutils tried to start an adb server"


def test_unknown_serial_is_a_disconnected_device(virtual_server):
    with pytest.raises(DeviceDisconnectedError, match="nope"):
        AndroidDevice("nope", client=adb_client(port=virtual_server.port))


# --------------------------------------------------------------------------- observing


def test_observe_takes_screenshot_hierarchy_and_activity_together(device):
    capture = device.observe()
    assert capture.stable
    assert capture.size == (1080, 2400)
    assert capture.activity == "com.android.launcher3/.uioverrides.QuickstepLauncher"
    assert capture.package == "com.android.launcher3"
    with Image.open(io.BytesIO(capture.png())) as png:
        assert png.format == "PNG" and png.size == (1080, 2400)
    assert capture.image().size == (1080, 2400)
    hierarchy = capture.hierarchy()
    assert {"Clock", "Weather", "Settings", "Contacts"} <= set(hierarchy.texts())
    # The pixels agree with the hierarchy: the Settings icon is drawn where its node says.
    icon = hierarchy.find(text="Settings")[0]
    left, top, right, bottom = (int(v) for v in icon.bounds.as_list())
    crop = capture.image().crop((left, top, right, bottom)).convert("L")
    darkest, brightest = crop.getextrema()
    assert brightest - darkest > 64


def test_observe_retries_when_the_screen_changes_during_the_dump(virtual_server, device):
    phone = virtual_server.device(SERIAL).phone
    commands = virtual_server.device(SERIAL).commands
    original = commands["uiautomator"]
    calls = []

    def dump_then_open_settings(inv):
        status = original(inv)
        calls.append(inv.args)
        if len(calls) == 1:
            phone.start("com.android.settings")  # the screen changes right after the dump
        return status

    commands["uiautomator"] = dump_then_open_settings
    capture = device.observe()
    assert len(calls) == 2
    assert capture.stable
    assert capture.activity == "com.android.settings/.Settings"
    assert "Network & internet" in capture.hierarchy().texts()
    assert capture.png() == device.screenshot()


def test_failing_hierarchy_dumps_are_retried_with_compressed_then_reported(virtual_server, device):
    commands = virtual_server.device(SERIAL).commands
    original = commands["uiautomator"]
    calls: list[list[str]] = []

    def flaky(inv):
        calls.append(list(inv.args))
        if len(calls) < 2:
            inv.write("ERROR: could not get idle state.\n")
            return 0
        return original(inv)

    commands["uiautomator"] = flaky
    assert "Settings" in device.observe().hierarchy().texts()
    assert "--compressed" in calls[1]

    def broken(inv):
        calls.append(list(inv.args))
        inv.write("ERROR: could not get idle state.\n")
        return 0

    commands["uiautomator"] = broken
    calls.clear()
    with pytest.raises(HierarchyDumpError, match="could not get idle state"):
        device.observe()
    assert len(calls) == 3


def test_a_broken_screenshot_is_an_error_not_a_black_image(virtual_server, device):
    def truncated(inv):
        inv.write(inv.device.phone.screencap_png()[:1000])
        return 0

    virtual_server.device(SERIAL).commands["screencap"] = truncated
    with pytest.raises(DeviceCommandError, match="no complete PNG"):
        device.screenshot()


# --------------------------------------------------------------------------- every app's flow


def test_launcher_swipe_up_opens_the_drawer_and_an_app(driver):
    assert driver.screen() == "launcher/home"
    w, h = driver.capture.size
    driver.act(Action.swipe(w / 2, h * 0.8, w / 2, h * 0.3, screen=driver.capture.size))
    assert driver.screen() == "launcher/all_apps"
    driver.tap(text="Weather")
    assert driver.screen() == "weather/today"
    assert driver.capture.package == "com.elderphone.weather"


def test_settings_make_the_font_larger(driver):
    driver.open("com.android.settings")
    driver.tap(text="Display")
    assert driver.screen() == "settings/display"
    driver.tap(text="Font size")
    driver.tap(content_desc="Make larger")
    assert driver.screen() == "settings/display/font_size"
    assert "Large" in driver.texts()
    assert driver.device.shell("settings get system font_scale").strip() == "1.15"
    driver.act(Action.back())
    driver.act(Action.back())
    assert driver.screen() == "settings/main"
    driver.act(Action.home())
    assert driver.screen() == "launcher/home"


def test_clock_add_an_evening_alarm(driver):
    driver.open("com.android.deskclock")
    driver.tap(content_desc="Add alarm")
    assert driver.screen() == "clock/alarms/time_picker"
    driver.tap(content_desc="Increase hour")
    driver.tap(text="PM")
    driver.tap(text="OK")
    assert driver.screen() == "clock/alarms"
    assert "8:00 PM" in driver.texts()


def test_weather_change_the_city(driver):
    driver.open("com.elderphone.weather")
    driver.tap(content_desc="Change city")
    assert driver.screen() == "weather/cities"
    driver.tap(text="Riverside")
    assert driver.screen() == "weather/today"
    assert driver.find(resource_id="com.elderphone.weather:id/city_name").text == "Riverside"


def test_pharmacy_refill_and_pay(driver):
    driver.open("com.elderphone.pharmacy")
    driver.tap(content_desc="Refill Lisinopril 10 mg")
    driver.tap(content_desc="Cart, 1 item")
    assert driver.screen() == "pharmacy/cart"
    driver.tap(text="Place order")
    assert driver.screen() == "pharmacy/cart/confirm_payment"
    driver.tap(text="Pay")
    assert driver.screen() == "pharmacy/orders"
    assert "Order #1001 - $15.49" in driver.texts()


def test_phone_dial_a_number_and_hang_up(driver):
    driver.open("com.android.dialer")
    driver.tap(content_desc="key pad")
    for key in ("5,JKL", "5,JKL", "1", "2,ABC"):
        driver.tap(content_desc=key)
    driver.tap(content_desc="dial")
    assert driver.screen() == "dialer/in_call"
    assert "5512" in driver.texts()
    driver.tap(content_desc="End call")
    assert driver.screen() != "dialer/in_call"


def test_messages_reply_to_a_conversation(driver):
    driver.open("com.android.messaging")
    driver.tap(text="Daughter (Emma)")
    assert driver.screen() == "messages/thread/daughter_emma"
    driver.tap(text="Text message")
    driver.type("See you at noon!")
    driver.tap(content_desc="Send SMS")
    sent = driver.capture.hierarchy().find(resource_id="com.android.messaging:id/message_text")
    assert sent[-1].text == "See you at noon!"


def test_contacts_search_and_open_a_card(driver):
    driver.open("com.android.contacts")
    driver.tap(text="Search contacts")
    driver.type("Carol")
    driver.tap(text="Carol White")
    assert driver.screen() == "contacts/detail/carol_white"
    assert "(202) 555-0104" in driver.texts()


# --------------------------------------------------------------------------- actions


def test_normalized_coordinates_reach_the_same_element(driver):
    icon = driver.find(text="Settings")
    tap = Action.tap(*icon.bounds.center, screen=driver.capture.size).normalized()
    assert tap.screen == NORMALIZED_SCREEN
    driver.act(tap)
    assert driver.screen() == "settings/main"


def test_long_press_holds_for_its_duration(virtual_server, device):
    commands = virtual_server.device(SERIAL).commands
    original = commands["input"]
    seen: list[list[str]] = []

    def recording(inv):
        seen.append(list(inv.args))
        return original(inv)

    commands["input"] = recording
    device.perform(Action.long_press(500, 500, screen=NORMALIZED_SCREEN, duration_ms=900))
    assert seen == [["input", "swipe", "540", "1200", "540", "1200", "900"]]


def test_captures_are_stamped_by_the_devices_clock(clocked, clock):
    assert clocked.observe().time == clock.wall_start
    clock.now += 2.5
    assert clocked.observe().time == clock.wall_start + 2.5


def test_wait_sleeps_and_done_does_nothing(clocked, clock):
    driver = Driver(clocked)
    before = clocked.screenshot()
    clocked.perform(Action.wait(300))
    assert clock.sleeps == [0.3]
    clocked.perform(Action.done())
    assert clock.sleeps == [0.3]
    assert clocked.screenshot() == before
    assert driver.screen() == "launcher/home"


def test_points_far_outside_the_screen_are_refused(device):
    with pytest.raises(InputError, match="outside"):
        device.perform(Action.tap(2000, 500, screen=(1080, 2400)))


# --------------------------------------------------------------------------- typing


@pytest.fixture
def compose(driver: Driver) -> Driver:
    driver.open("com.android.messaging")
    driver.tap(text="Daughter (Emma)")
    driver.tap(text="Text message")
    return driver


def _compose_text(driver: Driver) -> str:
    return driver.find(resource_id="com.android.messaging:id/compose_message_text").text


INJECTIONS = [
    "'; rm -rf /sdcard; echo '",
    "$(reboot)",
    "`reboot`; input keyevent 3",
    "\"double\" and 'single' quotes",
    "back\\slash \\n \\\\ end",
    "50% off, 100%sure; a && b || c | d > /sdcard/x",
    "  spaced   out  ",
]


def test_ascii_text_is_typed_literally_and_never_runs(compose):
    for text in INJECTIONS:
        compose.device.perform(Action.type_text(text))
    compose.act(Action.wait(0))
    assert _compose_text(compose) == "".join(INJECTIONS)
    compose.tap(content_desc="Send SMS")
    sent = compose.capture.hierarchy().find(resource_id="com.android.messaging:id/message_text")
    assert sent[-1].text == "".join(INJECTIONS).strip()  # Messages trims what it sends
    assert compose.screen() == "messages/thread/daughter_emma"
    assert compose.device.adb.sync.exists("/sdcard")
    assert not compose.device.adb.sync.exists("/sdcard/x")


def test_unicode_is_typed_through_the_adb_keyboard_and_the_keyboard_is_restored(compose):
    before = compose.device.shell("settings get secure default_input_method").strip()
    assert before != "com.android.adbkeyboard/.AdbIME"
    text = "你好 Emma 😀 — ça va? '$(reboot)'"
    compose.type(text)
    assert _compose_text(compose) == text
    after = compose.device.shell("settings get secure default_input_method").strip()
    assert after == before


def test_unicode_without_the_adb_keyboard_says_how_to_install_it():
    with running_server(phones=[fast_phone(SERIAL, adb_keyboard=False)]) as server:
        driver = Driver(AndroidDevice(SERIAL, client=adb_client(port=server.port)))
        driver.open("com.android.messaging")
        driver.tap(text="Daughter (Emma)")
        driver.tap(text="Text message")
        with pytest.raises(InputError, match="ADB Keyboard.*adb install"):
            driver.device.perform(Action.type_text("你好"))
        driver.capture = driver.device.observe()
        assert _compose_text(driver) == "Text message"  # nothing was typed


# --------------------------------------------------------------------------- apps


def test_reset_app_clears_data_only_when_asked(driver):
    driver.open("com.android.deskclock")
    driver.tap(content_desc="Add alarm")
    driver.tap(text="OK")
    assert "7:00 AM" in driver.texts()
    driver.open("com.android.deskclock")  # force-stop and relaunch keep app data
    assert "7:00 AM" in driver.texts()
    driver.open("com.android.deskclock", clear_data=True, activity=".DeskClock")
    assert driver.screen() == "clock/alarms"
    assert "7:00 AM" not in driver.texts()


def test_reset_app_restores_the_recipes_system_settings(driver, virtual_server):
    phone = virtual_server.phones[0]
    driver.device.shell("settings put system font_scale 1.3")  # left by an earlier task
    recipe = ResetRecipe(
        "com.android.settings",
        settings=(SettingValue("system", "font_scale", "1.0"),),
    )
    driver.device.reset_app(recipe)
    assert phone.settings["system"]["font_scale"] == "1.0"
    assert driver.device.shell("settings get system font_scale").strip() == "1.0"
    assert driver.device.observe().activity.startswith("com.android.settings/")


def test_a_recipe_without_a_package_still_restores_the_settings_and_goes_home(driver):
    driver.open("com.android.settings")
    driver.device.shell("settings put system font_scale 1.15")
    driver.device.shell("settings put global airplane_mode_on 1")
    recipe = ResetRecipe(
        "",
        settings=(
            SettingValue("system", "font_scale", "1.0"),
            SettingValue("global", "airplane_mode_on", "0"),
        ),
    )
    driver.device.reset_app(recipe)
    assert driver.device.shell("settings get system font_scale").strip() == "1.0"
    assert driver.device.shell("settings get global airplane_mode_on").strip() == "0"
    assert driver.device.wait_until_settled()
    assert driver.device.observe().activity.startswith("com.android.launcher")


def test_a_recipe_loads_its_whole_phone_snapshot_and_clears_other_packages(driver):
    driver.open("com.android.deskclock")
    driver.device.shell("virtualphone snapshot save clean")
    driver.tap(content_desc="Add alarm")
    driver.tap(text="OK")
    driver.device.shell("settings put system font_scale 1.3")
    assert "7:00 AM" in driver.open("com.android.deskclock").hierarchy().texts()
    driver.device.reset_app(ResetRecipe("com.android.deskclock", snapshot="clean"))
    assert driver.device.shell("settings get system font_scale").strip() == "1.0"
    assert "7:00 AM" not in driver.open("com.android.deskclock").hierarchy().texts()
    # An alarm again, then the recipe of another app clears the clock's data on the way.
    driver.tap(content_desc="Add alarm")
    driver.tap(text="OK")
    driver.device.reset_app(
        ResetRecipe("com.android.settings", clear_packages=("com.android.deskclock",))
    )
    assert driver.device.observe().activity.startswith("com.android.settings/")
    assert "7:00 AM" not in driver.open("com.android.deskclock").hierarchy().texts()
    with pytest.raises(DeviceCommandError, match="snapshot 'missing'"):
        driver.device.reset_app(ResetRecipe("com.android.settings", snapshot="missing"))


def test_reset_app_of_a_missing_app_is_a_command_error(device):
    with pytest.raises(DeviceCommandError, match="com.example.missing"):
        device.reset_app(ResetRecipe("com.example.missing"))
    with pytest.raises(DeviceCommandError, match="pm clear"):
        device.reset_app(ResetRecipe("com.example.missing", clear_data=True))
    with pytest.raises(DeviceError, match="package name"):
        device.reset_app(ResetRecipe("evil; reboot"))


# --------------------------------------------------------------------------- several devices


def test_two_devices_are_driven_at_the_same_time(virtual_server):
    virtual_server.add_phone(fast_phone("virtual-2"))
    client = adb_client(port=virtual_server.port)
    plans = {
        "virtual-1": ("com.elderphone.weather", "weather/today"),
        "virtual-2": ("com.android.settings", "settings/main"),
    }
    failures: list[BaseException] = []

    def run(serial: str) -> None:
        try:
            driver = Driver(AndroidDevice(serial, client=client))
            package, _ = plans[serial]
            driver.open(package)
            driver.act(Action.home())
            driver.tap(
                text={"com.elderphone.weather": "Weather", "com.android.settings": "Settings"}[
                    package
                ]
            )
        except BaseException as exc:  # reported below, in the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(serial,)) for serial in plans]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
    for serial, (_, screen) in plans.items():
        d = AndroidDevice(serial, client=client)
        assert d.shell(f"getprop {SCREEN_PROP}").split()[0] == screen


# --------------------------------------------------------------------------- failures


def test_killing_the_server_mid_call_raises_quickly(spawn_marker):
    with running_server() as virtual:
        device = AndroidDevice(SERIAL, client=adb_client(port=virtual.port))
        outcome: list[BaseException | str] = []
        commands = virtual.device(SERIAL).commands
        original_sleep = commands["sleep"]
        running = threading.Event()

        def watched_sleep(inv):
            running.set()
            return original_sleep(inv)

        commands["sleep"] = watched_sleep

        def long_call() -> None:
            try:
                device.shell("sleep 30")
                outcome.append("returned")
            except BaseException as exc:
                outcome.append(exc)

        caller = threading.Thread(target=long_call)
        caller.start()
        assert running.wait(10), "the long call never reached the phone"
        started = time.monotonic()
        virtual.close()
        caller.join(5)
        assert not caller.is_alive(), "the call hung after the server died"
        assert time.monotonic() - started < 5
        assert isinstance(outcome[0], DeviceDisconnectedError), outcome
        started = time.monotonic()
        with pytest.raises(AdbUnavailableError):
            device.observe()
        assert time.monotonic() - started < 5
    assert not spawn_marker.exists()


def test_an_unplugged_phone_raises_disconnected(virtual_server, device):
    virtual_server.remove_phone(SERIAL)
    with pytest.raises(DeviceDisconnectedError):
        device.perform(Action.home())


# --------------------------------------------------------------------------- settling


def test_settle_waits_for_the_transition_to_end():
    phone = fast_phone(SERIAL, settle_ms=(500, 500))
    with running_server(phones=[phone]) as server:
        device = AndroidDevice(SERIAL, client=adb_client(port=server.port))
        capture = device.observe()
        icon = capture.hierarchy().find(text="Settings")[0]
        # Timed from before the tap: under load the tap itself may eat into the transition.
        started = time.monotonic()
        device.perform(Action.tap(*icon.bounds.center, screen=capture.size))
        assert device.wait_until_settled(timeout=3.0)
        assert time.monotonic() - started >= 0.45
        settled = device.observe()
        assert settled.stable
        assert settled.png() == phone.screencap_png()
        with Image.open(io.BytesIO(settled.png())) as shown:
            assert shown.convert("RGB").tobytes() == phone.render().tobytes()


def test_settle_gives_up_at_its_timeout_on_a_screen_that_keeps_changing(
    virtual_server, clocked, clock
):
    frames = iter(range(10_000))

    def animated(inv):
        image = inv.device.phone.render()
        shade = next(frames) % 2 * 255
        image.paste((shade, 0, 255 - shade), (0, 600, 1080, 1200))  # a flashing banner
        out = io.BytesIO()
        image.save(out, format="PNG", compress_level=1)
        inv.write(out.getvalue())
        return 0

    virtual_server.device(SERIAL).commands["screencap"] = animated
    assert clocked.wait_until_settled(timeout=0.5) is False
    # Captures start MIN_GAP apart until the timeout has passed on the device's clock.
    assert clock.sleeps and all(s == pytest.approx(MIN_GAP) for s in clock.sleeps)
    assert 0.5 <= clock.now < 0.5 + 2 * MIN_GAP


def test_a_frozen_hierarchy_dump_times_out_with_the_limit_it_was_given(virtual_server):
    commands = virtual_server.device(SERIAL).commands

    def frozen(inv):
        time.sleep(3)
        return 0

    commands["uiautomator"] = frozen
    device = AndroidDevice(SERIAL, client=adb_client(port=virtual_server.port), timeout=0.4)
    with pytest.raises(DeviceDisconnectedError, match=r"within 1\.2 s while running `dumpsys"):
        device.dump_hierarchy()


def test_long_gestures_are_cut_to_stay_inside_the_device_call(virtual_server, device):
    commands = virtual_server.device(SERIAL).commands
    original = commands["input"]
    seen: list[list[str]] = []

    def recording(inv):
        seen.append(list(inv.args))
        return original(inv)

    commands["input"] = recording
    device.perform(Action.swipe(10, 10, 500, 500, screen=NORMALIZED_SCREEN, duration_ms=600_000))
    assert seen[-1][-1] == "2500"  # half the 5 s timeout of the fixture's device
