"""Previous/Next and Pause/Continue keep their place whatever the text around them says."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QToolButton, QWidget

from evaluator.agents import AGENTS
from evaluator.synthetic import write_suite
from graph_builder.io import DemoWriter
from graph_builder.model import Action, Bounds, ElementRef, Task
from recorder_app.qt.demo_browser import DemoBrowser
from recorder_app.qt.eval_panel import EvaluationPage
from tests.recorder_app.helpers import HIERARCHY, png_bytes
from tests.recorder_app.studio_driver import Recording, start_demo
from tests.recorder_app.test_eval_panel import TASKS, SlowReplayAgent, start, wait_for_end


def place(widget: QWidget, within: QWidget) -> QRect:
    """Where ``widget`` is drawn inside ``within``."""
    return QRect(widget.mapTo(within, QPoint(0, 0)), widget.size())


@pytest.fixture
def eval_page(qtbot, workspace, monkeypatch):
    monkeypatch.setitem(AGENTS, "slow_replay", SlowReplayAgent)
    write_suite(workspace.suites_dir / "synthetic", TASKS, size=(270, 600))
    page = EvaluationPage()
    qtbot.addWidget(page)
    page.set_workspace(workspace)
    page.resize(1400, 900)
    page.show()
    qtbot.waitExposed(page)
    yield page
    page.shutdown()


def test_previous_and_next_stay_put_from_step_to_step(qtbot, workspace):
    screen = (1080, 2400)
    task = Task("long", "write a long message to my daughter")
    writer = DemoWriter.create(workspace.demos_dir, task, demo_id="d1", annotator="ann")
    element = ElementRef(Bounds(0, 300, 1080, 500), "p:id/wifi", "Wi-Fi")
    steps = [
        Action.tap(540, 400, screen=screen, element=element),  # names its element
        Action.type_text("see you on sunday at the station, bring the umbrella " * 3),
        Action.swipe(540, 1800, 540, 600, screen=screen),  # no element line
        Action.done(),
    ]
    for i, action in enumerate(steps):
        writer.add_step(
            png_bytes((40 * i, 90, 90)),
            HIERARCHY,
            action=action,
            activity="p/.Main",
            screen=screen,
            time=1.0,
        )
    writer.finish()
    browser = DemoBrowser()
    qtbot.addWidget(browser)
    browser.set_workspace(workspace)
    browser.resize(900, 620)
    browser.show()
    qtbot.waitExposed(browser)
    assert browser.select_demo(writer.folder)

    places = []
    texts = []
    for _ in steps:
        qtbot.wait(1)  # let the layout settle after the texts changed
        places.append((place(browser.prev_button, browser), place(browser.next_button, browser)))
        texts.append((browser.step_label.text(), browser.detail_label.text()))
        browser.next_step()
    assert len({t[0] for t in texts}) == len(steps)  # the texts did change
    assert len({t[1].count("\n") for t in texts}) > 1  # ... and by a different line count
    assert all(p == places[0] for p in places), places


def test_pause_and_continue_stay_put_through_a_run(qtbot, eval_page):
    page = eval_page
    buttons = (page.start_button, page.pause_button, page.stop_button)
    before = [place(b, page) for b in buttons]
    start(qtbot, page, "slow_replay")
    assert page.state_label.text().startswith("Starting slow_replay → ")  # a long folder
    qtbot.wait(1)
    starting = [place(b, page) for b in buttons]
    qtbot.waitUntil(lambda: page.results_model.rowCount() >= 1, timeout=20_000)
    qtbot.mouseClick(page.pause_button, Qt.MouseButton.LeftButton)
    assert page.pause_button.text() == "Continue"
    qtbot.wait(1)
    paused = [place(b, page) for b in buttons]
    qtbot.mouseClick(page.pause_button, Qt.MouseButton.LeftButton)
    assert page.pause_button.text() == "Pause"
    page.stop_run()
    wait_for_end(qtbot, page)
    qtbot.wait(1)
    stopped = [place(b, page) for b in buttons]
    assert before == starting == paused == stopped


def test_the_recording_buttons_stay_put_through_a_demo(qtbot, studio, virtual_server):
    window = studio()
    page = window.record_page
    rec = Recording(qtbot, window, virtual_server.phones[0])
    buttons = [
        page.start_button,
        page.free_drive_button,
        page.complete_button,
        page.text_edit,
        *(
            b
            for b in page.findChildren(QToolButton)
            if b.defaultAction() in (page.back_action, page.stop_action)
        ),
    ]
    assert len(buttons) == 6

    def places() -> list[QRect]:
        qtbot.wait(1)
        return [place(b, page) for b in buttons]

    idle = places()
    page.task_panel.instruction_edit.setPlainText(
        "where do I find the wifi thing, my grandson set it up and now it does not work " * 2
    )
    start_demo(rec, "a-task-with-a-rather-long-identifier")
    page.task_panel.instruction_edit.setPlainText("")
    assert page.instruction_label.isEnabled()  # the demo's request is shown above them
    ready = places()
    rec.tap("Settings")
    rec.wait_ready()
    assert "last capture" in page.state_label.text()  # a longer state line
    after_a_step = places()
    page.stop_action.trigger()
    qtbot.waitUntil(lambda: not page.recorder.recording, timeout=15_000)
    stopped = places()
    assert idle == ready == after_a_step == stopped
