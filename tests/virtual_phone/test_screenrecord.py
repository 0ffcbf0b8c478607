"""`screenrecord` and background jobs through the unmodified adbutils client: a real H.264
MP4 of the screen in the phone's files, bounded in time, stopped by a signal."""

from __future__ import annotations

import io
import re
import shutil
import time
from pathlib import Path

import adbutils
import av
import numpy as np
import pytest
from PIL import Image

from virtual_phone import AdbServer


@pytest.fixture
def device(adb_client: adbutils.AdbClient) -> adbutils.AdbDevice:
    return adb_client.device("virtual-1")


def decode(data: bytes) -> tuple[str, list[av.VideoFrame]]:
    with av.open(io.BytesIO(data)) as container:
        codec = container.streams.video[0].codec_context.name
        return codec, list(container.decode(video=0))


def difference(frame: av.VideoFrame, image: Image.Image) -> float:
    shown = np.asarray(frame.to_image().convert("RGB"), dtype=np.int16)
    expected = np.asarray(image.convert("RGB").resize(frame.to_image().size), dtype=np.int16)
    return float(np.abs(shown - expected).mean())


def test_screenrecord_writes_a_playable_h264_mp4_bounded_by_its_time_limit(
    device: adbutils.AdbDevice, virtual_server: AdbServer
) -> None:
    phone = virtual_server.phones[0]
    started = time.monotonic()
    result = device.shell2(
        "screenrecord --time-limit 1 --size 540x1200 --bit-rate 4M /sdcard/clip.mp4", timeout=20
    )
    took = time.monotonic() - started
    assert result.returncode == 0, result.output
    assert 0.9 < took < 10
    data = device.sync.read_bytes("/sdcard/clip.mp4")
    assert data[4:8] == b"ftyp"
    codec, frames = decode(data)
    assert codec == "h264"
    assert (frames[0].width, frames[0].height) == (540, 1200)
    assert frames[0].format.name == "yuv420p"
    assert 0.8 < frames[-1].time <= 1.5  # the last picture lasts until the limit
    assert difference(frames[-1], phone.render()) < 6


def test_recording_follows_the_screen_and_stops_on_interrupt(
    device: adbutils.AdbDevice, virtual_server: AdbServer
) -> None:
    phone = virtual_server.phones[0]
    home = phone.render()
    pid = device.shell("screenrecord --size 360x800 /sdcard/run.mp4 >/dev/null & echo $!")
    assert pid.isdigit()
    assert device.shell("pidof screenrecord") == pid
    time.sleep(0.4)
    device.shell("am start -n com.android.settings/.Settings")
    time.sleep(0.4)
    assert device.shell(f"kill -INT {pid}; echo $?") == "0"
    deadline = time.monotonic() + 10
    while device.shell2("pidof screenrecord").returncode == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert device.shell2("pidof screenrecord").returncode == 1
    _, frames = decode(device.sync.read_bytes("/sdcard/run.mp4"))
    assert len(frames) >= 3
    assert difference(frames[0], home) < 6
    assert difference(frames[-1], phone.render()) < 6
    assert difference(frames[-1], home) > 10
    times = [frame.time for frame in frames]
    assert times == sorted(times) and 0.5 < times[-1] < 5


def test_adbutils_start_and_stop_recording(
    device: adbutils.AdbDevice, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("scrcpy"):
        monkeypatch.setenv("PATH", "/nonexistent")  # adbutils would prefer a scrcpy binary
    target = tmp_path / "out.mp4"
    device.start_recording(str(target))
    time.sleep(1.0)
    device.stop_recording()
    codec, frames = decode(target.read_bytes())
    assert codec == "h264" and frames
    assert (frames[0].width, frames[0].height) == (1080, 2400)


def test_screenrecord_refuses_what_android_refuses(device: adbutils.AdbDevice) -> None:
    cases = {
        "screenrecord --time-limit 500 /sdcard/x.mp4": "outside acceptable range [1,180]",
        "screenrecord --time-limit 0 /sdcard/x.mp4": "outside acceptable range",
        "screenrecord --size 12 /sdcard/x.mp4": "Invalid size '12'",
        "screenrecord --bit-rate fast /sdcard/x.mp4": "Invalid bit rate 'fast'",
        "screenrecord": "Must specify output file",
        "screenrecord --time-limit 1 /system/x.mp4": "Unable to open '/system/x.mp4'",
    }
    for command, message in cases.items():
        result = device.shell2(command, timeout=10)
        assert result.returncode != 0, command
        assert message in result.output, (command, result.output)
    assert device.shell2("which screenrecord").output == "/system/bin/screenrecord\n"


def test_raw_h264_to_stdout(device: adbutils.AdbDevice) -> None:
    stream = device.shell(
        "screenrecord --time-limit 1 --size 270x600 --output-format h264 -", stream=True
    )
    data = stream.read_until_close(encoding=None)
    assert data[:4] == b"\x00\x00\x00\x01"
    with av.open(io.BytesIO(data), format="h264") as container:
        frames = list(container.decode(video=0))
    assert frames and (frames[0].width, frames[0].height) == (270, 600)


def test_background_jobs_wait_and_signals(device: adbutils.AdbDevice) -> None:
    assert device.shell("sleep 30 & P=$!; kill -TERM $P; wait $P; echo $?") == "143"
    # kill -0 only asks whether the process is there.
    alive = "sleep 30 & P=$!; kill -0 $P; echo $?; kill -KILL $P; wait; kill -0 $P; echo $?"
    lines = device.shell2(alive).output.splitlines()
    assert lines[0] == "0" and lines[-1] == "1"
    assert re.fullmatch(r"kill: \d+: No such process", lines[1])
    assert device.shell("echo one & wait; echo two") == "one\ntwo"
    assert device.shell2("kill -INT 99999").output == "kill: 99999: No such process\n"
    assert device.shell2("pkill -INT nothing-runs").returncode == 1
    device.sync.push(b"echo $# $1 $2\nread LINE\necho got $LINE\n", "/data/local/tmp/s.sh")
    stream = device.shell(["sh", "/data/local/tmp/s.sh", "a", "b c"], stream=True)
    stream.send(b"hello\n")  # `read` takes the line at once; stdin stays open
    assert stream.read_until_close() == "2 a b c\ngot hello\n"
