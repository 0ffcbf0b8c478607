"""The Evaluate tab driven like a user would: offline runs on a synthetic suite in a
background thread, the results table, traces with verdicts and failure tags, the report,
comparing two runs, stop and resume, and the per-workspace settings."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from evaluator.agents import AGENTS
from evaluator.agents.replay import ReplayAgent
from evaluator.metrics import compare_runs, flipped_tasks
from evaluator.records import TaskResult, Verdict
from evaluator.report import report_figures
from evaluator.run_store import FailureCategory, FailureTag, HumanVerdict, RunStore
from evaluator.synthetic import write_suite
from recorder_app.errors import SettingsError
from recorder_app.qt.eval_panel import EvaluationPage
from recorder_app.qt.eval_panel.results_table import COLUMN
from recorder_app.qt.eval_panel.settings import SETTINGS_FILE, load_settings
from recorder_app.recording.workspace import Workspace

TASKS = 6
RUN_TIMEOUT_MS = 20_000


class SlowReplayAgent(ReplayAgent):
    """The replay oracle with a pause per step, so a run can be stopped half-way."""

    name = "slow_replay"

    def step(self, observation):
        time.sleep(0.04)
        return super().step(observation)


@pytest.fixture(autouse=True)
def _slow_agent(monkeypatch):
    monkeypatch.setitem(AGENTS, "slow_replay", SlowReplayAgent)


@pytest.fixture
def ws(workspace: Workspace) -> Workspace:
    write_suite(workspace.suites_dir / "synthetic", TASKS, size=(270, 600))
    return workspace


@pytest.fixture
def page(qtbot, ws):
    page = EvaluationPage()
    qtbot.addWidget(page)
    page.set_workspace(ws)
    page.resize(1400, 900)
    page.show()
    qtbot.waitExposed(page)
    yield page
    page.shutdown()


def choose(combo, data: str) -> None:
    index = combo.findData(data)
    assert index >= 0, f"{data!r} is not offered"
    combo.setCurrentIndex(index)


def start(qtbot, page: EvaluationPage, agent: str) -> None:
    choose(page.form.agent_combo, agent)
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert page.last_problem is None, page.last_problem
    assert page.run is not None


def wait_for_end(qtbot, page: EvaluationPage) -> None:
    qtbot.waitUntil(lambda: page.run is not None and not page.run.running, timeout=RUN_TIMEOUT_MS)


def run_agent(qtbot, page: EvaluationPage, agent: str) -> Path:
    start(qtbot, page, agent)
    wait_for_end(qtbot, page)
    assert page.current_run is not None
    return page.current_run


def column(page: EvaluationPage, title: str) -> list[str]:
    model = page.results_proxy
    return [str(model.index(r, COLUMN[title]).data()) for r in range(model.rowCount())]


def test_an_offline_run_fills_the_live_view_and_the_results_table(qtbot, page, ws):
    assert page.form.suite_combo.currentData() == str(ws.suites_dir / "synthetic")
    assert page.form.task_count.text() == f"{TASKS} of {TASKS} tasks selected"
    run = run_agent(qtbot, page, "replay")
    assert run.parent == ws.runs_dir and run.name.endswith("-replay-original")
    assert page.state_label.text() == f"Finished: {TASKS} tasks"
    assert (page.progress.value(), page.progress.maximum()) == (TASKS, TASKS)
    assert sorted(column(page, "Task")) == [f"task{i:03d}" for i in range(TASKS)]
    assert set(column(page, "Result")) == {"success"}
    assert set(column(page, "CR")) == {"100%"}
    assert page.summary_label.text().startswith(f"SR 100.0% ({TASKS}/{TASKS})")
    # the live view ended on the last step of a task: a screenshot with "done"
    shown = page.live_view.shown
    assert shown is not None and shown.record.action_text == "done"
    assert page.live_view.step_panel.viewer.has_image
    assert "done" in page.live_view.step_panel.summary.text()
    # the settings were saved for this workspace
    assert load_settings(ws.root).agent == "replay"


def test_the_task_filter_selects_what_runs(qtbot, page, ws):
    choose(page.form.app_filter, "com.example.app1")
    selected = page.form.selected_tasks()
    assert 0 < len(selected) < TASKS and all(t.app == "com.example.app1" for t in selected)
    assert page.form.task_count.text() == f"{len(selected)} of {TASKS} tasks selected"
    config = page.form.build_config()
    assert config.tasks == tuple(t.id for t in page.form.selected_tasks())
    run = run_agent(qtbot, page, "replay")
    assert {r.task_id for r in RunStore.open(run).results()} == set(config.tasks)


def test_trace_verdict_override_tags_and_report(qtbot, page, ws):
    run = run_agent(qtbot, page, "replay")
    assert page.tabs.currentWidget() is page.results_tab
    # double-click the row of task002 opens its trace
    row = column(page, "Task").index("task002")
    index = page.results_proxy.index(row, 0)
    rect = page.results_table.visualRect(index)
    viewport = page.results_table.viewport()
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(viewport, Qt.MouseButton.LeftButton, pos=rect.center())
    trace = page.trace_viewer
    assert page.tabs.currentWidget() is trace and trace.task_id == "task002"
    steps = RunStore.open(run).read_steps("task002")
    assert trace.step_list.count() == len(steps) == 4
    trace.step_list.setCurrentRow(1)
    assert trace.step_panel.viewer.has_image
    assert trace.step_panel.raw_output.toPlainText().startswith(steps[1].raw_output)
    assert steps[1].action_text in trace.step_panel.summary.text()

    # override the verdict: persisted in the run folder, shown in the table
    trace.verdict_note.setText("the font did not change on the phone")
    qtbot.mouseClick(trace.failure_button, Qt.MouseButton.LeftButton)
    assert "annotator id" in page.last_problem[1]  # a verdict is never signed by nobody
    assert not (run / "overrides.json").exists()
    page.last_problem = None
    trace.annotator_edit.setText("a07")
    qtbot.mouseClick(trace.failure_button, Qt.MouseButton.LeftButton)
    overrides = json.loads((run / "overrides.json").read_text())["tasks"]
    assert overrides["task002"]["success"] is False
    assert overrides["task002"]["annotator"] == "a07"
    assert "by a07" in trace.human_label.text()
    assert overrides["task002"]["note"] == "the font did not change on the phone"
    assert "failure (human)" in column(page, "Result")
    assert page.summary_label.text().startswith(f"SR {100 * (TASKS - 1) / TASKS:.1f}%")

    # tag the failure with a category and the step where it went wrong
    choose(trace.category_combo, FailureCategory.GROUNDING.value)
    assert trace.tag_step.value() == 2  # follows the selected step
    trace.tag_note.setText("tapped the wrong row")
    qtbot.mouseClick(trace.add_tag_button, Qt.MouseButton.LeftButton)
    trace.new_category.setText("Keyboard covered the button")
    qtbot.mouseClick(trace.add_category_button, Qt.MouseButton.LeftButton)
    trace.tag_step.setValue(0)  # overall
    qtbot.mouseClick(trace.add_tag_button, Qt.MouseButton.LeftButton)
    tags = RunStore.open(run).tags()["task002"]
    assert [(t.category, t.step, t.note) for t in tags] == [
        (FailureCategory.GROUNDING, 1, "tapped the wrong row"),
        (FailureCategory.CUSTOM, None, ""),
    ]
    assert tags[1].label == "Keyboard covered the button"
    assert trace.tag_list.count() == 2
    assert load_settings(ws.root).custom_categories == ("Keyboard covered the button",)
    # one analysed failure, counted once under its first tag
    assert "failures analysed 1/1: Visual grounding / action execution 100.0%" in (
        page.summary_label.text()
    )

    # filter and sort the table
    choose(page.status_filter, "failure")
    assert column(page, "Task") == ["task002"]
    choose(page.status_filter, "")
    page.search_edit.setText("keyboard")
    assert column(page, "Task") == ["task002"]
    page.search_edit.clear()
    page.results_table.sortByColumn(COLUMN["Steps"], Qt.SortOrder.DescendingOrder)
    steps_column = [int(s) for s in column(page, "Steps")]
    assert steps_column == sorted(steps_column, reverse=True)

    # export the report: it shows the human verdict and the failure analysis
    page.tabs.setCurrentWidget(page.results_tab)
    with qtbot.waitSignal(page.report_written, timeout=10_000):
        qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    report = (run / "report.md").read_text()
    assert "## Failure analysis" in report and "Visual grounding / action execution" in report
    assert "failure (human)" in report
    assert page.open_report_button.isEnabled() and page.report_path == run / "report.html"


def test_accepting_and_overriding_judges_shows_their_agreement(qtbot, page, ws):
    run = ws.runs_dir / "online-run"
    store = RunStore.create(run, {"agent": {"name": "openai"}, "config": {}})
    for task_id, passed in (("t1", True), ("t2", True), ("t3", False)):
        store.append_result(
            TaskResult(
                task_id,
                "success" if passed else "failure",
                "online",
                terminated=True,
                verification=(Verdict("rule", passed, "activity matched" if passed else "no"),),
            )
        )
    assert page.open_run(run)
    assert page.tabs.currentWidget() is page.results_tab
    assert column(page, "Judge") == ["pass", "pass", "fail"]
    trace = page.trace_viewer
    assert page.open_trace("t1")
    assert "rule: pass — activity matched" in trace.recorded_label.text()
    trace.annotator_edit.setText("a01")
    qtbot.mouseClick(trace.accept_button, Qt.MouseButton.LeftButton)
    assert page.open_trace("t2")
    qtbot.mouseClick(trace.failure_button, Qt.MouseButton.LeftButton)
    overrides = RunStore.open(run).overrides()
    assert overrides["t1"].success and not overrides["t2"].success
    assert "judge–human agreement 50.0% (1/2)" in page.summary_label.text()
    assert column(page, "Human") == ["success", "failure", ""]
    qtbot.mouseClick(trace.clear_button, Qt.MouseButton.LeftButton)
    assert "t2" not in RunStore.open(run).overrides()


def test_comparing_two_runs_shows_the_evaluators_mcnemar_test(qtbot, page, ws):
    replay = run_agent(qtbot, page, "replay")
    choose(page.form.agent_combo, "random")
    page.form.extra_edit.setText('{"seed": 1}')
    random_run = run_agent(qtbot, page, "random")
    a, b = RunStore.open(replay), RunStore.open(random_run)
    expected = compare_runs(a.results(), b.results())
    flips = flipped_tasks(a.results(), b.results())
    assert flips  # the random agent fails where replay succeeds

    view = page.compare_view
    assert view.run_a.count() == 2  # both runs are offered
    view.set_runs(replay, random_run)
    with qtbot.waitSignal(view.comparison_ready, timeout=10_000):
        qtbot.mouseClick(view.compare_button, Qt.MouseButton.LeftButton)
    assert f"McNemar exact p = <b>{expected.mcnemar_p:.4g}</b>" in view.headline.text()
    assert expected.ci is not None
    assert f"{100 * expected.ci.low:.1f}% to {100 * expected.ci.high:.1f}%" in view.headline.text()
    assert view.flip_table.rowCount() == len(flips)
    assert {view.flip_table.item(r, 0).text() for r in range(len(flips))} == set(flips)
    dimensions = {
        view.category_table.item(r, 0).text() for r in range(view.category_table.rowCount())
    }
    assert {"scenario", "syntax", "app"} <= dimensions


def test_stop_mid_run_then_resume_completes_the_rest(qtbot, page, ws):
    start(qtbot, page, "slow_replay")
    qtbot.waitUntil(lambda: page.results_model.rowCount() >= 1, timeout=RUN_TIMEOUT_MS)
    qtbot.mouseClick(page.pause_button, Qt.MouseButton.LeftButton)
    assert page.pause_button.text() == "Continue" and page.run.paused
    assert page.stop_action.isEnabled() and not page.start_action.isEnabled()
    page.stop_action.trigger()  # the Evaluate menu's Stop, same as the button
    wait_for_end(qtbot, page)
    assert page.start_action.isEnabled() and not page.stop_action.isEnabled()
    run = page.current_run
    done = {r.task_id for r in RunStore.open(run).results()}
    assert 1 <= len(done) < TASKS
    assert "not run" in page.state_label.text()

    # Resume run… offers the stopped run by name, not a bare folder dialog.
    qtbot.mouseClick(page.resume_button, Qt.MouseButton.LeftButton)
    dialog = page.resume_dialog
    assert dialog is not None and dialog.list.count() == 1
    item = dialog.list.item(0)
    assert (
        run.name in item.text() and f"{TASKS - len(done)} of {TASKS} tasks not run" in item.text()
    )
    qtbot.mouseClick(dialog.resume_button, Qt.MouseButton.LeftButton)
    assert page.run.config.resume and page.run.config.out == run
    wait_for_end(qtbot, page)
    assert page.state_label.text() == f"Finished: {TASKS} tasks"
    lines = (run / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["task_id"] for line in lines) == [
        f"task{i:03d}" for i in range(TASKS)
    ]
    assert set(column(page, "Result")) == {"success"} and len(column(page, "Task")) == TASKS


def test_settings_are_per_workspace_and_never_hold_a_key(qtbot, page, ws):
    choose(page.form.agent_combo, "openai")
    page.form.endpoint_edit.setText("http://127.0.0.1:9/v1")
    page.form.model_edit.setText("qwen-vl")
    page.form.key_env_edit.setText("MY_VLM_KEY")
    page.form.extra_edit.setText('{"api_key": "sk-secret-value"}')
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert page.run is None
    assert page.last_problem is not None and "secret" in page.last_problem[1]
    page.save_settings()  # what closing the studio does: the typed secret is not written
    assert "sk-secret" not in (ws.root / SETTINGS_FILE).read_text()
    page.form.extra_edit.setText('{"history_steps": 4}')
    choose(page.form.variant_combo, "normalized")
    page.form.judge_boxes["vlm"].setChecked(True)
    page.form.judge_config_edit.setText('{"vlm": {"model": "judge", "token": "abc"}}')
    with pytest.raises(SettingsError, match="secret"):
        page.form.build_config()
    vlm = {"base_url": "http://127.0.0.1:9/v1", "model": "judge", "api_key_env": "JUDGE_KEY"}
    page.form.judge_config_edit.setText(json.dumps({"vlm": vlm}))
    page.save_settings()
    text = (ws.root / SETTINGS_FILE).read_text()
    assert "sk-secret" not in text and "MY_VLM_KEY" in text
    config = page.form.build_config()
    assert config.judges == ("rule", "vlm") and config.judge_config == {"vlm": vlm}
    assert config.agent_config == {
        "history_steps": 4,
        "base_url": "http://127.0.0.1:9/v1",
        "model": "qwen-vl",
        "api_key_env": "MY_VLM_KEY",
    }
    # another page on the same workspace comes back with the same form
    again = EvaluationPage()
    qtbot.addWidget(again)
    again.set_workspace(ws)
    assert again.form.agent_combo.currentData() == "openai"
    assert again.form.key_env_edit.text() == "MY_VLM_KEY"
    assert again.form.variant_combo.currentData() == "normalized"
    assert again.form.build_config().agent_config == config.agent_config
    assert again.form.build_config().judge_config == {"vlm": vlm}


def test_the_studio_window_has_the_evaluate_tab_and_menu(qtbot, settings, ws):
    from recorder_app.connection import DeviceConnection
    from recorder_app.qt.main_window import StudioMainWindow

    window = StudioMainWindow(settings, DeviceConnection(port=1))
    qtbot.addWidget(window)
    window.open_workspace(ws.root)
    page = window.pages["evaluate"]
    assert isinstance(page, EvaluationPage)
    assert window.tabs.tabText(window.tabs.indexOf(page)) == "Evaluate"
    assert page.workspace == ws  # the window handed the workspace over
    titles = [a.text() for a in window.menuBar().actions()]
    assert "E&valuate" in titles
    assert page.can_close()  # nothing running: nothing to ask


def test_the_live_view_shows_each_step_under_the_task_it_belongs_to(qtbot, ws, tmp_path):
    from evaluator.runner import RunConfig, StepDone, TaskFinished, TaskStarted, iter_run
    from recorder_app.qt.eval_panel.live_view import LiveView

    config = RunConfig(suite=ws.suites_dir / "synthetic", out=tmp_path / "run", agent="replay")
    events = [e for e in iter_run(config) if isinstance(e, TaskStarted | StepDone | TaskFinished)]
    live = LiveView()
    qtbot.addWidget(live)
    slots = {TaskStarted: live.on_task_started, StepDone: live.on_step_done}
    slots[TaskFinished] = live.on_task_finished
    seen: list[tuple[str | None, str]] = []
    # Events arrive faster than the view refreshes, as in a run: one burst per task, and
    # the view draws in between.
    for event in events:
        slots[type(event)](event)
        if isinstance(event, TaskStarted):
            assert live.shown is None  # the previous task's screen is gone
            assert event.task_id in live.task_label.text()
            assert live.instruction_label.text() == f"“{event.instruction}”"
            if live._timer.isActive():  # a refresh still due fires with nothing of the old task
                qtbot.waitSignal(live._timer.timeout, timeout=2000).wait()
            assert live.shown is None or live.shown.task_id == event.task_id
        if live.shown is not None:
            seen.append((live.shown.task_id, live.task_label.text()))
    assert seen and all(task_id in label for task_id, label in seen)
    last = events[-1]
    assert live.shown is not None and live.shown.task_id == last.task_id
    assert live.shown.record.action_text == "done"


def test_the_review_queue_lists_tasks_where_a_judge_and_the_human_disagree(qtbot, page, ws):
    from evaluator.records import TaskResult, TaskStatus, Verdict

    run = ws.runs_dir / "judged"
    store = RunStore.create(run, {"agent": {"name": "test"}, "suite": {}})
    for task_id, judged in (("t1", True), ("t2", True), ("t3", False)):
        store.append_result(
            TaskResult(
                task_id,
                TaskStatus.SUCCESS if judged else TaskStatus.FAILURE,
                "online",
                terminated=True,
                verification=(Verdict("rule", judged, "final screen"),),
            )
        )
    store.set_override("t2", HumanVerdict(False, "the alarm is not set", "a07"))  # disagrees
    store.set_override("t3", HumanVerdict(False, "right", "a07"))  # agrees
    assert page.open_run(run)
    review = page.status_filter.findData("review")
    assert page.status_filter.itemText(review) == "judge ≠ human (review 1)"
    page.status_filter.setCurrentIndex(review)
    assert column(page, "Task") == ["t2"]


def test_removing_a_tag_removes_the_one_shown_whatever_another_studio_did(qtbot, page, ws):
    run = run_agent(qtbot, page, "replay")
    trace = page.trace_viewer
    assert trace.show_task(RunStore.open(run), "task002")
    for category in (FailureCategory.GROUNDING, FailureCategory.INTENT):
        choose(trace.category_combo, category.value)
        qtbot.mouseClick(trace.add_tag_button, Qt.MouseButton.LeftButton)
    assert trace.tag_list.count() == 2
    # Meanwhile another studio removes the first tag and adds one of its own.
    other = RunStore.open(run)
    other.set_tags("task002", [other.tags()["task002"][1]])
    other.add_tag("task002", FailureTag(FailureCategory.PLANNING, None, "b01"))
    trace.tag_list.setCurrentRow(1)  # the person removes the intent tag they see
    qtbot.mouseClick(trace.remove_tag_button, Qt.MouseButton.LeftButton)
    tags = RunStore.open(run).tags()["task002"]
    assert [(t.category, t.note) for t in tags] == [(FailureCategory.PLANNING, "b01")]
    assert trace.tag_list.count() == 1  # the list shows the file as it is now


def test_every_run_setting_the_studio_keeps_reaches_the_run_config(qtbot, page, tmp_path):
    """The run form offers what evaluator.run_config.FIELDS says the studio keeps: each of
    those settings, changed, changes the RunConfig the form builds."""
    from dataclasses import replace

    from evaluator.run_config import FIELDS
    from evaluator.runner import RunConfig
    from recorder_app.qt.eval_panel.settings import AgentSettings, EvalSettings

    studio = {name: spec.studio for name, spec in FIELDS.items() if spec.studio}
    for attributes in studio.values():
        assert set(attributes) <= set(EvalSettings.__dataclass_fields__), attributes
    form = page.form
    label = form.label_filter.itemData(form.label_filter.count() - 1)
    assert label, "the synthetic suite offers a label to filter by"
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"base_url": "http://127.0.0.1:9/v1", "model": "older-adult"}))
    settings = replace(
        form.settings(),
        label_filter=label,
        agent="random",
        agents={"random": AgentSettings(extra='{"seed": 3}')},
        demos=str(tmp_path / "demos"),
        run_protocol="offline",
        variant="normalized",
        mode="tolerant",
        workers=3,
        devices=("virtual-9",),
        judges=("rule", "vlm"),
        judge_config='{"vlm": {"model": "judge"}}',
        matching="aitw",
        executor="ray",
        ray_address="auto",
        user_simulator=str(user),
        out=str(tmp_path / "out"),
    )
    form.apply_settings(settings)
    config = form.build_config()
    default = RunConfig(suite=config.suite, out=config.out, agent="replay")
    changed = {name for name in studio if getattr(config, name) != getattr(default, name)}
    assert changed == set(studio) - {"suite", "out"}
    assert (config.suite, config.out) == (Path(settings.suite), tmp_path / "out")
    assert config.user_simulator == {"base_url": "http://127.0.0.1:9/v1", "model": "older-adult"}
    assert (config.farm.executor, config.farm.ray_address) == ("ray", "auto")
    # settings the form keeps beside RunConfig survive a save and a load
    assert form.settings().user_simulator == str(user)
    # the judge settings come typed or from a file, as --judge-config FILE
    judges = tmp_path / "judges.json"
    judges.write_text(json.dumps({"vlm": {"model": "from-file"}}))
    form.apply_settings(replace(settings, judge_config="", judge_file=str(judges)))
    assert form.build_config().judge_config == {"vlm": {"model": "from-file"}}
    form.apply_settings(replace(settings, judge_file=str(judges)))
    with pytest.raises(SettingsError, match="both typed and in a file"):
        form.build_config()


def test_the_figures_tab_shows_the_report_figures(qtbot, page, ws):
    run = run_agent(qtbot, page, "heuristic")
    (run / "report.md").unlink(missing_ok=True)
    assert page.open_run(run)
    assert page.figures_view.figures == []  # no report: no figure, and a word on why
    assert "export the report" in page.figures_view.widget().text()
    with qtbot.waitSignal(page.report_written, timeout=20_000):
        qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    page.tabs.setCurrentWidget(page.figures_view)
    expected = report_figures(run)
    assert [t for t, _ in expected][:1] == ["Success rate by label"]
    shown = page.figures_view.figures
    assert [w.toolTip() for w in shown] == [t for t, _ in expected]
    for widget, (_, path) in zip(shown, expected, strict=True):
        assert widget.renderer().isValid() and widget.isVisibleTo(page)
        assert widget.objectName() == path.name  # the SVG file of the HTML report
        image = widget.grab().toImage()
        colours = {
            image.pixel(x, y)
            for x in range(0, image.width(), 3)
            for y in range(0, image.height(), 3)
        }
        assert len(colours) > 3  # drawn: axes, text and marks on the white ground
    # one column wide (3.4 in) at the screen's resolution
    assert shown[0].width() == pytest.approx(3.4 * page.logicalDpiX(), abs=2)
