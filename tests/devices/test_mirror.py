"""Frame sources against the virtual phone: scrcpy through mysc-core's server, and the
screencap fallback."""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from PIL import Image

from devices.android import AndroidDevice, adb_client
from devices.errors import MirrorError
from devices.mirror import (
    Frame,
    FrameSource,
    ScrcpyFrameSource,
    ScreencapFrameSource,
    open_frame_source,
)
from graph_builder.model import Action
from virtual_phone import AdbServer

SERIAL = "virtual-1"


@pytest.fixture
def device(virtual_server: AdbServer) -> AndroidDevice:
    return AndroidDevice(SERIAL, client=adb_client(port=virtual_server.port), timeout=5.0)


@pytest.fixture
def sources() -> Iterator[list[FrameSource]]:
    """Every source a test opens is stopped afterwards, whatever happens."""
    opened: list[FrameSource] = []
    yield opened
    for source in opened:
        source.stop()


def wait_for(condition: Callable[[], object], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def screen_as_frame(device: AndroidDevice, size: tuple[int, int]) -> np.ndarray:
    with Image.open(io.BytesIO(device.screenshot())) as png:
        return np.asarray(png.convert("RGB").resize(size, Image.Resampling.BILINEAR), np.int16)


def difference(frame: Frame, expected: np.ndarray) -> float:
    return float(np.abs(frame.array.astype(np.int16) - expected).mean())


def assert_well_formed(frame: Frame) -> None:
    w, h = frame.size
    assert frame.array.dtype == np.uint8
    assert frame.array.shape == (h, w, 3)
    assert frame.array.flags.c_contiguous
    assert frame.device_size == (1080, 2400)


def test_scrcpy_streams_the_screen_and_follows_it(device, sources):
    source = open_frame_source(device, max_size=1200, max_fps=30)
    sources.append(source)
    assert (source.name, source.fallback_reason, source.error) == ("scrcpy", None, None)
    wait_for(source.latest)
    first = source.latest()
    assert first is not None
    assert_well_formed(first)
    assert first.size == (544, 1200)  # 1080x2400 scaled to 1200, sides multiples of 8
    assert difference(first, screen_as_frame(device, first.size)) < 6
    pixels = first.array.copy()

    capture = device.observe()
    icon = capture.hierarchy().find(text="Settings")[0]
    device.perform(Action.tap(*icon.bounds.center, screen=capture.size))
    assert device.wait_until_settled()
    settings = screen_as_frame(device, first.size)
    wait_for(lambda: difference(source.latest(), settings) < 6)  # type: ignore[arg-type]
    latest = source.latest()
    assert latest is not None and latest.index > first.index
    assert np.array_equal(first.array, pixels), "a later frame overwrote an earlier one"
    assert source.fps() > 0
    assert source.error is None


def test_scrcpy_uses_the_server_jar_mysc_core_ships(device, sources):
    from mysc_core.connection import Connection

    source = ScrcpyFrameSource(device)
    source.start()
    sources.append(source)
    pushed = [
        e.path
        for e in device.adb.sync.list("/data/local/tmp")
        if e.path.startswith("scrcpy-server_")
    ]
    assert len(pushed) == 1
    shipped = Connection.PATH_LOCAL_SCRCPY_SERVER_JAR.read_bytes()
    assert device.adb.sync.read_bytes(f"/data/local/tmp/{pushed[0]}") == shipped


def test_stopping_scrcpy_ends_the_stream(device, sources):
    source = open_frame_source(device)
    wait_for(source.latest)
    reader = source._thread
    assert reader is not None and reader.is_alive()
    started = time.monotonic()
    source.stop()
    assert time.monotonic() - started < 3
    # The thread that decodes and publishes frames has ended, so no frame can follow.
    assert not reader.is_alive()
    assert source.error is None


def test_failing_scrcpy_server_falls_back_to_screencap_with_its_reason(
    virtual_server, device, sources
):
    def crashing_server(inv):
        inv.error("Aborted: the display is secure\n")
        return 1

    virtual_server.device(SERIAL).commands["app_process"] = crashing_server
    started = time.monotonic()
    source = open_frame_source(device, max_size=1200, max_fps=10)
    sources.append(source)
    assert time.monotonic() - started < 3
    assert source.name == "screencap"
    assert source.fallback_reason is not None
    assert "the display is secure" in source.fallback_reason
    wait_for(source.latest)
    frame = source.latest()
    assert frame is not None
    assert_well_formed(frame)
    assert frame.size == (540, 1200)
    assert difference(frame, screen_as_frame(device, frame.size)) < 1
    wait_for(lambda: source.fps() > 1, timeout=3)


def test_wrong_server_version_is_reported(device):
    source = ScrcpyFrameSource(device, server_version="9.9.9")
    with pytest.raises(MirrorError, match=r"does not match the client \(9.9.9\)"):
        source.start()
    assert source.latest() is None


def test_a_server_that_never_listens_times_out_with_the_reason(virtual_server, device):
    def silent_server(inv):
        inv.write("[server] INFO: waiting for nothing\n")
        inv.streams.flush()
        inv.cancelled.wait(10)
        return 0

    virtual_server.device(SERIAL).commands["app_process"] = silent_server
    source = ScrcpyFrameSource(device, start_timeout=0.5)
    started = time.monotonic()
    with pytest.raises(MirrorError, match="did not accept a connection.*waiting for nothing"):
        source.start()
    assert time.monotonic() - started < 3


def test_a_dying_server_stops_the_mirror_with_an_error(virtual_server, device, sources):
    source = open_frame_source(device)
    sources.append(source)
    wait_for(source.latest)
    last = source.latest()
    virtual_server.close()
    wait_for(lambda: source.error is not None, timeout=5)
    assert "ended" in (source.error or "")
    assert source.latest() is not None and source.latest().index >= last.index  # type: ignore[union-attr]


def test_screencap_source_reports_a_lost_device(virtual_server, device, sources):
    source = ScreencapFrameSource(device, max_fps=20)
    source.start()
    sources.append(source)
    wait_for(source.latest)
    virtual_server.remove_phone(SERIAL)
    wait_for(lambda: source.error is not None, timeout=8)
    assert "screen capture stopped" in (source.error or "")


def test_prefer_screencap_and_unknown_sources(device, sources):
    source = open_frame_source(device, prefer="screencap", max_size=600)
    sources.append(source)
    assert (source.name, source.fallback_reason) == ("screencap", None)
    wait_for(source.latest)
    assert source.latest().size == (270, 600)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="unknown frame source"):
        open_frame_source(device, prefer="vnc")


def test_screencap_polling_idles_on_a_still_screen_and_wakes_on_a_change():
    still = io.BytesIO()
    Image.new("RGB", (60, 120), "white").save(still, format="PNG")
    changed = io.BytesIO()
    Image.new("RGB", (60, 120), "black").save(changed, format="PNG")
    shown = [still.getvalue()]
    calls: list[float] = []

    class StillPhone:
        def screenshot(self) -> bytes:
            calls.append(time.monotonic())
            return shown[0]

    from devices.mirror import ScreencapFrameSource

    source = ScreencapFrameSource(StillPhone(), max_fps=30)  # type: ignore[arg-type]
    source.start()
    try:
        time.sleep(1.5)
        polls, frame = len(calls), source.latest()
        assert frame is not None and frame.index == 0  # one frame decoded and shown, no more
        assert polls < 15  # at 30 fps it would have polled about 45 times
        shown[0] = changed.getvalue()
        deadline = time.monotonic() + 2
        while (source.latest() or frame).index == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert source.latest() is not None and source.latest().index == 1
    finally:
        source.stop()
