"""Explore a branch: turn an audit group marked ``valid`` into a demonstration.

A ``valid`` mark says an agent took a sensible way on that nobody demonstrated. Exploring
it drives the phone from the task's clean start along a demonstrated path to the mark's
node (the drift walker: each edge's element found again by resource-id, text or
description, falling back to the point, every node checked on the way), performs the
group's action there, and records all of it as a new demonstration of the task:
the path's steps, the branch, and the continuation. The continuation comes from a
script (a JSON list of actions, below) or from a person: without a script the
demonstration is left ``incomplete`` and the studio offers to resume it, on the phone
where the branch left it. The next ``elderbench build`` merges it, so the branch becomes
an edge and the audit no longer lists such a step as uncredited.

A script entry is an action in the demonstration format (docs/formats.md). A pointed
action may name its element by ``"element": {"resource_id", "text", "content_desc"}``
(any of them, bounds and point optional): it is then aimed at where that element is on
the live screen. A script that does not end with ``done`` gets one on the last screen.
"""

from __future__ import annotations

import io
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PIL import Image

from devices.device import Device
from devices.errors import DeviceError
from evaluator.audit_marks import Mark, Target, Verdict, load_marks
from evaluator.drift.locate import Target as ElementTarget
from evaluator.drift.locate import aim, locate
from evaluator.drift.paths import DemonstratedPath, demonstrated_paths
from evaluator.drift.walk import SETTLE_TIMEOUT, drive
from evaluator.errors import EvaluatorError
from evaluator.offline import GraphContext
from evaluator.online import StateMapper, similarity_settings
from graph_builder.errors import GraphBuilderError
from graph_builder.io import DemoWriter, load_task, read_json
from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    ActionType,
    Demonstration,
    Node,
    NodeKind,
    ResetRecipe,
    TaskGraph,
    rescale_point,
)
from graph_builder.phash import compute_phash
from graph_builder.screen import Screen

SOURCE = "explored"
SWIPE_SPAN = 0.4  # of the screen, for a swipe known only by its direction
_SWIPES = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
Progress = Callable[[str], None]
_POINTED: dict[ActionType, Callable[..., Action]] = {
    ActionType.TAP: Action.tap,
    ActionType.LONG_PRESS: Action.long_press,
    ActionType.DOUBLE_TAP: Action.double_tap,
}


class ExploreError(EvaluatorError):
    """A branch cannot be explored (names the task, the group and why)."""


@dataclass(frozen=True, slots=True)
class ScriptStep:
    """One scripted action; ``element`` (resource-id, text, description) aims it."""

    action: Action
    element: tuple[str, str, str] | None = None


@dataclass(frozen=True, slots=True)
class Explored:
    demo: Demonstration
    folder: Path
    node: str  # the node the branch leaves, in the graph explored
    path: DemonstratedPath  # the demonstrated steps driven to reach it


def valid_mark(task_dir: Path, group: str) -> Mark:
    """The mark of ``group`` in a task folder; refused unless it is ``valid``."""
    marks = load_marks(task_dir)
    mark = next((m for m in marks if m.group == group), None)
    if mark is None:
        known = ", ".join(m.group for m in marks) or "none"
        raise ExploreError(f"{task_dir}: no mark on group {group!r} (marked groups: {known})")
    if mark.verdict is not Verdict.VALID:
        raise ExploreError(
            f"{task_dir}: group {group} is marked {mark.verdict.value!r} by "
            f"{mark.annotator}; only a group marked 'valid' is explored"
        )
    return mark


def mark_node(graph: TaskGraph, mark: Mark) -> Node:
    """The node the mark was made on: the one sharing a demonstration step with it."""
    for node in graph.nodes:
        if mark.covers_node({(m.demo_id, m.step) for m in node.members}):
            return node
    raise ExploreError(
        f"group {mark.group}: no node of the graph holds the marked node's demonstration "
        f"steps {list(mark.node_members)}; was the graph rebuilt without them?"
    )


def path_to(graph: TaskGraph, node_id: str) -> DemonstratedPath:
    """The shortest demonstrated way from START to ``node_id`` (the start of a path)."""
    start = graph.start
    paths, _ = demonstrated_paths(graph)
    if start is not None and start.id == node_id:
        return DemonstratedPath(paths[0].demos if paths else (), ())
    best: DemonstratedPath | None = None
    for path in paths:
        for i, step in enumerate(path.steps):
            if step.edge.target == node_id and (best is None or i + 1 < len(best.steps)):
                best = DemonstratedPath(path.demos, path.steps[: i + 1])
    if best is None:
        raise ExploreError(f"no demonstrated path of the graph reaches node {node_id}")
    return best


def group_action(target: Target, live: Screen) -> Action:
    """The marked action, aimed on the live screen (an element where it is now)."""
    kind = ActionType(target.action_type)
    w, h = live.size
    if kind in _POINTED:
        point = target.point or (500.0, 500.0)
        x, y = rescale_point(point[0], point[1], NORMALIZED_SCREEN, live.size)
        action = _POINTED[kind](x, y, screen=live.size)
        return _aimed(action, target.element, live, f"the group's {target.describe()}")
    if kind is ActionType.SWIPE and target.value in _SWIPES:
        dx, dy = _SWIPES[target.value]
        cx, cy = w / 2, h / 2
        span = SWIPE_SPAN / 2
        return Action.swipe(
            cx - dx * w * span,
            cy - dy * h * span,
            cx + dx * w * span,
            cy + dy * h * span,
            screen=live.size,
        )
    if kind is ActionType.TYPE:
        return Action.type_text(target.value)
    if kind is ActionType.KEY:
        return Action.key(target.value)
    if kind is ActionType.LAUNCH:
        return Action.launch(target.value)
    if kind in (ActionType.BACK, ActionType.HOME):
        return Action(kind)
    raise ExploreError(f"cannot perform the group's {target.describe()} on the phone")


def _aimed(action: Action, element: tuple[str, str, str] | None, live: Screen, what: str) -> Action:
    """``action`` aimed at ``element`` on ``live`` (the point when it has no element)."""
    hierarchy = live.hierarchy()
    if element is None or hierarchy is None or not any(element):
        return action
    assert action.x is not None and action.y is not None
    rid, text, desc = element
    target = ElementTarget(rid, text, desc, "", "", True, (action.x, action.y))
    found = locate(target, hierarchy)
    if found.element is None:
        raise ExploreError(f"{what}: {found.note} on the phone's screen")
    x, y = aim(target, found.element)
    return replace(action, x=x, y=y, screen=live.size, element=found.element.ref())


def load_script(path: Path) -> list[ScriptStep]:
    """A continuation script: a JSON list of actions (see the module's docstring)."""
    try:
        data = read_json(path)
    except GraphBuilderError as exc:
        raise ExploreError(str(exc)) from exc
    if not isinstance(data, list):
        raise ExploreError(f"{path}: a script is a JSON list of actions")
    return [_script_step(entry, f"{path}: action {i + 1}") for i, entry in enumerate(data)]


def _script_step(entry: Any, where: str) -> ScriptStep:
    if not isinstance(entry, dict):
        raise ExploreError(f"{where}: expected a JSON object")
    entry = dict(entry)
    named = entry.pop("element", None)
    element: tuple[str, str, str] | None = None
    if named is not None:
        if not isinstance(named, dict) or not any(
            isinstance(named.get(k), str) and named.get(k)
            for k in ("resource_id", "text", "content_desc")
        ):
            raise ExploreError(f"{where}: 'element' names none of resource_id, text, content_desc")
        element = (
            str(named.get("resource_id") or ""),
            str(named.get("text") or ""),
            str(named.get("content_desc") or ""),
        )
        entry.setdefault("x", 500)
        entry.setdefault("y", 500)
        entry.setdefault("screen", list(NORMALIZED_SCREEN))
    try:
        action = Action.from_json(entry, where=where)
    except GraphBuilderError as exc:
        raise ExploreError(str(exc)) from exc
    if element is not None and not action.type.is_pointed:
        raise ExploreError(f"{where}: only a pointed action names an element")
    return ScriptStep(action, element)


class _Recording:
    """The new demonstration, written step by step before each action is performed."""

    def __init__(self, writer: DemoWriter, device: Device) -> None:
        self.writer, self.device = writer, device

    def save(self, live: Screen, action: Action) -> None:
        png = live.png()
        with Image.open(io.BytesIO(png)) as image:
            phash = compute_phash(image, live.hierarchy())
        self.writer.add_step(
            png,
            live.hierarchy_xml(),
            action=action,
            activity=live.activity,
            screen=live.size,
            time=time.time(),
            phash=phash,
            performed=action.type is ActionType.DONE,
        )

    def act(self, live: Screen, action: Action) -> Screen:
        """Save the step, perform it, and return the settled screen after it."""
        self.save(live, action)
        self.device.perform(action)
        self.writer.mark_performed()
        self.device.wait_until_settled(SETTLE_TIMEOUT)
        return self.device.observe()


def explore(
    suite: Path,
    task_id: str,
    group: str,
    device: Device,
    demos_root: Path,
    *,
    script: Sequence[ScriptStep] | None = None,
    rest_on_graph: bool = False,
    annotator: str = "",
    demo_id: str | None = None,
    progress: Progress = lambda line: None,
) -> Explored:
    """Record the branch of ``group`` (marked ``valid``) as a demonstration under
    ``demos_root``: complete when ``script`` and/or ``rest_on_graph`` (from the node the
    phone is then on, a demonstrated way to DONE) finish it, else left for a person."""
    task_dir = Path(suite) / task_id
    where = f"task {task_id}, group {group}"
    try:
        task = load_task(task_dir)
        mark = valid_mark(task_dir, group)
        context = GraphContext.load(task_dir)
    except GraphBuilderError as exc:
        raise ExploreError(f"{where}: {exc}") from exc
    node = mark_node(context.graph, mark)
    path = path_to(context.graph, node.id)
    recipe = task.reset or (ResetRecipe(task.app) if task.app else None)
    if recipe is None:
        raise ExploreError(f"{where}: the task has no reset recipe and no app")
    try:
        writer = DemoWriter.create(
            demos_root,
            task,
            device=device.info(),
            annotator=annotator,
            demo_id=demo_id or f"explore-{group}",
            source=SOURCE,
        )
    except GraphBuilderError as exc:
        raise ExploreError(f"{where}: {exc}") from exc
    recording = _Recording(writer, device)
    try:
        progress(f"{where}: driving to node {node.id} along {path.describe()}")
        walked = drive(
            context,
            device,
            recipe,
            path,
            on_step=lambda _node, live, action: recording.save(live, action),
            progress=progress,
        )
        if walked.drift is not None:
            raise ExploreError(
                f"{where}: could not reach node {node.id}: {walked.drift.describe()}"
            )
        if path.steps:
            writer.mark_performed()
        live = device.observe()
        branch = group_action(mark.target, live)
        progress(f"  {node.id}: the branch, {mark.target.describe()}")
        live = recording.act(live, branch)
    except (ExploreError, DeviceError, GraphBuilderError) as exc:
        shutil.rmtree(writer.folder, ignore_errors=True)  # our own, without the branch
        if isinstance(exc, ExploreError):
            raise
        raise ExploreError(f"{where}: {exc}") from exc
    if script is not None or rest_on_graph:
        try:
            live = _continue(recording, live, script or (), where, progress)
            if rest_on_graph:
                live = _rest_on_graph(recording, context, recipe, live, where, progress)
            recording.save(live, Action.done())
            writer.finish()
        except (ExploreError, DeviceError, GraphBuilderError) as exc:
            # The branch is recorded: keep it for a person to finish in the studio.
            raise ExploreError(
                f"{where}: {exc}; the demonstration {writer.folder} is kept incomplete, "
                "finish it in the studio"
            ) from exc
    return Explored(writer.demo, writer.folder, node.id, path)


def _continue(
    recording: _Recording,
    live: Screen,
    script: Sequence[ScriptStep],
    where: str,
    progress: Progress,
) -> Screen:
    """Perform the script from ``live`` (up to a ``done``); the screen it leaves."""
    for i, step in enumerate(script):
        action = step.action
        if action.type is ActionType.DONE:
            break
        if action.type.is_pointed:
            action = _aimed(
                action.to_device(live.size), step.element, live, f"{where}: script action {i + 1}"
            )
        progress(f"  script {i + 1}: {live.describe(action)}")
        live = recording.act(live, action)
    return live


def path_from(graph: TaskGraph, node_id: str) -> DemonstratedPath:
    """The shortest demonstrated way from ``node_id`` on to DONE (none from DONE)."""
    if graph.node(node_id).kind is NodeKind.DONE:
        return DemonstratedPath((), ())
    best: DemonstratedPath | None = None
    for path in demonstrated_paths(graph)[0]:
        for i, step in enumerate(path.steps):
            if step.edge.source == node_id and (
                best is None or len(path.steps) - i < len(best.steps)
            ):
                best = DemonstratedPath(path.demos, path.steps[i:])
    if best is None:
        raise ExploreError(f"no demonstrated path of the graph goes on from node {node_id}")
    return best


def _rest_on_graph(
    recording: _Recording,
    context: GraphContext,
    recipe: ResetRecipe,
    live: Screen,
    where: str,
    progress: Progress,
) -> Screen:
    """Follow the graph from the node the phone is on to DONE, recording each step."""
    here, why = StateMapper(context, similarity_settings(context)).node_for(live)
    if here is None:
        raise ExploreError(f"{where}: the phone's screen is {why}; there is no way on to follow")
    rest = path_from(context.graph, here)
    progress(f"  back on the graph at {here}: on along {rest.describe()}")
    walked = drive(
        context,
        recording.device,
        recipe,
        rest,
        here=here,
        on_step=lambda _node, screen, action: recording.save(screen, action),
        progress=progress,
    )
    if walked.drift is not None:
        raise ExploreError(f"{where}: following the graph from {here}: {walked.drift.describe()}")
    if rest.steps:
        recording.writer.mark_performed()
    return recording.device.observe()
