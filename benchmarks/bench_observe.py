"""Benchmark: observe (screenshot, hierarchy, activity) with each hierarchy tool on the
virtual phone, through the real adbutils client.

Both tools read the same phone and the same screens: each round taps to the next page
(Settings and its Display page in turn, untimed), lets it settle and observes it once
untimed (the phone renders and encodes a new screen once, whoever asks first), then
observes it REPEATS times with each tool, interleaved, so load on the machine falls on
both alike. The u2 tool's server is started (and its jar pushed) before the timed rounds;
that one-time cost is printed apart.

    .venv/bin/python benchmarks/bench_observe.py [--rounds 40]

Prints the median observe and the median hierarchy dump (``dump_hierarchy``, with its own
activity query) of each tool, and the median of the paired ratios u2/uiautomator (each
pair measured back to back, so the machine's load cancels). The requirement is that u2 is
not slower than uiautomator here (exit status 1 if its paired observe ratio exceeds 1).
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import adbutils  # noqa: E402

from devices.android import AndroidDevice, adb_client  # noqa: E402
from graph_builder.model import Action, ResetRecipe  # noqa: E402
from virtual_phone import fast_phone, running_server  # noqa: E402

TOOLS = ("uiautomator", "u2")
WARMUP_ROUNDS = 2  # the first visit of each screen renders it cold
REPEATS = 3


def header(args: argparse.Namespace) -> None:
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    print("# Observe benchmark: uiautomator dump versus the uiautomator2 server (virtual phone)")
    print(f"command:  {shlex.join([sys.executable, *sys.argv])}")
    print(
        f"machine:  {platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {load}"
    )
    print(f"python:   {platform.python_version()}, adbutils {adbutils.__version__}")
    print(
        f"phone:    1080x2400, frozen clock; {args.rounds} rounds of {REPEATS} after "
        f"{WARMUP_ROUNDS} warm-up"
    )
    print()


def next_page(device: AndroidDevice) -> None:
    """Tap "Display" on the Settings page, "Navigate up" on the Display page."""
    hierarchy = device.observe().hierarchy()
    assert hierarchy is not None, "the virtual phone always returns a hierarchy"
    texts = hierarchy.texts()
    query = (
        {"text": "Display"} if "Network & internet" in texts else {"content_desc": "Navigate up"}
    )
    element = hierarchy.find(**query)[0]
    device.perform(Action.tap(*element.bounds.center, screen=device.screen_size()))
    device.wait_until_settled(timeout=3.0)


def timed(call: object) -> float:
    started = time.perf_counter()
    call()  # type: ignore[operator]
    return (time.perf_counter() - started) * 1000


def run(rounds: int) -> tuple[dict[str, dict[str, list[float]]], float]:
    times: dict[str, dict[str, list[float]]] = {t: {"observe": [], "dump": []} for t in TOOLS}
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        devices = {
            tool: AndroidDevice("virtual-1", client=adb_client(port=server.port), hierarchy=tool)
            for tool in TOOLS
        }
        # A third device moves between pages, so that neither tool reuses its settle shot.
        driver = AndroidDevice("virtual-1", client=adb_client(port=server.port))
        driver.reset_app(ResetRecipe("com.android.settings"))
        driver.wait_until_settled()
        start_up = timed(devices["u2"].dump_hierarchy)  # push the jar, start the server
        for index in range(WARMUP_ROUNDS + rounds):
            next_page(driver)
            driver.observe()
            for repeat in range(REPEATS):
                order = TOOLS if (index + repeat) % 2 else TOOLS[::-1]
                for kind in ("observe", "dump"):
                    for tool in order:  # a pair, back to back
                        device = devices[tool]
                        took = timed(device.observe if kind == "observe" else device.dump_hierarchy)
                        if index >= WARMUP_ROUNDS:
                            times[tool][kind].append(took)
        for device in devices.values():
            device.close()
    return times, start_up


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")  # never start a real adb server
    header(args)
    times, start_up = run(args.rounds)
    print(f"u2 server start (jar push included), once per phone: {start_up:.1f} ms")
    print()
    print("| tool | median observe (ms) | median hierarchy dump (ms) |")
    print("|---|---|---|")
    for tool in TOOLS:
        observe = statistics.median(times[tool]["observe"])
        dump = statistics.median(times[tool]["dump"])
        print(f"| {tool} | {observe:.2f} | {dump:.2f} |")
    print()
    # Each u2 time over the uiautomator time taken next to it: the machine's load, which
    # moves both, cancels out of the ratio.
    ratios = {}
    for kind in ("observe", "dump"):
        pairs = zip(times["u2"][kind], times["uiautomator"][kind], strict=True)
        ratios[kind] = statistics.median(u2 / dump for u2, dump in pairs)
        print(f"u2 / uiautomator, median of paired ratios, {kind}: {ratios[kind]:.2f}")
    verdict = "not slower" if ratios["observe"] <= 1.0 else "SLOWER"
    print(f"u2 observe: {verdict}")
    return 0 if ratios["observe"] <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
