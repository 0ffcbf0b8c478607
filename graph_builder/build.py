"""Build task graphs from recorded demonstrations into a suite folder, safely.

For each task, the ``complete`` demonstrations under ``<demos>/<task>/`` are merged
(incomplete and discarded ones are skipped with a note; a demo.json that cannot be read
refuses the task unless ``skip_unreadable``). The task folder is written to a temporary
folder beside it and swapped in at the end, under the suite's lock, so a crash leaves the
old task folder or the new one and a second build of the suite is refused. A graph with
errors is not written over a valid graph unless ``force`` is given.

A rebuild is the same for every caller (the CLI and the studio): it reuses the settings
stored in the previous graph unless settings are given, reapplies its pins and the task's
merge constraints (``constraints.json``, kept in the task folder; ``graph_builder.
constraints``), carries its hand edits over (``graph_builder.hand_edits``), and the report
says which settings it used, what it kept and dropped, and what it made of each constraint.

The task.json is the suite's own when the task already exists there; otherwise the one
an importer left at ``<demos>/<task>/task.json``; otherwise a minimal offline task made
from the demonstrations' instruction and app.

>>> import tempfile
>>> from io import BytesIO
>>> from PIL import Image, ImageDraw
>>> from graph_builder.io import DemoWriter
>>> from graph_builder.model import Action, Task
>>> def shot(title, shade):  # a screen with one coloured title bar, and its hierarchy
...     image = Image.new("RGB", (270, 600), "white")
...     ImageDraw.Draw(image).rectangle((0, 21, 270, 100 + 3 * shade), fill=(shade, 90, 160))
...     png = BytesIO()
...     image.save(png, "PNG")
...     xml = (f'<hierarchy><node class="android.widget.TextView" package="app" '
...            f'text="{title}" bounds="[0,21][270,100]"/></hierarchy>')
...     return png.getvalue(), xml
>>> def record(demos, demo_id):  # Home -> Settings -> Display, then done
...     task = Task("display", "Open the display settings", app="app")
...     writer = DemoWriter.create(demos, task, demo_id=demo_id)
...     tap = Action.tap(135, 60, screen=(270, 600))
...     for title, shade, action in (("Home", 0, tap), ("Settings", 80, tap),
...                                  ("Display", 160, Action.done())):
...         _ = writer.add_step(*shot(title, shade), action=action, activity="app/.Main",
...                             screen=(270, 600), time=0.0)
...     return writer.finish()
>>> tmp = tempfile.TemporaryDirectory()
>>> demos = Path(tmp.name) / "demos"
>>> _, _ = record(demos, "d1"), record(demos, "d2")
>>> [report] = build_workspace(demos, Path(tmp.name) / "suite")
>>> report.written, report.demos_used, report.nodes, report.edges, report.settings_origin
(True, 2, 3, 2, 'the defaults (there is no previous graph)')
>>> sorted(p.name for p in (Path(tmp.name) / "suite" / "display").iterdir())
['graph.json', 'nodes', 'task.json']
>>> build_workspace(demos, Path(tmp.name) / "suite")[0].settings_origin  # a rebuild
'the settings stored in the previous graph'
>>> tmp.cleanup()
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path

from graph_builder.constraints import ConstraintOutcome, load_constraints
from graph_builder.errors import FormatError, GraphBuilderError
from graph_builder.folder_lock import FolderLock
from graph_builder.hand_edits import HandEdits, carry_hand_edits, stored_form
from graph_builder.io import (
    DEMO_FILE,
    GRAPH_FILE,
    NODES_DIR,
    SUITE_FILE,
    TASK_FILE,
    demo_dirs,
    is_hidden,
    leftover_task,
    leftovers,
    load_demo,
    load_graph,
    load_suite,
    load_task,
    make_temp_dir,
    recover_folder,
    replace_folder,
    save_graph,
    save_suite,
    save_task,
)
from graph_builder.merge import BuildResult, DemoInput, MergeDecision, merge_demonstrations
from graph_builder.model import Demonstration, DemoStatus, Pin, Suite, Task, TaskGraph
from graph_builder.screen import Screen
from graph_builder.settings import ChosenSettings, SimilaritySettings, graph_settings
from graph_builder.validate import Problem, has_errors, validate_graph

log = logging.getLogger(__name__)

BuildProgressCallback = Callable[[int, int, str], None]
"""progress(done, total, task_id): called once with (0, total, "") and after each task."""


@dataclass(frozen=True, slots=True)
class TaskBuildReport:
    task_id: str
    output: Path
    written: bool
    note: str = ""
    demos_used: int = 0
    skipped: tuple[str, ...] = ()
    nodes: int = 0
    edges: int = 0
    merges: int = 0
    warnings: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()
    decisions: tuple[MergeDecision, ...] = ()
    stale_pins: tuple[Pin, ...] = ()  # manual decisions whose screens are gone
    repairs: tuple[str, ...] = ()  # what the hierarchy parser fixed, per step
    hand_edits: HandEdits = HandEdits()  # what the rebuild kept and dropped of them
    settings_origin: str = ""  # which settings the build used, in words
    unreadable: tuple[Path, ...] = ()  # demo.json files that could not be read
    cleaned: tuple[str, ...] = ()  # leftovers of a killed build that were removed
    constraints: tuple[ConstraintOutcome, ...] = ()  # the task's merge constraints, applied
    task_source: str = ""  # where task.json came from

    def summary(self) -> str:
        skipped = f" ({len(self.skipped)} skipped)" if self.skipped else ""
        state = "written" if self.written else f"NOT written: {self.note}"
        errors = sum(p.severity == "error" for p in self.problems)
        # The build's own warnings and the validation's: the report lists both.
        warnings = len(self.warnings) + len(self.problems) - errors
        counts = (
            (self.demos_used, "demo"),
            (self.nodes, "node"),
            (self.edges, "edge"),
            (self.merges, "merge"),
            (warnings, "warning"),
            (errors, "error"),
        )
        words = [f"{n} {word}{'' if n == 1 else 's'}" for n, word in counts]
        words[0] += skipped
        return f"{self.task_id}: {', '.join(words)} -> {state}"


@dataclass(frozen=True, slots=True)
class PreparedBuild:
    """One task merged and checked, not written yet (``write_task`` writes it).

    ``previous`` is graph.json as it was when the build was prepared, so that writing
    refuses when someone changed the graph meanwhile.
    """

    report: TaskBuildReport
    demos_root: Path
    result: BuildResult | None = None
    previous: bytes | None = None
    demos: tuple[Demonstration, ...] = ()  # the demonstrations the graph was made from

    @property
    def writable(self) -> bool:
        return self.result is not None


def task_ids(demos_root: Path) -> list[str]:
    """Tasks that have at least one demonstration folder, sorted (hidden folders are not)."""
    return sorted(
        {
            p.parent.parent.name
            for p in Path(demos_root).glob(f"*/*/{DEMO_FILE}")
            if not is_hidden(p.parent) and not is_hidden(p.parent.parent)
        }
    )


def _read_demos(demos_root: Path, task_id: str) -> tuple[list[DemoInput], list[str], list[Path]]:
    """The complete demonstrations of a task, a note for each one left out, and the
    demo.json files among them that could not be read."""
    inputs: list[DemoInput] = []
    notes: list[str] = []
    unreadable: list[Path] = []
    for folder in demo_dirs(demos_root, task_id):
        try:
            demo = load_demo(folder)
        except GraphBuilderError as exc:
            notes.append(f"{folder.name}: unreadable demo.json ({exc})")
            unreadable.append(folder / DEMO_FILE)
            continue
        if demo.status is not DemoStatus.COMPLETE:
            notes.append(f"{demo.id}: {demo.status.value}")
            continue
        inputs.append(DemoInput.from_folder(folder, demo))
    return inputs, notes, unreadable


def load_demo_inputs(demos_root: Path, task_id: str) -> tuple[list[DemoInput], list[str]]:
    """The complete demonstrations of a task, and a note for each one left out."""
    inputs, notes, _ = _read_demos(demos_root, task_id)
    return inputs, notes


def suite_lock(suite_dir: Path, purpose: str = "a build of task graphs") -> FolderLock:
    """The suite's lock (``<suite>/.lock``), held by whoever writes its task folders."""
    Path(suite_dir).mkdir(parents=True, exist_ok=True)
    return FolderLock(Path(suite_dir), purpose=purpose)


def _chosen_settings(
    out: Path, settings: SimilaritySettings | None, old_graph: TaskGraph | None
) -> ChosenSettings:
    """The one rebuild policy: settings given now win, else the previous graph's own."""
    if settings is not None:
        return ChosenSettings(settings, "the settings given to this build")
    if old_graph is None and (out / GRAPH_FILE).exists():
        return ChosenSettings(
            SimilaritySettings(), "the defaults (the previous graph is unreadable)"
        )
    return graph_settings(old_graph)


def prepare_task(
    demos_root: Path,
    task_id: str,
    suite_dir: Path,
    *,
    settings: SimilaritySettings | None = None,
    force: bool = False,
    skip_unreadable: bool = False,
) -> PreparedBuild:
    """Merge one task's demonstrations and carry the previous graph's hand edits over.

    Nothing is written. ``settings`` None reuses the settings stored in the previous
    graph (the defaults when there is none); the report says which were used. A
    demo.json that cannot be read refuses the build, naming the file, unless
    ``skip_unreadable``.
    """
    suite_dir, demos_root = Path(suite_dir), Path(demos_root)
    out = suite_dir / task_id
    inputs, notes, unreadable = _read_demos(demos_root, task_id)
    old_graph, old_valid = _previous_graph(out)
    chosen = _chosen_settings(out, settings, old_graph)
    base = TaskBuildReport(
        task_id,
        out,
        False,
        skipped=tuple(notes),
        settings_origin=chosen.origin,
        unreadable=tuple(unreadable),
    )
    if unreadable and not skip_unreadable:
        names = ", ".join(str(u) for u in unreadable)
        return PreparedBuild(
            replace(
                base,
                note=f"cannot read {names}; the graph is left as it is (fix the file, or "
                "build without it: --skip-unreadable)",
            ),
            demos_root,
        )
    if not inputs:
        return PreparedBuild(replace(base, note="no complete demonstration"), demos_root)
    try:
        result = merge_demonstrations(
            inputs,
            settings=chosen.settings,
            task_id=task_id,
            pins=old_graph.pins if old_graph else (),
            constraints=load_constraints(out, task_id).constraints,
        )
    except GraphBuilderError as exc:
        return PreparedBuild(replace(base, note=str(exc)), demos_root)
    edits = HandEdits()
    if old_graph is not None:
        graph, edits = carry_hand_edits(old_graph, result.graph)
    else:
        graph = stored_form(result.graph)
    result = replace(result, graph=graph)
    used = [i.demo for i in inputs if i.demo.id in set(result.graph.meta.get("demos", ()))]
    problems = validate_graph(result.graph, used)
    report = replace(
        base,
        written=True,
        demos_used=len(used),
        skipped=(*notes, *(f"{s.demo_id}: {s.reason}" for s in result.skipped)),
        nodes=len(result.graph.nodes),
        edges=len(result.graph.edges),
        merges=result.merges,
        warnings=result.warnings,
        problems=tuple(problems),
        decisions=result.decisions,
        stale_pins=result.stale_pins,
        repairs=result.repairs,
        hand_edits=edits,
        constraints=result.constraints,
    )
    if has_errors(problems) and old_valid and not force:
        return PreparedBuild(
            replace(
                report,
                written=False,
                note="the new graph has errors and the existing graph is valid "
                "(use --force to replace it)",
            ),
            demos_root,
        )
    previous = (out / GRAPH_FILE).read_bytes() if (out / GRAPH_FILE).is_file() else None
    return PreparedBuild(report, demos_root, result, previous, tuple(used))


def write_task(prepared: PreparedBuild, *, locked: bool = False) -> TaskBuildReport:
    """Write a prepared task folder atomically under the suite's lock.

    ``locked`` says the caller holds the lock already (``build_workspace`` does, for all
    its tasks). Refuses, keeping what is there, when graph.json changed since the build
    was prepared.
    """
    report = prepared.report
    if not prepared.writable:
        return report
    out = report.output
    suite_dir = out.parent
    with contextlib.ExitStack() as stack:
        if not locked:
            stack.enter_context(suite_lock(suite_dir))
        now = (out / GRAPH_FILE).read_bytes() if (out / GRAPH_FILE).is_file() else None
        if now != prepared.previous:
            return replace(
                report,
                written=False,
                note=f"{out / GRAPH_FILE} changed while the build was running; build again",
            )
        report = replace(report, cleaned=tuple(clean_leftovers(suite_dir, out.name)))
        assert prepared.result is not None
        try:
            task, source = _task_for(out, prepared.demos_root, report.task_id, prepared.demos)
            report = replace(report, task_source=source)
            _write_task_folder(out, task, prepared.result)
        except (OSError, GraphBuilderError) as exc:
            return replace(report, written=False, note=f"writing failed: {exc}")
        if not (suite_dir / SUITE_FILE).exists():
            save_suite(Suite(name=suite_dir.resolve().name), suite_dir)
        else:
            load_suite(suite_dir)  # a broken suite.json is reported, never overwritten
    return report


def clean_leftovers(suite_dir: Path, task_id: str | None = None) -> list[str]:
    """Remove what killed builds left in the suite (of one task, or all), saying what.

    Only a holder of the suite's lock may call this: a build still running owns its
    temporary folder.
    """
    notes = []
    for folder in leftovers(suite_dir):
        if task_id is not None and leftover_task(folder) != task_id:
            continue
        if folder.name.endswith(".old"):
            recover_folder(folder.parent / leftover_task(folder))
            notes.append(f"put back or removed {folder.name}, left by a build that was killed")
        else:
            shutil.rmtree(folder, ignore_errors=True)
            notes.append(f"removed {folder.name}, left by a build that was killed")
    return notes


def _build_locked(
    demos_root: Path,
    task_id: str,
    suite_dir: Path,
    settings: SimilaritySettings | None,
    force: bool,
    skip_unreadable: bool,
) -> TaskBuildReport:
    cleaned = clean_leftovers(suite_dir, task_id)
    prepared = prepare_task(
        demos_root,
        task_id,
        suite_dir,
        settings=settings,
        force=force,
        skip_unreadable=skip_unreadable,
    )
    report = write_task(prepared, locked=True)
    return replace(report, cleaned=(*cleaned, *report.cleaned))


def build_task(
    demos_root: Path,
    task_id: str,
    suite_dir: Path,
    *,
    settings: SimilaritySettings | None = None,
    force: bool = False,
    skip_unreadable: bool = False,
) -> TaskBuildReport:
    """Merge one task's demonstrations and write ``<suite>/<task>/`` atomically, holding
    the suite's lock (FolderLockedError names whoever else holds it)."""
    with suite_lock(suite_dir):
        return _build_locked(demos_root, task_id, suite_dir, settings, force, skip_unreadable)


def build_workspace(
    demos_root: Path,
    suite_dir: Path,
    *,
    settings: SimilaritySettings | None = None,
    tasks: Sequence[str] | None = None,
    force: bool = False,
    skip_unreadable: bool = False,
    jobs: int = 1,
    progress: BuildProgressCallback | None = None,
) -> list[TaskBuildReport]:
    """Build every task with demonstrations (or the given ones); reports in task order.

    The suite's lock is held for the whole build (FolderLockedError names whoever else
    holds it), and leftovers of killed builds are removed first. ``settings`` None
    reuses each task's stored settings (see ``prepare_task``). Tasks are independent, so
    ``jobs > 1`` builds them in that many worker processes (spawned, so it is safe to
    call from a GUI worker thread).
    """
    ids = list(dict.fromkeys(tasks)) if tasks else task_ids(demos_root)
    with suite_lock(suite_dir):
        for leftover in leftovers(suite_dir):
            if leftover_task(leftover) not in ids:  # the others are cleaned in their reports
                for note in clean_leftovers(suite_dir, leftover_task(leftover)):
                    log.warning("%s: %s", suite_dir, note)
        return _build_all(
            demos_root, suite_dir, ids, (settings, force, skip_unreadable), jobs, progress
        )


def _build_all(
    demos_root: Path,
    suite_dir: Path,
    ids: list[str],
    options: tuple[SimilaritySettings | None, bool, bool],
    jobs: int,
    progress: BuildProgressCallback | None,
) -> list[TaskBuildReport]:
    if progress:
        progress(0, len(ids), "")
    reports: dict[str, TaskBuildReport] = {}

    def finished(task_id: str, report: TaskBuildReport) -> None:
        reports[task_id] = report
        if progress:
            progress(len(reports), len(ids), task_id)

    if jobs <= 1 or len(ids) <= 1:
        for task_id in ids:
            finished(task_id, _build_locked(demos_root, task_id, suite_dir, *options))
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            min(jobs, len(ids)),
            mp_context=context,
            initializer=_die_with_parent,
            initargs=(os.getpid(),),
        ) as pool:
            futures = {
                pool.submit(_build_locked, demos_root, task_id, suite_dir, *options): task_id
                for task_id in ids
            }
            for future in as_completed(futures):
                finished(futures[future], future.result())
    return [reports[task_id] for task_id in ids]


def _die_with_parent(parent: int) -> None:
    """In a build worker: exit as soon as the parent is gone. A parent killed outright
    (kill -9, a closed terminal) cannot shut its pool down, and its workers would go on
    merging for nobody."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="build-parent-watch", daemon=True).start()


PARENT_POLL_SECONDS = 0.5


def default_jobs() -> int:
    """One worker per core, which is what merging (CPU-bound) can use."""
    return max(1, os.cpu_count() or 1)


def _previous_graph(task_dir: Path) -> tuple[TaskGraph | None, bool]:
    """The existing graph (None if absent or unreadable) and whether it is valid."""
    if not (task_dir / GRAPH_FILE).exists():
        return None, False
    try:
        graph = load_graph(task_dir)
    except GraphBuilderError:
        return None, False
    return graph, not has_errors(validate_graph(graph))


def task_sources(out: Path, demos_root: Path, task_id: str) -> list[Path]:
    """Where a task's task.json may already be, best first.

    The target suite's own; the one beside the demonstrations (left by an importer or
    written by hand); the suite that ships these demonstrations in its ``demos/``
    folder; a studio workspace's suites (``<workspace>/demos`` beside
    ``<workspace>/suites/<suite>/``).
    """
    home = demos_root.resolve().parent
    candidates = [out / TASK_FILE, demos_root / task_id / TASK_FILE]
    if (home / "suite.json").is_file():
        candidates.append(home / task_id / TASK_FILE)
    candidates += sorted((home / "suites").glob(f"*/{task_id}/{TASK_FILE}"))
    seen: set[Path] = set()
    unique = []
    for candidate in candidates:
        if candidate.resolve() not in seen:
            seen.add(candidate.resolve())
            unique.append(candidate)
    return unique


def _task_for(
    out: Path, demos_root: Path, task_id: str, demos: Sequence[Demonstration]
) -> tuple[Task, str]:
    """The task as people wrote it (labels, criteria, protocol kept), and where it was."""
    for candidate in task_sources(out, demos_root, task_id):
        if candidate.is_file():
            return load_task(candidate), str(candidate)
    first = demos[0]
    return Task(id=first.task_id, instruction=first.instruction, app=first.app), ""


def _write_task_folder(out: Path, task: Task, result: BuildResult) -> None:
    parent = out.parent
    parent.mkdir(parents=True, exist_ok=True)
    # A fixed name, so a leftover of a killed build is found without listing the suite.
    tmp = make_temp_dir(parent, f".{out.name}.building")
    try:
        if out.is_dir():  # keep whatever else the task folder holds
            for item in out.iterdir():
                if item.name not in (GRAPH_FILE, NODES_DIR):
                    copy = shutil.copytree if item.is_dir() else shutil.copy2
                    copy(item, tmp / item.name)
        if not (tmp / TASK_FILE).exists():
            save_task(task, tmp)  # a copy of the one people wrote, else a minimal one
        nodes_dir = tmp / NODES_DIR
        nodes_dir.mkdir()
        for node in result.graph.nodes:
            result.representatives[node.id].copy_files(
                tmp / node.screenshot, tmp / node.hierarchy if node.hierarchy else None
            )
        save_graph(result.graph, tmp)
        replace_folder(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_node_files(
    task_dir: Path, graph: TaskGraph, demos_root: Path, node_ids: Iterable[str] | None = None
) -> TaskGraph:
    """(Re)write node images from each node's first member, e.g. after a split in the editor.

    Returns the graph with those nodes' activity, screen and hash taken from the new
    representative.
    """
    wanted = set(node_ids) if node_ids is not None else {n.id for n in graph.nodes}
    demos: dict[str, Demonstration] = {}
    nodes = []
    for node in graph.nodes:
        if node.id not in wanted or not node.members:
            nodes.append(node)
            continue
        rep = node.members[0]
        folder = Path(demos_root) / graph.task_id / rep.demo_id
        if rep.demo_id not in demos:
            demos[rep.demo_id] = load_demo(folder)
        steps = demos[rep.demo_id].steps
        if not 0 <= rep.step < len(steps):
            raise FormatError(f"{rep} is not a step of demonstration {rep.demo_id}", source=folder)
        obs = steps[rep.step].observation
        state = Screen.from_observation(obs, folder, rep)
        task_dir = Path(task_dir)
        (task_dir / NODES_DIR).mkdir(parents=True, exist_ok=True)
        state.copy_files(
            task_dir / node.screenshot, task_dir / node.hierarchy if node.hierarchy else None
        )
        nodes.append(replace(node, activity=obs.activity, screen=obs.screen, phash=obs.phash))
    return graph.with_changes(nodes=tuple(nodes))
