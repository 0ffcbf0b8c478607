"""Proposals asked for from the Language tab: the CLI's results, with progress and Cancel."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from elderbench.cli import main as elderbench
from evaluator.language.proposals import Kind, ProposalStore
from recorder_app.qt.language_page import LanguagePage
from tests.evaluator.fake_llm_server import FakeLLMServer, reply

SAMPLE = Path(__file__).resolve().parents[2] / "task_graphs" / "sample"
TASKS = ("airplane_on", "call_daughter", "fahrenheit", "font_bigger")
DONE_MS = 20_000


def make_suite(folder: Path) -> Path:
    """Four sample tasks without proposals."""
    folder.mkdir()
    shutil.copy(SAMPLE / "suite.json", folder / "suite.json")
    for task_id in TASKS:
        (folder / task_id).mkdir()
        shutil.copy(SAMPLE / task_id / "task.json", folder / task_id / "task.json")
    return folder


def label_reply(request) -> object:
    if "flying tomorrow" in request.text():
        return reply("I am not sure.")  # no JSON: an unusable reply, kept with its error
    return reply('{"scenario": "system_settings", "syntax": ["elliptical"], "semantics": []}')


def endpoint_file(folder: Path, server: FakeLLMServer) -> Path:
    path = folder / "endpoint.json"
    path.write_text(json.dumps({"base_url": server.base_url, "model": "m", "retries": 0}))
    return path


def comparable(suite: Path, kind: Kind) -> dict[str, tuple]:
    return {
        task_id: (p.proposed, p.model, p.raw, p.error)
        for task_id, p in ProposalStore(suite).all(kind).items()
    }


@pytest.fixture
def page(qtbot, settings, workspace):
    settings.setValue("task/annotator", "ann-7")
    page = LanguagePage(settings)
    qtbot.addWidget(page)
    page.set_workspace(workspace)
    page.resize(1200, 800)
    page.show()
    return page


def test_proposals_from_the_studio_are_the_clis(qtbot, page, tmp_path):
    by_cli = make_suite(tmp_path / "by-cli")
    in_studio = make_suite(tmp_path / "in-studio")
    with FakeLLMServer(label_reply) as server:
        assert (
            elderbench(["label", str(by_cli), "--endpoint", str(endpoint_file(tmp_path, server))])
            == 1
        )
        page.open_suite_folder(in_studio)
        runner = page.runner
        runner.endpoint_edit.setText(str(endpoint_file(tmp_path, server)))
        seen: list[int] = []
        runner.progress.valueChanged.connect(seen.append)
        qtbot.mouseClick(runner.labels_button, Qt.MouseButton.LeftButton)
        assert runner.running and runner.progress.isVisible()
        assert not page.labels.isEnabled()  # no review while the file is being written
        qtbot.waitUntil(lambda: not runner.running, timeout=DONE_MS)
    assert comparable(in_studio, Kind.LABELS) == comparable(by_cli, Kind.LABELS)
    assert set(comparable(in_studio, Kind.LABELS)) == set(TASKS)
    assert [v for v in seen if v > 0] == [1, 2, 3, 4]  # a step per task
    assert "1 replies unusable" in runner.status.text()
    assert page.labels.isEnabled()
    # The review table shows the new proposals at once.
    table = page.labels.table
    proposed = {table.item(r, 0).text(): table.item(r, 3).text() for r in range(table.rowCount())}
    assert proposed["call_daughter"] == "system_settings · elliptical"
    assert proposed["airplane_on"].startswith("(model reply unusable")


def test_cancel_stops_between_tasks_and_keeps_what_came(qtbot, page, tmp_path):
    suite = make_suite(tmp_path / "suite")
    slow = [reply('{"rewrite": "Open the settings."}', delay=0.4)]
    with FakeLLMServer(slow) as server:
        page.open_suite_folder(suite)
        runner = page.runner
        runner.endpoint_edit.setText(str(endpoint_file(tmp_path, server)))
        runner.rewrites_button.click()
        qtbot.waitUntil(lambda: runner.progress.value() >= 1, timeout=DONE_MS)
        runner.cancel_button.click()
        qtbot.waitUntil(lambda: not runner.running, timeout=DONE_MS)
    saved = comparable(suite, Kind.REWRITES)
    assert 1 <= len(saved) < len(TASKS)
    assert "cancelled after" in runner.status.text()
    assert runner.labels_button.isEnabled() and page.rewrites.isEnabled()


def test_an_unreachable_endpoint_is_reported_and_nothing_is_written(
    qtbot, page, tmp_path, monkeypatch
):
    from recorder_app.qt import language_page

    problems: list[tuple[str, str]] = []
    monkeypatch.setattr(language_page, "show_problem", lambda _p, t, m: problems.append((t, m)))
    suite = make_suite(tmp_path / "suite")
    with FakeLLMServer([reply("x")]) as server:
        endpoint = endpoint_file(tmp_path, server)
    page.open_suite_folder(suite)  # the server is gone now
    page.runner.endpoint_edit.setText(str(endpoint))
    page.runner.labels_button.click()
    qtbot.waitUntil(lambda: bool(problems), timeout=DONE_MS)
    assert problems[0][0] == "Cannot propose labels"
    assert "Connection refused" in problems[0][1]
    assert not (suite / "language" / "proposals.json").exists()
    assert page.labels.isEnabled() and not page.runner.running
