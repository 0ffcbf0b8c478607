"""Import a ColorBench graph (``data/graph.json``) as one task graph with bounds rules.

ColorBench (MadeAgents/ColorBench) ships a graph of screenshots, not demonstrations: a JSON
object ``{source_image: {target_image: [action, ...]}}``, and the images in a separate
folder. An action is ``click`` or ``long_press`` with ``x, y`` and ``bbox``
``[left, top, right, bottom]`` in screenshot pixels (either may be missing), ``swipe``
with the finger's ``direction`` (and sometimes ``x1, y1, x2, y2``), ``type`` with
``text``, ``wait``, ``system_button`` with ``button`` back or home, and ``open`` with an
``app``. An empty list is a transition without a recorded action. There is no hierarchy.

A task is the part of the graph between a start screenshot and one or more done
screenshots: every node reachable from the start that can reach a done one. Each action
becomes an edge whose rule is the bbox (and the point, within ``radius``) in ``[0,1000]``
space, the direction, the text, or the key. ``open`` (launching an app by name) and empty
transitions have no rule in this protocol and are left out, each with a note. The task
folder gets ``graph.json``, ``task.json`` and ``nodes/<id>.png`` (the images converted to
PNG); ``graph.meta["colorbench_images"]`` keeps each node's original image name.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from graph_builder.errors import FormatError, GraphBuilderError
from graph_builder.importers.writing import input_file, png_bytes
from graph_builder.io import (
    NODES_DIR,
    make_temp_dir,
    read_json,
    save_graph,
    save_task,
)
from graph_builder.model import (
    NORMALIZED_SCREEN,
    ActionType,
    Bounds,
    Edge,
    MatchRule,
    Node,
    NodeKind,
    SwipeDirection,
    Task,
    TaskGraph,
    rescale_point,
    validate_id,
)

_KEYS = {"back": ActionType.BACK, "home": ActionType.HOME}


@dataclass(frozen=True, slots=True)
class GraphImportResult:
    folder: Path
    graph: TaskGraph
    notes: tuple[str, ...] = ()


def load_colorbench_graph(path: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    data = read_json(Path(path))
    ok = isinstance(data, dict) and all(
        isinstance(v, dict) and all(isinstance(a, list) for a in v.values()) for v in data.values()
    )
    if not ok:
        raise FormatError(
            "not a ColorBench graph: expected {source_image: {target_image: [actions]}}",
            source=path,
        )
    return data


def _task_part(
    graph: dict[str, dict[str, list[dict[str, Any]]]], start: str, done: set[str]
) -> list[str]:
    """Images reachable from ``start`` that can reach a done image, start first, BFS order."""
    order, seen, queue = [], {start}, deque([start])
    while queue:
        image = queue.popleft()
        order.append(image)
        for target in graph.get(image, {}):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    reverse: dict[str, set[str]] = {}
    for source, targets in graph.items():
        for target in targets:
            reverse.setdefault(target, set()).add(source)
    useful, queue = set(done), deque(done)
    while queue:
        for source in reverse.get(queue.popleft(), ()):
            if source not in useful:
                useful.add(source)
                queue.append(source)
    return [i for i in order if i in useful]


def _norm_box(box: object, size: tuple[int, int]) -> Bounds | None:
    if not (isinstance(box, list) and len(box) == 4):
        return None
    try:
        left, top, right, bottom = (float(v) for v in box)
    except (TypeError, ValueError):
        return None
    w, h = size
    left, right = sorted((min(max(left, 0), w), min(max(right, 0), w)))
    top, bottom = sorted((min(max(top, 0), h), min(max(bottom, 0), h)))
    if right <= left or bottom <= top:
        return None
    x1, y1 = rescale_point(left, top, size, NORMALIZED_SCREEN)
    x2, y2 = rescale_point(right, bottom, size, NORMALIZED_SCREEN)
    return Bounds(x1, y1, x2, y2)


def action_rule(action: dict[str, Any], size: tuple[int, int], radius: float) -> MatchRule:
    """One ColorBench action as a MatchRule (ValueError when it has none here)."""
    kind = str(action.get("action_type", "")).lower()
    if kind in ("click", "long_press"):
        t = ActionType.TAP if kind == "click" else ActionType.LONG_PRESS
        bounds = _norm_box(action.get("bbox"), size)
        points: tuple[tuple[float, float], ...] = ()
        if isinstance(action.get("x"), int | float) and isinstance(action.get("y"), int | float):
            points = (
                rescale_point(float(action["x"]), float(action["y"]), size, NORMALIZED_SCREEN),
            )
        if bounds is None and not points:
            raise ValueError(f"{kind} without a usable bbox or point")
        return MatchRule(t, bounds=bounds, points=points, radius=radius)
    if kind == "swipe":
        try:
            direction = SwipeDirection(str(action.get("direction", "")).lower())
        except ValueError:
            raise ValueError(f"swipe direction {action.get('direction')!r}") from None
        return MatchRule(ActionType.SWIPE, direction=direction)
    if kind == "type":
        text = str(action.get("text") or "")
        if not text:
            raise ValueError("type without a text")
        return MatchRule(ActionType.TYPE, texts=(text,))
    if kind == "wait":
        return MatchRule(ActionType.WAIT)
    if kind == "system_button" and str(action.get("button", "")).lower() in _KEYS:
        return MatchRule(_KEYS[str(action["button"]).lower()])
    raise ValueError(f"a {kind or 'missing'} action has no matching rule in this protocol")


def import_colorbench(
    graph_file: Path,
    *,
    task_id: str,
    suite_dir: Path,
    images: Path,
    start: str,
    done: list[str],
    instruction: str,
    radius: float = 50.0,
) -> GraphImportResult:
    """Write the task between ``start`` and ``done`` as ``<suite_dir>/<task_id>/``."""
    validate_id(task_id, "task id")
    out = Path(suite_dir) / task_id
    if out.exists():
        raise GraphBuilderError(f"{out} already exists; import into a new task id")
    graph = load_colorbench_graph(graph_file)
    known = set(graph) | {t for targets in graph.values() for t in targets}
    for name in (start, *done):
        if name not in known:
            raise FormatError(f"{name!r} is not a screenshot of the graph", source=graph_file)
    part = _task_part(graph, start, set(done))
    if start not in part:
        raise FormatError(f"no done screenshot can be reached from {start!r}", source=graph_file)
    files = {name: input_file(images, name, source=graph_file) for name in part}
    missing = [name for name in part if not files[name].is_file()]
    if missing:
        raise FormatError(
            f"{len(missing)} screenshots of the task are not in the images folder, e.g. "
            f"{missing[0]!r}",
            source=images,
        )
    ids: dict[str, str] = {}
    counts = {NodeKind.STATE: 0, NodeKind.DONE: 0}
    for name in part:
        kind = (
            NodeKind.START if name == start else NodeKind.DONE if name in done else NodeKind.STATE
        )
        if kind is NodeKind.START:
            ids[name] = "start"
        else:
            counts[kind] += 1
            n = counts[kind]
            ids[name] = f"n{n}" if kind is NodeKind.STATE else ("done" if n == 1 else f"done{n}")
    sizes = {}
    for name in part:
        with Image.open(files[name]) as image:
            sizes[name] = image.size
    notes: list[str] = []
    edges: list[Edge] = []
    for source in part:
        for target, actions in graph.get(source, {}).items():
            if target not in ids:
                continue
            if not actions:
                notes.append(f"{ids[source]} -> {ids[target]}: no recorded action, left out")
            for action in actions:
                try:
                    rule = action_rule(action, sizes[source], radius)
                except ValueError as exc:
                    notes.append(f"{ids[source]} -> {ids[target]}: {exc}, left out")
                    continue
                edges.append(Edge(f"e{len(edges) + 1}", ids[source], ids[target], rule))
    nodes = [
        Node(
            ids[name],
            NodeKind.START if name == start else NodeKind.DONE if name in done else NodeKind.STATE,
            f"{NODES_DIR}/{ids[name]}.png",
            sizes[name],
        )
        for name in part
    ]
    order = {NodeKind.START: 0, NodeKind.STATE: 1, NodeKind.DONE: 2}
    nodes.sort(key=lambda n: order[n.kind])
    task_graph = TaskGraph(
        task_id=task_id,
        nodes=tuple(nodes),
        edges=tuple(edges),
        meta={"source": "colorbench", "colorbench_images": {ids[n]: n for n in part}},
    )
    parent = Path(suite_dir)
    parent.mkdir(parents=True, exist_ok=True)
    # A name of its own (two imports never share it) and the mode the umask gives.
    tmp = make_temp_dir(parent, f".{task_id}.importing-{uuid.uuid4().hex[:12]}")
    try:
        (tmp / NODES_DIR).mkdir()
        for name in part:
            (tmp / NODES_DIR / f"{ids[name]}.png").write_bytes(png_bytes(files[name]))
        save_graph(task_graph, tmp)
        save_task(Task(id=task_id, instruction=instruction), tmp)
        _put_in_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return GraphImportResult(out, task_graph, tuple(notes))


def _put_in_place(tmp: Path, out: Path) -> None:
    """Rename the finished folder to ``out``; never replaces a task that appeared meanwhile."""
    try:
        os.rename(tmp, out)  # refused when ``out`` is a folder with content
    except OSError as exc:
        raise GraphBuilderError(
            f"{out} appeared while importing (another import of the same task?); it was "
            "left as it is: import into a new task id"
        ) from exc
