"""The Language tab follows the suite on disk, and its review decisions can be undone."""

from __future__ import annotations

import json
import shutil

from PySide6.QtCore import Qt

from evaluator.language.proposals import Decision, Kind, ProposalStore, review
from graph_builder.io import load_task
from tests.recorder_app.test_language_page import SAMPLE, page, suite  # noqa: F401
from tests.recorder_app.test_main_window import make_window


def task_ids(view) -> list[str]:
    return [view.table.item(row, 0).text() for row in range(view.table.rowCount())]


def add_task(suite_dir, task_id: str) -> None:
    (suite_dir / task_id).mkdir()
    shutil.copy(SAMPLE / task_id / "task.json", suite_dir / task_id / "task.json")


def test_a_task_added_on_disk_shows_up_without_reopening_the_suite(qtbot, page, suite):  # noqa: F811
    review_view = page.labels
    page.inner.setCurrentWidget(review_view)
    assert task_ids(review_view) == ["airplane_on", "call_daughter", "fahrenheit"]
    chosen = review_view.current_task().id
    add_task(suite, "letters_biggest")
    qtbot.waitUntil(lambda: "letters_biggest" in task_ids(review_view), timeout=5000)
    assert "letters_biggest" in task_ids(page.rewrites)
    assert review_view.current_task().id == chosen  # the person's place is kept
    # A proposal written by the command line shows up too.
    ProposalStore(suite).put(
        Kind.LABELS,
        "letters_biggest",
        ProposalStore(suite).get(Kind.LABELS, "call_daughter"),
    )
    row = task_ids(review_view).index("letters_biggest")
    qtbot.waitUntil(lambda: review_view.table.item(row, 3).text() != "(no proposal)", timeout=5000)


def test_changes_made_while_the_tab_was_hidden_show_when_it_is_shown(qtbot, page, suite):  # noqa: F811
    page.hide()
    page.watcher.removePaths(page.watcher.directories())  # only the show can notice now
    data = json.loads((suite / "fahrenheit" / "task.json").read_text())
    data["normalized_instruction"] = "Show the temperature in Fahrenheit."
    (suite / "fahrenheit" / "task.json").write_text(json.dumps(data))
    page.show()
    row = task_ids(page.rewrites).index("fahrenheit")
    assert page.rewrites.table.item(row, 2).text() == "Show the temperature in Fahrenheit."


def test_ctrl_z_in_the_review_list_takes_decisions_back_in_order(qtbot, page, suite):  # noqa: F811
    view = page.labels
    page.inner.setCurrentWidget(view)
    view.table.setFocus()
    assert view.current_task().id == "call_daughter" and not view.undo_button.isEnabled()
    qtbot.keyClick(view.table, Qt.Key.Key_Return)  # accept call_daughter
    qtbot.keyClick(view.table, Qt.Key.Key_R)  # reject fahrenheit
    assert load_task(suite / "call_daughter").labels.syntax == ("elliptical",)
    assert ProposalStore(suite).get(Kind.LABELS, "fahrenheit").review.decision is Decision.REJECTED
    qtbot.keyClick(view.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert ProposalStore(suite).get(Kind.LABELS, "fahrenheit").review is None
    assert view.current_task().id == "fahrenheit"
    row = task_ids(view).index("fahrenheit")
    assert view.table.item(row, 4).text() == "waiting"
    qtbot.keyClick(view.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert load_task(suite / "call_daughter").labels.syntax == ()
    assert ProposalStore(suite).get(Kind.LABELS, "call_daughter").review is None
    assert view.current_task().id == "call_daughter" and not view.undo_button.isEnabled()


def test_an_undo_is_refused_when_the_task_changed_since(qtbot, page, suite, monkeypatch):  # noqa: F811
    problems: list[str] = []
    monkeypatch.setattr(
        "recorder_app.qt.language_page.show_problem",
        lambda parent, title, text: problems.append(text),
    )
    view = page.rewrites
    page.inner.setCurrentWidget(view)
    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_Return)  # accept call_daughter's rewrite
    review(suite, Kind.REWRITES, "call_daughter", "corrected", annotator="b", value="Call Ann.")
    view.undo_last()
    assert problems and "changed after this decision" in problems[0]
    assert load_task(suite / "call_daughter").normalized_instruction == "Call Ann."


def test_ctrl_z_reaches_the_review_list_inside_the_studio_window(qtbot, settings, workspace, suite):  # noqa: F811
    settings.setValue("task/annotator", "ann-7")
    window = make_window(qtbot, settings)
    window.open_workspace(workspace.root)
    window.resize(1400, 900)
    window.show()
    window.show_page("language")
    language = window.language_page
    language.open_suite_folder(suite)
    view = language.labels
    language.inner.setCurrentWidget(view)
    window.activateWindow()
    view.table.setFocus()
    qtbot.waitUntil(view.table.hasFocus)
    qtbot.keyClick(view.table, Qt.Key.Key_Return)
    assert load_task(suite / "call_daughter").labels.syntax == ("elliptical",)
    qtbot.keyClick(view.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert load_task(suite / "call_daughter").labels.syntax == ()
