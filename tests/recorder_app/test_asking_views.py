"""The studio shows the conversation with the (simulated) user, and its run form makes the
run the CLI makes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from elderbench.cli import main as elderbench_main
from evaluator.agents.families import FAMILIES
from evaluator.errors import ConfigError
from evaluator.farm.executors import EXECUTORS
from evaluator.run_store import RunStore
from evaluator.users import SimulatedUser
from task_graphs import sample_suite
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


# --------------------------------------------------------------------------- the run form

SAMPLE_TASKS = ("call_daughter", "font_bigger")


@pytest.fixture
def small_suite(tmp_path) -> Path:
    """Two tasks of the sample suite, with their demonstrations."""
    suite = tmp_path / "suites" / "small"
    source = sample_suite()
    suite.mkdir(parents=True)
    shutil.copy2(source / "suite.json", suite / "suite.json")
    for task in SAMPLE_TASKS:
        shutil.copytree(source / task, suite / task)
        shutil.copytree(source / "demos" / task, suite / "demos" / task)
    return suite


@pytest.fixture
def page(qtbot, workspace, small_suite):
    from recorder_app.qt.eval_panel import EvaluationPage

    shutil.copytree(small_suite, workspace.suites_dir / "small")
    page = EvaluationPage()
    qtbot.addWidget(page)
    page.set_workspace(workspace)
    page.show()
    qtbot.waitExposed(page)
    yield page
    page.shutdown()


def choose(combo, data: str) -> None:
    index = combo.findData(data)
    assert index >= 0, f"{data!r} is not offered"
    combo.setCurrentIndex(index)


def write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


def recorded_config(run: Path) -> dict:
    """run.json's configuration, without where the run lives."""
    info = json.loads((run / "run.json").read_text())
    config = dict(info["config"])
    del config["out"]
    return {"config": config, "agent": info["agent"], "model": info.get("model")}


def test_the_form_offers_the_families_with_their_prompts_and_the_executors(page):
    form = page.form
    offered = {form.family_combo.itemData(i) for i in range(form.family_combo.count())}
    assert set(FAMILIES) <= offered
    choose(form.agent_combo, "openai")
    choose(form.family_combo, "ui-tars-1.5")
    assert form.family_prompt.text() == f"default prompt: {FAMILIES['ui-tars-1.5'].prompt}"
    assert "Action" in form.family_prompt.toolTip()  # the template itself
    assert [form.executor_combo.itemData(i) for i in range(form.executor_combo.count())] == list(
        EXECUTORS
    )
    assert not form.ray_address_edit.isEnabled()
    choose(form.executor_combo, "ray")
    assert form.ray_address_edit.isEnabled()


def test_a_run_started_from_the_form_records_the_run_json_the_cli_records(
    qtbot, page, workspace, tmp_path
):
    judges = write(
        tmp_path / "judges.json", {"vlm": {"base_url": "http://127.0.0.1:9/v1", "model": "j"}}
    )
    with FakeLLMServer(from_intent) as server:
        user = write(tmp_path / "user.json", {**endpoint(server), "persona": "curt"})
        form = page.form
        choose(form.suite_combo, str(workspace.suites_dir / "small"))
        choose(form.agent_combo, "replay")
        choose(form.family_combo, "ui-tars-1.5")
        choose(form.run_protocol, "offline")
        choose(form.variant_combo, "normalized")
        choose(form.mode_combo, "tolerant")
        choose(form.matching_combo, "aitw")
        form.workers_spin.setValue(2)
        form.trials_spin.setValue(2)
        choose(form.executor_combo, "local")
        form.judge_file_edit.setText(str(judges))
        form.user_simulator_edit.setText(str(user))
        studio_out = tmp_path / "studio" / "run"
        form.out_edit.setText(str(studio_out))
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
        assert page.last_problem is None, page.last_problem
        qtbot.waitUntil(lambda: page.run is not None and not page.run.running, timeout=60_000)
        agent = write(tmp_path / "agent.json", {"family": "ui-tars-1.5"})
        cli_out = tmp_path / "cli" / "run"
        suite = workspace.suites_dir / "small"
        code = elderbench_main(
            ["eval", "--suite", str(suite), "--agent", "replay", "--agent-config", str(agent),
             "--protocol", "offline", "--tasks", *sorted(SAMPLE_TASKS), "--instruction",
             "normalized", "--mode", "tolerant", "--matching", "aitw", "--workers", "2",
             "--trials", "2", "--executor", "local", "--judge-config", str(judges),
             "--user-simulator", str(user), "--out", str(cli_out), "--no-report"]
        )  # fmt: skip
    assert code == 0
    for trial in ("trial-01", "trial-02"):
        studio, cli = recorded_config(studio_out / trial), recorded_config(cli_out / trial)
        assert studio == cli
    assert studio["config"]["user_simulator"]["persona"] == "curt"
    assert studio["config"]["farm"]["executor"] == "local"
    assert (studio_out / "trials.json").is_file() and (cli_out / "trials.json").is_file()


def test_the_form_refuses_what_the_cli_refuses_in_the_same_words(qtbot, page, workspace, tmp_path):
    from elderbench.cli import build_parser
    from evaluator.cli import eval_config

    bad = write(tmp_path / "user.json", {"base_url": "ftp://nowhere", "model": "m"})
    form = page.form
    choose(form.suite_combo, str(workspace.suites_dir / "small"))
    form.user_simulator_edit.setText(str(bad))
    form.out_edit.setText(str(tmp_path / "run"))
    with pytest.raises(ConfigError) as studio:
        form.build_config()
    args = build_parser().parse_args(
        ["eval", "--suite", "s", "--agent", "replay", "--user-simulator", str(bad), "--out", "o"]
    )
    with pytest.raises(ConfigError) as cli:
        eval_config(args)
    assert str(studio.value) == str(cli.value)
    assert "--user-simulator: base_url must start with http" in str(cli.value)
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert page.last_problem == ("Cannot start the run", str(cli.value))
    assert not (tmp_path / "run").exists()


def test_a_ray_run_from_the_form_is_the_cli_s_ray_run(page, workspace, tmp_path):
    from elderbench.cli import build_parser
    from evaluator.cli import eval_config

    form = page.form
    suite = workspace.suites_dir / "small"
    choose(form.suite_combo, str(suite))
    choose(form.executor_combo, "ray")
    form.ray_address_edit.setText("ray://head:10001")
    form.out_edit.setText(str(tmp_path / "run"))
    studio = form.build_config()
    cli = eval_config(
        build_parser().parse_args(
            [
                "eval",
                "--suite",
                str(suite),
                "--agent",
                "replay",
                "--executor",
                "ray",
                "--ray-address",
                "ray://head:10001",
                "--out",
                str(tmp_path / "run"),
            ]
        )  # fmt: skip
    )
    assert studio.to_json() == cli.to_json()
    assert studio.farm.ray_address == "ray://head:10001"
