"""Screen similarity: masked perceptual hash, hierarchy components, and the explained verdict."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from graph_builder.errors import FormatError
from graph_builder.hierarchy import load_hierarchy, parse_hierarchy
from graph_builder.model import Observation
from graph_builder.phash import compute_phash, hash_bits, masked_bands
from graph_builder.roles import screen_tokens
from graph_builder.screen import Screen
from graph_builder.similarity import (
    SimilaritySettings,
    compare,
    load_settings,
    screen_features,
    text_changes,
)
from tests.graph_builder.gb_synthetic import Sketch, render, state
from tests.shared_fixtures import require_llamatouch_trace

S = SimilaritySettings()
HOME = Sketch("Home", ("Settings", "Contacts", "Clock"))
SETTINGS = Sketch("Settings", ("Display", "Sound", "Battery"))
DISPLAY = Sketch("Display", ("Brightness", "Dark theme", "Font size"))


def test_same_screen_with_another_clock_is_the_same() -> None:
    verdict = compare(state(HOME), state(HOME.with_clock("23:59")), settings=S)
    assert verdict.same
    assert verdict.visual == 1.0  # the status bar is masked out of the hash
    assert verdict.content == 1.0  # and its clock is left out of the texts


def test_other_screen_is_different_and_the_reason_names_the_component() -> None:
    verdict = compare(state(HOME), state(SETTINGS), settings=S)
    assert not verdict.same
    assert "state differs" in verdict.reason and "'[title] home'" in verdict.reason
    assert verdict.structure == 1.0  # same layout, another title: the state decides
    text = verdict.describe()
    assert text.startswith("DIFFERENT") and "visual" in text and "structure" in text


def test_dialog_over_a_screen_is_a_different_state() -> None:
    dialog = Sketch(DISPLAY.name, DISPLAY.rows, dialog="Turn on dark theme?")
    verdict = compare(state(DISPLAY), state(dialog), settings=S)
    assert not verdict.same


def test_ticking_times_are_tolerated_but_a_changed_counter_is_a_new_state() -> None:
    a = Sketch("Cart", ("Aspirin", "Bandage"), extra={"updated": "Updated 10:42", "n": "3 items"})
    b = Sketch("Cart", ("Aspirin", "Bandage"), extra={"updated": "Updated 10:43", "n": "3 items"})
    verdict = compare(state(a), state(b), settings=S)
    assert verdict.same and verdict.changes == 0.0 and "2 ambient texts differ" in verdict.reason
    c = Sketch("Cart", ("Aspirin", "Bandage"), extra={"updated": "Updated 10:42", "n": "4 items"})
    verdict = compare(state(a), state(c), settings=S)
    assert not verdict.same
    assert "text changes 2.00 > 0.50" in verdict.reason and "'4 items'" in verdict.reason


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Gmail has 10 notifications", "Gmail has 11 notifications"),
        ("9+ notificaciones", "3 notificaciones"),
        ("3 unread", "12 unread"),
        ("21°C", "23°C"),
    ],
)
def test_notification_counts_are_ambient_and_other_counters_masked(before: str, after: str) -> None:
    a = Sketch("Inbox", ("Alice", "Bob"), extra={"n": before})
    b = Sketch("Inbox", ("Alice", "Bob"), extra={"n": after})
    verdict = compare(state(a), state(b), settings=S)
    assert verdict.same and verdict.changes == 0.0
    tokens = screen_tokens(parse_hierarchy(render(a)[1]), S)
    if "notifica" in before:
        assert any("notifica" in t for t in tokens.ambient) and not tokens.content
    else:  # shown masked in explanations
        assert any("#" in token for token in tokens.content)


def test_a_temperature_in_other_units_is_still_a_change() -> None:
    a = Sketch("Weather", ("Today",), extra={"t": "21°C"})
    b = Sketch("Weather", ("Today",), extra={"t": "70°F"})
    assert not compare(state(a), state(b), settings=S).same


def test_a_sentence_reworded_in_place_costs_little_but_a_new_sentence_counts() -> None:
    a = Sketch(
        "Route",
        ("Drive", "Walk"),
        extra={"s": "Current location is outside the area, using a fallback origin"},
    )
    b = Sketch(
        "Route",
        ("Drive", "Walk"),
        extra={"s": "Timed out while requesting a GPS fix, using the cached origin"},
    )
    verdict = compare(state(a), state(b), settings=S)
    assert verdict.same and verdict.changes == pytest.approx(2 * S.volatile_text_weight)
    c = Sketch(
        "Route",
        ("Drive", "Walk"),
        extra={"s": a.extra["s"], "e": "The route could not be planned, please try again"},
    )
    verdict = compare(state(a), state(c), settings=S)
    assert not verdict.same and "[sentence]" in verdict.reason


def test_elements_off_the_screen_or_scrolled_out_are_left_out() -> None:
    rows = tuple(f"Row {i}" for i in range(14))  # the list shows the first nine or so
    ambient = screen_tokens(parse_hierarchy(render(Sketch("Long", rows))[1]), S).ambient
    assert "row 0" in ambient and "row 13" not in ambient
    shown = sum(f"row {i}" in ambient for i in range(14))
    assert 5 < shown < 14
    # A launcher's next page, right of the screen, is left out too.
    _, xml = render(Sketch("Home", ("Phone", "Camera")))
    page2 = '<node class="android.widget.TextView" text="Maps" bounds="[2000,500][2200,600]"/>'
    wider = xml.replace(
        '</node><node class="android.widget.FrameLayout" package="com.android.systemui"',
        page2 + '</node><node class="android.widget.FrameLayout" package="com.android.systemui"',
    )
    assert "Maps" in wider
    assert screen_tokens(parse_hierarchy(wider), S) == screen_tokens(parse_hierarchy(xml), S)


def test_times_and_dates_are_ambient_and_long_texts_weigh_less() -> None:
    _, xml = render(
        Sketch("Clock", extra={"time": "10:42", "when": "Sun, Nov 29", "desc": "x" * 90})
    )
    tokens = screen_tokens(parse_hierarchy(xml), S)
    assert tokens.state == {"[title] clock": 1.0}
    assert {"10:42", "sun, nov 29"} <= tokens.ambient
    assert tokens.content["x" * 90] == S.volatile_text_weight
    assert "12:00" not in tokens.ambient  # the status bar clock is System UI


def state_of(xml: str) -> Screen:
    """A screen with this hierarchy over the Display sketch's pixels."""
    image, _ = render(Sketch("Display", ("Dark theme",)))
    return Screen(image.size, image=image, hierarchy=parse_hierarchy(xml))


def test_a_switch_turned_on_is_a_different_state() -> None:
    off = render(Sketch("Display", ("Dark theme",)))[1]
    on = off.replace('text="Dark theme"', 'text="Dark theme" checkable="true" checked="true"')
    off = off.replace('text="Dark theme"', 'text="Dark theme" checkable="true" checked="false"')
    a = screen_tokens(parse_hierarchy(off), S).state
    b = screen_tokens(parse_hierarchy(on), S).state
    assert text_changes(a, b) == 2.0
    assert "[on] dark theme #1" in b and "[off] dark theme #1" in a
    verdict = compare(state_of(off), state_of(on), settings=S)
    assert not verdict.same and "state differs" in verdict.reason


def test_different_activities_are_different_even_when_identical() -> None:
    a = Sketch("Home", HOME.rows, activity="com.example.app/.A")
    b = Sketch("Home", HOME.rows, activity="com.example.app/.B")
    verdict = compare(state(a), state(b), settings=S)
    assert not verdict.same and verdict.activity == "different"
    loose = dataclasses.replace(S, activity_must_match=False)
    assert compare(state(a), state(b), settings=loose).same


def test_without_hierarchy_the_visual_threshold_decides() -> None:
    a = Sketch("Home", HOME.rows, with_hierarchy=False)
    verdict = compare(state(a), state(a.with_clock("01:00")), settings=S)
    assert verdict.same and verdict.structure is None and "no hierarchy" in verdict.reason
    other = Sketch("Settings", SETTINGS.rows, with_hierarchy=False)
    assert not compare(state(a), state(other), settings=S).same


def _image_with_top(color: tuple[int, int, int], body: tuple[int, int, int]) -> Image.Image:
    image = Image.new("RGB", (200, 400), body)
    ImageDraw.Draw(image).rectangle((0, 0, 200, 10), fill=color)
    ImageDraw.Draw(image).rectangle((20, 100, 120, 200), fill=(0, 0, 0))
    return image


def test_phash_ignores_the_status_bar_band_but_sees_the_content() -> None:
    a = compute_phash(_image_with_top((255, 0, 0), (200, 200, 200)))
    b = compute_phash(_image_with_top((0, 0, 255), (200, 200, 200)))
    assert a == b
    c = Image.new("RGB", (200, 400), (200, 200, 200))
    ImageDraw.Draw(c).rectangle((80, 250, 180, 380), fill=(0, 0, 0))
    assert compute_phash(c) != a
    assert a.startswith("phash16:") and hash_bits(a, S) is not None
    assert hash_bits(a, dataclasses.replace(S, hash_size=8)) is None  # other settings


def test_phash_takes_the_status_bar_from_the_hierarchy_when_present() -> None:
    image, xml = render(HOME)
    hierarchy = parse_hierarchy(xml)
    top, bottom = masked_bands(270, 600, hierarchy, S)
    assert top == 18  # the status_bar element's bottom, not the 3.5% band (21)
    assert bottom == round(600 * (1 - S.nav_bar_band))
    assert masked_bands(270, 600, None, S)[0] == round(600 * S.status_bar_band)
    assert compute_phash(image, hierarchy) == compute_phash(_png(image), hierarchy)


def test_volatile_regions_are_masked() -> None:
    def screen(counter: str) -> Image.Image:
        image = _image_with_top((0, 0, 0), (230, 230, 230))
        ImageDraw.Draw(image).rectangle(
            (100, 300, 190, 390), fill=(0, 0, 0) if counter else "white"
        )
        return image

    masked = dataclasses.replace(S, volatile_regions=((450, 700, 1000, 1000),))
    assert compute_phash(screen("x"), settings=masked) == compute_phash(screen(""), settings=masked)
    assert compute_phash(screen("x"), settings=S) != compute_phash(screen(""), settings=S)


def test_corrupt_png_bytes_are_a_format_error() -> None:
    with pytest.raises(FormatError, match="cannot decode"):
        compute_phash(b"\x89PNG\r\n\x1a\nbroken")


def _png(image: Image.Image) -> bytes:
    import io

    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def test_stored_hash_is_reused_without_reading_the_screenshot(tmp_path: Path) -> None:
    image, _ = render(HOME)
    stored = compute_phash(image)
    obs = Observation(screenshot="missing.png", screen=(270, 600), phash=stored)
    features = screen_features(Screen.from_observation(obs, tmp_path), S)  # no file exists
    assert features.hash == hash_bits(stored, S)


def test_hash_made_with_other_settings_is_recomputed(tmp_path: Path) -> None:
    image, _ = render(HOME)
    (tmp_path / "s.png").write_bytes(_png(image))
    old = compute_phash(image, settings=dataclasses.replace(S, hash_size=8))
    obs = Observation(screenshot="s.png", screen=(270, 600), phash=old)
    features = screen_features(Screen.from_observation(obs, tmp_path), S)
    assert features.hash == hash_bits(compute_phash(image), S)


def test_missing_screenshot_without_hash_is_a_format_error(tmp_path: Path) -> None:
    obs = Observation(screenshot="nope.png", screen=(270, 600))
    with pytest.raises(FormatError, match="not found"):
        screen_features(Screen.from_observation(obs, tmp_path), S)


def test_settings_round_trip_and_load(tmp_path: Path) -> None:
    custom = dataclasses.replace(S, max_text_changes=0.9, volatile_regions=((0, 0, 100, 50),))
    assert SimilaritySettings.from_json(json.loads(json.dumps(custom.to_json()))) == custom
    path = tmp_path / "settings.json"
    path.write_text('{"max_text_changes": 0.95, "hash_size": 8}')
    loaded = load_settings(path)
    assert loaded.max_text_changes == 0.95 and loaded.hash_size == 8
    assert loaded.visual_floor == S.visual_floor  # missing fields keep defaults


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"same_treshold": 0.9}, "unknown settings: same_treshold"),
        ({"visual_floor": "high"}, "wrong type"),
        ({"visual_floor": 1.5}, "between 0 and 1"),
        ({"hash_method": "md5"}, "unknown"),
        ({"hash_size": 8.5}, "wrong type"),
        ({"volatile_text_patterns": ["("]}, "not a regex"),
        ([], "JSON object"),
    ],
)
def test_bad_settings_are_reported(data: object, match: str) -> None:
    with pytest.raises(FormatError, match=match):
        SimilaritySettings.from_json(data)


def _fixture_states(folder: Path) -> list[Screen]:
    states = []
    for i in range(5):
        activity = (folder / f"{i}.activity").read_text().strip() or None
        obs = Observation(
            screenshot=f"{i}.png", hierarchy=f"{i}.xml", activity=activity, screen=(1080, 2400)
        )
        states.append(Screen.from_observation(obs, folder))
    return states


def test_real_screens_are_all_different() -> None:
    folder = require_llamatouch_trace()
    states = _fixture_states(folder)
    for settings in (S, dataclasses.replace(S, activity_must_match=False)):
        for i in range(5):
            for j in range(i + 1, 5):
                verdict = compare(states[i], states[j], settings=settings)
                assert not verdict.same, (i, j, verdict.describe())
        assert compare(states[2], states[2], settings=settings).same


def test_real_screen_same_as_itself_after_a_clock_tick() -> None:
    folder = require_llamatouch_trace()
    image = Image.open(folder / "2.png").convert("RGB")
    ticked = image.copy()
    ImageDraw.Draw(ticked).rectangle((0, 0, 200, 70), fill=(0, 0, 0))  # the clock area
    hierarchy = load_hierarchy(folder / "2.xml")
    assert compute_phash(image, hierarchy) == compute_phash(ticked, hierarchy)


TOAST = (
    '<node class="android.widget.LinearLayout" package="com.example.app"'
    ' bounds="[20,500][250,540]"><node class="android.widget.TextView"'
    ' package="com.example.app" resource-id="android:id/message"'
    ' text="Added to cart" bounds="[20,500][250,540]"/></node></hierarchy>'
)


def test_toasts_are_left_out_but_dialogs_count() -> None:
    _, xml = render(HOME)
    plain = screen_tokens(parse_hierarchy(xml), S)
    with_toast = xml.replace("</hierarchy>", TOAST)
    assert screen_tokens(parse_hierarchy(with_toast), S) == plain
    kept = dataclasses.replace(S, ignore_toasts=False)
    assert "added to cart" in screen_tokens(parse_hierarchy(with_toast), kept).content
    dialog = with_toast.replace('text="Added to cart"', 'text="Delete?" clickable="true"')
    assert "delete?" in screen_tokens(parse_hierarchy(dialog), S).content
