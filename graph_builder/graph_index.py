"""A networkx view of a TaskGraph, for reachability and path questions.

The view is an index: payloads stay in the model, and the networkx graph holds ids (edge
keys are edge ids). Edges whose endpoints are missing are left out of the view; the
validator reports them.

>>> from graph_builder.model import ActionType, Edge, MatchRule, Node, NodeKind, TaskGraph
>>> def node(node_id, kind=NodeKind.STATE):
...     return Node(node_id, kind, f"nodes/{node_id}.png", (1080, 2400))
>>> def edge(edge_id, source, target, action=ActionType.BACK):
...     return Edge(edge_id, source, target, MatchRule(action))
>>> graph = TaskGraph("t", (node("start", NodeKind.START), node("n1"), node("n2"),
...                          node("done", NodeKind.DONE)),
...                   (edge("e1", "start", "n1"), edge("e2", "n1", "done"),
...                    edge("e3", "start", "n2"), edge("e4", "n2", "start")))
>>> g = to_networkx(graph)
>>> g.number_of_nodes(), g.number_of_edges()
(4, 4)
>>> sorted(reachable_from(graph, "n2")), shortest_path_length(graph, "start", ["done"])
(['done', 'n1', 'n2', 'start'], 2)
"""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx

from graph_builder.model import TaskGraph


def to_networkx(graph: TaskGraph) -> nx.MultiDiGraph:
    """Nodes carry ``kind``; edges carry their ``id`` as key and ``action_type``."""
    view = nx.MultiDiGraph(task_id=graph.task_id)
    for node in graph.nodes:
        view.add_node(node.id, kind=node.kind.value)
    for edge in graph.edges:
        if edge.source in view and edge.target in view:
            view.add_edge(
                edge.source, edge.target, key=edge.id, action_type=edge.rule.action_type.value
            )
    return view


def reachable_from(graph: TaskGraph, node_id: str) -> set[str]:
    """Nodes reachable from ``node_id`` along edges (including itself)."""
    view = to_networkx(graph)
    if node_id not in view:
        return set()
    return {node_id, *nx.descendants(view, node_id)}


def reaching(graph: TaskGraph, targets: Iterable[str]) -> set[str]:
    """Nodes from which at least one of ``targets`` can be reached (including the targets)."""
    view = to_networkx(graph)
    out: set[str] = set()
    for target in targets:
        if target in view:
            out |= {target, *nx.ancestors(view, target)}
    return out


def shortest_path_length(graph: TaskGraph, source: str, targets: Iterable[str]) -> int | None:
    """The fewest edges from ``source`` to any of ``targets`` (None when unreachable)."""
    view = to_networkx(graph)
    if source not in view:
        return None
    lengths = nx.single_source_shortest_path_length(view, source)
    found = [lengths[t] for t in targets if t in lengths]
    return min(found) if found else None
