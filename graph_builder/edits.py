"""Graph edits as pure commands: ``command.apply(graph) -> (new_graph, inverse)``.

Applying the inverse to the new graph gives back a graph equal to the old one, so an undo
stack only keeps commands. Merges and splits also add Pins, so a rebuild from the
demonstrations keeps the decision.

Node images: a split creates a node whose ``nodes/<id>.png`` does not exist yet, and a
node whose first member (its representative) moved shows a stale image. The caller
refreshes them (``graph_builder.build.write_node_files``).

>>> from graph_builder.model import ActionType
>>> def node(node_id, kind=NodeKind.STATE, *steps):
...     members = [MemberRef("d1", step) for step in steps]
...     return Node(node_id, kind, f"nodes/{node_id}.png", (1080, 2400), members)
>>> back = MatchRule(ActionType.BACK)
>>> graph = TaskGraph("t", (node("start", NodeKind.START, 0), node("n1", NodeKind.STATE, 1),
...                          node("n2", NodeKind.STATE, 2), node("done", NodeKind.DONE, 3)),
...                   (Edge("e1", "start", "n1", back), Edge("e2", "n1", "n2", back),
...                    Edge("e3", "n2", "done", back)))
>>> graph2, undo = MergeNodes("n1", ("n2",)).apply(graph)
>>> [n.id for n in graph2.nodes], [(e.source, e.target) for e in graph2.edges][1]
(['start', 'n1', 'done'], ('n1', 'n1'))
>>> graph2.pins[0].kind.value, undo.apply(graph2)[0] == graph
('together', True)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from graph_builder.errors import GraphEditError
from graph_builder.model import (
    Edge,
    EdgeSupport,
    MatchRule,
    MemberRef,
    Node,
    NodeKind,
    Pin,
    PinKind,
    TaskGraph,
)


class Command(Protocol):
    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]: ...

    def describe(self) -> str: ...


def _node_index(graph: TaskGraph, node_id: str) -> int:
    for i, n in enumerate(graph.nodes):
        if n.id == node_id:
            return i
    raise GraphEditError(f"there is no node {node_id!r} in the graph of {graph.task_id}")


def _edge_index(graph: TaskGraph, edge_id: str) -> int:
    for i, e in enumerate(graph.edges):
        if e.id == edge_id:
            return i
    raise GraphEditError(f"there is no edge {edge_id!r} in the graph of {graph.task_id}")


def _fresh_id(prefix: str, taken: Iterable[str]) -> str:
    used = set(taken)
    k = 1
    while f"{prefix}{k}" in used:
        k += 1
    return f"{prefix}{k}"


# --------------------------------------------------------------------------- edges


@dataclass(frozen=True, slots=True)
class AddEdge:
    edge: Edge
    index: int | None = None  # position in graph.edges; None appends

    def describe(self) -> str:
        return f"add edge {self.edge.id} ({self.edge.source} -> {self.edge.target})"

    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]:
        if any(e.id == self.edge.id for e in graph.edges):
            raise GraphEditError(f"an edge with id {self.edge.id!r} already exists")
        for end in (self.edge.source, self.edge.target):
            _node_index(graph, end)
        edges = list(graph.edges)
        edges.insert(len(edges) if self.index is None else self.index, self.edge)
        return graph.with_changes(edges=tuple(edges)), DeleteEdge(self.edge.id)


@dataclass(frozen=True, slots=True)
class DeleteEdge:
    edge_id: str

    def describe(self) -> str:
        return f"delete edge {self.edge_id}"

    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]:
        i = _edge_index(graph, self.edge_id)
        edges = graph.edges[:i] + graph.edges[i + 1 :]
        return graph.with_changes(edges=edges), AddEdge(graph.edges[i], i)


@dataclass(frozen=True, slots=True)
class EditEdgeRule:
    edge_id: str
    rule: MatchRule

    def describe(self) -> str:
        return f"edit the rule of edge {self.edge_id}"

    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]:
        i = _edge_index(graph, self.edge_id)
        old = graph.edges[i]
        if any(s.action.type is not self.rule.action_type for s in old.support):
            raise GraphEditError(
                f"edge {self.edge_id} is supported by other actions than "
                f"{self.rule.action_type.value}; the rule must match its type"
            )
        edges = (*graph.edges[:i], replace(old, rule=self.rule), *graph.edges[i + 1 :])
        return graph.with_changes(edges=edges), EditEdgeRule(self.edge_id, old.rule)


# --------------------------------------------------------------------------- node kinds


@dataclass(frozen=True, slots=True)
class SetNodeKind:
    """Mark or unmark DONE, or set START (the old START becomes a plain state)."""

    node_id: str
    kind: NodeKind

    def describe(self) -> str:
        return f"mark {self.node_id} as {NodeKind(self.kind).value}"

    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]:
        _node_index(graph, self.node_id)
        kinds = {self.node_id: NodeKind(self.kind)}
        if kinds[self.node_id] is NodeKind.START:
            kinds.update(
                {
                    n.id: NodeKind.STATE
                    for n in graph.nodes
                    if n.kind is NodeKind.START and n.id != self.node_id
                }
            )
        return RestoreKinds(tuple(kinds.items())).apply(graph)


@dataclass(frozen=True, slots=True)
class RestoreKinds:
    """Set the kinds of several nodes as given (the inverse of SetNodeKind)."""

    kinds: tuple[tuple[str, NodeKind], ...]

    def describe(self) -> str:
        return "restore node kinds " + ", ".join(f"{n}={NodeKind(k).value}" for n, k in self.kinds)

    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]:
        wanted = dict(self.kinds)
        for node_id in wanted:
            _node_index(graph, node_id)
        old = tuple((n.id, n.kind) for n in graph.nodes if n.id in wanted)
        nodes = tuple(replace(n, kind=wanted[n.id]) if n.id in wanted else n for n in graph.nodes)
        return graph.with_changes(nodes=nodes), RestoreKinds(old)


# --------------------------------------------------------------------------- nodes


@dataclass(frozen=True, slots=True)
class DeleteNode:
    """Delete a node and every edge from or to it."""

    node_id: str

    def describe(self) -> str:
        return f"delete node {self.node_id}"

    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]:
        i = _node_index(graph, self.node_id)
        removed = tuple(
            (k, e) for k, e in enumerate(graph.edges) if self.node_id in (e.source, e.target)
        )
        gone = {e.id for _, e in removed}
        new = graph.with_changes(
            nodes=graph.nodes[:i] + graph.nodes[i + 1 :],
            edges=tuple(e for e in graph.edges if e.id not in gone),
        )
        return new, RestoreNode(graph.nodes[i], i, removed)


@dataclass(frozen=True, slots=True)
class RestoreNode:
    """Put a deleted node and its edges back at their positions (the inverse of DeleteNode)."""

    node: Node
    index: int
    edges: tuple[tuple[int, Edge], ...] = ()

    def describe(self) -> str:
        return f"restore node {self.node.id}"

    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]:
        if any(n.id == self.node.id for n in graph.nodes):
            raise GraphEditError(f"a node with id {self.node.id!r} already exists")
        nodes = list(graph.nodes)
        nodes.insert(self.index, self.node)
        edges = list(graph.edges)
        for k, edge in self.edges:  # ascending positions, so each lands where it was
            edges.insert(k, edge)
        return graph.with_changes(nodes=tuple(nodes), edges=tuple(edges)), DeleteNode(self.node.id)


@dataclass(frozen=True, slots=True)
class RestoreParts:
    """Put back nodes, edges and pins as they were (the inverse of merges and splits)."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    pins: tuple[Pin, ...]

    def describe(self) -> str:
        return "restore the graph as it was"

    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]:
        new = graph.with_changes(nodes=self.nodes, edges=self.edges, pins=self.pins)
        return new, RestoreParts(graph.nodes, graph.edges, graph.pins)


@dataclass(frozen=True, slots=True)
class ReplaceGraph:
    """Put another version of the whole graph in place (a rebuild from the demonstrations);
    the inverse puts the replaced one back."""

    graph: TaskGraph
    what: str = "rebuild from the demonstrations"

    def describe(self) -> str:
        return self.what

    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]:
        if graph.task_id != self.graph.task_id:
            raise GraphEditError(
                f"the graph of {self.graph.task_id} cannot replace the graph of {graph.task_id}"
            )
        return self.graph, ReplaceGraph(graph, self.what)


def _add_pin(pins: tuple[Pin, ...], pin: Pin) -> tuple[Pin, ...]:
    """Add ``pin``, dropping the older pins it makes redundant or contradicts."""
    group = set(pin.members) | set(pin.others)

    def obsolete(old: Pin) -> bool:
        if pin.kind is PinKind.TOGETHER:
            if old.kind is PinKind.TOGETHER:
                return set(old.members) <= group
            return bool(set(old.members) & group and set(old.others) & group)
        if old.kind is PinKind.TOGETHER:
            return bool(set(old.members) & set(pin.members) and set(old.members) & set(pin.others))
        return False

    return (*(p for p in pins if not obsolete(p)), pin)


_KIND_STRENGTH = {NodeKind.STATE: 0, NodeKind.DONE: 1, NodeKind.START: 2}


@dataclass(frozen=True, slots=True)
class MergeNodes:
    """Move the members of ``sources`` into ``target``; their edges now start or end there.

    The merged node keeps the strongest kind among them (START, then DONE, then state).
    """

    target: str
    sources: tuple[str, ...]

    def describe(self) -> str:
        return f"merge {', '.join(self.sources)} into {self.target}"

    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]:
        sources = tuple(dict.fromkeys(self.sources))
        if not sources or self.target in sources:
            raise GraphEditError("merge needs a target and at least one other node")
        merged = [graph.nodes[_node_index(graph, n)] for n in (self.target, *sources)]
        keep = merged[0]
        kind = max((n.kind for n in merged), key=_KIND_STRENGTH.__getitem__)
        members = tuple(m for n in merged for m in n.members)
        gone = set(sources)
        nodes = tuple(
            replace(keep, kind=kind, members=members) if n.id == self.target else n
            for n in graph.nodes
            if n.id not in gone
        )

        def moved(node_id: str) -> str:
            return self.target if node_id in gone else node_id

        edges = tuple(
            replace(e, source=moved(e.source), target=moved(e.target))
            if {e.source, e.target} & gone
            else e
            for e in graph.edges
        )
        pins = _add_pin(graph.pins, Pin(PinKind.TOGETHER, members)) if members else graph.pins
        new = graph.with_changes(nodes=nodes, edges=edges, pins=pins)
        return new, RestoreParts(graph.nodes, graph.edges, graph.pins)


def _all_end_screens(graph: TaskGraph, members: Iterable[MemberRef]) -> bool:
    """Whether each screen is the last its demonstration reached (the screen it ended on).

    Only those make a DONE node: a screen split out of a DONE node that the demonstration
    left again is an ordinary state.
    """
    last: dict[str, int] = {}
    for node in graph.nodes:
        for m in node.members:
            last[m.demo_id] = max(last.get(m.demo_id, m.step), m.step)
    return all(last.get(m.demo_id) == m.step for m in members)


@dataclass(frozen=True, slots=True)
class SplitMembers:
    """Move some members of a node into a new node.

    The new node is DONE only when the node was DONE and every screen moved is the last
    one of its demonstration; otherwise it is a state (START stays where it was).

    Each demonstrated action follows its screen: an edge whose supporting steps start (or
    end) on moved screens now starts (or ends) at the new node; an edge with supports on
    both sides is split in two with the same rule. Edges without supports stay.
    """

    node_id: str
    members: tuple[MemberRef, ...]
    new_node_id: str | None = None

    def describe(self) -> str:
        n = len(self.members)
        return f"split {n} screen{'' if n == 1 else 's'} out of {self.node_id}"

    def apply(self, graph: TaskGraph) -> tuple[TaskGraph, Command]:
        i = _node_index(graph, self.node_id)
        node = graph.nodes[i]
        moving = set(self.members)
        if not moving or not moving <= set(node.members) or moving >= set(node.members):
            raise GraphEditError(
                f"choose some, but not all, of the screens of {self.node_id} to split out"
            )
        new_id = self.new_node_id or _fresh_id("n", (n.id for n in graph.nodes))
        if any(n.id == new_id for n in graph.nodes):
            raise GraphEditError(f"a node with id {new_id!r} already exists")
        stay = tuple(m for m in node.members if m not in moving)
        out = tuple(m for m in node.members if m in moving)
        new_node = replace(
            node,
            id=new_id,
            kind=(
                NodeKind.DONE
                if node.kind is NodeKind.DONE and _all_end_screens(graph, out)
                else NodeKind.STATE
            ),
            screenshot=f"nodes/{new_id}.png",
            hierarchy=f"nodes/{new_id}.xml" if node.hierarchy else None,
            members=out,
        )
        nodes = (*graph.nodes[:i], replace(node, members=stay), new_node, *graph.nodes[i + 1 :])
        edges = self._split_edges(graph, new_id, moving)
        pins = _add_pin(graph.pins, Pin(PinKind.APART, out, stay))
        new = graph.with_changes(nodes=nodes, edges=edges, pins=pins)
        return new, RestoreParts(graph.nodes, graph.edges, graph.pins)

    def _split_edges(
        self, graph: TaskGraph, new_id: str, moving: set[MemberRef]
    ) -> tuple[Edge, ...]:
        taken = {e.id for e in graph.edges}
        out: list[Edge] = []
        for edge in graph.edges:
            if self.node_id not in (edge.source, edge.target) or not edge.support:
                out.append(edge)
                continue
            parts: dict[tuple[str, str], list[EdgeSupport]] = {}
            for s in edge.support:
                source = (
                    new_id if edge.source == self.node_id and s.member in moving else edge.source
                )
                after = MemberRef(s.member.demo_id, s.member.step + 1)
                target = new_id if edge.target == self.node_id and after in moving else edge.target
                parts.setdefault((source, target), []).append(s)
            for k, ((source, target), support) in enumerate(parts.items()):
                edge_id = edge.id
                if k:
                    edge_id = _fresh_id("e", taken)
                    taken.add(edge_id)
                out.append(
                    replace(edge, id=edge_id, source=source, target=target, support=tuple(support))
                )
        return tuple(out)
