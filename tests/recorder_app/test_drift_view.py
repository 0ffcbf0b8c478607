"""The Evaluate tab's Drift view on the virtual phone (real adbutils, random port), its
Settings and Pharmacy at version 2 as ``elderbench phone --app-version`` sets them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from devices.device_lock import device_holder
from recorder_app.connection import DeviceConnection
from recorder_app.qt.eval_panel.drift_view import DriftView
from tests.evaluator.test_drift import SUITE, UPDATED
from tests.recorder_app.helpers import on_server
from virtual_phone import fast_phone, running_server

WAIT_MS = 60_000
TASKS = ("font_bigger", "hearing_aid", "my_number")


def open_view(qtbot, port: int) -> DriftView:
    connection = DeviceConnection(port=port)
    view = DriftView(
        connection.open_device, connection.list_devices, lock_address=connection.lock_address
    )
    qtbot.addWidget(view)
    view.set_suite(Path(SUITE))
    view.set_checked_tasks(set(TASKS))
    view.picker.refresh()
    qtbot.waitUntil(lambda: view.picker.serial == "virtual-1", timeout=WAIT_MS)
    view.resize(1300, 800)
    view.show()
    return view


@pytest.fixture
def updated_port() -> Iterator[int]:
    with running_server([fast_phone("virtual-1", app_versions=UPDATED)]) as server:
        yield server.port


def rows(view: DriftView) -> dict[str, tuple[str, ...]]:
    return {
        view.table.item(r, 0).text(): tuple(view.table.item(r, c).text() for c in (1, 2, 3))
        for r in range(view.table.rowCount())
    }


def test_version_2_shows_the_drifted_tasks_with_both_screens(qtbot, updated_port, tmp_path):
    view = open_view(qtbot, updated_port)
    listed = {view.task_list.item(i).text() for i in range(view.task_list.count())}
    assert set(TASKS) < listed  # every task with a graph is offered
    assert [p.name for p in view.checked_folders()] == sorted(TASKS)
    with qtbot.waitSignal(view.checked, timeout=WAIT_MS) as checked:
        qtbot.mouseClick(view.check_button, Qt.MouseButton.LeftButton)
    assert checked.args == [3]
    assert rows(view) == {
        "font_bigger": ("unchanged", "", ""),
        "hearing_aid": ("drifted", "n1", "unexpected dialog"),
        "my_number": ("drifted", "n2", "element gone"),
    }
    assert (view.progress.value(), view.progress.maximum()) == (3, 3)
    assert view.status.text() == "2 of 3 task(s) drifted."
    qtbot.waitUntil(lambda: not view.job.running, timeout=WAIT_MS)
    assert device_holder(on_server(updated_port)) is None and view.check_button.isEnabled()

    row = [view.table.item(r, 0).text() for r in range(view.table.rowCount())].index("hearing_aid")
    view.table.selectRow(row)
    assert "unexpected dialog" in view.why.text() and "New: Fast Pair" in view.why.text()
    expected = view.expected_shot.pixmap().toImage()
    live = view.live_shot.pixmap().toImage()
    assert not expected.isNull() and not live.isNull()
    assert expected.size() == live.size() and expected != live  # the dialog is on one only
    view.table.selectRow([view.table.item(r, 0).text() for r in range(3)].index("font_bigger"))
    assert view.live_shot.pixmap().isNull() and view.why.text() == "unchanged"

    # the sheet is the one elderbench drift --out writes
    out = tmp_path / "sheet"
    with qtbot.waitSignal(view.sheet_written, timeout=WAIT_MS):
        view.save_sheet(out)
    data = json.loads((out / "drift.json").read_text(encoding="utf-8"))
    assert data["device"] == "virtual-1" and data["drifted"] == 2
    assert {t["task"]: t["status"] for t in data["tasks"]} == {
        "font_bigger": "unchanged",
        "hearing_aid": "drifted",
        "my_number": "drifted",
    }
    assert "| my_number | drifted | n2 | element gone |" in (out / "drift.md").read_text(
        encoding="utf-8"
    )
    assert view.sheet_row.path == out / "drift.html"


def test_cancel_stops_before_the_next_task_and_frees_the_phone(qtbot, updated_port):
    view = open_view(qtbot, updated_port)
    with qtbot.waitSignal(view.checked, timeout=WAIT_MS) as checked:
        qtbot.mouseClick(view.check_button, Qt.MouseButton.LeftButton)
        assert view.cancel_button.isEnabled() and not view.check_button.isEnabled()
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert checked.args == [0] and view.table.rowCount() == 0
    assert view.status.text() == "Cancelled after 0 of 3 task(s); 0 drifted."
    qtbot.waitUntil(lambda: not view.job.running, timeout=WAIT_MS)
    assert device_holder(on_server(updated_port)) is None
