"""Benchmark: one recording step against the virtual phone, through the real adbutils client.

A step is what the recorder does for each user action: observe the screen (screenshot,
hierarchy and activity, with the consistency check), find the tapped element in the parsed
hierarchy, perform the tap, and wait until the screen settles. The steps alternate between
Settings and its Display page, so every step changes the screen.

    .venv/bin/python benchmarks/bench_recording_step.py [--steps 30] [--settle-ms LOW HIGH]

Prints per-phase medians; the targets are a median step of at most 250 ms and a median
observe of at most 150 ms. Then it measures the frame rate of the screencap fallback (and
of scrcpy, for comparison) on a still and on a changing screen.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import adbutils  # noqa: E402

from devices.android import AndroidDevice, adb_client  # noqa: E402
from devices.mirror import FrameSource, ScrcpyFrameSource, ScreencapFrameSource  # noqa: E402
from graph_builder.model import Action, ResetRecipe  # noqa: E402
from virtual_phone import fast_phone, running_server  # noqa: E402

TARGET_TOTAL_MS = 250
TARGET_OBSERVE_MS = 150
WARMUP_STEPS = 2  # the first visit of each screen renders it cold
FPS_SECONDS = 3.0


def header(args: argparse.Namespace) -> None:
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    print("# Recording step benchmark (virtual phone, adbutils)")
    print(f"command:  {shlex.join([sys.executable, *sys.argv])}")
    print(
        f"machine:  {platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {load}"
    )
    print(f"python:   {platform.python_version()}, adbutils {adbutils.__version__}")
    print(
        f"phone:    1080x2400, settle_ms={tuple(args.settle_ms)}, frozen clock; "
        f"{args.steps} steps after {WARMUP_STEPS} warm-up steps"
    )
    print()


def step_target(device: AndroidDevice, screen_text: list[str]) -> dict[str, str]:
    """Tap "Display" on the Settings page, "Navigate up" on the Display page."""
    return (
        {"text": "Display"}
        if "Network & internet" in screen_text
        else {"content_desc": "Navigate up"}
    )


def run_steps(device: AndroidDevice, count: int) -> dict[str, list[float]]:
    phases: dict[str, list[float]] = {
        "observe": [],
        "find": [],
        "tap": [],
        "settle": [],
        "total": [],
    }
    device.reset_app(ResetRecipe("com.android.settings"))
    device.wait_until_settled()
    for index in range(WARMUP_STEPS + count):
        t0 = time.perf_counter()
        capture = device.observe()
        t1 = time.perf_counter()
        hierarchy = capture.hierarchy()
        assert hierarchy is not None, "the virtual phone always returns a hierarchy"
        element = hierarchy.find(**step_target(device, hierarchy.texts()))[0]
        action = Action.tap(*element.bounds.center, screen=capture.size, element=element.ref())
        t2 = time.perf_counter()
        device.perform(action)
        t3 = time.perf_counter()
        settled = device.wait_until_settled(timeout=3.0)
        t4 = time.perf_counter()
        if not settled:
            print(f"warning: step {index} did not settle within 3 s")
        if index >= WARMUP_STEPS:
            for name, seconds in (
                ("observe", t1 - t0),
                ("find", t2 - t1),
                ("tap", t3 - t2),
                ("settle", t4 - t3),
                ("total", t4 - t0),
            ):
                phases[name].append(seconds * 1000)
    return phases


def run_cold_observes(device: AndroidDevice, count: int) -> list[float]:
    """observe() right after the screen changed, without a settle before it: it pays for
    the phone rendering and PNG-encoding the new screen, and takes all its own captures."""
    times = []
    for _ in range(count):
        capture = device.observe()
        hierarchy = capture.hierarchy()
        assert hierarchy is not None, "the virtual phone always returns a hierarchy"
        element = hierarchy.find(**step_target(device, hierarchy.texts()))[0]
        device.perform(Action.tap(*element.bounds.center, screen=capture.size))
        started = time.perf_counter()
        device.observe()
        times.append((time.perf_counter() - started) * 1000)
    return times


def report_steps(phases: dict[str, list[float]]) -> None:
    print("| phase | median ms | p90 ms | min ms |")
    print("|---|---|---|---|")
    for name, values in phases.items():
        ordered = sorted(values)
        p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
        print(f"| {name} | {statistics.median(values):.1f} | {p90:.1f} | {ordered[0]:.1f} |")
    total = statistics.median(phases["total"])
    observe = statistics.median(phases["observe"])
    print()
    print(
        "observe reuses the screenshot that ended the settle; observe (cold) runs right "
        "after a tap, with no settle, so it also waits for the new screen's first render."
    )
    print(
        f"median step:    {total:.1f} ms (target <= {TARGET_TOTAL_MS} ms: "
        f"{'met' if total <= TARGET_TOTAL_MS else 'MISSED'})"
    )
    cold = statistics.median(phases["observe (cold)"])
    for label, value in (("median observe:", observe), ("... when cold:", cold)):
        print(
            f"{label:15} {value:.1f} ms (target <= {TARGET_OBSERVE_MS} ms: "
            f"{'met' if value <= TARGET_OBSERVE_MS else 'MISSED'})"
        )
    print()


def measure_fps(source: FrameSource, device: AndroidDevice, changing: bool) -> float:
    stop = threading.Event()

    def keep_changing() -> None:
        # Toggle between two screens with key events, as fast as the phone settles.
        while not stop.is_set():
            device.shell("input keyevent 3")
            stop.wait(0.15)
            device.shell("monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
            stop.wait(0.15)

    worker = threading.Thread(target=keep_changing, daemon=True) if changing else None
    if worker:
        worker.start()
    time.sleep(FPS_SECONDS - 1.0)
    fps = source.fps()  # over the last ~2 s
    stop.set()
    if worker:
        worker.join()
    return fps


def report_fps(device: AndroidDevice) -> None:
    print("| frame source | still screen fps | changing screen fps |")
    print("|---|---|---|")
    for kind in (ScreencapFrameSource, ScrcpyFrameSource):
        results = []
        for changing in (False, True):
            source = kind(device, max_size=1200, max_fps=30)
            source.start()
            try:
                time.sleep(1.0)
                results.append(measure_fps(source, device, changing))
            finally:
                source.stop()
        print(f"| {kind.name} (max_size 1200, max_fps 30) | {results[0]:.1f} | {results[1]:.1f} |")
    print()
    print(
        "scrcpy repeats a still frame every 0.5 s (2 fps) and sends new frames as the "
        "screen changes."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--settle-ms", type=int, nargs=2, default=(0, 0), metavar=("LOW", "HIGH"))
    parser.add_argument("--no-fps", action="store_true", help="skip the frame-rate part")
    args = parser.parse_args()
    os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")  # never start a real adb server
    header(args)
    phone = fast_phone("virtual-1", settle_ms=tuple(args.settle_ms))
    with running_server(phones=[phone]) as server:
        device = AndroidDevice("virtual-1", client=adb_client(port=server.port))
        phases = run_steps(device, args.steps)
        phases["observe (cold)"] = run_cold_observes(device, args.steps)
        report_steps(phases)
        if not args.no_fps:
            report_fps(device)


if __name__ == "__main__":
    main()
