"""How fast the virtual phone mirrors: scrcpy frames through mysc-core, and screencap polling.

    .venv/bin/python benchmarks/bench_mirror.py [--seconds 5] [--max-size 1200] [--max-fps 30]

Starts the virtual ADB server with one 1080x2400 phone showing the Settings list, and a
"finger" that drags the list up and down through scrcpy-like touch events at 60 Hz, so the
screen changes all the time. Then:

1. mysc-core's unmodified VideoAdapter connects (scrcpy-server 3.3.4 impersonation, H.264
   at max_size) and counts the frames it receives and decodes, per one-second window.
   Target: a median of at least 25 fps at max_size 1200.
2. adbutils polls `screenshot()` (`screencap -p`, PNG) and times each call.

Prints medians, and the process CPU time per mirrored frame: on a shared machine the fps
follow the load, the CPU cost does not.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import adbutils  # noqa: E402
from finger import drag_forever  # noqa: E402  (this folder is on the path when a benchmark runs)

from virtual_phone import (  # noqa: E402
    FROZEN_CLOCK,
    VirtualPhone,
    running_server,
)


def bench_scrcpy(device: adbutils.AdbDevice, seconds: float, max_size: int, max_fps: int) -> None:
    from mysc_core.video import VideoAdapter, VideoKwargs

    stamps: list[float] = []
    sizes: set[tuple[int, int]] = set()

    def on_frame(number: int, frame: object) -> None:
        stamps.append(time.monotonic())
        sizes.add((frame.width, frame.height))  # type: ignore[attr-defined]

    adapter = VideoAdapter(
        VideoKwargs(max_size=max_size, max_fps=max_fps), frame_update_callback=on_frame
    ).connect(device)
    time.sleep(0.5)  # let the stream start
    start = time.monotonic()
    cpu_start = time.process_time()
    time.sleep(seconds)
    cpu = time.process_time() - cpu_start
    adapter.disconnect()
    windows = [
        sum(start + i <= stamp < start + i + 1 for stamp in stamps) for i in range(int(seconds))
    ]
    frames = sum(windows)
    print(
        f"scrcpy via mysc-core, max_size {max_size}, max_fps {max_fps}, frames {sorted(sizes)}: "
        f"median {statistics.median(windows)} fps (per-second counts {windows})"
    )
    # CPU per frame does not depend on what else the machine runs: it bounds the rate.
    print(
        f"  process CPU per frame (phone, server, encoder, client decoder): "
        f"{cpu / max(frames, 1) * 1000:.0f} ms"
    )


def bench_screencap(device: adbutils.AdbDevice, seconds: float) -> None:
    durations: list[float] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        began = time.monotonic()
        device.screenshot(error_ok=False)
        durations.append(time.monotonic() - began)
    median = statistics.median(durations)
    print(
        f"screencap polling via adbutils: median {median * 1000:.1f} ms per screenshot "
        f"= {1 / median:.1f} fps ({len(durations)} screenshots)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--max-size", type=int, default=1200)
    parser.add_argument("--max-fps", type=int, default=30)
    args = parser.parse_args()

    phone = VirtualPhone("virtual-1", settle_ms=(0, 0), frozen_clock=FROZEN_CLOCK)
    phone.start("com.android.settings")
    stop = threading.Event()
    finger = threading.Thread(target=drag_forever, args=(phone, stop), daemon=True)
    with running_server(phones=[phone]) as server:
        device = adbutils.AdbClient(host="127.0.0.1", port=server.port).device("virtual-1")
        finger.start()
        try:
            bench_scrcpy(device, args.seconds, args.max_size, args.max_fps)
            bench_screencap(device, args.seconds)
        finally:
            stop.set()
            finger.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
