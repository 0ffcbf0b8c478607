"""What the graph did not credit: offline steps whose action matched no outgoing edge,
grouped across runs and agents.

Two unmatched steps are in one group when they were taken on the same node of the same
suite task with the same action type and aimed at the same target:

- taps and long presses on an element that has a resource-id, text or content
  description: the same element by those three (found in the action itself, else in the
  node's hierarchy under the point);
- other taps: points within the node's tolerance (the largest radius of its outgoing
  edges, 50 units of ``[0,1000]`` by default) of the group's first point, points taken in
  order of their coordinates, so the same steps always give the same groups;
- swipes by finger direction, typed texts by their normalized text, keys and launches by
  name, back and home by type.

A group's id is a hash of the task, the node's first member (a demonstration step, which
a rebuild keeps, unlike node ids) and the target; a group that a person has marked keeps
the id of its mark (``evaluator.audit_marks``), so marks and ids survive rebuilds.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.audit_marks import Mark, Target, load_marks
from evaluator.errors import EvaluatorError, TaskSetupError
from evaluator.matching import canonical_key, normalize_text, swipe_direction
from evaluator.offline import GraphContext
from evaluator.records import StepRecord
from evaluator.run_store import RunStore
from graph_builder.errors import GraphBuilderError
from graph_builder.model import NORMALIZED_SCREEN, Action, ActionType, Node

DEFAULT_TOLERANCE = 50.0
_POINTED = (ActionType.TAP, ActionType.LONG_PRESS, ActionType.DOUBLE_TAP)


class AuditError(EvaluatorError):
    """The runs cannot be audited (no suite, runs of different suites, unknown group)."""


@dataclass(frozen=True, slots=True)
class UnmatchedStep:
    """One offline step whose action followed no edge. Geometry is in ``[0,1000]``."""

    run: str
    agent: str
    task_id: str
    node_id: str
    index: int
    action: dict[str, Any]
    action_text: str
    rule: str
    target: Target
    end: tuple[float, float] | None = None  # where a swipe ends
    element_bounds: tuple[float, float, float, float] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "agent": self.agent,
            "task_id": self.task_id,
            "node": self.node_id,
            "step": self.index,
            "action": self.action,
            "action_text": self.action_text,
            "rule": self.rule,
            "point": list(self.target.point) if self.target.point else None,
            "end": list(self.end) if self.end else None,
            "element_bounds": list(self.element_bounds) if self.element_bounds else None,
        }


@dataclass(frozen=True, slots=True)
class AuditGroup:
    id: str
    task_id: str
    node_id: str
    node_members: tuple[tuple[str, int], ...]
    screenshot: Path
    screen: tuple[int, int]  # the node's screen in device pixels (width, height)
    target: Target
    steps: tuple[UnmatchedStep, ...]
    mark: Mark | None

    @property
    def agents(self) -> list[str]:
        return sorted({s.agent for s in self.steps})

    @property
    def runs(self) -> list[str]:
        return sorted({s.run for s in self.steps})

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "task_id": self.task_id,
            "node": self.node_id,
            "node_members": [list(m) for m in self.node_members],
            "screenshot": str(self.screenshot),
            "screen": list(self.screen),
            "target": self.target.to_json(),
            "target_text": self.target.describe(),
            "count": len(self.steps),
            "agents": self.agents,
            "runs": self.runs,
            "mark": self.mark.to_json() if self.mark else None,
            "steps": [s.to_json() for s in self.steps],
        }


@dataclass(slots=True)
class Audit:
    suite: Path
    groups: list[AuditGroup] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # steps or tasks left out, and why

    def group(self, group_id: str) -> AuditGroup:
        for g in self.groups:
            if g.id == group_id:
                return g
        known = ", ".join(g.id for g in self.groups[:10]) or "none"
        raise AuditError(f"no audit group {group_id!r} in these runs (groups: {known})")

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": str(self.suite),
            "groups": [g.to_json() for g in self.groups],
            "notes": list(self.notes),
        }


def run_suite_dir(store: RunStore) -> Path | None:
    """The suite a run was evaluated on, as its run.json records it."""
    path = store.info().get("suite", {}).get("path")
    return Path(path) if path else None


def is_unmatched(step: StepRecord) -> bool:
    """A graph action that followed no edge (a wait that stays on its node is not)."""
    action = step.action or {}
    return step.matched is False and step.outcome is None and action.get("type") != "wait"


class NodeTargets:
    """Reads the target of unmatched actions on the nodes of one task's graph."""

    def __init__(self, context: GraphContext) -> None:
        self.context = context

    def node(self, node_id: str) -> Node | None:
        try:
            return self.context.graph.node(node_id)
        except (KeyError, GraphBuilderError):
            return None

    def tolerance(self, node_id: str) -> float:
        radii = [
            e.rule.radius
            for e in self.context.out_edges(node_id)
            if e.rule.action_type in _POINTED and e.rule.points
        ]
        return max(radii, default=DEFAULT_TOLERANCE)

    def unmatched(self, run: str, agent: str, task_id: str, step: StepRecord) -> UnmatchedStep:
        assert step.action is not None and step.node is not None
        action = Action.from_json(step.action)
        node = self.context.graph.node(step.node)
        target, end, bounds = self._target(action, node)
        return UnmatchedStep(
            run,
            agent,
            task_id,
            step.node,
            step.index,
            step.action,
            step.action_text,
            step.rule,
            target,
            end,
            bounds,
        )

    def _target(
        self, action: Action, node: Node
    ) -> tuple[Target, tuple[float, float] | None, tuple[float, float, float, float] | None]:
        t = action.type
        if t is ActionType.SWIPE:
            direction = swipe_direction(action, node.screen)
            n = action.rescaled(NORMALIZED_SCREEN)
            end = (_r(n.x2), _r(n.y2)) if n.x2 is not None and n.y2 is not None else None
            start = (_r(n.x), _r(n.y)) if n.x is not None and n.y is not None else None
            value = direction.value if direction else "too short"
            return Target(t.value, value=value, point=start), end, None
        if t is ActionType.TYPE:
            return Target(t.value, value=normalize_text(action.text or "")), None, None
        if t is ActionType.KEY:
            return Target(t.value, value=canonical_key(action.text or "")), None, None
        if t is ActionType.LAUNCH:
            return Target(t.value, value=(action.text or "").strip()), None, None
        if action.point is None:
            return Target(t.value), None, None
        n = action.rescaled(NORMALIZED_SCREEN)
        assert n.x is not None and n.y is not None
        point = (_r(n.x), _r(n.y))
        element = self._element(action, node)
        if element is None:
            return Target(t.value, point=point), None, None
        ident, b = element
        return Target(t.value, element=ident, point=point), None, b

    def _element(
        self, action: Action, node: Node
    ) -> tuple[tuple[str, str, str], tuple[float, float, float, float]] | None:
        """The targeted element's (resource-id, text, description) and its bounds in
        ``[0,1000]``; None when it has none of the three."""
        ref = action.rescaled(node.screen).element
        if ref is not None:
            ident = (ref.resource_id, ref.text, ref.content_desc)
            bounds = ref.bounds
        else:
            try:
                hierarchy = self.context.screen(node.id).hierarchy()
            except (GraphBuilderError, OSError):
                hierarchy = None
            device = action.rescaled(node.screen)
            if hierarchy is None or device.x is None or device.y is None:
                return None
            found = hierarchy.element_at(device.x, device.y)
            if found is None:
                return None
            ident = (found.resource_id, found.text, found.content_desc)
            bounds = found.bounds
        if not any(ident):
            return None
        w, h = node.screen
        scaled = (
            _r(bounds.left * 1000 / w),
            _r(bounds.top * 1000 / h),
            _r(bounds.right * 1000 / w),
            _r(bounds.bottom * 1000 / h),
        )
        return ident, scaled


def _r(value: float | None) -> float:
    return round(float(value or 0.0), 1)


def collect(
    runs: Sequence[Path],
    suite: Path | None = None,
    *,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> Audit:
    """Every unmatched offline step of ``runs``, grouped (see the module's doc);
    ``progress(done, total)`` is told how many of the runs have been read."""
    if not runs:
        raise AuditError("name at least one run folder to audit")
    stores = [RunStore.open(Path(r)) for r in runs]
    suite = _common_suite(stores, suite)
    audit = Audit(suite)
    contexts: dict[str, NodeTargets | None] = {}
    found: list[UnmatchedStep] = []
    for done, store in enumerate(stores):
        progress(done, len(stores))
        agent = str(store.info().get("agent", {}).get("name") or "?")
        for result in store.results():
            if result.protocol != "offline":
                continue
            steps = [s for s in store.read_steps(result.task_id) if is_unmatched(s)]
            if not steps:
                continue
            targets = _targets(contexts, suite, result.task_id, audit.notes)
            if targets is None:
                continue
            for step in steps:
                if step.node is None or targets.node(step.node) is None:
                    audit.notes.append(
                        f"{store.run_dir}: {result.task_id} step {step.index} was taken on node "
                        f"{step.node}, which the graph no longer has (rebuilt since the run)"
                    )
                    continue
                try:
                    found.append(targets.unmatched(str(store.run_dir), agent, result.task_id, step))
                except GraphBuilderError as exc:  # a damaged action in the trace
                    audit.notes.append(
                        f"{store.run_dir}: {result.task_id} step {step.index} left out: {exc}"
                    )
    progress(len(stores), len(stores))
    audit.groups = group_steps(found, contexts, suite)
    return audit


def _common_suite(stores: Sequence[RunStore], suite: Path | None) -> Path:
    if suite is not None:
        return Path(suite)
    suites = {run_suite_dir(s) for s in stores}
    if None in suites:
        raise AuditError("a run does not record its suite; name it with --suite")
    if len(suites) > 1:
        raise AuditError(
            "the runs were evaluated on different suites ("
            + ", ".join(sorted(str(s) for s in suites))
            + "); audit runs of one suite at a time"
        )
    (only,) = suites
    assert only is not None
    if not only.is_dir():
        raise AuditError(f"the runs' suite {only} is not there any more; name it with --suite")
    return only


def _targets(
    contexts: dict[str, NodeTargets | None], suite: Path, task_id: str, notes: list[str]
) -> NodeTargets | None:
    if task_id not in contexts:
        try:
            contexts[task_id] = NodeTargets(GraphContext.load(suite / task_id))
        except TaskSetupError as exc:
            notes.append(f"{task_id} left out: {exc}")
            contexts[task_id] = None
    return contexts[task_id]


def group_steps(
    steps: Iterable[UnmatchedStep], contexts: dict[str, NodeTargets | None], suite: Path
) -> list[AuditGroup]:
    """Group unmatched steps (by task, node, action type and target) and attach marks."""
    by_node: dict[tuple[str, str, str], list[UnmatchedStep]] = {}
    for s in steps:
        by_node.setdefault((s.task_id, s.node_id, s.target.action_type), []).append(s)
    groups: list[AuditGroup] = []
    marks_of: dict[str, list[Mark]] = {}
    for (task_id, node_id, _), node_steps in sorted(by_node.items()):
        targets = contexts[task_id]
        assert targets is not None
        node = targets.node(node_id)
        assert node is not None
        if task_id not in marks_of:
            marks_of[task_id] = load_marks(suite / task_id)
        members = {(m.demo_id, m.step) for m in node.members}
        marks = [m for m in marks_of[task_id] if m.covers_node(members)]
        clusters = _cluster(node_steps, marks, targets.tolerance(node_id))
        for anchor, members_steps in clusters:
            mark = next((m for m in marks if m.target.same_as(anchor)), None)
            groups.append(
                AuditGroup(
                    id=mark.group if mark else group_id(task_id, members, node_id, anchor),
                    task_id=task_id,
                    node_id=node_id,
                    node_members=tuple(sorted(members)),
                    screenshot=suite / task_id / node.screenshot,
                    screen=(int(node.screen[0]), int(node.screen[1])),
                    target=mark.target if mark else anchor,
                    steps=tuple(sorted(members_steps, key=lambda s: (s.run, s.index))),
                    mark=mark,
                )
            )
    groups.sort(key=lambda g: (g.task_id, -len(g.steps), g.id))
    return groups


def _cluster(
    steps: list[UnmatchedStep], marks: list[Mark], tolerance: float
) -> list[tuple[Target, list[UnmatchedStep]]]:
    """Steps by target. Identified targets group by equality; plain points join the first
    anchor within ``tolerance`` (marked points first, then points in coordinate order)."""
    exact: dict[str, tuple[Target, list[UnmatchedStep]]] = {}
    points: list[UnmatchedStep] = []
    for s in steps:
        if s.target.element is None and s.target.point is not None and not s.target.value:
            points.append(s)
        else:
            exact.setdefault(s.target.identity(), (s.target.anchor(), []))[1].append(s)
    anchors: list[tuple[Target, list[UnmatchedStep]]] = [
        (m.target.with_radius(tolerance), [])
        for m in marks
        if m.target.element is None and m.target.point is not None and not m.target.value
    ]
    for s in sorted(points, key=lambda s: (s.target.point, s.run, s.index)):
        assert s.target.point is not None
        for anchor, members in anchors:
            assert anchor.point is not None
            if math.dist(anchor.point, s.target.point) <= (anchor.radius or tolerance):
                members.append(s)
                break
        else:
            anchors.append((s.target.anchor().with_radius(tolerance), [s]))
    return [*exact.values(), *((a, m) for a, m in anchors if m)]


def group_id(task_id: str, members: set[tuple[str, int]], node_id: str, target: Target) -> str:
    """A short id that does not depend on node ids: task, first member, target."""
    first = "{}#{}".format(*min(members)) if members else f"node {node_id}"
    digest = hashlib.sha1(f"{task_id}|{first}|{target.identity()}".encode()).hexdigest()
    return f"g{digest[:10]}"


class MarkFinder:
    """The mark (if any) whose group an unmatched step of a suite's task falls in."""

    def __init__(self, suite: Path) -> None:
        self.suite = Path(suite)
        self._contexts: dict[str, NodeTargets | None] = {}
        self._marks: dict[str, list[Mark]] = {}

    def mark_of(self, task_id: str, step: StepRecord) -> Mark | None:
        targets = _targets(self._contexts, self.suite, task_id, [])
        if targets is None or step.node is None or targets.node(step.node) is None:
            return None
        if task_id not in self._marks:
            self._marks[task_id] = load_marks(self.suite / task_id)
        node = targets.node(step.node)
        assert node is not None
        members = {(m.demo_id, m.step) for m in node.members}
        try:
            target = targets.unmatched("", "", task_id, step).target
        except GraphBuilderError:  # a damaged action in the trace: no group, no mark
            return None
        tolerance = targets.tolerance(step.node)
        for mark in self._marks[task_id]:
            if mark.covers_node(members) and mark.target.with_radius(tolerance).same_as(target):
                return mark
        return None
