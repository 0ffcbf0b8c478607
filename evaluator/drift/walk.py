"""Walk a task graph's demonstrated paths on a device and say where the app drifted.

Each path starts from the clean state an online run starts from (the phone's clean-start
snapshot when it has one, then the task's reset recipe). At every node the live screen
is checked, in this order:

1. a dialog the node does not show: ``unexpected dialog``;
2. another activity than the node's: ``screen differs``;
3. the edge's element, looked up by id, text or description (or its title): missing is
   ``element gone``; found where the edge's rule would not credit a tap on it is
   ``element moved``;
4. the builder's similarity (``graph_builder.similarity.compare``) says another state:
   ``screen differs``, with the verdict's explanation.

Otherwise the edge's action is performed (a tap on the element where it is now) and the
walk goes on to the edge's target; at the DONE node only 1, 2 and 4 apply. A path stops
at its first drift; the task is ``drifted`` at the first path's drift, or ``unchanged``.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from devices.device import Device
from devices.errors import DeviceError
from evaluator.clean_start import restore_clean_state, save_clean_state
from evaluator.drift.locate import aim, dialogs, locate, target_in
from evaluator.drift.paths import DemonstratedPath, Step, demonstrated_paths
from evaluator.errors import EvaluatorError
from evaluator.matching import match_rule
from evaluator.offline import GraphContext
from evaluator.online import similarity_settings
from graph_builder.errors import GraphBuilderError
from graph_builder.model import Action, ResetRecipe, Task
from graph_builder.screen import Screen
from graph_builder.similarity import SimilaritySettings, compare

Progress = Callable[[str], None]
# Told each step before it is performed: the node, the live screen, the action aimed on it.
OnStep = Callable[[str, Screen, Action], None]
SETTLE_TIMEOUT = 3.0
SEEN_SCREENS = 64


class DriftReason(StrEnum):
    SCREEN_DIFFERS = "screen differs"
    ELEMENT_GONE = "element gone"
    ELEMENT_MOVED = "element moved"
    UNEXPECTED_DIALOG = "unexpected dialog"


class TaskStatus(StrEnum):
    UNCHANGED = "unchanged"
    DRIFTED = "drifted"
    ERROR = "error"  # could not be checked (device lost, graph unusable): not a verdict


@dataclass(frozen=True, slots=True)
class Drift:
    """Where a path stopped matching, why, and both screens."""

    node: str
    reason: DriftReason
    detail: str
    similarity: str  # the similarity verdict, explained
    edge: str | None  # the edge the walk was about to take (None at DONE)
    expected: Screen
    live: Screen

    def describe(self) -> str:
        return f"drifted at {self.node}: {self.reason.value} ({self.detail})"


@dataclass(frozen=True, slots=True)
class PathWalk:
    path: DemonstratedPath
    steps: int  # actions performed
    drift: Drift | None


@dataclass(frozen=True, slots=True)
class TaskDrift:
    task_id: str
    status: TaskStatus
    walks: tuple[PathWalk, ...] = ()
    notes: tuple[str, ...] = ()
    error: str = ""
    seconds: float = 0.0

    @property
    def drift(self) -> Drift | None:
        return next((w.drift for w in self.walks if w.drift is not None), None)

    @property
    def steps(self) -> int:
        return sum(w.steps for w in self.walks)

    def headline(self) -> str:
        drift = self.drift
        if drift is not None:
            return drift.describe()
        if self.status is TaskStatus.ERROR:
            return f"not checked: {self.error}"
        return self.status.value


class _Drifted(Exception):
    """Internal: a path stopped at a drift."""

    def __init__(self, drift: Drift) -> None:
        super().__init__(drift.describe())
        self.drift = drift


@dataclass(slots=True)
class _Walker:
    context: GraphContext
    device: Device
    settings: SimilaritySettings
    recipe: ResetRecipe
    snapshot: str | None
    progress: Progress
    on_step: OnStep | None = None
    # Screens seen before, by content: the paths of a task share their first screens, and
    # a Screen keeps its similarity features, so a repeated screen is not decoded again.
    seen: dict[bytes, Screen] = field(default_factory=dict)

    def _observe(self) -> Screen:
        live = self.device.observe()
        if not live.stable:
            return live
        key = hashlib.blake2b(live.png(), digest_size=16)
        key.update((live.hierarchy_xml() or "").encode("utf-8", "replace"))
        key.update((live.activity or "").encode())
        if len(self.seen) >= SEEN_SCREENS:
            self.seen.clear()
        return self.seen.setdefault(key.digest(), live)

    def walk(self, path: DemonstratedPath, *, here: str | None = None) -> PathWalk:
        """Walk ``path`` from the clean start, or (``here``: the node the phone is on)
        from where the phone is."""
        if here is None:
            self._start_clean()
            start = self.context.graph.start
            assert start is not None
            here = start.id
        node, done = here, 0
        try:
            settled = True  # the clean start (or the caller) waited for the screen to settle
            for step in path.steps:
                action, live = self._check(node, step, settled=settled)
                shown = live.hierarchy()
                said = shown.describe(action, live.size) if shown else action.describe()
                self.progress(f"  {node}: {step.edge.id} {said}")
                if self.on_step is not None:
                    self.on_step(node, live, action)
                self.device.perform(action)
                settled = False
                done += 1
                node = step.edge.target
            self._check(node, None, settled=settled)
        except _Drifted as stop:
            self.progress(f"  {stop.drift.describe()}")
            return PathWalk(path, done, stop.drift)
        self.progress(f"  {node}: reached")
        return PathWalk(path, done, None)

    def _start_clean(self) -> None:
        if self.snapshot is not None:
            restore_clean_state(self.device, self.snapshot)
        self.device.reset_app(self.recipe)
        self.device.wait_until_settled(SETTLE_TIMEOUT)

    def _check(self, node: str, step: Step | None, *, settled: bool) -> tuple[Action, Screen]:
        """Look at the phone and judge it against ``node``.

        Waiting for the screen to settle after every action would cost most of the walk,
        so a steady screen that matches is taken at once; only one that is still moving
        or does not match is looked at again once settled, before it counts as drift.
        """
        live = self._observe()
        if settled:
            return self._judge(node, step, live)
        if live.stable:
            try:
                return self._judge(node, step, live)
            except _Drifted:
                pass  # perhaps not there yet: judge the settled screen
        self.device.wait_until_settled(SETTLE_TIMEOUT)
        return self._judge(node, step, self._observe())

    def _judge(self, node: str, step: Step | None, live: Screen) -> tuple[Action, Screen]:
        """The action to take from ``node`` (a tap where the element is now); raises
        _Drifted when ``live`` is not the node."""
        expected = self.context.screen(node)
        verdict = compare(live, expected, settings=self.settings)

        def drifted(reason: DriftReason, detail: str) -> _Drifted:
            edge = step.edge.id if step is not None else None
            return _Drifted(Drift(node, reason, detail, verdict.describe(), edge, expected, live))

        new = sorted(dialogs(live.hierarchy()) - dialogs(expected.hierarchy()))
        if new:
            shown = ", ".join(repr(title) for title in new)
            raise drifted(DriftReason.UNEXPECTED_DIALOG, f"{shown} over the screen")
        if not verdict.same and verdict.activity == "different":
            raise drifted(DriftReason.SCREEN_DIFFERS, verdict.reason)
        action = step.action if step is not None else Action.done()
        if step is not None and action.type.is_pointed:
            action = self._aim(step, expected, live, drifted)
        if not verdict.same:
            raise drifted(DriftReason.SCREEN_DIFFERS, verdict.reason)
        return action, live

    def _aim(
        self,
        step: Step,
        expected: Screen,
        live: Screen,
        drifted: Callable[[DriftReason, str], _Drifted],
    ) -> Action:
        """The demonstrated tap, aimed at where its element is on the live screen."""
        demo = step.action
        point = demo.to_device(expected.size)
        assert point.x is not None and point.y is not None
        element = demo.element
        if element is not None and demo.screen is not None and demo.screen != expected.size:
            element = element.rescaled(demo.screen, expected.size)
        target = target_in(expected.hierarchy(), (point.x, point.y), element)
        hierarchy = live.hierarchy()
        if hierarchy is None:
            return demo  # nothing to look the element up in: the demonstrated point
        found = locate(target, hierarchy)
        if found.element is None:
            raise drifted(DriftReason.ELEMENT_GONE, found.note)
        x, y = aim(target, found.element)
        aimed = replace(demo, x=x, y=y, screen=live.size, element=found.element.ref())
        if match_rule(step.edge.rule, aimed, screen=live.size) is None:
            label = hierarchy.spoken_label(found.element)
            raise drifted(
                DriftReason.ELEMENT_MOVED,
                f"{label!r} found {found.how} at ({x:.0f}, {y:.0f}), where edge "
                f"{step.edge.id} does not accept a tap",
            )
        return aimed


def check_task(
    task: Task,
    task_dir: Path,
    device: Device,
    *,
    snapshot: str | None = None,
    progress: Progress = lambda line: None,
) -> TaskDrift:
    """Walk every demonstrated path of one task's graph on ``device``.

    Device errors and an unusable graph make the task an ``error``, never a drift.
    """
    began = time.monotonic()
    recipe = task.reset or (ResetRecipe(task.app) if task.app else None)
    try:
        if recipe is None:
            raise EvaluatorError(f"task {task.id} has no reset recipe and no app")
        context = GraphContext.load(task_dir)
        paths, notes = demonstrated_paths(context.graph)
        if not paths:
            raise EvaluatorError(f"the graph of {task.id} has no demonstrated path to walk")
        walker = _Walker(context, device, similarity_settings(context), recipe, snapshot, progress)
        walks = []
        for path in paths:
            progress(f"{task.id} path {path.describe()}")
            walks.append(walker.walk(path))
    except (EvaluatorError, GraphBuilderError, DeviceError) as exc:
        progress(f"{task.id}: not checked: {exc}")
        return TaskDrift(
            task.id, TaskStatus.ERROR, error=str(exc), seconds=time.monotonic() - began
        )
    drifted = any(w.drift is not None for w in walks)
    return TaskDrift(
        task.id,
        TaskStatus.DRIFTED if drifted else TaskStatus.UNCHANGED,
        tuple(walks),
        tuple(notes),
        seconds=time.monotonic() - began,
    )


def drive(
    context: GraphContext,
    device: Device,
    recipe: ResetRecipe,
    path: DemonstratedPath,
    *,
    snapshot: str | None = None,
    on_step: OnStep | None = None,
    here: str | None = None,
    progress: Progress = lambda line: None,
) -> PathWalk:
    """Drive the phone from the clean start along ``path`` (a demonstrated path, or the
    start of one), or with ``here`` from that node, where the settled phone already is,
    along ``path`` (steps leaving ``here``), checking every node as ``check_task`` does;
    ``on_step`` sees each step before it is performed. The walk's ``drift`` says where
    it could not go on."""
    walker = _Walker(context, device, similarity_settings(context), recipe, snapshot, progress)
    walker.on_step = on_step
    return walker.walk(path, here=here)


def check_suite(
    tasks: Sequence[tuple[Task, Path]],
    device: Device,
    *,
    progress: Progress = lambda line: None,
    on_result: Callable[[TaskDrift], None] = lambda result: None,
    stop: Callable[[], bool] = lambda: False,
) -> list[TaskDrift]:
    """Check each (task, task folder) in turn from the device's clean state, and leave the
    device in that state afterwards (when it has snapshots): a walk places orders and
    changes settings that the next run on the phone must not inherit. ``on_result`` is
    told each task's result as it is found; once ``stop()`` says so, the tasks not
    begun yet are left out (the results hold only the tasks checked)."""
    try:
        snapshot = save_clean_state(device)
    except DeviceError as exc:  # the phone went away: each task below says it was not checked
        progress(f"could not save the phone's clean state: {exc}")
        snapshot = None
    results = []
    try:
        for task, task_dir in tasks:
            if stop():
                progress(f"stopped before {task.id}")
                break
            result = check_task(task, task_dir, device, snapshot=snapshot, progress=progress)
            progress(f"{task.id}: {result.headline()}")
            results.append(result)
            on_result(result)
    finally:
        if snapshot is not None:
            try:
                restore_clean_state(device, snapshot)
            except DeviceError as exc:
                progress(f"could not put the phone back in its clean state: {exc}")
    return results
