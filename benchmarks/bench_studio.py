"""Benchmark: the studio window recording on the virtual phone (offscreen Qt).

1. Click to ready: the time from the user's click (mouse release on the mirror) until the
   recorder accepts the next input, i.e. the tap performed, the screen settled and the next
   observation captured (screenshot, hierarchy, activity, perceptual hash). The clicks
   alternate between "Display" on the Settings page and "Navigate up" on the Display page,
   so every click changes the screen. A pause (``--think-ms``) before each click stands for
   the person looking at the screen; the perceptual hash is computed during it.
2. Mirror fps in the window: frames the MirrorView actually received per second, for the
   screencap fallback and for scrcpy, while a finger drags the Settings list at 60 Hz, so
   the screen changes faster than the mirror's max_fps (30, the studio's default).

    .venv/bin/python benchmarks/bench_studio.py [--steps 20] [--settle-ms LOW HIGH]

``--settle-ms 100 300`` gives the phone Android-like transition delays, as
``elderbench studio --virtual-phone`` does. Prints medians.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")  # never start a real adb server

from finger import FINGER_HZ, drag_forever  # noqa: E402  (this folder is on the path)
from PySide6.QtCore import QSettings, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from recorder_app.connection import DeviceConnection  # noqa: E402
from recorder_app.qt.app import create_application  # noqa: E402
from recorder_app.qt.main_window import StudioMainWindow  # noqa: E402
from virtual_phone import fast_phone, running_server  # noqa: E402

WARMUP_STEPS = 2  # the first visit of each screen renders it cold
FPS_SECONDS = 3.0
TIMEOUT_S = 30.0


def pump(app, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.002)


def wait_for(app, condition, what: str) -> None:
    end = time.perf_counter() + TIMEOUT_S
    while not condition():
        if time.perf_counter() > end:
            raise SystemExit(f"timed out waiting for {what}")
        app.processEvents()
        time.sleep(0.001)


def open_window(app, port: int, prefer: str, workspace: Path) -> StudioMainWindow:
    settings = QSettings(str(workspace / "studio.ini"), QSettings.Format.IniFormat)
    window = StudioMainWindow(
        settings, DeviceConnection(port=port, mirror_prefer=prefer), poll_ms=1000
    )
    window.resize(1400, 900)
    window.show()
    window.open_workspace(workspace / "ws")
    window.record_page.start()
    page = window.record_page
    wait_for(app, lambda: page.device_bar.connected_serial is not None, "the phone")
    wait_for(app, lambda: page.mirror.device_size is not None, "the first frame")
    return window


def click_to_ready(app, window: StudioMainWindow, steps: int, think_ms: int) -> list[float]:
    page = window.record_page
    panel = page.task_panel
    panel.id_edit.setText("bench")
    panel.instruction_edit.setPlainText("open display settings and come back")
    panel.app_edit.setText("com.android.settings")
    page.start_demo()
    wait_for(app, lambda: page.recorder.ready, "the first capture")
    times: list[float] = []
    for i in range(steps + WARMUP_STEPS):
        pump(app, think_ms / 1000)  # a person looks before clicking
        screen = page.recorder.screen
        assert screen is not None and screen.hierarchy is not None
        texts = screen.hierarchy.texts()
        wanted = "Display" if "Network & internet" in texts else "Navigate up"
        element = next(e for e in screen.hierarchy.visible() if e.label() == wanted)
        pos = page.mirror.widget_point(*element.bounds.center).toPoint()
        QTest.mousePress(page.mirror, Qt.MouseButton.LeftButton, pos=pos)
        clicked = time.perf_counter()
        QTest.mouseRelease(page.mirror, Qt.MouseButton.LeftButton, pos=pos)
        wait_for(app, lambda: page.recorder.ready, f"step {i}")
        if i >= WARMUP_STEPS:
            times.append((time.perf_counter() - clicked) * 1000)
    page.recorder.complete()
    wait_for(app, lambda: page.recorder.state == "finished", "the end of the demo")
    return times


def mirror_fps(app, window: StudioMainWindow, phone) -> tuple[float, float]:
    """(frames the view received per second, the source's own fps), screen changing."""
    view = window.record_page.mirror
    received = 0
    original = view.set_frame

    def counting(array, device_size):
        nonlocal received
        received += 1
        original(array, device_size)

    view.set_frame = counting  # type: ignore[method-assign]
    phone.start("com.android.settings")  # the list the finger drags
    stop = threading.Event()
    worker = threading.Thread(target=drag_forever, args=(phone, stop), daemon=True)
    worker.start()
    pump(app, 1.0)
    received = 0
    started = time.perf_counter()
    pump(app, FPS_SECONDS)
    window_fps = received / (time.perf_counter() - started)
    source = window.record_page.feed.source
    source_fps = source.fps() if source is not None else 0.0
    stop.set()
    worker.join()
    view.set_frame = original  # type: ignore[method-assign]
    return window_fps, source_fps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument(
        "--think-ms", type=int, default=300, help="pause before each click (default 300)"
    )
    parser.add_argument("--settle-ms", type=int, nargs=2, default=(0, 0), metavar=("LOW", "HIGH"))
    args = parser.parse_args()
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    print("# Studio benchmark (virtual phone, offscreen window)")
    print(f"command:  {shlex.join([sys.executable, *sys.argv])}")
    print(f"machine:  {platform.platform()}, {os.cpu_count()} CPUs, load average {load}")
    print(f"phone:    1080x2400, settle_ms={tuple(args.settle_ms)}, frozen clock")
    print()
    app = create_application()
    rows = []
    for prefer in ("screencap", "scrcpy"):
        phone = fast_phone("virtual-1", settle_ms=tuple(args.settle_ms))
        with running_server(phones=[phone]) as server, tempfile.TemporaryDirectory() as tmp:
            window = open_window(app, server.port, prefer, Path(tmp))
            try:
                times = click_to_ready(app, window, args.steps, args.think_ms)
                window_fps, source_fps = mirror_fps(app, window, phone)
            finally:
                window.close()
                pump(app, 0.2)
        rows.append((prefer, times, window_fps, source_fps))
    print(
        f"## Click to next input accepted ({args.steps} clicks, {args.think_ms} ms pause "
        "before each)"
    )
    print("| mirror | median | p90 | min | max |")
    print("|---|---|---|---|---|")
    for prefer, times, _, _ in rows:
        p90 = statistics.quantiles(times, n=10)[-1]
        print(
            f"| {prefer} | {statistics.median(times):.0f} ms | {p90:.0f} ms "
            f"| {min(times):.0f} ms | {max(times):.0f} ms |"
        )
    print()
    print(f"## Mirror in the window (list dragged at {FINGER_HZ} Hz, max_fps 30)")
    print("| frame source | frames shown per s | source fps |")
    print("|---|---|---|")
    for prefer, _, window_fps, source_fps in rows:
        print(f"| {prefer} | {window_fps:.1f} | {source_fps:.1f} |")


if __name__ == "__main__":
    main()
