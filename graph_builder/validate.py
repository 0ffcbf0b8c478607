"""Check a task graph before it is saved or used for evaluation.

Errors make a graph unusable (the builder will not write it over a valid one); warnings
point at something a person should look at.

>>> for problem in validate_graph(graph):  # doctest: +SKIP
...     print(problem)
error [edge e4]: edge e4 goes to node 'n9', which does not exist
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from graph_builder.graph_index import reachable_from, reaching
from graph_builder.model import Demonstration, MemberRef, NodeKind, TaskGraph


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
