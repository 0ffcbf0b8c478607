"""Check a task graph before it is saved or used for evaluation.

Errors make a graph unusable (the builder will not write it over a valid one); warnings
point at something a person should look at.

>>> from graph_builder.model import ActionType, Edge, MatchRule, Node, NodeKind, TaskGraph
>>> def node(node_id, kind=NodeKind.STATE):
...     return Node(node_id, kind, f"nodes/{node_id}.png", (1080, 2400))
>>> def edge(edge_id, source, target, action=ActionType.BACK):
...     return Edge(edge_id, source, target, MatchRule(action))
>>> graph = TaskGraph("t", (node("start", NodeKind.START), node("n1"), node("n2"),
...                          node("done", NodeKind.DONE)),
...                   (edge("e1", "start", "n1"), edge("e2", "n1", "n2"), edge("e3", "n2", "done")))
>>> validate_graph(graph)
[]
>>> from dataclasses import replace
>>> e2 = replace(graph.edge("e2"), target="n9")
>>> broken = graph.with_changes(edges=tuple(e2 if e.id == "e2" else e for e in graph.edges))
>>> for problem in validate_graph(broken):
...     print(problem)
error [edge e2]: edge e2 goes to node 'n9', which does not exist
warning [node n2]: node n2 cannot be reached from START
warning [node done]: node done cannot be reached from START
warning [node start]: no DONE node can be reached from node start (a dead end)
warning [node n1]: no DONE node can be reached from node n1 (a dead end)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from graph_builder.graph_index import reachable_from, reaching
from graph_builder.model import (
    ActionType,
    Demonstration,
    Edge,
    MatchRule,
    MemberRef,
    NodeKind,
    TaskGraph,
)


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Problem:
    severity: Severity
    message: str
    node_id: str | None = None
    edge_id: str | None = None

    def __str__(self) -> str:
        where = (
            f"node {self.node_id}"
            if self.node_id
            else f"edge {self.edge_id}"
            if self.edge_id
            else ""
        )
        return f"{self.severity.value}{f' [{where}]' if where else ''}: {self.message}"


def has_errors(problems: Iterable[Problem]) -> bool:
    return any(p.severity is Severity.ERROR for p in problems)


def validate_graph(graph: TaskGraph, demos: Iterable[Demonstration] | None = None) -> list[Problem]:
    """Every problem found, errors first. With ``demos``, member references are checked too."""
    problems: list[Problem] = []
    problems += _kinds(graph)
    problems += _endpoints(graph)
    problems += _rules(graph)
    problems += _members(graph, demos)
    problems += _reachability(graph)
    problems += _ambiguous_edges(graph)
    problems += _done_mid_path(graph, demos)
    return sorted(problems, key=lambda p: p.severity is not Severity.ERROR)


def _error(message: str, *, node: str | None = None, edge: str | None = None) -> Problem:
    return Problem(Severity.ERROR, message, node, edge)


def _warning(message: str, *, node: str | None = None, edge: str | None = None) -> Problem:
    return Problem(Severity.WARNING, message, node, edge)


def _kinds(graph: TaskGraph) -> list[Problem]:
    starts = [n.id for n in graph.nodes if n.kind is NodeKind.START]
    out: list[Problem] = []
    if not starts:
        out.append(_error("the graph has no START node; mark the first screen as START"))
    elif len(starts) > 1:
        out.append(
            _error(
                f"the graph has {len(starts)} START nodes ({', '.join(starts)}); keep exactly one"
            )
        )
    if not graph.done_nodes:
        out.append(
            _error("the graph has no DONE node; mark the screen where the task is complete as DONE")
        )
    return out


def _endpoints(graph: TaskGraph) -> list[Problem]:
    ids = {n.id for n in graph.nodes}
    out: list[Problem] = []
    for edge in graph.edges:
        for end, node_id in (("comes from", edge.source), ("goes to", edge.target)):
            if node_id not in ids:
                out.append(
                    _error(
                        f"edge {edge.id} {end} node {node_id!r}, which does not exist", edge=edge.id
                    )
                )
    return out


def _rules(graph: TaskGraph) -> list[Problem]:
    out: list[Problem] = []
    for edge in graph.edges:
        out += [_error(f"edge {edge.id}: {p}", edge=edge.id) for p in edge.rule.problems()]
        for support in edge.support:
            if support.action.type is not edge.rule.action_type:
                out.append(
                    _warning(
                        f"edge {edge.id} matches {edge.rule.action_type.value} actions but its "
                        f"supporting action {support.member} is a {support.action.type.value}",
                        edge=edge.id,
                    )
                )
    return out


def _members(graph: TaskGraph, demos: Iterable[Demonstration] | None) -> list[Problem]:
    out: list[Problem] = []
    owners: Counter[MemberRef] = Counter(m for n in graph.nodes for m in n.members)
    for member, count in owners.items():
        if count > 1:
            holders = [n.id for n in graph.nodes if member in n.members]
            out.append(_error(f"screen {member} belongs to {count} nodes ({', '.join(holders)})"))
    if demos is None:
        return out
    steps = {d.id: len(d.steps) for d in demos}

    def known(member: MemberRef) -> bool:
        return member.demo_id in steps and 0 <= member.step < steps[member.demo_id]

    for node in graph.nodes:
        missing = [str(m) for m in node.members if not known(m)]
        if missing:
            out.append(
                _error(
                    f"node {node.id} refers to screens that no demonstration has: "
                    f"{', '.join(missing)}",
                    node=node.id,
                )
            )
    for edge in graph.edges:
        missing = [str(s.member) for s in edge.support if not known(s.member)]
        if missing:
            out.append(
                _error(
                    f"edge {edge.id} is supported by steps that no demonstration has: "
                    f"{', '.join(missing)}",
                    edge=edge.id,
                )
            )
    return out


def _reachability(graph: TaskGraph) -> list[Problem]:
    start = graph.start
    out: list[Problem] = []
    if start is not None:
        seen = reachable_from(graph, start.id)
        out += [
            _warning(f"node {n.id} cannot be reached from START", node=n.id)
            for n in graph.nodes
            if n.id not in seen
        ]
    done = [n.id for n in graph.done_nodes]
    if done:
        ok = reaching(graph, done)
        out += [
            _warning(f"no DONE node can be reached from node {n.id} (a dead end)", node=n.id)
            for n in graph.nodes
            if n.id not in ok
        ]
    return out


def _accepts_point(rule: MatchRule, x: float, y: float) -> bool:
    if rule.bounds is not None and rule.bounds.contains(x, y):
        return True
    return any(math.dist((x, y), p) <= rule.radius for p in rule.points)


def same_action(a: Edge, b: Edge) -> bool:
    """Does one edge's rule accept an action demonstrated on the other (taps: the point)?"""
    if a.rule.action_type is not b.rule.action_type:
        return False
    t = a.rule.action_type
    if t.is_pointed:
        for one, other in ((a, b), (b, a)):
            for support in one.support:
                point = support.action.normalized().point
                if point is not None and _accepts_point(other.rule, *point):
                    return True
        return False
    if t is ActionType.SWIPE:
        return a.rule.direction is not None and a.rule.direction is b.rule.direction
    if t is ActionType.TYPE:
        texts = {" ".join(x.split()).casefold() for x in a.rule.texts}
        return any(" ".join(x.split()).casefold() in texts for x in b.rule.texts)
    return True  # back, home, wait: one key, one meaning


def _ambiguous_edges(graph: TaskGraph) -> list[Problem]:
    """The same action demonstrated from one node to two different nodes."""
    out: list[Problem] = []
    by_source: dict[str, list[Edge]] = {}
    for edge in graph.edges:
        by_source.setdefault(edge.source, []).append(edge)
    for source, edges in by_source.items():
        for i, a in enumerate(edges):
            for b in edges[i + 1 :]:
                if a.target == b.target or not same_action(a, b):
                    continue
                loop = next((e for e in (a, b) if e.source == e.target), None)
                if loop is not None:
                    other = b if loop is a else a
                    hint = (
                        f"edge {loop.id} changes nothing (an action that did nothing?), so "
                        f"the offline protocol takes {other.id}, which leaves the node"
                    )
                else:
                    hint = (
                        "the offline protocol takes the better match, and the first edge on a "
                        "tie; merge the two targets if they are one screen, or edit a rule"
                    )
                out.append(
                    _warning(
                        f"ambiguous edges from node {source}: {a.id} (to {a.target}) and "
                        f"{b.id} (to {b.target}) accept the same "
                        f"{a.rule.action_type.value}; {hint}",
                        node=source,
                        edge=a.id,
                    )
                )
    return out


def _done_mid_path(graph: TaskGraph, demos: Iterable[Demonstration] | None) -> list[Problem]:
    """DONE nodes that a demonstration went on from: is the task really complete there?"""
    out: list[Problem] = []
    steps = {d.id: len(d.steps) for d in demos} if demos is not None else {}
    leaving = {e.source for e in graph.edges if e.source != e.target}
    for node in graph.done_nodes:
        middle = [
            str(m) for m in node.members if m.demo_id in steps and m.step < steps[m.demo_id] - 1
        ]
        if middle:
            out.append(
                _warning(
                    f"DONE node {node.id} holds screens from the middle of a demonstration "
                    f"({', '.join(middle[:3])}{', ...' if len(middle) > 3 else ''}): check "
                    "that the task is complete on that screen",
                    node=node.id,
                )
            )
        elif node.id in leaving:
            out.append(
                _warning(
                    f"DONE node {node.id} has edges to other nodes (a path goes on from it): "
                    "check that the task is complete on that screen",
                    node=node.id,
                )
            )
    return out
