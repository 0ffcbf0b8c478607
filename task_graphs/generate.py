"""Regenerate the sample suite from its recipes, on the virtual phone.

    python -m task_graphs.generate [--out task_graphs/sample] [--tasks ID ...] [--size WxH]
    python -m task_graphs.generate --check      # regenerate elsewhere and compare

For every path of every recipe (``task_graphs.sample_recipes``) a fresh virtual phone with
a frozen clock is started, the app is reset with the task's recipe, and the path is
recorded through the device layer (``devices.android.AndroidDevice``) by the studio's own
recording session (``recorder_app.recording.script.record_script``): screenshot,
hierarchy, activity and perceptual hash before every action, exactly what the studio's
recorder stores (the screenshots are then recompressed harder). Demo ids (d1, d2, ...),
times and the phone's own clock are fixed, so the output is the same byte for byte on
every run with the same libraries.

Offline tasks then get their graphs from the graph builder (``build_workspace``); a graph
must validate without errors, reach a DONE node from START, and keep every DONE node for
final screens only. Online tasks get their solution recorded as demo d1 (the replay agent
can repeat it online), and their rule criteria must fail on the first screen and pass on
the last. Offline tasks that also carry online criteria (so that both protocols can score
them) must pass the same check on every demonstration. The suite is written to a
temporary folder beside ``--out`` and swapped in only when everything passed.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

from PIL import Image

from devices.android import AndroidDevice, adb_client
from devices.clock import DeviceClock
from evaluator.judges import JudgeEvidence, RuleJudge
from evaluator.offline import graph_problems
from graph_builder.build import TaskBuildReport, build_workspace
from graph_builder.folder_lock import LOCK_FILE
from graph_builder.io import (
    SUITE_DEMOS_DIR,
    atomic_write_bytes,
    load_graph,
    replace_folder,
    save_suite,
    save_task,
)
from graph_builder.model import (
    Action,
    Demonstration,
    MemberRef,
    NodeKind,
    Size,
    Suite,
    TaskGraph,
)
from graph_builder.screen import Screen
from graph_builder.similarity import SimilaritySettings
from graph_builder.validate import Severity
from recorder_app.recording.script import record_script
from recorder_app.recording.session import PendingStep
from task_graphs.sample_recipes import RECIPES, Recipe, StepKind, recipe
from task_graphs.sample_recipes import Path as StepPath
from virtual_phone import FROZEN_CLOCK, fast_phone, running_server

SUITE_DIR = Path(__file__).resolve().parent / "sample"
SUITE_NAME = "ElderBench Studio sample"
SUITE_DESCRIPTION = (
    "A small suite on the virtual phone: offline tasks with task graphs built from scripted "
    "demonstrations, online tasks with rule criteria and a judge rubric. Regenerate it with "
    "`python -m task_graphs.generate`."
)
ANNOTATOR = "task_graphs.generate"
DEFAULT_SIZE: Size = (1080, 2400)
BASE_DENSITY = 440  # the virtual phone's density at 1080 px wide
EPOCH = FROZEN_CLOCK.replace(tzinfo=UTC).timestamp()
# Seconds between two recorded steps, on the demo's clock and on the phone's own clock
# (toasts last 2 s: one shows on the screen after its action, and is gone a step later).
STEP_SECONDS = 2.5


class GenerationError(RuntimeError):
    """A recipe no longer fits the phone, or its graph or criteria are not usable."""


class _PhoneClock:
    """The phone's monotonic time, moved only between steps, so toasts repeat exactly."""

    START = 1000.0

    def __init__(self) -> None:
        self.now = self.START

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True, slots=True)
class Recorded:
    demo: Demonstration
    first: Screen
    last: Screen


@dataclass(frozen=True, slots=True)
class Generated:
    out: Path
    recipes: tuple[Recipe, ...]
    builds: tuple[TaskBuildReport, ...]

    def summary(self) -> str:
        offline = [r for r in self.recipes if r.offline]
        online = [r for r in self.recipes if not r.offline]
        scenarios = Counter(r.task.labels.scenario for r in self.recipes)
        lines = [
            f"{len(self.recipes)} tasks in {self.out}: "
            f"{len(offline)} offline, {len(online)} online",
            "scenarios: " + ", ".join(f"{k} {v}" for k, v in sorted(scenarios.items())),
        ]
        lines += [f"  {b.summary()}" for b in self.builds]
        lines += [
            f"  {r.id}: online, solution of {len(r.paths[0]) - 1} actions checked" for r in online
        ]
        lines.append(f"distinct file contents: {content_size(self.out) / 1e6:.1f} MB")
        return "\n".join(lines)


# --------------------------------------------------------------------------- recording


def _density(size: Size) -> int:
    """Keep the layout in dp the same at every size, as real phones of one model line do."""
    return round(BASE_DENSITY * size[0] / DEFAULT_SIZE[0])


def compact_png(png: bytes) -> bytes:
    """The same pixels, compressed harder than the phone's fast screencap encoding."""
    with Image.open(io.BytesIO(png)) as image:
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", compress_level=9)
    return buffer.getvalue()


def _check_path(item: Recipe, path: StepPath) -> None:
    kinds = [s.kind for s in path]
    if not kinds or kinds[-1] is not StepKind.DONE or StepKind.DONE in kinds[:-1]:
        raise GenerationError(f"{item.id}: every path must end with done(), and only there")


def record(item: Recipe, path: StepPath, demo_id: str, demos_root: Path, size: Size) -> Recorded:
    """Record one path as ``demos_root/<task>/<demo_id>`` on a fresh virtual phone."""
    _check_path(item, path)
    task = item.task
    assert task.reset is not None
    clock = _PhoneClock()
    phone = fast_phone("virtual-1", size=size, density=_density(size), time_source=clock)
    # Captures are stamped on the phone's clock: EPOCH, then STEP_SECONDS more per step.
    stamps = DeviceClock(wall=lambda: EPOCH + clock.now - _PhoneClock.START)
    steps = iter(enumerate(path))
    screens: list[Screen] = []

    def script(pending: PendingStep) -> Action:
        index, step = next(steps)
        screens.append(pending.screen)
        if pending.hierarchy is None:
            raise GenerationError(
                f"{task.id}/{demo_id} step {index}: no hierarchy ({pending.hierarchy_problem})"
            )
        try:
            return step.action(pending.hierarchy, pending.screen.size)
        except ValueError as exc:
            raise GenerationError(f"{task.id}/{demo_id} step {index}: {exc}") from exc

    def tick(_: Action) -> None:
        clock.now += STEP_SECONDS

    with running_server([phone]) as server:
        device = AndroidDevice(phone.serial, client=adb_client(port=server.port), clock=stamps)
        demo = record_script(
            device,
            demos_root,
            task,
            script,
            reset=task.reset,
            demo_id=demo_id,
            annotator=ANNOTATOR,
            source="scripted",
            clock=lambda: EPOCH,
            after_action=tick,
        )
    folder = demos_root / task.id / demo_id
    for step in demo.steps:
        shot = folder / step.observation.screenshot
        atomic_write_bytes(shot, compact_png(shot.read_bytes()))
    return Recorded(demo, screens[0], screens[-1])


# --------------------------------------------------------------------------- checks


def check_online(item: Recipe, recorded: Recorded) -> None:
    """The rule criteria are not vacuous (the first screen fails) and achievable (the
    solution's, or every demonstration's, last screen passes)."""
    judge = RuleJudge()
    for screen, wanted, what in ((recorded.first, False, "first"), (recorded.last, True, "last")):
        verdict = judge.judge(
            JudgeEvidence(
                task=item.task,
                instruction=item.task.instruction,
                final_png=screen.png(),
                final_hierarchy_xml=screen.hierarchy_xml(),
                final_activity=screen.activity,
            )
        )
        if verdict.passed is not wanted:
            raise GenerationError(
                f"{item.id}: the rule criteria should {'pass' if wanted else 'fail'} on the "
                f"{what} screen of {recorded.demo.id}, but: {verdict.reason}"
            )


def graph_defects(graph: TaskGraph, demos: Iterable[Demonstration]) -> list[str]:
    """Why an offline graph does not describe its task: the evaluator's objections, a
    START that is already done, or a DONE node that also holds a screen before the end
    (the builder merged a screen with the one an action changed, e.g. a switch)."""
    problems = graph_problems(graph)
    start = graph.start
    if start is not None and start.kind is NodeKind.DONE:
        problems.append("START is a DONE node: the task is done before it starts")
    last = {d.id: MemberRef(d.id, len(d.steps) - 1) for d in demos}
    for node in graph.done_nodes:
        early = [m for m in node.members if m.demo_id in last and m != last[m.demo_id]]
        if early:
            problems.append(
                f"DONE node {node.id} also holds {', '.join(map(str, early))}, screens before "
                "the end of their demonstrations"
            )
    return problems


# --------------------------------------------------------------------------- the suite


def generate(
    out: Path = SUITE_DIR,
    *,
    tasks: Sequence[str] | None = None,
    size: Size = DEFAULT_SIZE,
    progress: bool = False,
) -> Generated:
    """Record and build the suite (or only ``tasks``) into ``out``, replacing it atomically."""
    chosen = tuple(recipe(t) for t in dict.fromkeys(tasks)) if tasks else RECIPES
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in out.parent.glob(f".{out.name}.generating-*"):
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.generating-", dir=out.parent))
    try:
        builds = _generate_into(tmp, chosen, size, progress)
        replace_folder(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Generated(out, chosen, tuple(builds))


def _generate_into(
    folder: Path, chosen: Sequence[Recipe], size: Size, progress: bool
) -> list[TaskBuildReport]:
    save_suite(Suite(name=SUITE_NAME, description=SUITE_DESCRIPTION), folder)
    demos_root = folder / SUITE_DEMOS_DIR
    recorded: dict[str, list[Recorded]] = {}
    for n, item in enumerate(chosen, 1):
        if progress:
            print(
                f"[{n}/{len(chosen)}] recording {item.id} ({len(item.paths)} paths)",
                file=sys.stderr,
            )
        save_task(item.task, folder / item.id)
        recorded[item.id] = [
            record(item, path, f"d{i}", demos_root, size) for i, path in enumerate(item.paths, 1)
        ]
        if item.task.success is not None:  # online tasks, and offline ones scored both ways
            for path in recorded[item.id]:
                check_online(item, path)
    offline_ids = [r.id for r in chosen if r.offline]
    if not offline_ids:
        return []
    if progress:
        print(f"building {len(offline_ids)} graphs", file=sys.stderr)
    builds = build_workspace(demos_root, folder, settings=SimilaritySettings(), tasks=offline_ids)
    # The build's lock file records who held it and when: not part of the shipped suite.
    (folder / LOCK_FILE).unlink(missing_ok=True)
    failures = []
    for report in builds:
        defects = [str(p) for p in report.problems if p.severity is Severity.ERROR]
        if not report.written:
            defects.append(report.note)
        else:
            graph = load_graph(folder / report.task_id)
            defects += graph_defects(graph, (r.demo for r in recorded[report.task_id]))
        failures += [f"{report.task_id}: {d}" for d in defects]
    if failures:
        raise GenerationError("unusable task graphs:\n  " + "\n  ".join(failures))
    return builds


# --------------------------------------------------------------------------- comparing


def _files(root: Path) -> dict[str, Path]:
    """The suite's files; a lock file says who last wrote it, not what the suite holds."""
    found = sorted(p for p in root.rglob("*") if p.is_file() and p.name != LOCK_FILE)
    return {p.relative_to(root).as_posix(): p for p in found}


def _same_pixels(a: Path, b: Path) -> bool:
    with Image.open(a) as x, Image.open(b) as y:
        return x.size == y.size and x.mode == y.mode and x.tobytes() == y.tobytes()


def compare_trees(
    expected: Path,
    actual: Path,
    *,
    png_pixels: bool = True,
    tasks: Iterable[str] | None = None,
) -> list[str]:
    """Differences between two suite folders (empty when they match), limited to
    ``tasks`` when given. With ``png_pixels`` a PNG matches when its pixels do, whatever
    zlib made of them."""
    want, got = _files(Path(expected)), _files(Path(actual))
    if tasks is not None:
        prefixes = tuple(p for t in tasks for p in (f"{t}/", f"{SUITE_DEMOS_DIR}/{t}/"))
        want = {k: v for k, v in want.items() if k.startswith(prefixes) or k == "suite.json"}
    out = [f"missing: {name}" for name in sorted(want.keys() - got.keys())]
    out += [f"unexpected: {name}" for name in sorted(got.keys() - want.keys())]
    for name in sorted(want.keys() & got.keys()):
        if want[name].read_bytes() == got[name].read_bytes():
            continue
        if png_pixels and name.endswith(".png") and _same_pixels(want[name], got[name]):
            continue
        out.append(f"differs: {name}")
    return out


def content_size(root: Path) -> int:
    """Bytes of the distinct file contents under ``root``: what git stores (before its own
    compression), since node images and repeated screens are copies of demo steps."""
    sizes = {}
    for path in Path(root).rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            sizes[hashlib.sha256(data).digest()] = len(data)
    return sum(sizes.values())


# --------------------------------------------------------------------------- command line


def _size(text: str) -> Size:
    width, sep, height = text.partition("x")
    if not sep or not width.isdigit() or not height.isdigit():
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1080x2400, not {text!r}")
    return int(width), int(height)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m task_graphs.generate",
        description="Record the sample suite's paths on the virtual phone and build its graphs.",
    )
    parser.add_argument(
        "--out", type=Path, default=SUITE_DIR, help="suite folder (default: %(default)s)"
    )
    parser.add_argument(
        "--tasks",
        nargs="+",
        metavar="ID",
        choices=[r.id for r in RECIPES],
        help="only these tasks (a smaller suite)",
    )
    parser.add_argument(
        "--size",
        type=_size,
        default=DEFAULT_SIZE,
        metavar="WxH",
        help="screen size (default 1080x2400)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="regenerate into a temporary folder and compare with --out; exit 1 on differences",
    )
    args = parser.parse_args(argv)
    try:
        if args.check:
            with tempfile.TemporaryDirectory(prefix="sample-check-") as scratch:
                result = generate(
                    Path(scratch) / "sample", tasks=args.tasks, size=args.size, progress=True
                )
                differences = compare_trees(args.out, result.out, tasks=args.tasks)
            if differences:
                print(f"{args.out} is out of date ({len(differences)} differences):")
                print("\n".join(f"  {d}" for d in differences[:50]))
                print("regenerate it with: python -m task_graphs.generate")
                return 1
            print(f"{args.out} matches a fresh generation")
            return 0
        result = generate(args.out, tasks=args.tasks, size=args.size, progress=True)
    except GenerationError as exc:
        print(f"generation failed: {exc}", file=sys.stderr)
        return 1
    print(result.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
