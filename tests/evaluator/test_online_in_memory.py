"""The online protocol on an in-memory device that walks a task graph (no ADB): the runner
drives whatever keeps the Device protocol, and a device lost mid-task is reported as such."""

from __future__ import annotations

from pathlib import Path

from devices.fake import FakeDevice
from evaluator.matching import match_edges
from evaluator.run_store import RunStore
from evaluator.runner import RunConfig, TaskFinished, WorkerStopped, iter_run
from graph_builder.io import load_graph
from graph_builder.model import Action, Observation
from graph_builder.screen import Screen

TASK = "task003"  # four taps through the graph, no typing


def graph_device(task_dir: Path, serial: str) -> FakeDevice:
    """A phone that shows the graph's node screens and follows its edges (else stays)."""
    graph = load_graph(task_dir)
    screens = {
        node.id: Screen.from_observation(
            Observation(node.screenshot, node.screen, node.hierarchy, node.activity), task_dir
        )
        for node in graph.nodes
    }

    def transition(at: str, action: Action) -> str:
        match = match_edges(graph.out_edges(at), action, screen=screens[at].size)
        return match.edge.target if match.edge is not None else at

    assert graph.start is not None
    return FakeDevice(screens, graph.start.id, transition, serial=serial)


def run(suite: Path, out: Path, devices: list[FakeDevice]) -> list[object]:
    config = RunConfig(
        suite=suite, out=out, agent="replay", protocol="online", tasks=(TASK,), devices=("f1",)
    )
    opened = iter(devices)
    return list(iter_run(config, device_factory=lambda serial: next(opened)))


def test_replay_succeeds_online_on_a_device_walking_the_graph(synthetic, tmp_path):
    device = graph_device(synthetic.suite / TASK, "f1")
    run(synthetic.suite, tmp_path / "run", [device])
    result = RunStore.open(tmp_path / "run").results()[0]
    assert result.success, result.reason
    assert result.device == "f1" and result.correct_decisions == result.decisions == 5
    assert [a.type.value for a in device.performed] == ["tap"] * 4  # done is not sent
    assert len(device.resets) == 1 and device.current == "done" and device.closed


def test_a_device_lost_mid_task_is_an_error_and_its_worker_stops(synthetic, tmp_path):
    device = graph_device(synthetic.suite / TASK, "f1")
    device.fail_next("perform")
    events = run(synthetic.suite, tmp_path / "run", [device])
    result = RunStore.open(tmp_path / "run").results()[0]
    assert result.status.value == "error" and "f1 was lost" in (result.reason or "")
    assert [e.worker for e in events if isinstance(e, WorkerStopped)] == ["f1"]
    assert [e.task_id for e in events if isinstance(e, TaskFinished)] == [TASK]
    assert device.closed
