"""A finished run matched again under every other matching profile."""

from __future__ import annotations

import dataclasses

from evaluator.offline import GraphContext, Mode, OfflineSettings, run_offline
from evaluator.report import write_report
from evaluator.run_store import RunStore
from evaluator.run_summary import summarize
from evaluator.sensitivity import profile_sensitivity
from graph_builder.io import save_graph, save_task
from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    Edge,
    MatchRule,
    Node,
    NodeKind,
    Task,
    TaskGraph,
)
from tests.evaluator.scripted import ScriptedAgent

N = NORMALIZED_SCREEN


def graph(task_id: str) -> TaskGraph:
    return TaskGraph(
        task_id,
        (
            Node("start", NodeKind.START, "nodes/start.png", (1080, 2400)),
            Node("done", NodeKind.DONE, "nodes/done.png", (1080, 2400)),
        ),
        (Edge("e", "start", "done", MatchRule("tap", points=((500, 500),))),),
    )


def run_folder(tmp_path, taps: dict[str, tuple[float, float]]):
    suite = tmp_path / "suite"
    store = RunStore.create(
        tmp_path / "run",
        {
            "agent": {"name": "scripted"},
            "suite": {"path": str(suite), "name": "s"},
            "config": {"matching": "elderbench"},
        },
    )
    for task_id, (x, y) in taps.items():
        task = Task(task_id, "tap it", max_steps=3)
        save_task(task, suite / task_id)
        save_graph(graph(task_id), suite / task_id)
        trace = store.start_trace(task_id)
        result = run_offline(
            task,
            GraphContext.load(suite / task_id),
            ScriptedAgent([Action.tap(x, y, screen=N), Action.done()]),
            settings=OfflineSettings(Mode.TOLERANT),
            on_step=trace.add,
        )
        trace.close()
        store.append_result(result)
    return store, suite


def test_each_profile_counts_the_steps_and_tasks_it_would_judge_otherwise(tmp_path):
    # 60 units right of the point: a miss for elderbench (50) and androidcontrol (40), a
    # hit for aitw and gui_odyssey (140) and colorbench (64.8 px of its 151 px).
    # 45 units right: a hit for elderbench, a miss only for androidcontrol.
    store, suite = run_folder(tmp_path, {"far": (560, 500), "near": (545, 500)})
    found = profile_sensitivity(store, suite, "elderbench")
    assert set(found) == {"aitw", "gui_odyssey", "androidcontrol", "colorbench"}
    assert {p: (d.steps, d.tasks) for p, d in found.items()} == {
        "aitw": (1, 1),
        "gui_odyssey": (1, 1),
        "androidcontrol": (1, 1),
        "colorbench": (1, 1),
    }
    assert found["aitw"].first == {"far": 0} and found["androidcontrol"].first == {"near": 0}
    assert found["aitw"].scored_steps == 2  # one tap each; done steps match no edge

    summary = summarize(tmp_path / "run")
    assert summary.matching == "elderbench"
    assert summary.profile_sensitivity is not None
    assert summary.profile_sensitivity["colorbench"]["first"] == {"far": 0}
    md, _ = write_report(tmp_path / "run", summary=summary)
    assert "| androidcontrol | 1 | 1 | near@0 |" in md.read_text()


def test_a_task_whose_node_hierarchy_no_longer_parses_is_left_out(tmp_path):
    # aitw and androidcontrol read the node's elements: an unreadable dump cannot be judged
    store, suite = run_folder(tmp_path, {"far": (560, 500), "near": (545, 500)})
    broken = graph("far")
    start = dataclasses.replace(broken.nodes[0], hierarchy="nodes/start.xml")
    save_graph(dataclasses.replace(broken, nodes=(start, broken.nodes[1])), suite / "far")
    (suite / "far" / "nodes").mkdir(exist_ok=True)
    (suite / "far" / "nodes" / "start.xml").write_text("not a dump", encoding="utf-8")
    found = profile_sensitivity(store, suite, "elderbench")
    assert {d.scored_steps for d in found.values()} == {1}
    assert found["androidcontrol"].first == {"near": 0} and found["aitw"].first == {}
