"""The online protocol on an in-memory device that walks a task graph (no ADB): the runner
drives whatever keeps the Device protocol; a device lost mid-task is an error, or a rerun
on the reopened device when the farm allows retries."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from devices.errors import DeviceDisconnectedError
from devices.fake import FakeDevice
from evaluator.clean_start import SNAPSHOT
from evaluator.farm.log import read_farm_log
from evaluator.farm.pool import FarmSettings
from evaluator.matching import match_edges
from evaluator.run_store import RunStore
from evaluator.runner import RunConfig, TaskFinished, iter_run
from graph_builder.io import load_graph
from graph_builder.model import Action, Observation
from graph_builder.screen import Screen

TASK = "task003"  # four taps through the graph, no typing


@dataclass
class SnapshotPhone(FakeDevice):
    """A graph device with a shell that keeps whole-phone snapshots, like the virtual phone;
    with ``unplug_at_save`` it goes away while the run saves its clean start."""

    commands: list[str] = field(default_factory=list)
    unplug_at_save: bool = False

    def shell(self, command: str, *, timeout: float | None = None, check: bool = True) -> str:
        if self.closed or (self.unplug_at_save and "snapshot save" in command):
            self.closed = True
            raise DeviceDisconnectedError(f"{self.serial} was unplugged")
        self.commands.append(command)
        return ""


def graph_device(task_dir: Path, serial: str, kind: type[FakeDevice] = FakeDevice) -> FakeDevice:
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
    return kind(screens, graph.start.id, transition, serial=serial)


def run(suite: Path, out: Path, devices: list[FakeDevice], retries: int = 0) -> list[object]:
    farm = FarmSettings(task_retries=retries)
    config = RunConfig(
        suite=suite,
        out=out,
        agent="replay",
        protocol="online",
        tasks=(TASK,),
        devices=("f1",),
        farm=farm,
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


def test_a_device_lost_mid_task_without_retries_is_an_error(synthetic, tmp_path):
    device = graph_device(synthetic.suite / TASK, "f1")
    device.fail_next("perform")
    events = run(synthetic.suite, tmp_path / "run", [device])
    result = RunStore.open(tmp_path / "run").results()[0]
    assert result.status.value == "error" and "f1 was lost" in (result.reason or "")
    assert [e.task_id for e in events if isinstance(e, TaskFinished)] == [TASK]
    assert device.closed


def test_a_task_whose_device_was_lost_reruns_on_the_device_reopened(synthetic, tmp_path):
    lost, healed = (
        graph_device(synthetic.suite / TASK, "f1"),
        graph_device(synthetic.suite / TASK, "f1"),
    )
    lost.fail_next("perform")
    run(synthetic.suite, tmp_path / "run", [lost, healed], retries=1)
    result = RunStore.open(tmp_path / "run").results()[0]
    assert result.success, result.reason
    assert lost.closed and len(lost.performed) == 0 and len(healed.performed) == 4


def test_an_unhealthy_device_is_reopened_before_the_task(synthetic, tmp_path):
    sick, fresh = (
        graph_device(synthetic.suite / TASK, "f1"),
        graph_device(synthetic.suite / TASK, "f1"),
    )
    sick.fail_next("health")
    run(synthetic.suite, tmp_path / "run", [sick, fresh])
    result = RunStore.open(tmp_path / "run").results()[0]
    assert result.success and sick.closed and not sick.performed
    assert len(fresh.performed) == 4


def test_a_device_lost_while_the_run_reads_its_fingerprint_reruns_the_task(synthetic, tmp_path):
    # The first task on a device records the device's model and app versions before the
    # episode starts; an unplug there is a lost device, not an error in the SR denominator.
    lost, healed = (
        graph_device(synthetic.suite / TASK, "f1"),
        graph_device(synthetic.suite / TASK, "f1"),
    )
    lost.fail_next("package_versions")
    run(synthetic.suite, tmp_path / "run", [lost, healed], retries=1)
    (result,) = RunStore.open(tmp_path / "run").results()
    assert result.success, result.reason
    assert lost.closed and not lost.performed and len(healed.performed) == 4
    (retry,) = [e for e in read_farm_log(tmp_path / "run") if e["event"] == "retry"]
    assert retry["task"] == TASK and "f1 was lost" in retry["reason"]


def test_a_device_lost_while_saving_the_clean_start_reruns_from_a_saved_one(synthetic, tmp_path):
    # A phone that stops answering has not shown it keeps no snapshots: once healed, the
    # run saves the clean start on it and the task starts from it.
    lost = graph_device(synthetic.suite / TASK, "f1", SnapshotPhone)
    healed = graph_device(synthetic.suite / TASK, "f1", SnapshotPhone)
    assert isinstance(lost, SnapshotPhone) and isinstance(healed, SnapshotPhone)
    lost.unplug_at_save = True
    run(synthetic.suite, tmp_path / "run", [lost, healed], retries=1)
    (result,) = RunStore.open(tmp_path / "run").results()
    assert result.success, result.reason
    assert not lost.resets and not lost.performed
    assert healed.commands == [
        f"virtualphone snapshot save {SNAPSHOT}",
        f"virtualphone snapshot load {SNAPSHOT}",
    ]
    assert [e["event"] for e in read_farm_log(tmp_path / "run")].count("retry") == 1


def test_a_device_lost_before_the_episode_without_retries_is_an_error(synthetic, tmp_path):
    device = graph_device(synthetic.suite / TASK, "f1")
    device.fail_next("info")
    run(synthetic.suite, tmp_path / "run", [device])
    (result,) = RunStore.open(tmp_path / "run").results()
    assert result.status.value == "error" and result.steps == 0
    assert result.reason == "device f1 was lost: f1 was unplugged"
