"""Build task graphs from recorded demonstrations into a suite folder, safely.

For each task, the ``complete`` demonstrations under ``<demos>/<task>/`` are merged
(incomplete, discarded and unreadable ones are skipped with a note). The task folder is
written to a temporary folder beside it and swapped in at the end, so a crash leaves the
old task folder or the new one. A graph with errors is not written over a valid graph
unless ``force`` is given. Pins of the previous graph and the task's merge constraints
(``constraints.json``, kept in the task folder) are reapplied.

The task.json is the suite's own when the task already exists there; otherwise the one
an importer left at ``<demos>/<task>/task.json``; otherwise a minimal offline task made
from the demonstrations' instruction and app.

>>> import tempfile
>>> from importlib.resources import files
>>> with tempfile.TemporaryDirectory() as tmp:
...     [report] = build_workspace(files("task_graphs") / "sample" / "demos", Path(tmp) / "suite",
...                                settings=SimilaritySettings(), tasks=["font_bigger"])
...     written = sorted(p.name for p in (Path(tmp) / "suite" / "font_bigger").iterdir())
>>> report.written, report.demos_used, report.nodes, report.edges, written
(True, 3, 8, 9, ['graph.json', 'nodes', 'task.json'])
"""

from __future__ import annotations

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
from graph_builder.io import (
    GRAPH_FILE,
    NODES_DIR,
    TASK_FILE,
    load_demo,
    load_graph,
    load_suite,
    load_task,
    make_temp_dir,
    replace_folder,
    save_graph,
    save_suite,
    save_task,
)
from graph_builder.merge import BuildResult, DemoInput, MergeDecision, merge_demonstrations
from graph_builder.model import Demonstration, DemoStatus, Pin, Suite, Task, TaskGraph
from graph_builder.rebuild import carry_edge_edits
from graph_builder.screen import Screen
from graph_builder.similarity import SimilaritySettings
from graph_builder.validate import Problem, has_errors, validate_graph

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
    kept_edits: tuple[str, ...] = ()  # edge edits of the previous graph carried over
    constraints: tuple[ConstraintOutcome, ...] = ()  # the task's merge constraints, applied
    task_source: str = ""  # where task.json came from

    def summary(self) -> str:
        skipped = f" ({len(self.skipped)} skipped)" if self.skipped else ""
        state = "written" if self.written else f"NOT written: {self.note}"
        return (
            f"{self.task_id}: {self.demos_used} demos{skipped}, {self.nodes} nodes, "
            f"{self.edges} edges, {self.merges} merges, {len(self.warnings)} warnings, "
            f"{sum(p.severity == 'error' for p in self.problems)} errors -> {state}"
        )


def task_ids(demos_root: Path) -> list[str]:
    """Tasks that have at least one demonstration folder, sorted."""
    return sorted({p.parent.parent.name for p in Path(demos_root).glob("*/*/demo.json")})


def load_demo_inputs(demos_root: Path, task_id: str) -> tuple[list[DemoInput], list[str]]:
    """The complete demonstrations of a task, and a note for each one left out."""
    inputs: list[DemoInput] = []
    notes: list[str] = []
    for folder in sorted(p.parent for p in (Path(demos_root) / task_id).glob("*/demo.json")):
        try:
            demo = load_demo(folder)
        except GraphBuilderError as exc:
            notes.append(f"{folder.name}: unreadable demo.json ({exc})")
            continue
        if demo.status is not DemoStatus.COMPLETE:
            notes.append(f"{demo.id}: {demo.status.value}")
            continue
        inputs.append(DemoInput.from_folder(folder, demo))
    return inputs, notes


def build_task(
    demos_root: Path,
    task_id: str,
    suite_dir: Path,
    *,
    settings: SimilaritySettings,
    force: bool = False,
) -> TaskBuildReport:
    """Merge one task's demonstrations and write ``<suite>/<task>/`` atomically."""
    suite_dir = Path(suite_dir)
    out = suite_dir / task_id
    inputs, notes = load_demo_inputs(demos_root, task_id)
    old_graph, old_valid = _previous_graph(out)
    if not inputs:
        return TaskBuildReport(
            task_id, out, False, "no complete demonstration", skipped=tuple(notes)
        )
    try:
        result = merge_demonstrations(
            inputs,
            settings=settings,
            task_id=task_id,
            pins=old_graph.pins if old_graph else (),
            constraints=load_constraints(out, task_id).constraints,
        )
    except GraphBuilderError as exc:
        return TaskBuildReport(task_id, out, False, str(exc), skipped=tuple(notes))
    kept: tuple[str, ...] = ()
    if old_graph is not None:
        graph, kept = carry_edge_edits(old_graph, result.graph)
        result = replace(result, graph=graph)
    used = [i.demo for i in inputs if i.demo.id in set(result.graph.meta.get("demos", ()))]
    problems = validate_graph(result.graph, used)
    report = TaskBuildReport(
        task_id,
        out,
        True,
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
        kept_edits=kept,
        constraints=result.constraints,
    )
    if has_errors(problems) and old_valid and not force:
        return replace(
            report,
            written=False,
            note="the new graph has errors and the existing graph is valid "
            "(use --force to replace it)",
        )
    try:
        task, source = _task_for(out, Path(demos_root), task_id, used)
        report = replace(report, task_source=source)
        _write_task_folder(out, task, result)
    except (OSError, GraphBuilderError) as exc:
        return replace(report, written=False, note=f"writing failed: {exc}")
    if not (suite_dir / "suite.json").exists():
        save_suite(Suite(name=suite_dir.resolve().name), suite_dir)
    else:
        load_suite(suite_dir)  # a broken suite.json is reported, never overwritten
    return report


def build_workspace(
    demos_root: Path,
    suite_dir: Path,
    *,
    settings: SimilaritySettings,
    tasks: Sequence[str] | None = None,
    force: bool = False,
    jobs: int = 1,
    progress: BuildProgressCallback | None = None,
) -> list[TaskBuildReport]:
    """Build every task with demonstrations (or the given ones); reports in task order.

    Tasks are independent, so ``jobs > 1`` builds them in that many worker processes
    (spawned, so it is safe to call from a GUI worker thread).
    """
    ids = list(dict.fromkeys(tasks)) if tasks else task_ids(demos_root)
    if progress:
        progress(0, len(ids), "")
    reports: dict[str, TaskBuildReport] = {}

    def finished(task_id: str, report: TaskBuildReport) -> None:
        reports[task_id] = report
        if progress:
            progress(len(reports), len(ids), task_id)

    if jobs <= 1 or len(ids) <= 1:
        for task_id in ids:
            finished(
                task_id, build_task(demos_root, task_id, suite_dir, settings=settings, force=force)
            )
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            min(jobs, len(ids)),
            mp_context=context,
            initializer=_die_with_parent,
            initargs=(os.getpid(),),
        ) as pool:
            futures = {
                pool.submit(
                    build_task, demos_root, task_id, suite_dir, settings=settings, force=force
                ): task_id
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
