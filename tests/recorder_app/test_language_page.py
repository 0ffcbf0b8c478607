"""The Language tab: statistics of a suite, and reviewing proposals from the keyboard."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from evaluator.language.proposals import Kind, Proposal, ProposalStore
from graph_builder.io import load_task
from recorder_app.qt.language_page import LanguagePage

SAMPLE = Path(__file__).resolve().parents[2] / "task_graphs" / "sample"


@pytest.fixture
def suite(tmp_path) -> Path:
    """Three sample tasks; two lose their labels and rewrites, all get proposals."""
    out = tmp_path / "suite"
    out.mkdir()
    shutil.copy(SAMPLE / "suite.json", out / "suite.json")
    for task_id in ("airplane_on", "call_daughter", "fahrenheit"):
        (out / task_id).mkdir()
        data = json.loads((SAMPLE / task_id / "task.json").read_text())
        if task_id != "airplane_on":
            data["labels"] = {"scenario": None, "syntax": [], "semantics": []}
            data["normalized_instruction"] = None
        (out / task_id / "task.json").write_text(json.dumps(data))
    store = ProposalStore(out)
    for task_id in ("airplane_on", "call_daughter", "fahrenheit"):
        store.put(
            Kind.LABELS,
            task_id,
            Proposal(
                {"scenario": "system_settings", "syntax": ["elliptical"], "semantics": []},
                "m",
                1.0,
            ),
        )
        store.put(Kind.REWRITES, task_id, Proposal(f"Rewrite of {task_id}.", "m", 1.0))
    return out


@pytest.fixture
def page(qtbot, settings, workspace, suite):
    settings.setValue("task/annotator", "ann-7")
    page = LanguagePage(settings)
    qtbot.addWidget(page)
    page.set_workspace(workspace)
    page.open_suite_folder(suite)
    page.resize(1200, 800)
    page.show()
    return page


def test_statistics_show_the_suite(page):
    page.inner.setCurrentWidget(page.statistics)
    text = " ".join(w.text() for w in page.statistics.widget().findChildren(QLabel))
    assert "Under 20 characters" in text and "Instructions" in text


def test_labels_are_accepted_corrected_and_rejected_from_the_keyboard(qtbot, page, suite):
    review = page.labels
    page.inner.setCurrentWidget(review)
    review.table.setFocus()
    # The first task still waiting is selected: airplane_on has verified labels already.
    assert review.current_task().id == "call_daughter"
    qtbot.keyClick(review.table, Qt.Key.Key_Return)
    assert load_task(suite / "call_daughter").labels.syntax == ("elliptical",)
    assert review.current_task().id == "fahrenheit"  # moved on to the next one waiting
    qtbot.keyClick(review.table, Qt.Key.Key_C)
    assert review.editor.isVisible()
    review.editor.checks["semantics"]["under_specification"].setChecked(True)
    review.editor.checks["syntax"]["elliptical"].setChecked(False)
    review.editor.checks["syntax"]["canonical"].setChecked(True)
    qtbot.mouseClick(review.editor.save_button, Qt.MouseButton.LeftButton)
    labels = load_task(suite / "fahrenheit").labels
    assert labels.syntax == ("canonical",) and labels.semantics == ("under_specification",)
    record = ProposalStore(suite).get(Kind.LABELS, "fahrenheit")
    assert record.review.decision.value == "corrected" and record.review.annotator == "ann-7"
    # Accepting over verified labels is refused, and they stay as they were.
    before = load_task(suite / "airplane_on").labels
    review.table.selectRow(0)
    qtbot.keyClick(review.table, Qt.Key.Key_Return)
    assert load_task(suite / "airplane_on").labels == before
    assert ProposalStore(suite).get(Kind.LABELS, "airplane_on").review is None
    qtbot.keyClick(review.table, Qt.Key.Key_R)
    assert ProposalStore(suite).get(Kind.LABELS, "airplane_on").review.decision.value == (
        "rejected"
    )
    assert load_task(suite / "airplane_on").labels == before
    assert review.summary.text() == "3 of 3 tasks need no review"


def test_a_rewrite_is_edited_before_it_is_saved(qtbot, page, suite):
    review = page.rewrites
    page.inner.setCurrentWidget(review)
    review.table.setFocus()
    assert review.current_task().id == "call_daughter"
    qtbot.keyClick(review.table, Qt.Key.Key_C)
    assert review.editor.text.text() == "Rewrite of call_daughter."
    review.editor.text.setText("In Phone, call Anna (your daughter).")
    qtbot.keyClick(review.editor.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert load_task(suite / "call_daughter").normalized_instruction == (
        "In Phone, call Anna (your daughter)."
    )


def test_no_annotator_no_decision(qtbot, page, suite):
    page.annotator_edit.setText("")
    review = page.labels
    page.inner.setCurrentWidget(review)
    review.table.setFocus()
    qtbot.keyClick(review.table, Qt.Key.Key_Return)
    assert load_task(suite / "call_daughter").labels.scenario is None
    assert ProposalStore(suite).get(Kind.LABELS, "call_daughter").review is None


def test_a_model_failure_proposal_is_confirmed_in_the_trace_viewer(qtbot, tmp_path):
    from evaluator.language.failures import PROPOSALS_FILE
    from evaluator.records import TaskResult, TaskStatus
    from evaluator.run_store import FailureCategory, RunStore
    from recorder_app.qt.eval_panel.trace_viewer import TraceViewer

    store = RunStore.create(tmp_path / "run", {"agent": {"name": "test"}, "suite": {}})
    store.append_result(TaskResult("t1", TaskStatus.FAILURE, "online", instruction="call Tom"))
    (store.run_dir / PROPOSALS_FILE).write_text(
        json.dumps(
            {
                "schema_version": 1,
                "tasks": {"t1": {"category": "visual_grounding", "reason": "tapped beside it"}},
            }
        )
    )
    viewer = TraceViewer()
    qtbot.addWidget(viewer)
    viewer.show()
    assert viewer.show_task(store, "t1")
    assert "Visual grounding" in viewer.proposal_label.text()
    assert viewer.confirm_proposal_button.isVisible()
    viewer.annotator_edit.setText("a02")  # a confirmation is signed like a verdict
    with qtbot.waitSignal(viewer.tags_changed, timeout=5_000):
        qtbot.mouseClick(viewer.confirm_proposal_button, Qt.MouseButton.LeftButton)
    (tag,) = store.tags()["t1"]
    assert tag.category is FailureCategory.GROUNDING and "tapped beside it" in tag.note
    assert not viewer.confirm_proposal_button.isVisible()
    assert viewer.tag_list.count() == 1


def test_the_suite_list_offers_the_workspace_suites_and_the_shipped_sample(page):
    names = [page.suite_combo.itemText(i) for i in range(page.suite_combo.count())]
    assert "default" in names and "sample" in names


def test_one_annotator_id_for_the_whole_studio(qtbot, studio):
    window = studio()
    window.record_page.task_panel.annotator_edit.setText("ann-9")
    assert window.language_page.annotator() == "ann-9"
    window.language_page.annotator_edit.setText("ann-3")
    assert window.eval_page.trace_viewer.annotator_edit.text() == "ann-3"
    assert window.record_page.task_panel.annotator == "ann-3"
