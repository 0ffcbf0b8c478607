"""What the studio's evaluation panel needs from the evaluator: resuming a run from its
folder alone, the tasks that flipped between two runs, and where step files are."""

from __future__ import annotations

import json
import threading

import pytest

from evaluator.errors import ConfigError, RunStoreError
from evaluator.metrics import compare_runs, flipped_tasks
from evaluator.records import TaskResult
from evaluator.run_store import HumanVerdict, RunStore
from evaluator.runner import RunConfig, TaskFinished, resume_config, run_suite


def test_resume_config_continues_a_stopped_run_from_its_folder(synthetic, tmp_path):
    out = tmp_path / "run"
    stop = threading.Event()

    def progress(event):
        if isinstance(event, TaskFinished):
            stop.set()

    config = RunConfig(
        synthetic.suite,
        out,
        "replay",
        tasks=("task000", "task001", "task002"),
        variant="normalized",
        mode="tolerant",
    )
    first = run_suite(config, progress=progress, stop_event=stop)
    assert first.stopped and first.not_run
    again = resume_config(out)
    assert again.resume and again.out == out and again.agent == "replay"
    assert again.tasks == config.tasks and again.variant is config.variant
    assert again.mode is config.mode and again.suite == synthetic.suite.resolve()
    second = run_suite(again)
    assert not second.not_run and second.finished == 3


def test_run_config_round_trips_through_run_json_and_defaults_fill_missing_fields(tmp_path):
    config = RunConfig(
        suite=tmp_path / "suite",
        out=tmp_path / "run",
        agent="replay",
        protocol="offline",
        tasks=("t1", "t2"),
        variant="normalized",
        mode="tolerant",
        max_steps=7,
        devices=("emulator-5554",),
        judges=("rule", "vlm"),
        judge_config={"vlm": {"model": "m"}},
        settle_timeout=1.5,
        matching="aitw",
    )
    data = json.loads(json.dumps(config.to_json()))
    assert RunConfig.from_json(data) == config
    assert data["tasks"] == ["t1", "t2"] and data["protocol"] == "offline"
    old = {"suite": str(tmp_path / "suite"), "out": str(tmp_path / "run"), "agent": "replay"}
    assert RunConfig.from_json(old | {"judges": None}) == RunConfig(
        suite=tmp_path / "suite", out=tmp_path / "run", agent="replay"
    )
    with pytest.raises(KeyError):
        RunConfig.from_json({"suite": "s", "out": "o"})


def test_resume_config_refuses_a_folder_without_a_run(tmp_path):
    with pytest.raises(RunStoreError):
        resume_config(tmp_path)
    RunStore.create(tmp_path / "run", {"agent": {"name": "replay"}})
    with pytest.raises(ConfigError, match="no run configuration"):
        resume_config(tmp_path / "run")


def _r(task_id: str, status: str) -> TaskResult:
    return TaskResult(task_id, status, "offline", terminated=True)


def test_flipped_tasks_are_the_discordant_pairs_with_overrides_applied():
    a = [
        _r("t1", "success"),
        _r("t2", "failure"),
        _r("t3", "success"),
        _r("t4", "error"),
        _r("t5", "failure"),
        _r("t6", "success"),
    ]
    b = [
        _r("t1", "failure"),
        _r("t2", "success"),
        _r("t3", "success"),
        _r("t4", "success"),
        _r("t5", "failure"),
    ]
    assert flipped_tasks(a, b) == {"t1": True, "t2": False}
    # a human verdict turns t5 in A into a success: now it flipped too
    flips = flipped_tasks(a, b, {"t5": HumanVerdict(True)})
    assert flips == {"t1": True, "t2": False, "t5": True}
    comparison = compare_runs(a, b, {"t5": HumanVerdict(True)})
    assert (comparison.only_a, comparison.only_b) == (2, 1) and comparison.pairs == 4


def test_step_files_are_in_the_suite_offline_and_in_the_run_online(synthetic, tmp_path):
    out = tmp_path / "run"
    run_suite(RunConfig(synthetic.suite, out, "replay", tasks=("task000",)))
    store = RunStore.open(out)
    step = store.read_steps("task000")[0]
    offline = store.step_file("offline", step.screenshot)
    assert offline is not None and offline.is_file()
    assert offline.parent.parent == synthetic.suite.resolve() / "task000"
    assert store.step_file("online", "traces/t1/0000.png") == out / "traces/t1/0000.png"
    assert store.step_file("offline", None) is None
