"""Where each node goes on the canvas: columns by depth from START, rows within a column.

No Qt here: the scene turns (column, row) slots into pixels.

>>> from importlib.resources import files
>>> from graph_builder.io import load_graph
>>> layout = layered_layout(load_graph(files("task_graphs") / "sample" / "font_bigger"))
>>> layout["start"], layout["n1"], layout["n2"], layout["n3"], layout["done"]
((0, 0), (1, 0), (2, 0), (1, 1), (3, 0))
"""

from __future__ import annotations

from collections import deque

from graph_builder.model import TaskGraph


def depths(graph: TaskGraph) -> dict[str, int]:
    """Fewest edges from START to each node; nodes START cannot reach come after the rest."""
    ids = [n.id for n in graph.nodes]
    successors: dict[str, list[str]] = {i: [] for i in ids}
    for edge in graph.edges:
        if edge.source in successors and edge.target in successors:
            successors[edge.source].append(edge.target)
    out: dict[str, int] = {}
    start = graph.start
    if start is not None:
        out[start.id] = 0
        queue = deque([start.id])
        while queue:
            current = queue.popleft()
            for nxt in successors[current]:
                if nxt not in out:
                    out[nxt] = out[current] + 1
                    queue.append(nxt)
    last = max(out.values(), default=-1) + 1
    return {i: out.get(i, last) for i in ids}


def layered_layout(graph: TaskGraph) -> dict[str, tuple[int, int]]:
    """(column, row) per node id.

    Rows follow the mean row of each node's predecessors in earlier columns, so paths
    stay roughly straight; ties keep the graph's node order.
    """
    depth = depths(graph)
    order = {n.id: k for k, n in enumerate(graph.nodes)}
    predecessors: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
    for edge in graph.edges:
        known = edge.target in predecessors and edge.source in depth
        if known and depth[edge.source] < depth[edge.target]:
            predecessors[edge.target].append(edge.source)
    rows: dict[str, int] = {}
    for column in sorted(set(depth.values())):
        members = [i for i in depth if depth[i] == column]

        def key(node_id: str) -> tuple[float, int]:
            placed = [rows[p] for p in predecessors[node_id] if p in rows]
            mean = sum(placed) / len(placed) if placed else float("inf")
            return mean, order[node_id]

        for row, node_id in enumerate(sorted(members, key=key)):
            rows[node_id] = row
    return {i: (depth[i], rows[i]) for i in depth}
