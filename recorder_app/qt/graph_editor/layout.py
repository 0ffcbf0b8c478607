"""Where each node goes on the canvas: columns by depth from START, rows within a column.

A graph is laid out once, the first time it is opened; after that ``NodePlaces`` keeps
every node where it is (saved in ``layout.json`` with the graph) and puts new ones beside
their neighbours. No Qt here.

>>> from importlib.resources import files
>>> from graph_builder.io import load_graph
>>> layout = layered_layout(load_graph(files("task_graphs") / "sample" / "font_bigger"))
>>> layout["start"], layout["n1"], layout["n2"], layout["n3"], layout["done"]
((0, 0), (1, 0), (2, 0), (1, 1), (3, 0))
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from graph_builder.model import GraphLayout, MemberRef, Node, NodePlace, TaskGraph


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


# --------------------------------------------------------------------------- steady places

Point = tuple[float, float]  # top-left of a node's picture, in scene pixels
Size = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Spacing:
    """The canvas grid: where columns and rows start, and the free margin around a node."""

    column: float
    row: float
    margin: float


@dataclass(frozen=True, slots=True)
class Spot:
    """Where a node was, with the screens it held then (an id reused for other screens is new)."""

    x: float
    y: float
    members: frozenset[MemberRef]

    def holds_same_screens(self, node: Node) -> bool:
        return bool(self.members & set(node.members)) or not (self.members or node.members)


def layered_positions(graph: TaskGraph, spacing: Spacing) -> dict[str, Point]:
    """The layered layout in pixels."""
    return {
        node_id: (column * spacing.column, row * spacing.row)
        for node_id, (column, row) in layered_layout(graph).items()
    }


def _overlaps(a: Point, a_size: Size, b: Point, b_size: Size, margin: float) -> bool:
    return (
        a[0] < b[0] + b_size[0] + margin
        and b[0] < a[0] + a_size[0] + margin
        and a[1] < b[1] + b_size[1] + margin
        and b[1] < a[1] + a_size[1] + margin
    )


def free_spot(
    wanted: Point,
    size: Size,
    taken: Mapping[str, Point],
    sizes: Mapping[str, Size],
    spacing: Spacing,
) -> Point:
    """The free place nearest ``wanted`` in its column: rows below and above in turn."""

    def free(p: Point) -> bool:
        return not any(_overlaps(p, size, q, sizes[i], spacing.margin) for i, q in taken.items())

    x, y = wanted
    for k in range(len(taken) + 1):
        for dy in (0.0,) if k == 0 else (k * spacing.row, -k * spacing.row):
            if free((x, y + dy)):
                return x, y + dy
    column = [
        q[1] + sizes[i][1]
        for i, q in taken.items()
        if _overlaps((x, 0), size, (q[0], 0), sizes[i], 0)
    ]
    return x, max(column, default=y) + spacing.margin  # below the column: always free


class NodePlaces:
    """Where each node sits while a graph is open, so edits never re-flow the graph.

    Nodes keep their spot; a node that was not there before goes beside the node that
    held its screens (a split), else right of a predecessor, else left of a successor,
    on free space. Spots of nodes that left the graph are remembered, so undo puts a
    node back where it was; ``load`` and ``layout_of`` read and give the saved places.

    >>> from importlib.resources import files
    >>> from graph_builder.edits import SplitMembers
    >>> from graph_builder.io import load_graph
    >>> graph = load_graph(files("task_graphs") / "sample" / "font_bigger")
    >>> places, spacing = NodePlaces(), Spacing(column=400, row=300, margin=30)
    >>> sizes = {n.id: (160.0, 240.0) for n in graph.nodes}
    >>> before = places.place(graph, sizes, spacing)
    >>> node = next(n for n in graph.nodes if len(n.members) > 1)
    >>> split, _ = SplitMembers(node.id, node.members[1:], "n9").apply(graph)
    >>> after = places.place(split, {**sizes, "n9": (160.0, 240.0)}, spacing)
    >>> all(after[i] == before[i] for i in before), after["n9"][0] == before[node.id][0]
    (True, True)
    """

    def __init__(self) -> None:
        self.spots: dict[str, Spot] = {}
        self.fresh: list[str] = []  # nodes the last ``place`` put somewhere new

    def clear(self) -> None:
        self.spots.clear()
        self.fresh = []

    def load(self, layout: GraphLayout) -> None:
        """Start from saved places (``layout.json``)."""
        self.clear()
        for p in layout.places:
            self.spots[p.node_id] = Spot(p.x, p.y, frozenset(p.members))

    def layout_of(self, graph: TaskGraph) -> GraphLayout:
        """The places of ``graph``'s nodes, to save (nodes not placed yet are left out)."""
        places = []
        for node in graph.nodes:
            spot = self.spots.get(node.id)
            if spot is not None and spot.holds_same_screens(node):
                places.append(NodePlace(node.id, spot.x, spot.y, node.members))
        return GraphLayout(graph.task_id, tuple(places))

    def position(self, node_id: str) -> Point | None:
        spot = self.spots.get(node_id)
        return (spot.x, spot.y) if spot is not None else None

    def move(self, moves: Mapping[str, Point]) -> None:
        for node_id, (x, y) in moves.items():
            spot = self.spots.get(node_id)
            if spot is not None:
                self.spots[node_id] = Spot(x, y, spot.members)

    def place(
        self, graph: TaskGraph, sizes: Mapping[str, Size], spacing: Spacing
    ) -> dict[str, Point]:
        """A position for every node of ``graph``; remembers them."""
        placed: dict[str, Point] = {}
        fresh: list[Node] = []
        for node in graph.nodes:
            spot = self.spots.get(node.id)
            if spot is not None and spot.holds_same_screens(node):
                placed[node.id] = (spot.x, spot.y)
            else:
                fresh.append(node)
        if not placed:
            placed = layered_positions(graph, spacing)
            self.fresh = []
        else:
            self._place_fresh(graph, fresh, placed, sizes, spacing)
            self.fresh = [n.id for n in fresh]
        for node in graph.nodes:
            x, y = (float(round(v)) for v in placed[node.id])  # whole pixels: saved exactly
            placed[node.id] = (x, y)
            self.spots[node.id] = Spot(x, y, frozenset(node.members))
        return placed

    def _origin(self, node: Node, placed: Mapping[str, Point]) -> str | None:
        """The placed node that held most of this node's screens before."""
        screens = set(node.members)
        counts = {
            node_id: len(self.spots[node_id].members & screens)
            for node_id in placed
            if node_id != node.id and node_id in self.spots
        }
        best = max(counts, key=counts.__getitem__, default=None)
        return best if best is not None and counts[best] else None

    def _wanted(
        self, graph: TaskGraph, node: Node, placed: Mapping[str, Point], spacing: Spacing
    ) -> Point | None:
        origin = self._origin(node, placed)
        if origin is not None:
            x, y = placed[origin]
            return x, y + spacing.row
        for edge in graph.edges:
            if edge.target == node.id and edge.source != node.id and edge.source in placed:
                x, y = placed[edge.source]
                return x + spacing.column, y
        for edge in graph.edges:
            if edge.source == node.id and edge.target != node.id and edge.target in placed:
                x, y = placed[edge.target]
                return x - spacing.column, y
        return None

    def _place_fresh(
        self,
        graph: TaskGraph,
        fresh: list[Node],
        placed: dict[str, Point],
        sizes: Mapping[str, Size],
        spacing: Spacing,
    ) -> None:
        waiting = list(fresh)
        while waiting:
            progress = False
            for node in list(waiting):
                wanted = self._wanted(graph, node, placed, spacing)
                if wanted is None:
                    continue
                placed[node.id] = free_spot(wanted, sizes[node.id], placed, sizes, spacing)
                waiting.remove(node)
                progress = True
            if not progress:  # no placed neighbour at all: a new column right of the rest
                node = waiting.pop(0)
                right = max(x for x, _ in placed.values())
                top = min(y for _, y in placed.values())
                wanted = (right + spacing.column, top)
                placed[node.id] = free_spot(wanted, sizes[node.id], placed, sizes, spacing)


def nearest_in_direction(
    centers: Mapping[str, Point], origin: str, direction: tuple[int, int]
) -> str | None:
    """The node whose centre lies ahead of ``origin``'s in ``direction``, nearest first.

    Distance across the direction counts twice, so the arrow keys follow rows and columns.

    >>> centers = {"a": (0, 0), "b": (400, 10), "c": (400, 420), "d": (0, 400)}
    >>> [nearest_in_direction(centers, "a", d) for d in ((1, 0), (0, 1), (-1, 0))]
    ['b', 'd', None]
    """
    ox, oy = centers[origin]
    dx, dy = direction
    best: tuple[float, str] | None = None
    for node_id, (x, y) in centers.items():
        along = (x - ox) * dx + (y - oy) * dy
        if node_id == origin or along <= 0:
            continue
        across = abs((x - ox) * dy - (y - oy) * dx)
        score = along + 2 * across
        if best is None or score < best[0]:
            best = (score, node_id)
    return best[1] if best is not None else None
