"""Graph edits: what each command does, and that every inverse restores an equal graph."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from graph_builder.edits import (
    AddEdge,
    Command,
    DeleteEdge,
    DeleteNode,
    EditEdgeRule,
    MergeNodes,
    SetNodeKind,
    SplitMembers,
)
from graph_builder.errors import GraphEditError
from graph_builder.merge import merge_demonstrations
from graph_builder.model import (
    Action,
    ActionType,
    Edge,
    EdgeSupport,
    MatchRule,
    MemberRef,
    Node,
    NodeKind,
    PinKind,
    TaskGraph,
)
from graph_builder.similarity import SimilaritySettings
from graph_builder.validate import validate_graph
from tests.graph_builder.gb_synthetic import Sketch, demo, tap_row

TAP = MatchRule(ActionType.TAP, points=((500, 500),))


def _random_graph(rng: random.Random) -> TaskGraph:
    """Random demos walked over random nodes: members and edge supports agree, as after a build."""
    n_nodes = rng.randint(3, 7)
    ids = ["start", *[f"n{i}" for i in range(1, n_nodes - 1)], "done"]
    members: dict[str, list[MemberRef]] = {i: [] for i in ids}
    edges: list[Edge] = []
    for d in range(rng.randint(1, 4)):
        length = rng.randint(2, 6)
        path = ["start", *[rng.choice(ids[1:-1] or ["start"]) for _ in range(length - 2)], "done"]
        for step, node_id in enumerate(path):
            members[node_id].append(MemberRef(f"d{d}", step))
        for step in range(length - 1):
            support = EdgeSupport(MemberRef(f"d{d}", step), Action.tap(5, 5, screen=(10, 10)))
            edges.append(Edge(f"e{len(edges) + 1}", path[step], path[step + 1], TAP, (support,)))
    kinds = {"start": NodeKind.START, "done": NodeKind.DONE}
    nodes = tuple(
        Node(i, kinds.get(i, NodeKind.STATE), f"nodes/{i}.png", (10, 10), tuple(members[i]))
        for i in ids
    )
    return TaskGraph(task_id="t", nodes=nodes, edges=tuple(edges))


def _random_command(rng: random.Random, graph: TaskGraph, serial: int) -> Command | None:
    nodes = [n.id for n in graph.nodes]
    edges = [e.id for e in graph.edges]
    choice = rng.randrange(7)
    if choice == 0 and len(nodes) >= 2:
        target, *sources = rng.sample(nodes, rng.randint(2, min(3, len(nodes))))
        return MergeNodes(target, tuple(sources))
    if choice == 1:
        splittable = [n for n in graph.nodes if len(n.members) >= 2]
        if splittable:
            node = rng.choice(splittable)
            moved = rng.sample(node.members, rng.randint(1, len(node.members) - 1))
            return SplitMembers(node.id, tuple(moved))
    if choice == 2 and nodes:
        return DeleteNode(rng.choice(nodes))
    if choice == 3 and edges:
        return DeleteEdge(rng.choice(edges))
    if choice == 4 and nodes:
        edge = Edge(f"x{serial}", rng.choice(nodes), rng.choice(nodes), MatchRule(ActionType.BACK))
        return AddEdge(edge, rng.randint(0, len(edges)))
    if choice == 5 and nodes:
        return SetNodeKind(rng.choice(nodes), rng.choice(list(NodeKind)))
    if choice == 6 and edges:
        edge = graph.edge(rng.choice(edges))
        return EditEdgeRule(edge.id, replace(edge.rule, radius=rng.uniform(10, 90)))
    return None


@pytest.mark.parametrize("seed", range(40))
def test_random_edit_sequences_are_undone_exactly(seed: int) -> None:
    rng = random.Random(seed)
    graph = _random_graph(rng)
    history = [graph]
    undo: list[Command] = []
    for serial in range(25):
        command = _random_command(rng, graph, serial)
        if command is None:
            continue
        new, inverse = command.apply(graph)
        assert inverse.apply(new)[0] == graph, command.describe()
        redo = inverse.apply(new)[1]
        assert redo.apply(graph)[0] == new  # the inverse of the inverse redoes the edit
        graph = new
        history.append(graph)
        undo.append(inverse)
        members = [m for n in graph.nodes for m in n.members]
        assert len(members) == len(set(members))  # edits never put a screen in two nodes
    for inverse in reversed(undo):
        graph, _ = inverse.apply(graph)
        history.pop()
        assert graph == history[-1]
    assert graph == history[0]


def _built() -> TaskGraph:
    home = Sketch("Home", ("Settings", "Contacts"))
    settings = Sketch("Settings", ("Display", "Sound"))
    contacts = Sketch("Contacts", ("Alice", "Bob"))
    d1 = demo("d1", [(home, tap_row(home, "Settings")), (settings, Action.done())])
    d2 = demo("d2", [(home, tap_row(home, "Contacts")), (contacts, Action.done())])
    return merge_demonstrations([d1, d2], settings=SimilaritySettings()).graph


def test_merge_moves_members_and_edges_and_pins_the_decision() -> None:
    graph = _built()
    assert [n.id for n in graph.done_nodes] == ["done", "done2"]
    merged, _ = MergeNodes("done", ("done2",)).apply(graph)
    done = merged.node("done")
    assert done.members == (MemberRef("d1", 1), MemberRef("d2", 1))
    assert {e.target for e in merged.edges} == {"done"}
    assert merged.pins[-1].kind is PinKind.TOGETHER
    assert set(merged.pins[-1].members) == set(done.members)
    assert validate_graph(merged) == []


def test_merging_start_into_a_state_keeps_start() -> None:
    graph = _random_graph(random.Random(1))
    merged, _ = MergeNodes(graph.nodes[1].id, ("start",)).apply(graph)
    assert merged.node(graph.nodes[1].id).kind is NodeKind.START


def test_split_moves_the_screens_and_their_actions() -> None:
    graph = _built()
    merged, _ = MergeNodes("done", ("done2",)).apply(graph)
    split, _ = SplitMembers("done", (MemberRef("d2", 1),)).apply(merged)
    new = split.nodes[-1]
    assert new.id == "n1" and new.kind is NodeKind.DONE and new.members == (MemberRef("d2", 1),)
    assert new.screenshot == "nodes/n1.png"
    to_new = [e for e in split.edges if e.target == "n1"]
    assert [s.member for e in to_new for s in e.support] == [MemberRef("d2", 0)]
    apart = split.pins[-1]
    assert apart.kind is PinKind.APART and apart.others == (MemberRef("d1", 1),)
    assert all(p.kind is not PinKind.TOGETHER for p in split.pins)  # the merge pin is contradicted


def test_a_screen_split_out_of_done_is_done_only_if_its_demonstration_ended_there() -> None:
    # d1 ends on Settings; d2 passes through Settings (merged into DONE by hand) and goes on.
    graph = _built()
    merged, _ = MergeNodes("done", ("done2",)).apply(graph)
    passing = MemberRef("d1", 1)
    longer = TaskGraph(
        "t",
        nodes=(
            *merged.nodes,
            Node("n9", NodeKind.STATE, "nodes/n9.png", (1, 1), (MemberRef("d1", 2),)),
        ),
        edges=merged.edges,
    )
    split, _ = SplitMembers("done", (passing,), "n7").apply(longer)
    assert split.node("n7").kind is NodeKind.STATE  # d1 went on from it: not an end
    ended, _ = SplitMembers("done", (MemberRef("d2", 1),), "n8").apply(longer)
    assert ended.node("n8").kind is NodeKind.DONE  # d2 ended on it


def test_split_divides_an_edge_whose_supports_go_both_ways() -> None:
    support = tuple(EdgeSupport(MemberRef("d", i), Action.back()) for i in (0, 2))
    graph = TaskGraph(
        "t",
        nodes=(
            Node("start", NodeKind.START, "s.png", (1, 1), (MemberRef("d", 0), MemberRef("d", 2))),
            Node("done", NodeKind.DONE, "d.png", (1, 1), (MemberRef("d", 1), MemberRef("d", 3))),
        ),
        edges=(Edge("e1", "start", "done", MatchRule(ActionType.BACK), support),),
    )
    split, _ = SplitMembers("start", (MemberRef("d", 2),), "n7").apply(graph)
    assert [(e.id, e.source, [str(s.member) for s in e.support]) for e in split.edges] == [
        ("e1", "start", ["d#0"]),
        ("e2", "n7", ["d#2"]),
    ]


def test_set_start_demotes_the_old_start() -> None:
    graph = _built()
    changed, inverse = SetNodeKind("done", NodeKind.START).apply(graph)
    assert changed.node("start").kind is NodeKind.STATE
    assert changed.node("done").kind is NodeKind.START
    assert inverse.apply(changed)[0] == graph
    unmarked, _ = SetNodeKind("done2", NodeKind.STATE).apply(graph)
    assert [n.id for n in unmarked.done_nodes] == ["done"]


def test_delete_node_removes_its_edges_and_restores_them_in_place() -> None:
    graph = _built()
    smaller, inverse = DeleteNode("done").apply(graph)
    assert all("done" not in (e.source, e.target) for e in smaller.edges)
    assert inverse.apply(smaller)[0] == graph


def test_edit_rule_and_add_edge() -> None:
    graph = _built()
    edge = graph.edges[0]
    wider = replace(edge.rule, radius=80.0)
    edited, inverse = EditEdgeRule(edge.id, wider).apply(graph)
    assert edited.edge(edge.id).rule.radius == 80
    assert inverse == EditEdgeRule(edge.id, edge.rule)
    added, inverse = AddEdge(Edge("back1", "done", "start", MatchRule(ActionType.BACK))).apply(
        graph
    )
    assert added.edges[-1].id == "back1" and inverse == DeleteEdge("back1")


@pytest.mark.parametrize(
    ("command", "match"),
    [
        (MergeNodes("start", ()), "at least one other node"),
        (MergeNodes("start", ("start",)), "at least one other node"),
        (MergeNodes("start", ("ghost",)), "no node 'ghost'"),
        (SplitMembers("start", ()), "some, but not all"),
        (SplitMembers("start", (MemberRef("d1", 0), MemberRef("d2", 0))), "some, but not all"),
        (SplitMembers("start", (MemberRef("d1", 0),), "done"), "already exists"),
        (DeleteEdge("e99"), "no edge 'e99'"),
        (AddEdge(Edge("e1", "start", "done", TAP)), "already exists"),
        (AddEdge(Edge("e9", "start", "nowhere", TAP)), "no node 'nowhere'"),
        (EditEdgeRule("e1", MatchRule(ActionType.SWIPE, direction="up")), "must match its type"),
        (SetNodeKind("ghost", NodeKind.DONE), "no node 'ghost'"),
    ],
)
def test_edits_that_do_not_apply_say_why(command: Command, match: str) -> None:
    with pytest.raises(GraphEditError, match=match):
        command.apply(_built())
