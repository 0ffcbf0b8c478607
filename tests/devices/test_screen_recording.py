"""devices.screen_recording against the virtual phone through the real AndroidDevice:
start, stop, pull and clean up, and warnings instead of errors when it cannot record."""

from __future__ import annotations

import logging
import time

import av
import pytest

from devices.android import AndroidDevice, adb_client
from devices.fake import FakeDevice
from devices.screen_recording import ScreenRecording, recording
from graph_builder.screen import Screen
from virtual_phone import AdbServer


def fake_phone() -> FakeDevice:
    home = Screen((100, 200), png=b"home", activity="launcher/.Home")
    return FakeDevice({"home": home}, "home", lambda at, action: "home")


@pytest.fixture
def device(virtual_server: AdbServer):
    phone = AndroidDevice("virtual-1", client=adb_client(port=virtual_server.port), timeout=5.0)
    yield phone
    phone.close()


def test_a_recording_is_stopped_pulled_and_removed(device, virtual_server, tmp_path):
    out = tmp_path / "screen.mp4"
    with recording(device, out, time_limit=30) as running:
        assert isinstance(running, ScreenRecording)
        assert device.shell("pidof screenrecord").strip() == str(running.pid)
        device.shell("am start -n com.android.settings/.Settings")
        time.sleep(0.3)
    took = time.monotonic() - running.started
    assert took < 10  # interrupted, not run until its 30 s limit
    with av.open(str(out)) as container:
        frames = list(container.decode(video=0))
    assert len(frames) >= 2
    assert not virtual_server.device("virtual-1").fs.exists(running.remote)
    assert not out.with_name("screen.mp4.part").exists()


def test_a_recording_ends_by_itself_at_its_time_limit(device, tmp_path):
    out = tmp_path / "short.mp4"
    with recording(device, out, time_limit=1):
        time.sleep(2.0)  # longer than the limit: screenrecord stopped on its own
    with av.open(str(out)) as container:
        frames = list(container.decode(video=0))
    assert frames and frames[-1].time <= 1.5


def test_no_recording_is_a_warning_not_an_error(tmp_path, caplog):
    with caplog.at_level(logging.WARNING), recording(fake_phone(), tmp_path / "x.mp4") as running:
        assert running is None
    assert "has no adb connection to record on" in caplog.text
    assert not (tmp_path / "x.mp4").exists()
    with pytest.raises(ValueError, match="1 to 180"):
        ScreenRecording(None, time_limit=500)  # type: ignore[arg-type]
