"""Steady node places (no Qt): what stays, where new nodes go, what undo finds again."""

from __future__ import annotations

from graph_builder.edits import AddEdge, DeleteNode, SplitMembers
from graph_builder.model import ActionType, Edge, MatchRule, MemberRef, Node, NodeKind, TaskGraph
from recorder_app.qt.graph_editor.layout import NodePlaces, Spacing, nearest_in_direction

SPACING = Spacing(column=400.0, row=300.0, margin=30.0)
SIZE = (160.0, 240.0)
BACK = MatchRule(ActionType.BACK)


def node(node_id: str, *steps: int, kind: NodeKind = NodeKind.STATE, demo: str = "d") -> Node:
    members = tuple(MemberRef(demo, s) for s in steps)
    return Node(node_id, kind, f"nodes/{node_id}.png", (1080, 1620), members)


def chain() -> TaskGraph:
    """start -> a -> b -> done, with a second screen in a."""
    return TaskGraph(
        "t",
        (node("start", 0, kind=NodeKind.START), node("a", 1, 5), node("b", 2), node("done", 3)),
        (
            Edge("e1", "start", "a", BACK),
            Edge("e2", "a", "b", BACK),
            Edge("e3", "b", "done", BACK),
        ),
    )


def sizes(graph: TaskGraph) -> dict[str, tuple[float, float]]:
    return {n.id: SIZE for n in graph.nodes}


def overlaps(places: dict[str, tuple[float, float]]) -> list[tuple[str, str]]:
    ids = sorted(places)
    out = []
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            (ax, ay), (bx, by) = places[a], places[b]
            if abs(ax - bx) < SIZE[0] + SPACING.margin and abs(ay - by) < SIZE[1] + SPACING.margin:
                out.append((a, b))
    return out


def test_the_first_placement_is_the_layered_layout_and_later_ones_keep_it() -> None:
    graph = chain()
    places = NodePlaces()
    first = places.place(graph, sizes(graph), SPACING)
    assert first == {"start": (0, 0), "a": (400, 0), "b": (800, 0), "done": (1200, 0)}
    assert places.fresh == []
    places.move({"b": (820.0, 40.0)})
    again = places.place(graph, sizes(graph), SPACING)
    assert again == {**first, "b": (820.0, 40.0)}  # a moved node stays where it was put


def test_a_new_node_goes_right_of_its_predecessor_on_free_space() -> None:
    graph = chain()
    places = NodePlaces()
    first = places.place(graph, sizes(graph), SPACING)
    # A rebuild adds a detour from a: its column (b's) is taken in row 0.
    detour = graph.with_changes(
        nodes=(*graph.nodes, node("x", 9, demo="e")),
        edges=(*graph.edges, Edge("e4", "a", "x", BACK)),
    )
    after = places.place(detour, sizes(detour), SPACING)
    assert {i: after[i] for i in first} == first
    assert after["x"][0] == first["b"][0] and after["x"][1] != first["b"][1]
    assert overlaps(after) == [] and places.fresh == ["x"]


def test_a_split_goes_beside_the_node_it_came_from_and_undo_redo_find_it_again() -> None:
    graph = chain()
    places = NodePlaces()
    first = places.place(graph, sizes(graph), SPACING)
    split, undo = SplitMembers("a", (MemberRef("d", 5),), "n9").apply(graph)
    after = places.place(split, sizes(split), SPACING)
    assert after["n9"][0] == first["a"][0] and abs(after["n9"][1] - first["a"][1]) == SPACING.row
    assert overlaps(after) == []
    back, redo = undo.apply(split)
    assert places.place(back, sizes(back), SPACING) == first
    again, _ = redo.apply(back)
    assert places.place(again, sizes(again), SPACING)["n9"] == after["n9"]


def test_an_id_reused_for_other_screens_is_placed_as_new() -> None:
    graph = chain()
    places = NodePlaces()
    places.place(graph, sizes(graph), SPACING)
    gone, _ = DeleteNode("b").apply(graph)
    places.place(gone, sizes(gone), SPACING)
    # Another node now called "b", holding other screens, after done.
    other = gone.with_changes(nodes=(*gone.nodes, node("b", 7, demo="z")))
    other, _ = AddEdge(Edge("e9", "done", "b", BACK)).apply(other)
    after = places.place(other, sizes(other), SPACING)
    assert after["b"] == (1600.0, 0.0)  # right of done, not where the old b was
    assert places.fresh == ["b"]


def test_a_node_with_no_placed_neighbour_starts_a_column_on_the_right() -> None:
    graph = chain()
    places = NodePlaces()
    places.place(graph, sizes(graph), SPACING)
    loose = graph.with_changes(nodes=(*graph.nodes, node("island", 42, demo="q")))
    after = places.place(loose, sizes(loose), SPACING)
    assert after["island"] == (1600.0, 0.0)
    assert overlaps(after) == []


def test_the_arrows_follow_rows_and_columns() -> None:
    centers = {"a": (0.0, 0.0), "b": (400.0, 0.0), "c": (400.0, 300.0), "d": (0.0, 300.0)}
    assert nearest_in_direction(centers, "d", (1, 0)) == "c"
    assert nearest_in_direction(centers, "c", (0, -1)) == "b"
    assert nearest_in_direction(centers, "b", (1, 0)) is None
