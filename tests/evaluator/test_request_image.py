"""The request image: the pixels a family's model sees, prepared once per screen and file."""

from __future__ import annotations

import base64
import io
import os
import threading
from pathlib import Path

import pytest
from PIL import Image

from evaluator import request_image
from evaluator.agents.families import get_family
from evaluator.request_image import encode_png, image_part, screen_part
from evaluator.synthetic import render_screen
from graph_builder.errors import FormatError
from graph_builder.io import atomic_write_bytes
from graph_builder.screen import Screen
from tests.shared_fixtures import require_dev_screens


def pillow_image_part(image: Image.Image, max_side: int) -> tuple[bytes, tuple[int, int]]:
    """What the harness sent before: Pillow's default resize, Pillow's PNG at level 1."""
    scale = max_side / max(image.size)
    small = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))))
    buffer = io.BytesIO()
    small.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue(), small.size


def sent_png(part: dict[str, object]) -> bytes:
    url = part["image_url"]["url"]  # type: ignore[index]
    head, _, data = url.partition(",")
    assert head == "data:image/png;base64"
    return base64.b64decode(data)


def decoded(png: bytes) -> Image.Image:
    with Image.open(io.BytesIO(png)) as image:
        image.load()
        return image


def phone_screens() -> list[Image.Image]:
    drawn = render_screen(
        "Settings", ["Display", "Sound", "Battery"], app="a", activity="a/.B", size=(1080, 2400)
    )
    return [decoded(drawn.png).convert("RGB")]


@pytest.mark.parametrize("family", ["json", "agentcpm-gui"])
def test_the_model_sees_the_same_pixels_as_before(family):
    side = get_family(family).max_image_side
    assert side is not None
    for screen in phone_screens():
        part, sent = image_part(screen, max_side=side)
        before, before_size = pillow_image_part(screen, side)
        new, old = decoded(sent_png(part)), decoded(before)
        assert sent == before_size == new.size
        assert new.mode == old.mode == "RGB"
        assert new.tobytes() == old.tobytes()  # pixel by pixel


def test_a_real_screenshot_keeps_its_pixels():
    folder = require_dev_screens()
    path = next(p for p in sorted(folder.rglob("*.png")) if decoded(p.read_bytes()).height > 2000)
    screen = decoded(path.read_bytes()).convert("RGB")
    part, _ = image_part(screen, max_side=1024)
    before, _ = pillow_image_part(screen, 1024)
    assert decoded(sent_png(part)).tobytes() == decoded(before).tobytes()


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA"])
def test_encode_png_is_lossless_in_every_mode_it_writes(mode):
    image = phone_screens()[0].resize((270, 600)).convert(mode)
    if mode == "RGBA":
        image.putalpha(Image.linear_gradient("L").resize(image.size))
    back = decoded(encode_png(image))
    assert back.mode == mode and back.size == image.size
    assert back.tobytes() == image.tobytes()


def test_other_modes_go_through_pillow():
    image = phone_screens()[0].resize((90, 200)).convert("P")
    assert decoded(encode_png(image)).convert("RGB").tobytes() == image.convert("RGB").tobytes()


@pytest.fixture
def screenshot(tmp_path: Path) -> Path:
    request_image.FILE_CACHE.clear()
    path = tmp_path / "node.png"
    path.write_bytes(
        render_screen("Home", ["Phone"], app="a", activity="a/.B", size=(1080, 2400)).png
    )
    yield path
    request_image.FILE_CACHE.clear()


def counting_shrink(monkeypatch) -> list[tuple[int, int]]:
    shrunk: list[tuple[int, int]] = []
    original = request_image.shrink

    def shrink(image: Image.Image, max_side: int | None) -> Image.Image:
        shrunk.append(image.size)
        return original(image, max_side)

    monkeypatch.setattr(request_image, "shrink", shrink)
    return shrunk


def test_a_revisited_screen_is_prepared_once(screenshot, monkeypatch):
    shrunk = counting_shrink(monkeypatch)
    screen = Screen((1080, 2400), screenshot_path=screenshot)
    first = screen_part(screen, max_side=1024)
    again = screen_part(screen, max_side=1024)
    assert again is first and shrunk == [(1080, 2400)]
    # The next episode (or trial) builds its own Screen of the same node file: no decode.
    later = Screen((1080, 2400), screenshot_path=screenshot)
    assert screen_part(later, max_side=1024) == first and shrunk == [(1080, 2400)]
    # Another size is another image.
    assert screen_part(later, max_side=512)[1] == (230, 512) and len(shrunk) == 2


def test_a_rewritten_screenshot_is_never_sent_stale(screenshot, monkeypatch):
    first = screen_part(Screen((1080, 2400), screenshot_path=screenshot), max_side=1024)
    other = render_screen("Away", ["Mail"], app="a", activity="a/.C", size=(1080, 2400)).png
    atomic_write_bytes(screenshot, other)
    stat = screenshot.stat()  # the same second on a coarse clock: move the time on
    os.utime(screenshot, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    shrunk = counting_shrink(monkeypatch)
    part, _ = screen_part(Screen((1080, 2400), screenshot_path=screenshot), max_side=1024)
    assert shrunk == [(1080, 2400)] and part != first[0]
    expected, _ = pillow_image_part(decoded(other).convert("RGB"), 1024)
    assert decoded(sent_png(part)).tobytes() == decoded(expected).tobytes()


def test_a_png_that_fits_is_sent_as_captured(screenshot, monkeypatch):
    shrunk = counting_shrink(monkeypatch)
    part, sent = screen_part(Screen((1080, 2400), screenshot_path=screenshot), max_side=None)
    assert sent == (1080, 2400) and sent_png(part) == screenshot.read_bytes() and not shrunk


def test_one_preparation_at_a_time_per_file(screenshot, monkeypatch):
    """Two threads asking for the same new screen (a step and the look-ahead) prepare it
    once: the second waits for the first."""
    started, release = threading.Event(), threading.Event()
    shrunk: list[str] = []
    original = request_image.shrink

    def slow_shrink(image: Image.Image, max_side: int | None) -> Image.Image:
        shrunk.append(threading.current_thread().name)
        started.set()
        assert release.wait(10)
        return original(image, max_side)

    monkeypatch.setattr(request_image, "shrink", slow_shrink)
    parts: list[object] = []
    first = threading.Thread(
        target=lambda: parts.append(
            screen_part(Screen((1080, 2400), screenshot_path=screenshot), max_side=1024)
        ),
        name="first",
    )
    first.start()
    assert started.wait(10)
    second = threading.Thread(
        target=lambda: parts.append(
            screen_part(Screen((1080, 2400), screenshot_path=screenshot), max_side=1024)
        ),
        name="second",
    )
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert shrunk == ["first"] and len(parts) == 2 and parts[0] == parts[1]


def test_screens_prepared_ahead_are_ready_for_the_step(tmp_path, monkeypatch):
    request_image.FILE_CACHE.clear()
    paths = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.png"
        path.write_bytes(
            render_screen(name, ["Next"], app="a", activity="a/.B", size=(1080, 2400)).png
        )
        paths.append(path)
    shrunk: list[str] = []
    original = request_image.shrink

    def shrink(image: Image.Image, max_side: int | None) -> Image.Image:
        shrunk.append(threading.current_thread().name)
        return original(image, max_side)

    monkeypatch.setattr(request_image, "shrink", shrink)
    request_image.prepare_ahead(
        [Screen((1080, 2400), screenshot_path=p) for p in paths], max_side=1024
    )
    assert request_image.AHEAD.wait_idle(30)
    assert shrunk == ["request-images-ahead"] * 2
    for path in paths:  # the step's own Screen of the node finds its image ready
        part, sent = screen_part(Screen((1080, 2400), screenshot_path=path), max_side=1024)
        assert sent == (461, 1024)
    assert len(shrunk) == 2
    request_image.FILE_CACHE.clear()


def test_a_broken_screen_ahead_is_left_to_the_step(tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    request_image.prepare_ahead([Screen((1080, 2400), screenshot_path=broken)], max_side=1024)
    assert request_image.AHEAD.wait_idle(30)
    with pytest.raises(FormatError):  # the step that shows it says what is wrong
        screen_part(Screen((1080, 2400), screenshot_path=broken), max_side=1024)


def test_the_file_cache_drops_the_least_recently_used_beyond_its_size(tmp_path, monkeypatch):
    request_image.FILE_CACHE.clear()
    shrunk = counting_shrink(monkeypatch)
    paths = []
    for name in ("a", "b", "c"):
        path = tmp_path / f"{name}.png"
        path.write_bytes(
            render_screen(name, ["Next"], app="a", activity="a/.B", size=(1080, 2400)).png
        )
        paths.append(path)
    url = screen_part(Screen((1080, 2400), screenshot_path=paths[0]), max_side=1024)[0]
    # Room for two such images, not three.
    monkeypatch.setattr(request_image.FILE_CACHE, "chars", len(url["image_url"]["url"]) * 5 // 2)
    for path in paths[1:]:
        screen_part(Screen((1080, 2400), screenshot_path=path), max_side=1024)
    assert len(shrunk) == 3
    screen_part(Screen((1080, 2400), screenshot_path=paths[2]), max_side=1024)
    assert len(shrunk) == 3  # the newest is kept
    screen_part(Screen((1080, 2400), screenshot_path=paths[0]), max_side=1024)
    assert len(shrunk) == 4  # the oldest was dropped: prepared again
    request_image.FILE_CACHE.clear()
