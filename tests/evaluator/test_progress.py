"""CR and DA on a multi-path graph, every case computed by hand (docs/evaluation.md).

start -A-> a -B-> done                     shortest path: d(start) = 2, G = 3
start -C-> c1 -D-> c2 -E-> c3 -F-> done    a longer demonstrated path
a -back-> start                            a way back (loops)
start -swipe up-> list -back-> start       a dead-end detour
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.offline import GraphContext, Mode, OfflineSettings, run_offline
from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    Bounds,
    Edge,
    MatchRule,
    Node,
    NodeKind,
    Task,
    TaskGraph,
)
from tests.evaluator.scripted import ScriptedAgent

N = NORMALIZED_SCREEN
TASK = Task(id="t", instruction="call rita", max_steps=8)
BOXES = {k: Bounds(100 * i, 0, 100 * i + 100, 100) for i, k in enumerate("ABCDEF")}


def tap(key: str) -> Action:
    b = BOXES[key]
    return Action.tap(b.left + 50, 50, screen=N)


def node(node_id: str, kind: NodeKind = NodeKind.STATE) -> Node:
    return Node(node_id, kind, f"nodes/{node_id}.png", (1080, 2400))


def tap_edge(key: str, source: str, target: str) -> Edge:
    return Edge(key, source, target, MatchRule("tap", bounds=BOXES[key]))


GRAPH = TaskGraph(
    "t",
    (
        node("start", NodeKind.START),
        *(node(n) for n in ("a", "c1", "c2", "c3", "list")),
        node("done", NodeKind.DONE),
    ),
    (
        tap_edge("A", "start", "a"),
        tap_edge("B", "a", "done"),
        tap_edge("C", "start", "c1"),
        tap_edge("D", "c1", "c2"),
        tap_edge("E", "c2", "c3"),
        tap_edge("F", "c3", "done"),
        Edge("a_back", "a", "start", MatchRule("back")),
        Edge("up", "start", "list", MatchRule("swipe", direction="up")),
        Edge("list_back", "list", "start", MatchRule("back")),
    ),
)
UP = Action.swipe(500, 800, 500, 200, screen=N)


def run(steps, mode=Mode.STRICT, graph=GRAPH):
    context = GraphContext(graph, task_dir=Path("."))
    records = []
    result = run_offline(
        TASK, context, ScriptedAgent(steps), settings=OfflineSettings(mode), on_step=records.append
    )
    return result, [r.decision_correct for r in records], records


def test_ground_truth_is_the_shortest_path_plus_done():
    context = GraphContext(GRAPH, task_dir=Path("."))
    assert context.gt_steps == 3
    assert context.distances.distance == {
        "done": 0,
        "a": 1,
        "c3": 1,
        "start": 2,
        "c2": 2,
        "c1": 3,
        "list": 3,
    }


def test_a_loop_earns_its_first_step_only():
    # tap A, back, tap A, back, ... never done: each edge followed, but only the first
    # step reaches a new node; before, DA was 8/8 and CR 100% here.
    result, decisions, records = run([tap("A"), Action.back()] * 4)
    assert not result.success
    assert decisions == [True] + [False] * 7
    assert records[2].decision_note == "back to visited node a"
    assert (result.matched_steps, result.gt_steps) == (1, 3)  # CR (2 - 1 + 0) / 3
    assert (result.correct_decisions, result.decisions) == (1, 8)


def test_an_early_done_on_a_longer_path_is_not_full_completion():
    # C, D, E reach c3, one step before DONE; done there fails. Before, CR was 3/3.
    result, decisions, _ = run([tap("C"), tap("D"), tap("E"), Action.done()])
    assert not result.success
    assert decisions == [True, True, True, False]
    assert result.completion_rate == pytest.approx(1 / 3)  # d(c3) = 1: (2 - 1 + 0) / 3


def test_the_longer_path_completed_is_full_completion():
    result, decisions, _ = run([tap("C"), tap("D"), tap("E"), tap("F"), Action.done()])
    assert result.success and decisions == [True] * 5
    assert result.completion_rate == 1.0  # (2 - 0 + 1) / 3


def test_reaching_done_without_saying_done_is_not_full_completion():
    result, _, _ = run([tap("A"), tap("B")] + [Action.back()] * 6, mode=Mode.TOLERANT)
    assert not result.success
    assert result.completion_rate == pytest.approx(2 / 3)


def test_a_dead_end_detour_earns_nothing():
    result, decisions, _ = run([UP, Action.back(), tap("A"), tap("B"), Action.done()])
    assert result.success and decisions == [False, False, True, True, True]
    assert result.completion_rate == 1.0


def test_a_no_op_wait_stays_on_the_node_even_in_strict_mode_and_earns_nothing():
    result, decisions, records = run([Action.wait(), tap("A"), tap("B"), Action.done()])
    assert result.success and decisions == [False, True, True, True]
    assert records[0].node == records[0].next_node == "start"
    assert records[0].rule == "wait: no wait edge here, stays on the node"
    assert records[0].decision_note == "follows no edge"


def test_an_edge_that_changes_nothing_earns_nothing():
    graph = TaskGraph(
        "t", GRAPH.nodes, (*GRAPH.edges, Edge("w", "start", "start", MatchRule("wait")))
    )
    result, decisions, records = run(
        [Action.wait(), tap("A"), tap("B"), Action.done()], graph=graph
    )
    assert records[0].edge == "w" and records[0].decision_note == "no change"
    assert decisions == [False, True, True, True] and result.completion_rate == 1.0


def test_on_a_single_path_cr_and_da_are_mobile_agent_v2s():
    # start -A-> n1 -B-> n2 -C-> done: G = 4. Two correct steps, then a wrong tap (strict
    # stops): Mobile-Agent-v2 gives CR 2/4 and DA 2/3.
    chain = TaskGraph(
        "t",
        (node("start", NodeKind.START), node("n1"), node("n2"), node("done", NodeKind.DONE)),
        (tap_edge("A", "start", "n1"), tap_edge("B", "n1", "n2"), tap_edge("C", "n2", "done")),
    )
    result, decisions, _ = run([tap("A"), tap("B"), tap("F")], graph=chain)
    assert decisions == [True, True, False]
    assert (result.matched_steps, result.gt_steps) == (2, 4)
    assert (result.correct_decisions, result.decisions) == (2, 3)
    tolerant, decisions, _ = run(
        [tap("A"), tap("F"), tap("B"), tap("C"), Action.done()], mode=Mode.TOLERANT, graph=chain
    )
    assert decisions == [True, False, True, True, True] and tolerant.completion_rate == 1.0
