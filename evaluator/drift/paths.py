"""The paths people demonstrated through a task graph, one per distinct edge sequence.

Each demonstration that the graph was built from left support on the edges it took, in
step order; read back, those supports give the demonstration's path from START to DONE.
Two demonstrations that took the same edges make one path (walked once), and edges
added by hand (no support) belong to no path: nobody demonstrated them on a phone.
"""

from __future__ import annotations

from dataclasses import dataclass

from graph_builder.model import Action, Edge, NodeKind, TaskGraph


@dataclass(frozen=True, slots=True)
class Step:
    """One edge of a path and the action a demonstration took on it."""

    edge: Edge
    action: Action


@dataclass(frozen=True, slots=True)
class DemonstratedPath:
    demos: tuple[str, ...]  # the demonstrations that took exactly these edges
    steps: tuple[Step, ...]

    @property
    def edge_ids(self) -> tuple[str, ...]:
        return tuple(step.edge.id for step in self.steps)

    def describe(self) -> str:
        return f"{'+'.join(self.demos)} ({' '.join(self.edge_ids)})"


def demonstrated_paths(graph: TaskGraph) -> tuple[list[DemonstratedPath], list[str]]:
    """The distinct demonstrated START-to-DONE paths, and notes on demonstrations skipped
    because their edges do not chain from START to a DONE node (a graph edited by hand).
    """
    by_demo: dict[str, list[tuple[int, Step]]] = {}
    for edge in graph.edges:
        for support in edge.support:
            by_demo.setdefault(support.member.demo_id, []).append(
                (support.member.step, Step(edge, support.action))
            )
    start = graph.start
    paths: dict[tuple[str, ...], DemonstratedPath] = {}
    notes: list[str] = []
    for demo in sorted(by_demo):
        steps = tuple(step for _, step in sorted(by_demo[demo], key=lambda item: item[0]))
        problem = _chain_problem(graph, steps, start.id if start else None)
        if problem:
            notes.append(f"demonstration {demo} is not walked: {problem}")
            continue
        key = tuple(step.edge.id for step in steps)
        known = paths.get(key)
        demos = (*known.demos, demo) if known else (demo,)
        paths[key] = DemonstratedPath(demos, steps)
    return list(paths.values()), notes


def _chain_problem(graph: TaskGraph, steps: tuple[Step, ...], start: str | None) -> str:
    at = start
    for step in steps:
        if step.edge.source != at:
            return f"edge {step.edge.id} leaves {step.edge.source}, not {at}"
        at = step.edge.target
    if at is None or graph.node(at).kind is not NodeKind.DONE:
        return f"its last edge ends on {at}, not a DONE node"
    return ""
