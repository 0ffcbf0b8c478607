"""The real main window at 1024x700 and 800x500: every Record and Language control is
reachable (on screen, or by scrolling the panel it is in) and none is squeezed to a sliver."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QTableWidget,
    QTabWidget,
    QWidget,
)

from tests.recorder_app.studio_driver import SERIAL

SAMPLE = Path(__file__).resolve().parents[2] / "task_graphs" / "sample"
CONTROLS = (
    QAbstractButton,
    QAbstractSpinBox,
    QLineEdit,
    QComboBox,
    QPlainTextEdit,
    QTabWidget,
    QTableWidget,
)
# Qt's own editor inside a spin box is drawn within the spin box, which is checked itself.
INNER_EDITORS = {"qt_spinbox_lineedit"}


def scroll_areas(widget: QWidget) -> list[QScrollArea]:
    """The scroll areas around ``widget``, innermost first."""
    found = []
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QScrollArea):
            found.append(parent)
        parent = parent.parentWidget()
    return found


def unreachable(qtbot, window, page: QWidget, at_least: int) -> list[str]:
    """Controls of ``page`` that cannot be brought into the window, or are slivers
    (``at_least`` controls must have been looked at)."""
    problems = []
    checked = 0
    for control in page.findChildren(QWidget):
        if not isinstance(control, CONTROLS) or not control.isVisibleTo(page):
            continue
        if control.objectName() in INNER_EDITORS:
            continue
        checked += 1
        for area in scroll_areas(control):
            area.ensureWidgetVisible(control, 0, 0)
        qtbot.wait(1)
        name = control.objectName() or getattr(control, "text", lambda: "")() or type(control)
        shown = QRect(control.mapTo(window, QPoint(0, 0)), control.size())
        seen = control.visibleRegion().boundingRect()
        hint = control.minimumSizeHint()
        if seen.isEmpty() or not window.rect().intersects(shown):
            problems.append(f"{name}: cannot be brought into view")
        elif (
            control.width() < min(hint.width(), 60) - 1
            or control.height() < min(hint.height(), 20) - 1
        ):
            problems.append(f"{name}: squeezed to {control.width()}x{control.height()}")
        elif (
            isinstance(control, QAbstractButton)
            and control.text()
            and control.width() < hint.width() - 2
        ):
            problems.append(f"{name}: its label is cut ({control.width()} < {hint.width()})")
    assert checked >= at_least
    return problems


@pytest.fixture
def suite(workspace) -> Path:
    folder = workspace.suites_dir / "small"
    folder.mkdir(parents=True)
    shutil.copy(SAMPLE / "suite.json", folder / "suite.json")
    for task_id in ("airplane_on", "call_daughter", "fahrenheit"):
        shutil.copytree(SAMPLE / task_id, folder / task_id, ignore=shutil.ignore_patterns("demos"))
    return folder


@pytest.mark.parametrize("size", [(1024, 700), (800, 500)])
def test_record_and_language_fit_a_small_window(qtbot, studio, suite, size):
    window = studio()
    assert window.record_page.device_bar.connected_serial == SERIAL
    window.resize(*size)
    qtbot.waitUntil(lambda: window.size().toTuple() == size)  # no tab holds it larger
    window.show_page("record")
    qtbot.wait(10)
    assert window.size().toTuple() == size
    record = window.record_page
    assert unreachable(qtbot, window, record, 30) == []
    assert record.mirror.width() >= 200 and record.mirror.height() >= 240  # the phone shows
    record.side_tabs.setCurrentIndex(1)  # Steps
    assert unreachable(qtbot, window, record, 15) == []

    language = window.language_page
    window.show_page("language")
    language.open_suite_folder(suite)
    for tab in range(language.inner.count()):
        language.inner.setCurrentIndex(tab)
        qtbot.wait(10)
        assert window.size().toTuple() == size
        assert unreachable(qtbot, window, language, 10) == [], language.inner.tabText(tab)
    assert language.labels.table.height() >= 80  # rows to review, not a sliver


def test_demos_and_every_evaluate_view_fit_a_1024_by_700_window(qtbot, studio):
    """The Evaluate tab used to need 1069 px: four verdict buttons in a row and a long
    failure category beside the run form."""
    window = studio()
    size = (1024, 700)
    window.resize(*size)
    qtbot.waitUntil(lambda: window.size().toTuple() == size)
    window.show_page("demos")
    qtbot.wait(10)
    assert window.size().toTuple() == size
    assert unreachable(qtbot, window, window.demo_browser, 5) == []
    page = window.eval_page
    window.show_page("evaluate")
    for tab in range(page.tabs.count()):
        page.tabs.setCurrentIndex(tab)
        qtbot.wait(10)
        assert window.size().toTuple() == size, page.tabs.tabText(tab)
        assert unreachable(qtbot, window, page, 10) == [], page.tabs.tabText(tab)
