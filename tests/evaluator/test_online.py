"""The online protocol on the virtual phone, through the real AndroidDevice and adbutils."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from devices.android import AndroidDevice, adb_client
from elderbench.cli import main as elderbench_main
from evaluator.agents.base import AgentObservation, AgentStep, BaseAgent
from evaluator.farm.log import read_farm_log
from evaluator.judges import RuleJudge
from evaluator.offline import GraphContext
from evaluator.online import run_online
from evaluator.prices import Price, PriceTable
from evaluator.records import TokenUse
from evaluator.run_store import HumanVerdict, RunStore
from evaluator.run_summary import MappedSteps, summarize
from evaluator.runner import (
    RunConfig,
    StepDone,
    TaskFinished,
    WorkerStopped,
    iter_run,
    run_suite,
)
from graph_builder.build import build_task
from graph_builder.io import load_task, save_task
from graph_builder.model import Action, ResetRecipe, SuccessCriteria, Task
from graph_builder.similarity import SimilaritySettings
from recorder_app.recording.script import record_script
from recorder_app.recording.session import PendingStep
from tests.evaluator.fake_llm_server import FakeLLMServer, reply, status
from virtual_phone import fast_phone, running_server

SETTINGS = "com.android.settings"
TASK = Task(
    id="font",
    instruction="the words are too small for me, dear",
    normalized_instruction="Open Display, tap Font size, then Make larger",
    app=SETTINGS,
    protocol="online",
    max_steps=6,
    reset=ResetRecipe(SETTINGS),
    success=SuccessCriteria(must_contain=("Large",), rubric="The font size is Large."),
)
PATH = [{"text": "Display"}, {"text": "Font size"}, {"content_desc": "Make larger"}]
# Navigation only, so it can run again and again on the same phone.
DISPLAY = Task(
    id="display",
    instruction="where do I change how the screen looks",
    normalized_instruction="Open Display",
    app=SETTINGS,
    protocol="online",
    max_steps=4,
    reset=ResetRecipe(SETTINGS),
    success=SuccessCriteria(must_contain=("Font size",)),
)


def record(device: AndroidDevice, demos: Path, task: Task, path: list[dict[str, str]]) -> None:
    queries = iter([*path, None])

    def script(pending: PendingStep) -> Action:
        query = next(queries)
        if query is None:
            return Action.done()
        assert pending.hierarchy is not None
        element = pending.hierarchy.find(**query)[0]
        return Action.tap(*element.bounds.center, screen=pending.screen.size, element=element.ref())

    record_script(device, demos, task, script, reset=task.reset, demo_id="d1")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path]:
    """Demonstrations of DISPLAY and TASK recorded on a fresh virtual phone, and a suite
    whose graphs were built from them."""
    root = tmp_path_factory.mktemp("online")
    with running_server(phones=[fast_phone("virtual-1")]) as server:
        device = AndroidDevice("virtual-1", client=adb_client(port=server.port), timeout=5.0)
        record(device, root / "demos", DISPLAY, PATH[:1])
        record(device, root / "demos", TASK, PATH)
        device.close()
    for task in (DISPLAY, TASK):
        save_task(task, root / "suite" / task.id)
        report = build_task(root / "demos", task.id, root / "suite", settings=SimilaritySettings())
        assert report.written, report.note
    return root / "suite", root / "demos"


@pytest.fixture
def phone_port(virtual_server, monkeypatch) -> int:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(virtual_server.port))
    return virtual_server.port


def online(suite: Path, out: Path, agent: str = "replay", **options) -> RunConfig:
    options.setdefault("tasks", ("font",))
    return RunConfig(suite=suite, out=out, agent=agent, devices=("virtual-1",), **options)


def test_replay_succeeds_online_with_traces_and_graph_metrics(recorded, tmp_path, phone_port):
    suite, demos = recorded
    events = list(iter_run(online(suite, tmp_path / "run", demos=demos)))
    store = RunStore.open(tmp_path / "run")
    result = store.results()[0]
    assert result.success and result.terminated and result.device == "virtual-1"
    assert [(v.judge, v.passed) for v in result.verification] == [("rule", True)]
    assert (result.completion_rate, result.correct_decisions, result.decisions) == (1.0, 4, 4)
    steps = store.read_steps("font")
    assert [s.node for s in steps] == ["start", "n1", "n2", "done"]
    assert [s.rule for s in steps] == ["inside bounds"] * 3 + ["done on DONE node"]
    assert all(s.screen_changed for s in steps[:3])
    trace = store.trace_dir("font")
    assert {p.name for p in trace.glob("*.png")} == {"0000.png", "0001.png", "0002.png", "0003.png"}
    assert (trace / "0003.xml").exists() and (trace / "verdicts.json").exists()
    live = [e for e in events if isinstance(e, StepDone)]
    assert [e.screenshot_path.name for e in live] == [
        "0000.png",
        "0001.png",
        "0002.png",
        "0003.png",
    ]


def test_elderbench_eval_reads_the_phone_through_the_u2_server(
    recorded, tmp_path, phone_port, virtual_server
):
    suite, demos = recorded
    commands = virtual_server.device("virtual-1").commands
    dumped: list[list[str]] = []
    original = commands["uiautomator"]

    def counted(inv):
        dumped.append(list(inv.args))
        return original(inv)

    commands["uiautomator"] = counted
    out = tmp_path / "run"
    argv = ["eval", "--suite", str(suite), "--out", str(out), "--agent", "replay"]
    argv += ["--device", "virtual-1", "--tasks", "font", "--demos", str(demos)]
    assert elderbench_main([*argv, "--hierarchy", "u2"]) == 0
    store = RunStore.open(out)
    assert store.results()[0].success
    assert store.info()["config"]["hierarchy"] == "u2"
    steps = store.read_steps("font")
    assert [s.node for s in steps] == ["start", "n1", "n2", "done"]
    assert (store.trace_dir("font") / "0003.xml").read_text().startswith("<?xml")
    assert dumped == []  # every hierarchy came from the u2 server, none from uiautomator dump
    assert virtual_server.device("virtual-1").fs.read_bytes("/data/local/tmp/u2.jar")


def test_replay_follows_the_graph_through_state_mapping(recorded, tmp_path, phone_port):
    suite, _ = recorded
    run_suite(online(suite, tmp_path / "run"))
    assert RunStore.open(tmp_path / "run").results()[0].success


def test_heuristic_online_original_versus_normalized(
    recorded, tmp_path, phone_port, virtual_server
):
    suite, _ = recorded
    run_suite(online(suite, tmp_path / "normalized", "heuristic", variant="normalized"))
    normalized = RunStore.open(tmp_path / "normalized").results()[0]
    assert normalized.success, normalized.reason
    # the normalized run made the font Large and the font task's recipe does not restore
    # it: a second run on this phone would begin dirty (its first screen is not START)
    leaked = RunStore.open(tmp_path / "normalized")
    assert leaked.results()[0].success
    device = AndroidDevice("virtual-1", client=adb_client(port=virtual_server.port), timeout=5.0)
    device.shell("settings put system font_scale 1.0")
    device.close()
    run_suite(online(suite, tmp_path / "original", "heuristic"))
    original = RunStore.open(tmp_path / "original").results()[0]
    assert not original.success
    assert original.reason.startswith("verification failed: rule: missing text 'Large'")
    summary = summarize(tmp_path / "normalized", compare=tmp_path / "original")
    assert summary.comparison is not None and summary.comparison["only_a"] == 1


def test_without_a_graph_cr_and_da_are_not_reported(recorded, tmp_path, phone_port):
    suite, demos = recorded
    copy = tmp_path / "suite"
    shutil.copytree(suite, copy)
    (copy / "font" / "graph.json").unlink()
    run_suite(online(copy, tmp_path / "run", demos=demos))
    result = RunStore.open(tmp_path / "run").results()[0]
    assert result.success
    assert result.completion_rate is None and result.decisions == 0
    assert summarize(tmp_path / "run").cr is None


def test_not_saying_done_skips_the_judges(recorded, tmp_path, phone_port):
    suite, _ = recorded
    config = online(
        suite,
        tmp_path / "run",
        "random",
        agent_config={"p_done": 0.0},
        max_steps=2,
        judges=("rule", "vlm"),
        judge_config={"vlm": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}},
    )
    run_suite(config)
    result = RunStore.open(tmp_path / "run").results()[0]
    assert result.status.value == "failure" and result.steps == 2
    assert result.reason == "did not say done within max_steps (2)" and not result.verification


def test_vlm_judge_and_human_verdicts_online(recorded, tmp_path, phone_port):
    suite, demos = recorded
    with FakeLLMServer(
        [reply('{"verdict": "failure", "reason": "I see no font change"}')]
    ) as server:
        run_suite(
            online(
                suite,
                tmp_path / "run",
                demos=demos,
                judges=("rule", "vlm"),
                judge_config={"vlm": {"base_url": server.base_url, "model": "judge"}},
            )
        )
    assert server.received[0].images() == 4  # three earlier frames and the final screen
    store = RunStore.open(tmp_path / "run")
    result = store.results()[0]
    assert not result.success and "vlm: I see no font change" in result.reason
    store.set_override("font", HumanVerdict(True, "font is Large"))
    summary = summarize(tmp_path / "run")
    assert summary.sr == 1.0
    assert summary.judge_agreement["rule"]["rate"] == 1.0
    assert summary.judge_agreement["rule"]["kappa"] is None  # one answer each: undefined
    assert [d["judge"] for d in summary.judge_disagreements] == ["vlm"]
    assert summary.judge_agreement["vlm"]["rate"] == 0.0


def test_judge_retries_and_backoff_are_recorded_and_reported_beside_the_agents(
    recorded, tmp_path, phone_port, capsys
):
    """A judge call's failed attempts and backoff are recorded as an agent call's are
    (``retry_seconds``), for a call answered in the end and for one that gave up while
    judging again, and the report shows them beside the agent's, each with its base."""
    suite, demos = recorded
    judge = {"model": "judge", "retries": 1, "backoff": 0.4, "timeout": 5}
    verdict = reply('{"verdict": "success", "reason": "Large"}', 600, 10)
    with FakeLLMServer([status(503), verdict]) as server:
        judge["base_url"] = server.base_url
        run_suite(
            online(
                suite,
                tmp_path / "run",
                demos=demos,
                judges=("rule", "vlm"),
                judge_config={"vlm": judge},
            )
        )
    result = RunStore.open(tmp_path / "run").results()[0]
    assert result.success, result.reason
    vlm = [v for v in result.verification if v.judge == "vlm"][0]
    assert vlm.retry_seconds >= 0.4  # the wait after the 503
    assert result.judge_usage == (TokenUse("judge", 600, 10, vlm.retry_seconds),)
    assert result.retry_seconds == 0.0  # the agent (replay) made no call

    with FakeLLMServer([status(503)]) as server:
        config = tmp_path / "judge.json"
        config.write_text(json.dumps({"vlm": {**judge, "base_url": server.base_url}}))
        assert elderbench_main(["judge", str(tmp_path / "run"), "--judge-config", str(config)]) == 0
    again = RunStore.open(tmp_path / "run").results()[0]
    assert (again.status.value, again.error_kind) == ("error", "judge")
    gave_up = again.judge_usage[1].retry_seconds
    assert gave_up >= 0.4 and [v.retry_seconds for v in again.verification] == [0.0, gave_up]
    summary = summarize(tmp_path / "run").to_json()
    assert summary["judge_retry_seconds"] == pytest.approx(vlm.retry_seconds + gave_up)
    assert summary["judge_calls"] == 2 and summary["retry_seconds"] == 0.0
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    judged = f"{summary['judge_retry_seconds']:.2f}"
    assert (
        "Retries and backoff, errored tasks and failed calls included: the agent's calls "
        f"0.00 s over all 1 tasks; the judges' calls {judged} s over their 2 calls "
        "(re-judging included)."
    ) in report


def test_a_judge_without_a_verdict_is_a_judge_error_and_judge_reruns_only_judges(
    recorded, tmp_path, phone_port, capsys
):
    suite, demos = recorded
    with FakeLLMServer([reply("I cannot tell from these pictures", 700, 20)]) as server:
        run_suite(
            online(
                suite,
                tmp_path / "run",
                demos=demos,
                judges=("rule", "vlm"),
                judge_config={"vlm": {"base_url": server.base_url, "model": "judge"}},
            )
        )
    store = RunStore.open(tmp_path / "run")
    result = store.results()[0]
    assert (result.status.value, result.error_kind, result.terminated) == ("error", "judge", True)
    assert result.reason.startswith(
        "judge error: vlm: error: the VLM judge's answer has no verdict"
    )
    assert result.steps == 4 and result.decisions == 4  # the episode is all there
    assert result.judge_usage == (TokenUse("judge", 700, 20),)  # a reply without verdict costs
    summary = summarize(tmp_path / "run").to_json()
    assert summary["sr_line"] == (
        "SR n/a (0 evaluated; 1 judge error excluded) · SR with errors as failures 0.0% (0 of 1)"
    )
    assert summary["tokens"]["judge_input"] == 700
    agent_calls = len(server.received)

    with FakeLLMServer([reply('{"verdict": "success", "reason": "Large"}', 650, 15)]) as server:
        config = tmp_path / "judge.json"
        config.write_text(json.dumps({"vlm": {"base_url": server.base_url, "model": "judge"}}))
        assert elderbench_main(["judge", str(tmp_path / "run"), "--judge-config", str(config)]) == 0
    assert len(server.received) == 1 and agent_calls == 1  # only the judge was called
    assert server.received[0].images() == 4
    again = RunStore.open(tmp_path / "run").results()[0]
    assert again.success and again.error_kind is None
    assert [(v.judge, v.passed) for v in again.verification] == [("rule", True), ("vlm", True)]
    assert again.judge_usage == (TokenUse("judge", 700, 20), TokenUse("judge", 650, 15))
    assert again.steps == result.steps and again.input_tokens == result.input_tokens
    out = capsys.readouterr()
    assert "font: error -> success" in out.err and "SR 100.0% (1 of 1 evaluated)" in out.out
    prices = PriceTable("USD", {"judge": Price(1.0, 2.0)})
    assert summarize(tmp_path / "run", prices=prices).to_json()["judge_cost"] == pytest.approx(
        (1350 * 1.0 + 35 * 2.0) / 1e6
    )


def test_a_task_without_criteria_is_unverified(recorded, tmp_path, phone_port):
    suite, demos = recorded
    copy = tmp_path / "suite"
    shutil.copytree(suite, copy)
    task = load_task(copy / "font")
    save_task(
        Task(task.id, task.instruction, task.app, task.protocol, reset=task.reset), copy / "font"
    )
    run_suite(online(copy, tmp_path / "run", demos=demos))
    result = RunStore.open(tmp_path / "run").results()[0]
    assert result.terminated and not result.success and result.reason.startswith("unverified")


def copies(suite: Path, root: Path, n: int) -> Path:
    """A suite with ``n`` copies of the display task (ids display0, display1, ...)."""
    out = root / "many"
    for i in range(n):
        folder = out / f"display{i}"
        shutil.copytree(suite / "display", folder)
        data = load_task(folder).to_json() | {"id": f"display{i}"}
        (folder / "task.json").write_text(json.dumps(data))
        graph = json.loads((folder / "graph.json").read_text()) | {"task_id": f"display{i}"}
        (folder / "graph.json").write_text(json.dumps(graph))
    shutil.copy(suite / "suite.json", out / "suite.json")
    return out


def test_tasks_are_sharded_over_devices_and_a_lost_device_hands_over(
    recorded, tmp_path, virtual_server, phone_port
):
    suite, _ = recorded
    many = copies(suite, tmp_path, 4)
    virtual_server.add_phone(fast_phone("virtual-2"))
    workers, stopped = set(), []

    def open_device(serial: str) -> AndroidDevice:
        device = AndroidDevice(serial, client=adb_client(port=virtual_server.port), timeout=5.0)
        if serial == "virtual-2":  # unplugged at its first action
            perform = device.perform

            def unplug_then_perform(action: Action) -> None:
                virtual_server.remove_phone("virtual-2")
                perform(action)

            device.perform = unplug_then_perform  # type: ignore[method-assign]
        return device

    config = RunConfig(
        suite=many, out=tmp_path / "run", agent="replay", devices=("virtual-1", "virtual-2")
    )
    for event in iter_run(config, device_factory=open_device):
        if isinstance(event, TaskFinished):
            workers.add(event.worker)
        if isinstance(event, WorkerStopped):
            stopped.append(event)
    results = {r.task_id: r for r in RunStore.open(tmp_path / "run").results()}
    # the task whose device was lost ran again on the other device, and succeeded there
    assert len(results) == 4 and all(r.success for r in results.values())
    assert {r.device for r in results.values()} == {"virtual-1"}
    assert [e.worker for e in stopped] == ["virtual-2"] and "quarantined" in stopped[0].reason
    log = read_farm_log(tmp_path / "run")
    retries = [e for e in log if e["event"] == "retry"]
    assert len(retries) == 1 and retries[0]["device"] == "virtual-2"
    assert "was lost" in retries[0]["reason"] and retries[0]["attempt"] == 1
    assert [e["event"] for e in log if e["device"] == "virtual-2"][-1] == "quarantine"
    assert sum(e["event"] == "task" for e in log) == 4


class TapByText(BaseAgent):
    """Taps the element with each given text (or content description) in turn, then done."""

    name = "tap_by_text"

    def __init__(self, queries: list[dict[str, str] | Action]) -> None:
        super().__init__({})
        self.queries = queries

    def step(self, observation: AgentObservation) -> AgentStep:
        if observation.step >= len(self.queries):
            return AgentStep(action=Action.done())
        query = self.queries[observation.step]
        if isinstance(query, Action):
            return AgentStep(action=query)
        element = observation.screen.hierarchy().find(**query)[0]
        x, y = element.bounds.center
        return AgentStep(action=Action.tap(x, y, screen=observation.screen.size))


def run_direct(suite: Path, run_dir: Path, port: int, agent: BaseAgent, device=None):
    store = RunStore.create(run_dir, {"agent": {"name": agent.name}})
    trace = store.start_trace("font")
    device = device or AndroidDevice("virtual-1", client=adb_client(port=port), timeout=5.0)
    records: list = []
    try:
        result = run_online(
            load_task(suite / "font"),
            agent,
            device,
            trace,
            judges=[RuleJudge()],
            graph=GraphContext.load(suite / "font"),
            on_step=records.append,
        )
    finally:
        trace.close()
        device.close()
    return result, records


def test_a_step_the_phone_ignored_is_no_decision_for_the_edge(recorded, tmp_path, phone_port):
    # The taps match the edges' rules, but the phone shows the same screen after each.
    suite, _ = recorded
    device = AndroidDevice("virtual-1", client=adb_client(port=phone_port), timeout=5.0)
    device.perform = lambda action: None  # type: ignore[method-assign]
    agent = TapByText([PATH[0]] * 3)
    result, records = run_direct(suite, tmp_path / "run", phone_port, agent, device)
    assert not result.success
    assert records[0].rule == "inside bounds" and records[0].matched is False
    assert records[0].decision_note == "the screen maps to start, not the edge's target n1"
    assert [r.decision_correct for r in records] == [False] * 4
    assert (result.correct_decisions, result.decisions, result.completion_rate) == (0, 4, 0.0)


def test_off_graph_steps_are_decisions_and_the_mapped_share_is_reported(
    recorded, tmp_path, phone_port
):
    suite, _ = recorded
    agent = TapByText([{"text": "Battery"}, Action.back(), *PATH])
    result, records = run_direct(suite, tmp_path / "run", phone_port, agent)
    assert result.success, result.reason
    assert [r.node for r in records] == [
        None if i == 1 else n for i, n in enumerate(["start", None, "start", "n1", "n2", "done"])
    ]
    assert records[0].decision_note == "off the graph after this step"
    assert records[1].rule == "off-graph state"
    assert records[1].decision_note == "back to visited node start"
    assert [r.decision_correct for r in records] == [False, False, True, True, True, True]
    assert (result.correct_decisions, result.decisions, result.mapped_steps) == (4, 6, 5)
    assert result.completion_rate == 1.0
    RunStore.open(tmp_path / "run").append_result(result)
    assert summarize(tmp_path / "run").mapped_steps == MappedSteps(mapped=5, steps=6)


def test_a_start_screen_that_is_not_start_is_a_dirty_start_error(recorded, tmp_path, phone_port):
    suite, demos = recorded
    copy = tmp_path / "suite"
    shutil.copytree(suite, copy)
    task = load_task(copy / "font")
    # the recipe opens the clock: the phone is not at the task's start
    save_task(replace(task, reset=ResetRecipe("com.android.deskclock")), copy / "font")
    run_suite(online(copy, tmp_path / "run", demos=demos))
    result = RunStore.open(tmp_path / "run").results()[0]
    assert (result.status.value, result.error_kind, result.steps) == ("error", "dirty_start", 0)
    assert result.reason.startswith("dirty start: the first screen matches no node of the graph")
    assert summarize(tmp_path / "run").sr_line == (
        "SR n/a (0 evaluated; 1 dirty start excluded) · SR with errors as failures 0.0% (0 of 1)"
    )


def test_every_task_starts_from_the_snapshot_taken_when_the_run_began(
    recorded, tmp_path, virtual_server, phone_port
):
    # The phone's font is changed after the snapshot: the font task's reset recipe does not
    # restore it, the snapshot does, so the task starts as the run found the phone.
    suite, demos = recorded
    loaded = []

    def open_device(serial: str) -> AndroidDevice:
        device = AndroidDevice(serial, client=adb_client(port=virtual_server.port), timeout=5.0)
        shell = device.shell

        def watched(command: str, **options):
            out = shell(command, **options)
            if "snapshot save" in command:
                shell("settings put system font_scale 1.3")  # a leak from "another task"
            if "snapshot load" in command:
                loaded.append(command)
            return out

        device.shell = watched  # type: ignore[method-assign]
        return device

    config = online(suite, tmp_path / "run", demos=demos, tasks=("display", "font"))
    list(iter_run(config, device_factory=open_device))
    results = {r.task_id: r for r in RunStore.open(tmp_path / "run").results()}
    assert all(r.success for r in results.values()), [r.reason for r in results.values()]
    assert loaded == ["virtualphone snapshot load elderbench-clean-start"] * 2


def test_the_suite_online_in_two_task_orders_gives_identical_results(tmp_path, virtual_server):
    # Random actions (seeded per task, blind to the screen) change whatever they hit; with
    # every task started from the same phone state, the order cannot change any outcome.
    from task_graphs import sample_suite

    suite = sample_suite()
    ids = sorted(
        p.parent.name
        for p in suite.glob("*/task.json")
        if json.loads(p.read_text())["protocol"] == "online"
    )

    def run_in(order: list[str], name: str) -> dict[str, tuple]:
        config = RunConfig(
            suite=suite,
            out=tmp_path / name,
            agent="random",
            agent_config={"seed": 7},
            devices=("virtual-1",),
            tasks=tuple(order),
            max_steps=3,
        )
        opened = lambda serial: AndroidDevice(  # noqa: E731
            serial, client=adb_client(port=virtual_server.port), timeout=10.0
        )
        list(iter_run(config, device_factory=opened))
        store = RunStore.open(tmp_path / name)
        return {
            r.task_id: (
                r.status.value,
                r.error_kind,
                r.steps,
                r.final_node,
                r.correct_decisions,
                r.matched_steps,
                [s.rule for s in store.read_steps(r.task_id)],
                [(store.run_dir / s.screenshot).read_bytes() for s in store.read_steps(r.task_id)],
            )
            for r in store.results()
        }

    forward = run_in(ids, "forward")
    backward = run_in(ids[::-1], "backward")
    assert len(forward) == len(ids) >= 10
    assert forward == backward
    assert not any(v[1] == "dirty_start" for v in forward.values())
