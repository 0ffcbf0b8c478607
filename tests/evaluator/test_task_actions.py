"""The widened action space offline: launch, double tap, key, answer, ask_user, give_up,
and invalid actions (agent failures, never errors)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evaluator.agents.base import AgentStep
from evaluator.offline import GraphContext, Mode, OfflineSettings, run_offline
from evaluator.records import TaskStatus
from evaluator.task_actions import answer_matches, resolve_app
from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    Bounds,
    Edge,
    EdgeSupport,
    ElementRef,
    MatchRule,
    MemberRef,
    Node,
    NodeKind,
    Task,
    TaskGraph,
)
from tests.evaluator.scripted import ScriptedAgent

N = NORMALIZED_SCREEN
HOME = "com.android.launcher3/.Launcher"
CLOCK = "com.android.deskclock/.DeskClock"


def node(node_id: str, kind: NodeKind, activity: str) -> Node:
    return Node(node_id, kind, f"nodes/{node_id}.png", (1080, 2400), activity=activity)


def graph() -> TaskGraph:
    """home -tap Clock icon-> clock -double tap-> zoomed -key enter-> done."""
    icon = ElementRef(Bounds(100, 100, 200, 200), text="Clock")
    support = EdgeSupport(MemberRef("d1", 0), Action.tap(150, 150, screen=N, element=icon))
    return TaskGraph(
        "t1",
        (
            node("start", NodeKind.START, HOME),
            node("clock", NodeKind.STATE, CLOCK),
            node("zoomed", NodeKind.STATE, CLOCK),
            node("done", NodeKind.DONE, CLOCK),
        ),
        (
            Edge("icon", "start", "clock", MatchRule("tap", bounds=icon.bounds), (support,)),
            Edge("dbl", "clock", "zoomed", MatchRule("double_tap", points=((500, 500),))),
            Edge("enter", "zoomed", "done", MatchRule("key", texts=("enter",))),
        ),
    )


def run(steps, task=None, mode=Mode.STRICT):
    task = task or Task(id="t1", instruction="what time is my alarm", max_steps=8)
    records = []
    result = run_offline(
        task,
        GraphContext(graph(), task_dir=Path(".")),
        ScriptedAgent(steps),
        settings=OfflineSettings(mode),
        on_step=records.append,
    )
    return result, records


PATH = [Action.double_tap(505, 498, screen=N), Action.key("KEYCODE_ENTER")]


@pytest.mark.parametrize("app", ["Clock", "com.android.deskclock", "clock"])
def test_launch_follows_the_edge_into_the_app(app):
    result, records = run([Action.launch(app), *PATH, Action.done()])
    assert result.success, result.reason
    assert records[0].edge == "icon" and records[0].rule.startswith("launch")
    assert [r.rule for r in records[1:3]] == ["within 5.38 of point", "key enter"]


def test_launch_of_an_unknown_app_or_from_inside_it_matches_nothing():
    result, records = run([Action.launch("Weather")])
    assert not result.success and "no known app" in records[0].rule
    result, records = run([Action.launch("Clock"), Action.launch("Clock")])
    assert "already in the app" in records[1].rule


def test_a_double_tap_is_not_a_tap():
    result, records = run([Action.launch("Clock"), Action.tap(500, 500, screen=N)])
    assert not result.success and records[1].rule == "no outgoing tap edge"


def test_answers_are_checked_against_the_task():
    task = Task(id="t1", instruction="when is my alarm", answers=("7:30",), max_steps=8)
    steps = [Action.launch("Clock"), *PATH, Action.answer("Your alarm is at 7:30 am")]
    result, records = run([*steps, Action.done()], task)
    assert result.success and result.answer_correct and result.answer.endswith("7:30 am")
    assert records[3].outcome == "answered" and records[3].next_node == "done"
    assert result.decisions == 4  # the answer is not a move on the graph
    wrong, _ = run([*steps[:-1], Action.answer("at eight"), Action.done()], task)
    assert not wrong.success and wrong.answer_correct is False
    assert "'at eight'" in wrong.reason
    silent, _ = run([*steps[:-1], Action.done()], task)
    assert not silent.success and silent.reason == "gave no answer to the question"
    # the text of done counts as the answer too (AutoGLM finish, UI-TARS finished)
    said, _ = run([*steps[:-1], Action(type="done", text="7:30")], task)
    assert said.success


def test_a_scripted_clarification_is_given_to_the_agent():
    task = Task(id="t1", instruction="my alarm", clarifications=("the morning one",))
    agent = ScriptedAgent([Action.ask_user("Which alarm?"), Action.launch("Clock"), *PATH])
    records = []
    result = run_offline(
        task, GraphContext(graph(), task_dir=Path(".")), agent, on_step=records.append
    )
    assert result.success, result.reason
    assert [o.user_reply for o in agent.seen[:3]] == [None, "the morning one", None]
    assert (
        records[0].outcome == "asked_user" and records[0].extra["user_reply"] == "the morning one"
    )


def test_a_question_without_a_scripted_reply_is_its_own_outcome():
    result, records = run([Action.ask_user("Which alarm?"), Action.done()], mode=Mode.TOLERANT)
    assert result.status is TaskStatus.FAILURE and result.outcome == "asked_user"
    assert result.reason == "asked the user 'Which alarm?' and the task scripts no reply"
    assert len(records) == 1


def test_giving_up_is_not_done():
    result, records = run([Action.launch("Clock"), Action.give_up("no alarm app")])
    assert result.status is TaskStatus.FAILURE and not result.terminated
    assert result.outcome == "gave_up" and result.reason == "gave up: no alarm app"


@pytest.mark.parametrize(
    "action",
    [Action.tap(math.nan, 10, screen=N), Action.tap(10, 1200, screen=N)],
    ids=["nan", "off-screen"],
)
def test_invalid_actions_are_agent_failures(action):
    result, records = run([action])
    assert result.status is TaskStatus.FAILURE
    assert records[0].outcome == "invalid_action" and records[0].decision_correct is False
    assert result.reason.startswith("invalid action at step 1")


def test_parse_errors_keep_their_tokens_and_time():
    bad = AgentStep(
        action=None,
        raw_output="hmm",
        parse_error="no action",
        input_tokens=900,
        output_tokens=12,
        inference_seconds=1.5,
    )
    result, records = run([bad])
    assert result.status is TaskStatus.FAILURE and records[0].outcome == "parse_error"
    assert (result.input_tokens, result.output_tokens, result.parse_failures) == (900, 12, 1)
    assert result.inference_seconds >= 1.5


def test_app_labels_and_answers():
    packages = ["com.android.dialer", "com.elderphone.weather", "com.google.android.apps.messaging"]
    assert resolve_app("Phone", packages) == "com.android.dialer"
    assert resolve_app("Weather", packages) == "com.elderphone.weather"
    assert resolve_app("Messages", packages) == "com.google.android.apps.messaging"
    assert resolve_app("Banking", packages) is None
    assert answer_matches("It is 21 °C", ["21 °C"]) and not answer_matches("20", ["21"])


# --------------------------------------------------------------------------- online


def test_online_launch_key_answer_and_give_up_on_the_virtual_phone(virtual_server, tmp_path):
    from devices.android import AndroidDevice, adb_client
    from evaluator.online import run_online
    from evaluator.run_store import RunStore
    from graph_builder.model import ResetRecipe

    task = Task(
        id="clock",
        instruction="what's the weather",
        app="com.android.settings",
        protocol="online",
        reset=ResetRecipe("com.android.settings"),
        answers=("sunny",),
    )
    steps = [
        Action.launch("Weather"),  # a label: the protocol finds the package on the phone
        Action.key("enter"),
        Action.double_tap(540, 1200, screen=(1080, 2400)),
        Action.launch("Banking"),  # not installed: an invalid action, nothing performed
        Action.tap(2000, 10, screen=(1080, 2400)),  # off-screen: invalid, not an error
        Action.answer("Sunny, 21 degrees"),
        Action.give_up(),
    ]
    store = RunStore.create(tmp_path / "run", {"agent": {"name": "scripted"}})
    trace = store.start_trace("clock")
    device = AndroidDevice("virtual-1", client=adb_client(port=virtual_server.port), timeout=5.0)
    records = []
    try:
        result = run_online(task, ScriptedAgent(steps), device, trace, on_step=records.append)
    finally:
        trace.close()
        device.close()
    assert result.status is TaskStatus.FAILURE and result.outcome == "gave_up"
    launched = records[0]
    assert launched.action == {"type": "launch", "text": "com.elderphone.weather"}
    assert records[1].activity.startswith("com.elderphone.weather")
    assert records[1].action["type"] == "key" and records[2].action["type"] == "double_tap"
    assert [r.outcome for r in records[3:]] == [
        "invalid_action",
        "invalid_action",
        "answered",
        "gave_up",
    ]
    assert "no installed app" in records[3].rule and "outside the screen" in records[4].rule
    assert result.answer == "Sunny, 21 degrees" and result.answer_correct


def test_task_actions_are_not_da_decisions_and_are_counted_apart():
    """The decision in docs/evaluation.md: answer, ask_user and give_up move nothing on the
    graph, so DA leaves them out (neither right nor wrong) and the report counts them as
    steps that are not decisions."""
    from evaluator.metrics import group_metrics

    task = Task(
        id="t1",
        instruction="when is my alarm",
        answers=("7:30",),
        clarifications=("the morning one",),
        max_steps=8,
    )
    steps = [Action.ask_user("Which alarm?"), Action.launch("Clock"), *PATH]
    result, records = run([*steps, Action.answer("at 7:30"), Action.done()], task)
    assert result.success, result.reason
    assert [r.outcome for r in records] == ["asked_user", None, None, None, "answered", None]
    assert [r.decision_correct for r in records] == [None, True, True, True, None, True]
    assert (result.steps, result.decisions, result.correct_decisions) == (6, 4, 4)
    da = group_metrics([result]).bases()["da"]
    assert (da["decisions"], da["unscored_steps"]) == (4, 2)
    gave_up, records = run([Action.launch("Clock"), Action.give_up("no alarm app")])
    assert records[-1].decision_correct is None and gave_up.decisions == 1
    assert group_metrics([gave_up]).bases()["da"]["unscored_steps"] == 1
