"""The settle loop decodes each screenshot once, however many comparisons it makes."""

from __future__ import annotations

import io

from PIL import Image

from devices import settle


def png(shade: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("L", (64, 128), shade).save(buffer, format="PNG")
    return buffer.getvalue()


def test_each_screenshot_is_decoded_once_until_the_screen_settles(monkeypatch):
    # Five different screens (an animation), then two that match within the tolerance.
    frames = [png(0), png(40), png(80), png(120), png(160), png(200), png(203)]
    decoded: list[bytes] = []
    real = settle._thumbnail

    def counting(data: bytes):
        decoded.append(data)
        return real(data)

    monkeypatch.setattr(settle, "_thumbnail", counting)
    clock = iter(range(1000))
    result = settle.wait_until_stable(
        lambda: frames.pop(0), 100.0, clock=lambda: next(clock) * 0.01, sleep=lambda s: None
    )
    assert result.settled and result.captures == 7
    assert len(decoded) == 7 and len(set(decoded)) == 7  # one decode per screenshot


def test_identical_screenshots_are_never_decoded(monkeypatch):
    monkeypatch.setattr(settle, "_thumbnail", lambda data: (_ for _ in ()).throw(AssertionError))
    same = png(10)
    result = settle.wait_until_stable(lambda: same, 1.0, sleep=lambda s: None)
    assert result.settled and result.captures == 2
