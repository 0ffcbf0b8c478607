"""The offline protocol on hand-built graphs: strict and tolerant walks, scoring, errors."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from evaluator.agents.base import AgentStep
from evaluator.control import Control
from evaluator.errors import RunStopped, TaskSetupError
from evaluator.offline import GraphContext, Mode, OfflineSettings, run_offline
from graph_builder.io import save_graph
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
TASK = Task(id="t1", instruction="please write hello", max_steps=6)


def node(node_id: str, kind: NodeKind) -> Node:
    return Node(node_id, kind, f"nodes/{node_id}.png", (1080, 2400))


def graph() -> TaskGraph:
    """start -tap A-> form -type hello-> done, and a detour start -swipe up-> list -back-> start."""
    return TaskGraph(
        "t1",
        (
            node("start", NodeKind.START),
            node("form", NodeKind.STATE),
            node("list", NodeKind.STATE),
            node("done", NodeKind.DONE),
        ),
        (
            Edge("tap_a", "start", "form", MatchRule("tap", bounds=Bounds(100, 100, 300, 200))),
            Edge("type", "form", "done", MatchRule("type", texts=("hello",))),
            Edge("scroll", "start", "list", MatchRule("swipe", direction="up")),
            Edge("back", "list", "start", MatchRule("back")),
        ),
    )


def run(steps, mode=Mode.STRICT, max_steps=None, control=None):
    context = GraphContext(graph(), task_dir=Path("."))
    records = []
    result = run_offline(
        TASK,
        context,
        ScriptedAgent(steps),
        settings=OfflineSettings(mode, max_steps),
        control=control,
        on_step=records.append,
    )
    return result, records


TAP_A = Action.tap(150, 150, screen=N)
TAP_MISS = Action.tap(900, 900, screen=N)


def test_strict_success_records_the_deciding_rules():
    result, records = run([TAP_A, Action.type_text("helo"), Action.done()])
    assert result.success and result.terminated
    assert [r.rule for r in records] == ["inside bounds", "text ratio 88.88", "done on DONE node"]
    assert [r.edge for r in records] == ["tap_a", "type", None]
    assert [r.node for r in records] == ["start", "form", "done"]
    assert (result.matched_steps, result.gt_steps, result.completion_rate) == (3, 3, 1.0)
    assert (result.decisions, result.correct_decisions) == (3, 3)


def test_strict_fails_at_the_first_unmatched_action():
    result, records = run([TAP_MISS, TAP_A, Action.type_text("hello"), Action.done()])
    assert not result.success and len(records) == 1
    assert result.reason.startswith("unmatched action at step 1: no tap edge here")
    assert result.completion_rate == 0.0


def test_tolerant_stays_on_the_node_and_continues():
    result, records = run(
        [TAP_MISS, TAP_A, Action.type_text("hello"), Action.done()], mode=Mode.TOLERANT
    )
    assert result.success
    assert [r.node for r in records] == ["start", "start", "form", "done"]
    assert records[0].matched is False and records[0].next_node == "start"
    assert (result.decisions, result.correct_decisions) == (4, 3)
    assert result.completion_rate == 1.0


def test_a_detour_through_a_loop_succeeds_but_its_steps_earn_nothing():
    up = Action.swipe(500, 800, 500, 200, screen=N)
    result, records = run([up, Action.back(), TAP_A, Action.type_text("hello"), Action.done()])
    assert result.success
    assert [r.rule for r in records[:2]] == ["direction up", "type back"]
    assert [r.decision_correct for r in records] == [False, False, True, True, True]
    assert records[0].decision_note == "no DONE node reachable from list without revisiting"
    assert records[1].decision_note == "back to visited node start"
    assert (result.matched_steps, result.completion_rate) == (3, 1.0)
    assert (result.decisions, result.correct_decisions) == (5, 3)


def test_done_on_a_state_node_fails():
    result, _ = run([TAP_A, Action.done()])
    assert not result.success and result.terminated
    assert result.reason == "said done on form, which is not a DONE node"
    assert result.completion_rate == pytest.approx(1 / 3)


def test_reaching_done_without_saying_done_is_not_success():
    result, records = run(
        [TAP_A, Action.type_text("hello")] + [Action.back()] * 5, mode=Mode.TOLERANT, max_steps=4
    )
    assert not result.success and not result.terminated
    assert len(records) == 4
    assert result.reason == "reached max_steps (4) at node done without saying done"


def test_parse_failures_fail_strict_and_are_skipped_in_tolerant():
    bad = AgentStep(action=None, raw_output="???", parse_error="no JSON object")
    strict, _ = run([bad, TAP_A])
    assert strict.reason == "parse failure at step 1: no JSON object"
    assert strict.parse_failures == 1
    tolerant, records = run(
        [bad, TAP_A, Action.type_text("hello"), Action.done()], mode=Mode.TOLERANT
    )
    assert (
        tolerant.success and records[0].raw_output == "???" and records[0].rule == "parse failure"
    )


def test_reflections_are_scored_against_what_happened():
    steps = [
        AgentStep(action=TAP_MISS),
        AgentStep(action=TAP_A, reflection="no_change"),  # right: the miss changed nothing
        AgentStep(action=Action.type_text("hello"), reflection="wrong"),  # wrong: tap matched
        AgentStep(action=Action.done(), reflection="correct"),  # right
    ]
    result, records = run(steps, mode=Mode.TOLERANT)
    assert [r.reflection_correct for r in records] == [None, True, False, True]
    assert (result.reflections, result.correct_reflections) == (3, 2)


def test_ground_truth_steps_follow_the_shortest_path():
    assert GraphContext(graph(), task_dir=Path(".")).gt_steps == 3


def test_missing_and_invalid_graphs_are_setup_errors(tmp_path):
    with pytest.raises(TaskSetupError, match="has no graph.json"):
        GraphContext.load(tmp_path)
    no_done = TaskGraph(
        "t1",
        (node("start", NodeKind.START), node("a", NodeKind.STATE)),
        (Edge("e", "start", "a", MatchRule("back")),),
    )
    save_graph(no_done, tmp_path)
    with pytest.raises(TaskSetupError, match="no DONE node"):
        GraphContext.load(tmp_path)
    (tmp_path / "graph.json").write_text("{not json")
    with pytest.raises(TaskSetupError, match="cannot load the graph"):
        GraphContext.load(tmp_path)
    unreachable = TaskGraph("t1", (node("start", NodeKind.START), node("done", NodeKind.DONE)))
    save_graph(unreachable, tmp_path)
    with pytest.raises(TaskSetupError, match="no DONE node can be reached from START"):
        GraphContext.load(tmp_path)


def test_stop_raises_and_pause_waits():
    stopped = Control()
    stopped.stop.set()
    with pytest.raises(RunStopped):
        run([TAP_A], control=stopped)

    paused = Control()
    paused.pause.set()
    threading.Timer(0.2, paused.pause.clear).start()
    started = time.perf_counter()
    result, _ = run([TAP_A, Action.type_text("hello"), Action.done()], control=paused)
    assert result.success and time.perf_counter() - started >= 0.19


class ImageSendingAgent(ScriptedAgent):
    """A scripted agent whose requests would carry the screenshot at 1024 px."""

    def image_request(self) -> tuple[int | None, str]:
        return 1024, "PNG"


def test_the_next_screens_are_prepared_while_the_agent_thinks(monkeypatch):
    import evaluator.offline as offline

    asked: list[tuple[list[str], int | None, str]] = []

    def prepare_ahead(screens, *, max_side, fmt="PNG"):
        asked.append(([s.screenshot_path.name for s in screens], max_side, fmt))

    monkeypatch.setattr(offline, "prepare_ahead", prepare_ahead)
    context = GraphContext(graph(), task_dir=Path("."))
    agent = ImageSendingAgent([TAP_A, Action.type_text("hello"), Action.done()])
    assert run_offline(TASK, context, agent).success
    # start leads to form and list, form to done; the agent is never told which.
    assert asked == [
        (["form.png", "list.png"], 1024, "PNG"),
        (["done.png"], 1024, "PNG"),
        ([], 1024, "PNG"),
    ]
    asked.clear()
    run_offline(TASK, GraphContext(graph(), task_dir=Path(".")), ScriptedAgent([TAP_A]))
    assert asked == []  # an agent that sends no screenshot has nothing prepared for it
