"""The runner: events for live views, stop/pause/resume, errors that do not stop a run,
and a real kill of the CLI in the middle of a run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evaluator.errors import ConfigError
from evaluator.run_store import RunStore
from evaluator.runner import (
    RunConfig,
    RunFinished,
    RunStarted,
    StepDone,
    TaskFinished,
    TaskStarted,
    iter_run,
    load_jobs,
    resume_config,
    run_suite,
)
from graph_builder.io import load_graph, save_graph
from graph_builder.model import EvalProtocol

ROOT = Path(__file__).resolve().parents[2]
LINE_AGENT = Path(__file__).with_name("line_agent.py")


def config(suite, out, **options) -> RunConfig:
    return RunConfig(suite=suite, out=out, agent="replay", **options)


def test_events_carry_what_a_live_view_needs(synthetic, tmp_path):
    events = list(iter_run(config(synthetic.suite, tmp_path / "run", tasks=("task002",))))
    kinds = [type(e) for e in events]
    assert kinds[0] is RunStarted and kinds[1] is TaskStarted and kinds[-1] is RunFinished
    steps = [e for e in events if isinstance(e, StepDone)]
    assert len(steps) == 4  # three taps and done
    assert all(e.screenshot_path.is_file() for e in steps)
    assert steps[0].record.action["type"] == "tap" and steps[0].record.rule == "inside bounds"
    assert steps[0].record.raw_output.startswith("tap (")
    finished = [e for e in events if isinstance(e, TaskFinished)]
    assert finished[0].result.success and (finished[0].done, finished[0].total) == (1, 1)
    assert events[1].instruction == synthetic.tasks[2].instruction


def test_stop_leaves_a_resumable_run(synthetic, tmp_path):
    stop = threading.Event()
    seen: list[str] = []

    def progress(event):
        if isinstance(event, TaskFinished):
            seen.append(event.task_id)
            if len(seen) == 3:
                stop.set()

    first = run_suite(config(synthetic.suite, tmp_path / "run"), progress=progress, stop_event=stop)
    assert first.stopped and first.not_run
    assert first.finished + len(first.not_run) == 10
    second = run_suite(config(synthetic.suite, tmp_path / "run", resume=True))
    assert not second.stopped and not second.not_run
    lines = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 10 and len({json.loads(line)["task_id"] for line in lines}) == 10


class _WatchedPause(threading.Event):
    """A pause event that tells when a worker has come to check it."""

    def __init__(self) -> None:
        super().__init__()
        self.checks = 0
        self.checked_twice = threading.Event()

    def is_set(self) -> bool:
        self.checks += 1
        if self.checks >= 2:
            self.checked_twice.set()
        return super().is_set()


def test_pause_holds_the_run_between_steps(synthetic, tmp_path):
    pause = _WatchedPause()
    pause.set()
    finished: list[str] = []
    thread = threading.Thread(
        target=run_suite,
        kwargs=dict(
            config=config(synthetic.suite, tmp_path / "run", tasks=("task000", "task001")),
            progress=lambda e: finished.append(e.task_id) if isinstance(e, TaskFinished) else None,
            pause_event=pause,
        ),
    )
    thread.start()
    # A worker came to the gate and, still paused, checked it again: it is held there.
    assert pause.checked_twice.wait(10)
    assert finished == []
    pause.clear()
    thread.join(timeout=10)
    assert finished == ["task000", "task001"]


def test_resume_reruns_a_task_whose_line_was_torn(synthetic, tmp_path):
    run_suite(config(synthetic.suite, tmp_path / "run", tasks=("task000", "task001", "task002")))
    path = tmp_path / "run" / "results.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: data.rfind(b"\n", 0, len(data) - 1) + 1] + data.splitlines()[-1][:25])
    events = list(
        iter_run(
            config(
                synthetic.suite,
                tmp_path / "run",
                tasks=("task000", "task001", "task002"),
                resume=True,
            )
        )
    )
    assert events[0].skipped == ("task000", "task001")
    assert [e.task_id for e in events if isinstance(e, TaskFinished)] == ["task002"]
    assert len(RunStore.open(tmp_path / "run").results()) == 3


@pytest.fixture
def damaged_suite(synthetic, tmp_path) -> Path:
    """A copy of the suite where three tasks cannot be evaluated offline."""
    suite = tmp_path / "suite"
    shutil.copytree(synthetic.suite, suite)
    (suite / "task001" / "graph.json").unlink()
    graph = load_graph(suite / "task002")
    save_graph(
        graph.with_changes(nodes=tuple(n for n in graph.nodes if n.id != "done")), suite / "task002"
    )
    (suite / "task003" / "task.json").write_text('{"schema_version": 1, "id": ')
    return suite


def test_bad_tasks_are_errors_and_the_run_goes_on(damaged_suite, tmp_path):
    finished = run_suite(config(damaged_suite, tmp_path / "run"))
    assert not finished.not_run
    results = {r.task_id: r for r in RunStore.open(tmp_path / "run").results()}
    assert len(results) == 10
    errors = {t: r.reason for t, r in results.items() if r.status.value == "error"}
    assert set(errors) == {"task001", "task002", "task003"}
    assert "no graph.json" in errors["task001"]
    assert "not usable" in errors["task002"] and "edge" in errors["task002"]
    assert "cannot load task.json" in errors["task003"]
    assert all(r.success for t, r in results.items() if t not in errors)

    retried = list(iter_run(config(damaged_suite, tmp_path / "run", resume=True)))
    assert sorted(e.task_id for e in retried if isinstance(e, TaskFinished)) == sorted(errors)


def test_parallel_offline_workers_share_the_tasks(synthetic, tmp_path):
    events = list(iter_run(config(synthetic.suite, tmp_path / "run", workers=3)))
    workers = {e.worker for e in events if isinstance(e, TaskFinished)}
    assert len(workers) > 1
    results = RunStore.open(tmp_path / "run").results()
    assert len(results) == 10 and all(r.success for r in results)


def test_configuration_problems_are_raised_before_anything_is_written(synthetic, tmp_path):
    with pytest.raises(ConfigError, match="no such task"):
        list(iter_run(config(synthetic.suite, tmp_path / "a", tasks=("nope",))))
    with pytest.raises(ConfigError, match="--device"):
        list(
            iter_run(config(synthetic.suite, tmp_path / "b", protocol="online", tasks=("task000",)))
        )
    with pytest.raises(ConfigError, match="does not exist"):
        list(iter_run(config(tmp_path / "missing", tmp_path / "c")))
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_killing_the_cli_mid_run_loses_nothing_finished(synthetic, tmp_path):
    out = tmp_path / "run"
    agent_config = tmp_path / "agent.json"
    agent_config.write_text(
        json.dumps({"command": [sys.executable, str(LINE_AGENT), "--delay", "0.05"]})
    )
    command = [
        sys.executable,
        "-m",
        "elderbench",
        "eval",
        "--suite",
        str(synthetic.suite),
        "--agent",
        "subprocess",
        "--agent-config",
        str(agent_config),
        "--instruction",
        "normalized",
        "--out",
        str(out),
        "--no-report",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL, start_new_session=True
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_bytes().splitlines()) >= 3:
            break
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    done_before = {r.task_id for r in RunStore.open(out).results()}
    assert 3 <= len(done_before) < 10

    resumed = subprocess.run(
        [*command, "--resume"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    results_after = RunStore.open(out).results()
    assert len(results_after) == 10
    assert sum(r.success for r in results_after) == 8  # it cannot type: two tasks fail
    assert f"{len(done_before)} already finished" in resumed.stderr


def test_ctrl_c_stops_after_the_current_step_and_resumes(synthetic, tmp_path):
    out = tmp_path / "run"
    agent_config = tmp_path / "agent.json"
    agent_config.write_text(
        json.dumps({"command": [sys.executable, str(LINE_AGENT), "--delay", "0.05"]})
    )
    command = [
        sys.executable,
        "-m",
        "elderbench",
        "eval",
        "--suite",
        str(synthetic.suite),
        "--agent",
        "subprocess",
        "--agent-config",
        str(agent_config),
        "--instruction",
        "normalized",
        "--out",
        str(out),
        "--no-report",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_bytes().splitlines()) >= 2:
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert "stopping after the current step" in stderr and "--resume" in stderr
    stopped = RunStore.open(out).results()
    assert 2 <= len(stopped) < 10 and not any(r.is_error for r in stopped)
    resumed = subprocess.run(
        [*command, "--resume"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert len(RunStore.open(out).results()) == 10


def test_a_suite_that_ships_demos_needs_no_demos_option(tmp_path):
    suite = tmp_path / "suite"
    (suite / "demos").mkdir(parents=True)
    shipped = RunConfig(suite=suite, out=tmp_path / "run", agent="replay")
    assert shipped.demos == suite / "demos"
    assert shipped.agent_settings()["demos"] == str(suite / "demos")
    chosen = RunConfig(suite=suite, out=tmp_path / "run", agent="replay", demos=tmp_path / "d")
    assert chosen.demos == tmp_path / "d"
    (suite / "demos").rmdir()
    assert RunConfig(suite=suite, out=tmp_path / "run", agent="replay").demos is None


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_packed_suite_evaluates_and_stays_byte_identical(tmp_path, monkeypatch):
    """An installed wheel's suite ships each image once (duplicates.json). Running it, and
    listing its stopped runs as the Evaluate tab does, reads a complete copy elsewhere:
    the suite folder is not written, and the results are those of the unpacked suite."""
    from graph_builder.packing import DUPLICATES_FILE, pack

    sample = Path(__file__).resolve().parents[2] / "task_graphs" / "sample"
    tasks = ("font_bigger", "call_daughter")
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(sample / "suite.json", suite / "suite.json")
    for task in tasks:
        shutil.copytree(sample / task, suite / task)
        shutil.copytree(sample / "demos" / task, suite / "demos" / task)
    unpacked = tmp_path / "unpacked"
    shutil.copytree(suite, unpacked)
    assert pack(suite) > 0
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    before = _snapshot(suite)

    options = {"agent": "replay", "tasks": tasks, "protocol": EvalProtocol.OFFLINE}
    packed_run = run_suite(RunConfig(suite=suite, out=tmp_path / "packed", **options))
    plain_run = run_suite(RunConfig(suite=unpacked, out=tmp_path / "plain", **options))
    assert packed_run.finished == plain_run.finished == 2

    def outcomes(run: Path) -> dict[str, tuple[str, int]]:
        return {r.task_id: (r.status.value, r.steps) for r in RunStore.open(run).results()}

    assert outcomes(tmp_path / "packed") == outcomes(tmp_path / "plain")
    assert {status for status, _ in outcomes(tmp_path / "packed").values()} == {"success"}
    assert len(load_jobs(resume_config(tmp_path / "packed"))) == 2  # the Evaluate tab's list
    assert run_suite(RunConfig(suite=suite, out=tmp_path / "packed", resume=True, **options))
    assert _snapshot(suite) == before
    assert (suite / DUPLICATES_FILE).is_file()
