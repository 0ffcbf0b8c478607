"""How fast graph building is: a workspace of synthetic 1080x2400 demonstrations.

    .venv/bin/python benchmarks/bench_build.py [--tasks 100] [--demos 5] [--steps 10]

Synthesizes (once, cached under the system temp folder) TASKS tasks x DEMOS demonstrations
x STEPS steps with PNG screenshots, uiautomator XML and the perceptual hash stored, as the
recorder leaves them. Then it times `build_workspace` into a fresh suite (medians of
--repeat runs), the time per task as the number of demonstrations per task grows, and the
time as the number of tasks grows (which must be linear: tasks never meet each other).
Target: the whole 100 x 5 x 10 workspace in under 10 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from PIL import Image, ImageDraw

from graph_builder.build import build_workspace, default_jobs, load_demo_inputs
from graph_builder.hierarchy import parse_hierarchy
from graph_builder.io import save_demo
from graph_builder.merge import merge_demonstrations
from graph_builder.model import (
    Action,
    Demonstration,
    DemoStatus,
    Observation,
    Step,
)
from graph_builder.phash import compute_phash
from graph_builder.similarity import SimilaritySettings

W, H = 1080, 2400
PKG = "com.bench.app"
ROWS = 8


def _screen(task: int, screen: int, clock: str) -> tuple[bytes, str, str]:
    """PNG bytes, hierarchy XML and phash of one synthetic screen."""
    rng = random.Random(task * 1000 + screen)
    title = f"Screen {task}-{screen}"
    labels = [f"Item {rng.randint(0, 99999)}" for _ in range(ROWS)]
    image = Image.new("RGB", (W, H), (248, 248, 248))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, W, 80), fill=(30, 30, 30))
    draw.rectangle((0, 80, W, 260), fill=(rng.randrange(256), rng.randrange(256), 160))
    draw.text((40, 140), title, fill="white")
    nodes = []
    for i, label in enumerate(labels):
        top = 300 + i * 220
        shade = (rng.randrange(120, 256), rng.randrange(120, 256), rng.randrange(120, 256))
        draw.rectangle((30, top, W - 30, top + 190), fill=shade)
        draw.text((70, top + 80), label, fill="black")
        nodes.append(
            f'<node class="android.widget.LinearLayout" package="{PKG}" resource-id="{PKG}:id/row"'
            f' clickable="true" bounds="[30,{top}][{W - 30},{top + 190}]">'
            f'<node class="android.widget.ImageView" package="{PKG}" resource-id="{PKG}:id/icon"'
            f' bounds="[50,{top + 20}][200,{top + 170}]"/>'
            f'<node class="android.widget.TextView" package="{PKG}" resource-id="{PKG}:id/label"'
            f' text="{label}" bounds="[220,{top + 40}][{W - 60},{top + 150}]"/></node>'
        )
    xml = (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        f'<node class="android.widget.FrameLayout" package="{PKG}" bounds="[0,0][{W},{H}]">'
        f'<node class="android.widget.TextView" package="{PKG}" resource-id="{PKG}:id/title"'
        f' text="{title}" bounds="[0,80][{W},260]"/>'
        f'<node class="android.widget.ListView" package="{PKG}" resource-id="{PKG}:id/list"'
        f' scrollable="true" bounds="[0,260][{W},{H - 140}]">{"".join(nodes)}</node></node>'
        '<node class="android.widget.FrameLayout" package="com.android.systemui"'
        f' resource-id="com.android.systemui:id/status_bar" bounds="[0,0][{W},80]">'
        '<node class="android.widget.TextView" package="com.android.systemui"'
        f' resource-id="com.android.systemui:id/clock" text="{clock}" bounds="[0,0][200,80]"/>'
        "</node></hierarchy>"
    )
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue(), xml, compute_phash(image, parse_hierarchy(xml))


def synthesize(root: Path, tasks: int, demos: int, steps: int) -> None:
    """Each task has steps+2 screens; every demo walks its own random path over them."""
    for t in range(tasks):
        screens = [_screen(t, s, "09:00") for s in range(steps + 2)]
        rng = random.Random(t)
        for d in range(demos):
            folder = root / f"task{t:03d}" / f"demo{d:02d}"
            (folder / "steps").mkdir(parents=True, exist_ok=True)
            middle = [rng.randrange(1, len(screens) - 1) for _ in range(steps - 2)]
            path = [0, *middle, len(screens) - 1]
            out = []
            for i, s in enumerate(path):
                png, xml, phash = screens[s]
                clock = f"09:{(d * steps + i) % 60:02d}"  # the clock runs between steps
                (folder / f"steps/{i:04d}.png").write_bytes(png)
                (folder / f"steps/{i:04d}.xml").write_text(xml.replace(">09:00<", f">{clock}<"))
                action = (
                    Action.done()
                    if i == len(path) - 1
                    else Action.tap(540, 300 + (path[i + 1] % ROWS) * 220 + 95, screen=(W, H))
                )
                obs = Observation(
                    f"steps/{i:04d}.png",
                    (W, H),
                    f"steps/{i:04d}.xml",
                    f"{PKG}/.Main",
                    float(i),
                    phash,
                )
                out.append(Step(i, obs, action))
            save_demo(
                Demonstration(
                    f"demo{d:02d}",
                    f"task{t:03d}",
                    "Bench task",
                    tuple(out),
                    status=DemoStatus.COMPLETE,
                ),
                folder,
            )


def workspace(tasks: int, demos: int, steps: int) -> Path:
    root = Path(tempfile.gettempdir()) / f"elderbench-bench-{tasks}x{demos}x{steps}"
    marker = root / ".complete"
    if not marker.exists():
        shutil.rmtree(root, ignore_errors=True)
        started = time.perf_counter()
        synthesize(root, tasks, demos, steps)
        marker.write_text("ok")
        print(f"synthesized {root} in {time.perf_counter() - started:.1f} s")
    return root


def _cpu_seconds() -> float:
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_build(demos_root: Path, jobs: int, tasks: list[str] | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (all processes) of one build into a fresh suite."""
    with tempfile.TemporaryDirectory() as suite:
        cpu = _cpu_seconds()
        started = time.perf_counter()
        reports = build_workspace(
            demos_root, Path(suite), settings=SimilaritySettings(), tasks=tasks, jobs=jobs
        )
        elapsed = time.perf_counter() - started
        cpu = _cpu_seconds() - cpu
    assert all(r.written for r in reports), [r.summary() for r in reports if not r.written]
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--demos", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=default_jobs())
    args = parser.parse_args()

    root = workspace(args.tasks, args.demos, args.steps)
    print(
        f"load average before: {os.getloadavg()[0]:.1f} (other work on the machine slows wall time)"
    )
    for jobs in sorted({1, args.jobs}):
        runs = [timed_build(root, jobs) for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(
            f"build {args.tasks} tasks x {args.demos} demos x {args.steps} steps, "
            f"{jobs} worker(s): median {wall:.2f} s wall, {cpu:.2f} s CPU "
            f"(walls: {', '.join(f'{r[0]:.2f}' for r in runs)})"
        )

    ids = sorted(p.name for p in root.iterdir() if p.is_dir())
    print(f"time as the number of tasks grows ({args.jobs} workers, median):")
    for n in (len(ids) // 4, len(ids) // 2, len(ids)):
        runs = [timed_build(root, args.jobs, ids[:n]) for _ in range(args.repeat)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(
            f"  {n:4d} tasks: {wall:.2f} s wall, {cpu:.2f} s CPU = "
            f"{1000 * cpu / n:.1f} ms CPU per task"
        )

    growth_root = workspace(10, 40, args.steps)
    settings = SimilaritySettings()
    print("merge CPU time per task as demonstrations per task grow (10 tasks, median):")
    for k in (2, 5, 10, 20, 40):
        per_task = []
        for task in sorted(p.name for p in growth_root.iterdir() if p.is_dir()):
            inputs, _ = load_demo_inputs(growth_root, task)
            started = time.process_time()
            merge_demonstrations(inputs[:k], settings=settings)
            per_task.append(time.process_time() - started)
        median = statistics.median(per_task)
        print(
            f"  {k:3d} demos: {1000 * median:7.1f} ms per task, "
            f"{1000 * median / k:5.2f} ms per demo"
        )


if __name__ == "__main__":
    main()
