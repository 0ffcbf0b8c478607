"""Graph validation: every kind of problem is found and explained; a good graph has none."""

from __future__ import annotations

from dataclasses import replace

from graph_builder.graph_index import reachable_from, reaching, shortest_path_length, to_networkx
from graph_builder.model import (
    Action,
    ActionType,
    Demonstration,
    DemoStatus,
    Edge,
    EdgeSupport,
    MatchRule,
    MemberRef,
    Node,
    NodeKind,
    Observation,
    Step,
    TaskGraph,
)
from graph_builder.validate import Problem, Severity, has_errors, validate_graph

TAP = MatchRule(ActionType.TAP, points=((500, 500),))


def _node(node_id: str, kind: NodeKind = NodeKind.STATE, *members: MemberRef) -> Node:
    return Node(node_id, kind, f"nodes/{node_id}.png", (1080, 2400), members=members)


def _edge(
    edge_id: str,
    source: str,
    target: str,
    rule: MatchRule = TAP,
    support: tuple[EdgeSupport, ...] = (),
) -> Edge:
    return Edge(edge_id, source, target, rule, support)


def _graph() -> TaskGraph:
    return TaskGraph(
        task_id="t",
        nodes=(
            _node("start", NodeKind.START, MemberRef("d", 0)),
            _node("n1", NodeKind.STATE, MemberRef("d", 1)),
            _node("done", NodeKind.DONE, MemberRef("d", 2)),
        ),
        edges=(
            _edge(
                "e1",
                "start",
                "n1",
                support=(EdgeSupport(MemberRef("d", 0), Action.tap(1, 1, screen=(10, 10))),),
            ),
            _edge("e2", "n1", "done"),
        ),
    )


def _demo(steps: int) -> Demonstration:
    obs = Observation("s.png", (10, 10))
    actions = [Action.back()] * (steps - 1) + [Action.done()]
    return Demonstration(
        "d",
        "t",
        "x",
        tuple(Step(i, obs, a) for i, a in enumerate(actions)),
        status=DemoStatus.COMPLETE,
    )


def _messages(problems: list[Problem]) -> str:
    return "\n".join(str(p) for p in problems)


def test_a_good_graph_has_no_problems() -> None:
    assert validate_graph(_graph()) == []
    assert validate_graph(_graph(), [_demo(3)]) == []


def test_start_must_exist_once() -> None:
    graph = _graph()
    none = graph.with_changes(
        nodes=(replace(graph.nodes[0], kind=NodeKind.STATE), *graph.nodes[1:])
    )
    assert "no START node" in _messages(validate_graph(none))
    two = graph.with_changes(
        nodes=(graph.nodes[0], replace(graph.nodes[1], kind=NodeKind.START), graph.nodes[2])
    )
    problems = validate_graph(two)
    assert has_errors(problems) and "2 START nodes (start, n1)" in _messages(problems)


def test_done_must_exist() -> None:
    graph = _graph()
    graph = graph.with_changes(
        nodes=(*graph.nodes[:2], replace(graph.nodes[2], kind=NodeKind.STATE))
    )
    problems = validate_graph(graph)
    assert problems[0].severity is Severity.ERROR and "no DONE node" in problems[0].message


def test_dangling_edges_are_errors() -> None:
    graph = _graph()
    graph = graph.with_changes(edges=(*graph.edges, _edge("e3", "n1", "n9")))
    problems = validate_graph(graph)
    dangling = [p for p in problems if p.edge_id == "e3"]
    assert len(dangling) == 1 and dangling[0].severity is Severity.ERROR
    assert str(dangling[0]) == "error [edge e3]: edge e3 goes to node 'n9', which does not exist"


def test_unreachable_nodes_and_dead_ends_are_warnings() -> None:
    graph = _graph()
    graph = graph.with_changes(
        nodes=(*graph.nodes, _node("lost"), _node("stuck")),
        edges=(*graph.edges, _edge("e3", "start", "stuck")),
    )
    problems = validate_graph(graph)
    assert not has_errors(problems)
    text = _messages(problems)
    assert "node lost cannot be reached from START" in text
    assert "no DONE node can be reached from node stuck" in text
    assert "node stuck cannot be reached" not in text


def test_rules_must_fit_their_action_type() -> None:
    graph = _graph()
    bad = (
        _edge("e3", "n1", "done", MatchRule(ActionType.TAP)),
        _edge("e4", "n1", "done", MatchRule(ActionType.SWIPE)),
        _edge("e5", "n1", "done", MatchRule(ActionType.TYPE)),
        _edge("e6", "n1", "done", MatchRule(ActionType.DONE)),
        _edge(
            "e7",
            "n1",
            "done",
            MatchRule(ActionType.BACK),
            (EdgeSupport(MemberRef("d", 1), Action.home()),),
        ),
    )
    problems = validate_graph(graph.with_changes(edges=(*graph.edges, *bad)))
    by_edge = {p.edge_id: p for p in problems}
    assert "needs element bounds or at least one point" in by_edge["e3"].message
    assert "needs a direction" in by_edge["e4"].message
    assert "at least one accepted text" in by_edge["e5"].message
    assert "not an edge" in by_edge["e6"].message
    assert by_edge["e7"].severity is Severity.WARNING and "is a home" in by_edge["e7"].message


def test_member_references_are_checked() -> None:
    graph = _graph()
    twice = graph.with_changes(
        nodes=(*graph.nodes[:2], replace(graph.nodes[2], members=(MemberRef("d", 1),)))
    )
    assert "screen d#1 belongs to 2 nodes (n1, done)" in _messages(validate_graph(twice))
    problems = validate_graph(graph, [_demo(2)])  # d#2 and nothing else is unknown
    assert [p.node_id for p in problems] == ["done"]
    assert "no demonstration has: d#2" in problems[0].message
    other = graph.with_changes(
        edges=(
            replace(
                graph.edges[0],
                support=(EdgeSupport(MemberRef("x", 0), Action.tap(1, 1, screen=(10, 10))),),
            ),
            graph.edges[1],
        )
    )
    assert "supported by steps that no demonstration has: x#0" in _messages(
        validate_graph(other, [_demo(3)])
    )


def test_networkx_view_and_paths() -> None:
    graph = _graph()
    view = to_networkx(graph)
    assert set(view.nodes) == {"start", "n1", "done"}
    assert view.nodes["done"]["kind"] == "done"
    assert set(view.edges(keys=True)) == {("start", "n1", "e1"), ("n1", "done", "e2")}
    assert reachable_from(graph, "n1") == {"n1", "done"}
    assert reachable_from(graph, "nope") == set()
    assert reaching(graph, ["n1"]) == {"start", "n1"}
    assert shortest_path_length(graph, "start", ["done"]) == 2
    assert shortest_path_length(graph, "done", ["start"]) is None


def _tap_support(member: MemberRef) -> tuple[EdgeSupport, ...]:
    return (EdgeSupport(member, Action.tap(540, 1200, screen=(1080, 2400))),)


def test_the_same_action_to_two_nodes_is_an_ambiguity_warning() -> None:
    graph = _graph().with_changes(
        edges=(
            _edge("e0", "start", "start", support=_tap_support(MemberRef("d", 0))),
            _edge("e1", "start", "n1", support=_tap_support(MemberRef("d", 1))),
            _edge("e2", "n1", "done"),
        )
    )
    problems = validate_graph(graph)
    assert [p.severity for p in problems] == [Severity.WARNING]
    assert problems[0].node_id == "start"
    assert "ambiguous edges from node start: e0 (to start) and e1 (to n1)" in problems[0].message
    assert "e0 changes nothing" in problems[0].message and "takes e1" in problems[0].message
    # Taps far apart are two actions, not an ambiguity.
    apart = MatchRule(ActionType.TAP, points=((100, 100),))
    other = EdgeSupport(MemberRef("d", 1), Action.tap(108, 240, screen=(1080, 2400)))
    fine = graph.with_changes(
        edges=(graph.edges[0], _edge("e1", "start", "n1", apart, (other,)), graph.edges[2])
    )
    assert validate_graph(fine) == []


def test_done_nodes_in_the_middle_of_a_path_are_warned_about() -> None:
    graph = _graph().with_changes(
        nodes=(
            _node("start", NodeKind.START, MemberRef("d", 0)),
            _node("n1", NodeKind.DONE, MemberRef("d", 1)),  # marked DONE mid-path
            _node("done", NodeKind.DONE, MemberRef("d", 2)),
        )
    )
    messages = [p.message for p in validate_graph(graph)]
    assert messages == [
        "DONE node n1 has edges to other nodes (a path goes on from it): check that the task "
        "is complete on that screen"
    ]
    demo = Demonstration(
        "d",
        "t",
        "do it",
        steps=tuple(
            Step(
                i,
                Observation(f"steps/{i}.png", (1080, 2400)),
                Action.done() if i == 2 else Action.back(),
            )
            for i in range(3)
        ),
        status=DemoStatus.COMPLETE,
    )
    messages = [p.message for p in validate_graph(graph, [demo])]
    assert messages == [
        "DONE node n1 holds screens from the middle of a demonstration (d#1): check that the "
        "task is complete on that screen"
    ]
