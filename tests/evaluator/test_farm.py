"""Device farms: a pool that heals itself, and the Ray executor on a local Ray cluster.

The Ray tests run the sample suite's online tasks on two virtual phones, reached through
real adbutils from Ray worker processes, and compare them with a one-device local run.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluator.farm.log import farm_summary, read_farm_log
from evaluator.farm.pool import FarmSettings
from evaluator.run_store import RunStore
from evaluator.runner import RunConfig, StepDone, TaskFinished, WorkerStopped, iter_run
from graph_builder.io import load_suite_tasks
from graph_builder.model import EvalProtocol
from virtual_phone import fast_phone, running_server

SAMPLE = Path(__file__).resolve().parents[2] / "task_graphs" / "sample"
# the sample suite's online tasks, every one of which the replay agent passes
ONLINE_TASKS = sum(1 for t in load_suite_tasks(SAMPLE) if t.protocol is EvalProtocol.ONLINE)
SERIALS = ("virtual-1", "virtual-2")
WAKE = (
    f'{sys.executable} -c "import adbutils, sys; adbutils.AdbClient(port=int(sys.argv[2]))'
    ".device(sys.argv[1]).shell('input keyevent KEYCODE_WAKEUP')\" {serial} {port}"
)


def _outcomes(run: Path) -> dict[str, tuple[str, int, str | None]]:
    return {
        r.task_id: (r.status.value, r.steps, r.final_node) for r in RunStore.open(run).results()
    }


@pytest.fixture(scope="module")
def farm_server() -> Iterator[object]:
    with running_server(phones=[fast_phone(s) for s in SERIALS]) as server:
        yield server


def _fresh_phones(server) -> tuple[str, ...]:
    """Fresh phones under the same serials; their farm addresses."""
    for serial in SERIALS:
        if serial in {p.serial for p in server.phones}:
            server.remove_phone(serial)
        server.add_phone(fast_phone(serial))
    return tuple(f"{s}@127.0.0.1:{server.port}" for s in SERIALS)


def _shell(port: int, serial: str, command: str) -> None:
    import adbutils

    adbutils.AdbClient(port=port).device(serial).shell(command)


@pytest.fixture
def phones(farm_server) -> tuple[str, ...]:
    return _fresh_phones(farm_server)


def _online(tmp_path: Path, name: str, devices: tuple[str, ...], **farm: object) -> RunConfig:
    return RunConfig(
        suite=SAMPLE,
        out=tmp_path / name,
        agent="replay",
        protocol=EvalProtocol.ONLINE,
        devices=devices,
        farm=FarmSettings(**farm),  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------- the pool


def test_a_dark_phone_is_healed_by_the_restart_command(tmp_path, farm_server, phones):
    _shell(farm_server.port, "virtual-1", "input keyevent KEYCODE_SLEEP")
    config = RunConfig(
        suite=SAMPLE,
        out=tmp_path / "healed",
        agent="replay",
        tasks=("wifi_off", "airplane_on"),
        devices=phones[:1],
        farm=FarmSettings(restart_command=WAKE),
    )
    events = list(iter_run(config))
    assert [e.result.status.value for e in events if isinstance(e, TaskFinished)] == [
        "success",
        "success",
    ]
    log = read_farm_log(tmp_path / "healed")
    kinds = [e["event"] for e in log]
    assert kinds[:3] == ["unhealthy", "restart", "task"]
    assert "screen: off" in log[0]["problem"] and log[1]["ok"] is True
    (summary,) = farm_summary(tmp_path / "healed")
    assert summary == {
        "device": phones[0],
        "tasks": 2,
        "unhealthy": 1,
        "restarts": 1,
        "retries": 0,
        "quarantined": False,
    }


def test_a_phone_that_cannot_be_healed_is_quarantined_and_its_tasks_wait(tmp_path, phones):
    _shell(int(phones[0].rsplit(":", 1)[1]), "virtual-1", "input keyevent KEYCODE_SLEEP")
    config = RunConfig(
        suite=SAMPLE,
        out=tmp_path / "dark",
        agent="replay",
        tasks=("wifi_off",),
        devices=phones[:1],
        farm=FarmSettings(restart_command="false", quarantine_after=2),
    )
    events = list(iter_run(config))
    stopped = [e for e in events if isinstance(e, WorkerStopped)]
    assert len(stopped) == 1 and "quarantined" in stopped[0].reason
    assert events[-1].not_run == ("wifi_off",)  # nothing recorded: it runs on --resume
    assert RunStore.open(tmp_path / "dark").results() == []
    assert [e["event"] for e in read_farm_log(tmp_path / "dark")] == [
        "unhealthy",
        "restart",
        "unhealthy",
        "quarantine",
    ]


# --------------------------------------------------------------------------- Ray


@pytest.fixture(scope="module")
def ray_cluster(farm_server) -> Iterator[object]:
    ray = pytest.importorskip("ray")
    from evaluator.farm.ray_executor import LOCAL_OBJECT_STORE, resource_name

    addresses = [f"{s}@127.0.0.1:{farm_server.port}" for s in SERIALS]
    ray.init(
        num_cpus=2,
        resources={resource_name(a): 1 for a in addresses},
        object_store_memory=LOCAL_OBJECT_STORE,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    yield ray
    ray.shutdown()


def test_ray_over_two_phones_gives_the_one_device_results(
    tmp_path, farm_server, phones, ray_cluster
):
    list(iter_run(_online(tmp_path, "local", phones[:1])))
    _fresh_phones(farm_server)
    farm, shown = [], []
    for event in iter_run(_online(tmp_path, "ray", phones, executor="ray")):
        farm.append(event)
        if isinstance(event, StepDone):  # a live view shows the screen as the step comes
            shown.append(event.screenshot_path is not None and event.screenshot_path.is_file())
    local, remote = _outcomes(tmp_path / "local"), _outcomes(tmp_path / "ray")
    assert len(local) == ONLINE_TASKS and all(
        status == "success" for status, _, _ in local.values()
    )
    assert remote == local
    used = {e.worker for e in farm if isinstance(e, TaskFinished)}
    assert used == set(phones)  # both phones took tasks
    # Every step streamed from the workers while its task ran, before the task's result.
    for finished in (e for e in farm if isinstance(e, TaskFinished)):
        at = farm.index(finished)
        steps = [e for e in farm[:at] if isinstance(e, StepDone) and e.task_id == finished.task_id]
        assert len(steps) == finished.result.steps > 0
        assert {e.worker for e in steps} == {finished.worker}
    assert shown and all(shown)
    shot = next((tmp_path / "ray" / "traces" / "wifi_off").glob("0000.png"))
    assert shot.read_bytes().startswith(b"\x89PNG")
    assert {d["device"] for d in farm_summary(tmp_path / "ray")} == set(phones)


def test_ray_survives_a_phone_unplugged_mid_run(tmp_path, farm_server, phones, ray_cluster):
    config = _online(tmp_path, "unplug", phones, executor="ray", quarantine_after=1)
    unplugged = False
    for event in iter_run(config):
        if isinstance(event, TaskFinished) and not unplugged:
            farm_server.remove_phone("virtual-2")
            unplugged = True
    results = _outcomes(tmp_path / "unplug")
    assert len(results) == ONLINE_TASKS and all(
        status == "success" for status, _, _ in results.values()
    )
    log = read_farm_log(tmp_path / "unplug")
    assert any(e["event"] == "quarantine" and e["device"] == phones[1] for e in log)
    quarantined_at = next(i for i, e in enumerate(log) if e["event"] == "quarantine")
    assert all(e["device"] == phones[0] for e in log[quarantined_at:] if e["event"] == "task")


def test_ray_survives_a_killed_worker(tmp_path, phones, ray_cluster):
    config = _online(tmp_path, "kill", phones, executor="ray")
    killed = None
    for event in iter_run(config):
        if isinstance(event, TaskFinished) and killed is None and event.worker == phones[1]:
            # the worker of the second phone has finished a task and is given the next one
            (task,) = [e for e in read_farm_log(tmp_path / "kill") if e["event"] == "task"][-1:]
            killed = task["worker_pid"]
            os.kill(killed, signal.SIGKILL)
    assert killed is not None
    results = _outcomes(tmp_path / "kill")
    assert len(results) == ONLINE_TASKS and all(
        status == "success" for status, _, _ in results.values()
    )
    log = read_farm_log(tmp_path / "kill")
    lost = [e for e in log if e["event"] == "actor_lost"]
    assert len(lost) == 1 and lost[0]["device"] == phones[1]
    retried = [e for e in log if e["event"] == "retry"]
    assert [e["task"] for e in retried] == [lost[0]["task"]]
