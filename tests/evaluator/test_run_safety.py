"""Runs that must end, refuse, or stay confined whatever an agent, a file or a second
process does: bounded waits and Ctrl-C, resume refusals, bad folders, locks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from evaluator.errors import ConfigError
from evaluator.run_store import RunStore, RunStoreError
from evaluator.run_summary import summarize
from evaluator.runner import RunConfig, resume_config, run_suite
from graph_builder.folder_lock import FolderLock
from graph_builder.io import save_suite, save_task
from graph_builder.model import ResetRecipe, SuccessCriteria, Suite, Task
from tests.evaluator.fake_llm_server import FakeLLMServer, reply
from virtual_phone import fast_phone, running_server

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = "com.android.settings"


def online_suite(root: Path) -> Path:
    suite = root / "suite"
    save_suite(Suite(name="online"), suite)
    task = Task(
        id="look",
        instruction="show me the settings",
        app=SETTINGS,
        protocol="online",
        max_steps=3,
        reset=ResetRecipe(SETTINGS),
        success=SuccessCriteria(must_contain=("Display",)),
    )
    save_task(task, suite / task.id)
    return suite


def agent_program(root: Path, answer: str) -> Path:
    """A subprocess agent that touches ``answered`` and then does ``answer`` at every step."""
    program = root / "agent.py"
    marker = root / "answered"
    program.write_text(
        textwrap.dedent(
            f"""
            import json, pathlib, sys, time
            for line in sys.stdin:
                message = json.loads(line)
                if message["type"] != "step":
                    continue
                pathlib.Path({str(marker)!r}).touch()
                {answer}
            """
        )
    )
    return program


@pytest.mark.parametrize(
    "answer",
    [
        'print(json.dumps({"action": {"action": "wait", "seconds": 100000}}), flush=True)',
        "time.sleep(100000)",  # an agent that never answers
    ],
    ids=["wait-100000-s", "agent-never-answers"],
)
def test_ctrl_c_ends_an_online_run_within_seconds(tmp_path, answer):
    suite = online_suite(tmp_path)
    program = agent_program(tmp_path, answer)
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"command": [sys.executable, str(program)]}))
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "ANDROID_ADB_SERVER_PORT": str(server.port)}
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "elderbench",
                "eval",
                "--suite",
                str(suite),
                "--agent",
                "subprocess",
                "--agent-config",
                str(config),
                "--device",
                "virtual-1",
                "--out",
                str(tmp_path / "run"),
                "--no-report",
            ],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while not (tmp_path / "answered").exists() and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()[1]
            time.sleep(0.05)
        time.sleep(0.3)  # the agent's answer is being carried out (or never comes)
        process.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, stderr = process.communicate(timeout=30)
        took = time.monotonic() - sent
    assert process.returncode == 130, stderr
    assert took < 10, f"the run took {took:.1f} s to end after Ctrl-C"
    assert "--resume" in stderr
    assert RunStore.open(tmp_path / "run").results() == []  # the task reruns on resume


def test_a_long_wait_action_is_cut_to_the_max_wait_setting(tmp_path, monkeypatch):
    suite = online_suite(tmp_path)
    program = agent_program(
        tmp_path,
        'print(json.dumps({"action": {"action": "wait", "seconds": 100000}}), flush=True)',
    )
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
        started = time.monotonic()
        run_suite(
            RunConfig(
                suite=suite,
                out=tmp_path / "run",
                agent="subprocess",
                agent_config={"command": [sys.executable, str(program)]},
                devices=("virtual-1",),
                max_wait=0.2,
            )
        )
        took = time.monotonic() - started
    store = RunStore.open(tmp_path / "run")
    [result] = store.results()
    assert result.reason == "did not say done within max_steps (3)"
    steps = store.read_steps("look")
    assert [s.extra.get("wait_capped_to_seconds") for s in steps] == [0.2, 0.2, 0.2]
    assert took < 20


def test_max_steps_zero_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(Exception, match="max_steps must be at least 1"):
        RunConfig(suite=tmp_path, out=tmp_path / "run", agent="replay", max_steps=0)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"variant": "normalized"}, '--instruction "original" -> "normalized"'),
        ({"mode": "tolerant"}, '--mode "strict" -> "tolerant"'),
        ({"max_steps": 7}, "--max-steps null -> 7"),
        (
            {"tasks": ("task000", "task002")},
            '--tasks ["task000", "task001"] -> ["task000", "task002"]',
        ),
        ({"agent": "random"}, '--agent "replay" -> "random"'),
        ({"agent_config": {"seed": 3}}, "--agent-config"),
    ],
)
def test_resume_refuses_a_changed_configuration_and_names_it(synthetic, tmp_path, change, named):
    out = tmp_path / "run"
    options = {
        "suite": synthetic.suite,
        "out": out,
        "agent": "replay",
        "demos": synthetic.demos,
        "tasks": ("task000", "task001"),
    }
    run_suite(RunConfig(**options))
    before = (out / "run.json").read_bytes(), (out / "results.jsonl").read_bytes()
    with pytest.raises(ConfigError) as refused:
        run_suite(RunConfig(**{**options, **change}, resume=True))
    assert named in str(refused.value)
    assert "another --out folder" in str(refused.value)
    assert ((out / "run.json").read_bytes(), (out / "results.jsonl").read_bytes()) == before


def test_resume_with_the_same_configuration_or_its_own_record_goes_on(synthetic, tmp_path):
    out = tmp_path / "run"
    config = RunConfig(
        suite=synthetic.suite, out=out, agent="replay", demos=synthetic.demos, tasks=("task000",)
    )
    run_suite(config)
    again = run_suite(RunConfig(**{**_fields(config), "resume": True, "workers": 2}))
    assert again.finished == 1
    assert run_suite(resume_config(out)).finished == 1


def _fields(config: RunConfig) -> dict:
    return {name: getattr(config, name) for name in RunConfig.__dataclass_fields__}


def test_a_bad_task_folder_is_an_error_of_that_task_alone(synthetic, tmp_path):
    suite = tmp_path / "suite"
    shutil.copytree(synthetic.suite, suite)
    (suite / "bad name!").mkdir()
    (suite / "bad name!" / "task.json").write_bytes(b"\xff\xfe not json")
    finished = run_suite(
        RunConfig(suite=suite, out=tmp_path / "run", agent="replay", demos=synthetic.demos)
    )
    assert finished.finished == 11 and not finished.not_run
    store = RunStore.open(tmp_path / "run")
    results = {r.task_id: r for r in store.results()}
    assert results["bad name!"].is_error
    assert "cannot load task.json" in (results["bad name!"].reason or "")
    assert sum(r.success for r in results.values()) == 10
    assert store.read_steps("bad name!") == []
    again = run_suite(
        RunConfig(
            suite=suite, out=tmp_path / "run", agent="replay", demos=synthetic.demos, resume=True
        )
    )
    assert again.finished == 11  # only the bad task ran again, and errored again


def test_two_folders_holding_one_task_id_are_refused_naming_both(synthetic, tmp_path):
    suite = tmp_path / "suite"
    shutil.copytree(synthetic.suite, suite)
    shutil.copytree(suite / "task003", suite / "task003-copy")
    with pytest.raises(ConfigError, match=r"task003/ and task003-copy/"):
        run_suite(RunConfig(suite=suite, out=tmp_path / "run", agent="replay"))
    assert not (tmp_path / "run").exists()


def test_result_lines_of_the_wrong_shape_are_skipped_and_counted(synthetic, tmp_path):
    out = tmp_path / "run"
    options = {"suite": synthetic.suite, "out": out, "agent": "replay", "demos": synthetic.demos}
    run_suite(RunConfig(**options, tasks=("task000", "task001")))
    good = (out / "results.jsonl").read_bytes().splitlines()
    wrong = [
        b"[1, 2, 3]",
        b'"a string"',
        b"42",
        b'{"task_id": "task000", "status": "success", "labels": "elliptical"}',
        b'{"task_id": "task000", "status": "success", "verification": {"rule": true}}',
        b'{"task_id": 7, "status": "success"}',
        b'{"status": "success"}',
    ]
    (out / "results.jsonl").write_bytes(b"\n".join([good[0], *wrong, good[1]]) + b"\n")
    summary = summarize(out)
    assert summary.counts.unreadable_lines == len(wrong)
    assert summary.counts.tasks == 2
    resumed = run_suite(RunConfig(**options, tasks=("task000", "task001"), resume=True))
    assert resumed.finished == 2 and not resumed.not_run


def test_an_outside_node_image_is_refused_and_never_uploaded(synthetic, tmp_path):
    suite = tmp_path / "suite"
    shutil.copytree(synthetic.suite, suite)
    outside = tmp_path / "private.png"
    shutil.copyfile(suite / "task001" / "nodes" / "start.png", outside)
    start = suite / "task001" / "nodes" / "start.png"
    start.unlink()
    start.symlink_to(outside)
    with FakeLLMServer([reply('{"action": "done"}')] * 20) as server:
        run_suite(
            RunConfig(
                suite=suite,
                out=tmp_path / "run",
                agent="openai",
                agent_config={"base_url": server.base_url, "model": "m", "retries": 0},
                tasks=("task001",),
            )
        )
    [result] = RunStore.open(tmp_path / "run").results()
    assert result.is_error and "symbolic link" in (result.reason or "")
    assert "task001/graph.json" in (result.reason or "")
    assert server.received == []


def test_a_second_resume_of_a_running_run_is_refused_naming_the_holder(synthetic, tmp_path):
    out = tmp_path / "run"
    line_agent = Path(__file__).with_name("line_agent.py")
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"command": [sys.executable, str(line_agent), "--delay", "0.3"]}))
    command = [
        *(sys.executable, "-m", "elderbench", "eval", "--suite", str(synthetic.suite)),
        *("--agent", "subprocess", "--agent-config", str(config), "--out", str(out)),
        "--no-report",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (out / "run.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        second = RunConfig(
            suite=synthetic.suite,
            out=out,
            agent="subprocess",
            agent_config=json.loads(config.read_text()),
            resume=True,
        )
        with pytest.raises(RunStoreError, match=rf"elderbench eval \(pid {process.pid} on "):
            run_suite(second)
    finally:
        process.terminate()
        process.wait(timeout=30)
    # The holder is gone (killed, even): its lock went with it, and the resume goes on.
    assert run_suite(second).finished == 10


def test_a_lock_file_left_by_a_dead_process_is_stale(synthetic, tmp_path):
    out = tmp_path / "run"
    options = {"suite": synthetic.suite, "out": out, "agent": "replay", "demos": synthetic.demos}
    run_suite(RunConfig(**options, tasks=("task000",)))
    (out / ".lock").write_text(json.dumps({"pid": 999999, "host": "gone", "started": 0}))
    assert run_suite(RunConfig(**options, tasks=("task000",), resume=True)).finished == 1
    with FolderLock(out, purpose="a report") as held:
        assert held.held
        with pytest.raises(RunStoreError, match=r"a report \(pid \d+ on .*, since "):
            run_suite(RunConfig(**options, tasks=("task000",), resume=True))


def test_a_run_killed_while_creating_run_json_can_be_started_again(synthetic, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / ".run.json.k2j4.tmp").write_text('{"schema_version": 1, "conf')  # the kill's leftover
    (out / ".lock").write_text("")
    options = {"suite": synthetic.suite, "out": out, "agent": "replay", "demos": synthetic.demos}
    assert run_suite(RunConfig(**options, tasks=("task000",))).finished == 1
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [".lock"]


# --------------------------------------------------------------------------- two writers


def test_judge_during_a_resume_is_refused_naming_the_holder(synthetic, tmp_path, capsys):
    from elderbench.cli import main
    from evaluator.runner import RunStarted, iter_run

    out = tmp_path / "run"
    options = {"suite": synthetic.suite, "out": out, "agent": "replay", "demos": synthetic.demos}
    run_suite(RunConfig(**options, tasks=("task000", "task001")))
    before = (out / "results.jsonl").read_bytes()
    resumed = iter_run(resume_config(out))
    try:
        assert isinstance(next(resumed), RunStarted)  # the resume holds the run now
        assert main(["judge", str(out)]) == 1
        said = capsys.readouterr().err
        assert f"elderbench eval (pid {os.getpid()} on " in said, said
    finally:
        resumed.close()
    assert (out / "results.jsonl").read_bytes() == before
    assert main(["judge", str(out)]) == 0  # the resume has ended: the judge may write


class _LastStepAfterStop:
    """Holds the first agent a test makes inside its last step (the one that says done)
    until ``release``; the agents made after it answer at once."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.thread: threading.Thread | None = None
        self.made = 0

    def agent_class(self) -> type:
        from evaluator.agents import ReplayAgent
        from graph_builder.model import ActionType

        gate = self

        class SlowReplay(ReplayAgent):
            name = "slow_replay"

            def __init__(self, config=None) -> None:
                super().__init__(config)
                gate.made += 1
                self.slow = gate.made == 1

            def step(self, observation):
                step = super().step(observation)
                if self.slow and step.action.type is ActionType.DONE:
                    gate.thread = threading.current_thread()
                    gate.entered.set()
                    assert gate.release.wait(60), "the test never released the agent"
                return step

        return SlowReplay


def test_a_worker_abandoned_at_a_stop_cannot_write_after_the_resumed_session(
    synthetic, tmp_path, monkeypatch
):
    """Stop, then Resume in one process (the studio): the stopped session's worker, stuck
    in its agent, finishes while the resumed session owns the run. Its result is refused;
    the run keeps the resumed session's result, which matches the trace."""
    from evaluator.agents import AGENTS
    from evaluator.runner import TaskFinished

    gate = _LastStepAfterStop()
    monkeypatch.setitem(AGENTS, "slow_replay", gate.agent_class())
    out = tmp_path / "run"
    config = RunConfig(
        suite=synthetic.suite,
        out=out,
        agent="slow_replay",
        demos=synthetic.demos,
        tasks=("task001",),
    )
    stop = threading.Event()
    first = threading.Thread(target=run_suite, args=(config,), kwargs={"stop_event": stop})
    first.start()
    assert gate.entered.wait(30), "the first session's agent never reached its last step"
    stop.set()
    first.join(30)  # the stop's grace runs out; the busy worker is abandoned
    assert not first.is_alive()
    assert RunStore.open(out).results() == []

    resumed_at = time.time()
    finished: list[TaskFinished] = []

    def on_event(event: object) -> None:
        if isinstance(event, TaskFinished):
            finished.append(event)
            # The resumed session owns the run: let the abandoned worker finish its task.
            gate.release.set()
            assert gate.thread is not None
            gate.thread.join(30)
            assert not gate.thread.is_alive()

    run_suite(resume_config(out), progress=on_event)
    assert [e.result.status.value for e in finished] == ["success"]
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 1, lines  # nothing appended by the abandoned worker
    (result,) = RunStore.open(out).results()
    assert result.started >= resumed_at
    assert len(RunStore.open(out).read_steps("task001")) == result.steps
