"""The studio shows the conversation with the (simulated) user, and its run form makes the
run the CLI makes."""

from __future__ import annotations

from evaluator.run_store import RunStore
from evaluator.users import SimulatedUser
from tests.evaluator.fake_llm_server import FakeLLMServer
from tests.evaluator.test_simulated_user import AskingAgent, endpoint, from_intent, run, sample_task


def test_the_trace_viewer_shows_each_question_and_the_simulated_reply(qtbot, tmp_path):
    from recorder_app.qt.eval_panel.trace_viewer import TraceViewer

    task, graph = sample_task("call_daughter", intent="Call Emma, the older one.")
    with FakeLLMServer(from_intent) as server:
        result, records = run(task, graph, AskingAgent("Emma"), SimulatedUser(endpoint(server)))
    store = RunStore.create(
        tmp_path / "run",
        {"agent": {"name": "asking"}, "suite": {"path": str(graph.task_dir.parent)}},
    )
    trace = store.start_trace(task.id)
    for record in records:
        trace.add(record)
    trace.close()
    store.append_result(result)
    viewer = TraceViewer()
    qtbot.addWidget(viewer)
    assert viewer.show_task(store, task.id)
    viewer.step_list.setCurrentRow(0)
    shown = viewer.step_panel.raw_output.toPlainText()
    assert "Agent asked: “Which daughter do you mean?”" in shown
    assert "The simulated user replied: “Oh, call Emma, the older one.”" in shown
    assert "older-adult, 700/12 tokens, priced apart" in shown
    assert "simulated user replied" in viewer.step_list.item(0).toolTip()
    viewer.step_list.setCurrentRow(1)
    assert "Agent asked" not in viewer.step_panel.raw_output.toPlainText()
