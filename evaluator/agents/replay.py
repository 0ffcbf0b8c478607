"""The replay oracle: repeats a recorded demonstration, or walks the task graph.

With ``demos`` (a demonstrations root, ``<root>/<task_id>/<demo_id>/demo.json``) it repeats
one complete demonstration of the task action by action, offline and online. Without
demos it follows the task graph it is shown (offline, or online when states are mapped
onto the graph): the first edge of a shortest path to a DONE node, using the edge's
demonstrated action. On graphs built from its own demos it must score 100% offline.

As an oracle it also knows the task: when it says done on a task that asks a question
about the phone, it says the task's first accepted answer with it. It never asks the
user: it knows which way to go.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluator.agents.base import AgentObservation, AgentStep, BaseAgent
from evaluator.agents.families.grammar import swipe_towards
from evaluator.errors import AgentError
from graph_builder.errors import GraphBuilderError
from graph_builder.io import iter_demos
from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    ActionType,
    DemoStatus,
    Edge,
    InstructionVariant,
    NodeKind,
    Task,
    TaskGraph,
)


def action_for_edge(edge: Edge) -> Action:
    """A representative action that the edge accepts: its first demonstrated action, or one
    made from its matching rule."""
    if edge.support:
        return edge.support[0].action
    rule = edge.rule
    t = rule.action_type
    if t.is_pointed:
        x, y = rule.bounds.center if rule.bounds is not None else rule.points[0]
        return Action(t, x=x, y=y, screen=NORMALIZED_SCREEN)
    if t is ActionType.SWIPE:
        assert rule.direction is not None
        return swipe_towards(rule.direction.value, NORMALIZED_SCREEN)
    if t is ActionType.TYPE:
        return Action.type_text(rule.texts[0])
    return Action(t)


def next_edges_to_done(graph: TaskGraph) -> dict[str, Edge]:
    """For every node that can reach a DONE node, the first edge of a shortest such path."""
    incoming: dict[str, list[Edge]] = {}
    for e in graph.edges:
        incoming.setdefault(e.target, []).append(e)
    best: dict[str, Edge] = {}
    seen = {n.id for n in graph.done_nodes}
    queue = deque(seen)
    while queue:
        node = queue.popleft()
        for e in incoming.get(node, []):
            if e.source not in seen:
                seen.add(e.source)
                best[e.source] = e
                queue.append(e.source)
    return best


class ReplayAgent(BaseAgent):
    name = "replay"

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__(config)
        demos = self.config.get("demos")
        self.demos_root = Path(demos) if demos else None
        self.demo_id: str | None = self.config.get("demo_id")
        self._actions: list[Action] | None = None
        self._index = 0
        self._plan_graph: TaskGraph | None = None
        self._plan: dict[str, Edge] = {}

    def reset(self, task: Task, variant: InstructionVariant) -> None:
        super().reset(task, variant)
        self._index = 0
        self._actions = self._load_demo(task) if self.demos_root else None

    def _load_demo(self, task: Task) -> list[Action] | None:
        assert self.demos_root is not None
        try:
            demos = [d for _, d in iter_demos(self.demos_root, task.id)]
        except GraphBuilderError as exc:
            raise AgentError(f"cannot read the demonstrations of {task.id}: {exc}") from exc
        usable = [d for d in demos if d.status is DemoStatus.COMPLETE and d.is_finished]
        if self.demo_id is not None:
            usable = [d for d in usable if d.id == self.demo_id]
        return [s.action for s in usable[0].steps] if usable else None

    def step(self, observation: AgentObservation) -> AgentStep:
        step = self._next(observation)
        if step.action is not None and step.action.type is ActionType.DONE:
            answers = self.task.answers if self.task is not None else ()
            if answers and not step.action.text:
                said = replace(step.action, text=answers[0])
                return AgentStep(action=said, raw_output=said.describe(), reasoning=step.reasoning)
        return step

    def _next(self, observation: AgentObservation) -> AgentStep:
        if self._actions is not None:
            action = (
                self._actions[self._index] if self._index < len(self._actions) else Action.done()
            )
            self._index += 1
            return AgentStep(
                action=action,
                raw_output=action.describe(),
                reasoning=f"demonstration step {self._index - 1}",
            )
        graph, node_id = observation.graph, observation.node_id
        if graph is None or node_id is None:
            where = f" in {self.demos_root}" if self.demos_root else ""
            raise AgentError(
                f"the replay agent found no complete demonstration of {observation.task_id}"
                f"{where} and has no task graph to follow; pass --demos"
            )
        if graph.node(node_id).kind is NodeKind.DONE:
            return AgentStep(
                action=Action.done(), raw_output="done", reasoning=f"{node_id} is DONE"
            )
        if graph is not self._plan_graph:
            self._plan_graph, self._plan = graph, next_edges_to_done(graph)
        edge = self._plan.get(node_id)
        if edge is None:
            return AgentStep(
                action=Action.done(),
                raw_output="done",
                reasoning=f"no path from {node_id} to a DONE node",
            )
        action = action_for_edge(edge)
        return AgentStep(action=action, raw_output=action.describe(), reasoning=f"edge {edge.id}")
