"""Studio widgets that need no phone: mirror gestures, task panel, demo browser, step viewer."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from evaluator.agents.replay import action_for_edge
from evaluator.matching import match_edges
from graph_builder.hierarchy import parse_hierarchy
from graph_builder.model import (
    ActionType,
    DemoStatus,
    Edge,
    EdgeSupport,
    MatchRule,
    MemberRef,
    shortest_swipe,
)
from recorder_app.qt.demo_browser import DemoBrowser
from recorder_app.qt.mirror_view import MirrorView, qimage_from_array
from recorder_app.qt.task_panel import TaskPanel
from tests.recorder_app.helpers import HIERARCHY, write_demo


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_mirror(qtbot, clock=None) -> MirrorView:
    view = MirrorView(clock=clock or FakeClock())
    qtbot.addWidget(view)
    view.resize(400, 600)
    view.show()
    frame = np.zeros((1200, 540, 3), dtype=np.uint8)  # half resolution of the device
    view.set_frame(frame, (1080, 2400))
    view.set_hierarchy(parse_hierarchy(HIERARCHY))
    return view


def gestures(view: MirrorView) -> list:
    made: list = []
    view.gesture_made.connect(made.append)
    return made


def test_qimage_wraps_the_array_without_copying():
    array = np.zeros((4, 3, 3), dtype=np.uint8)
    image = qimage_from_array(array)
    array[0, 0] = (255, 0, 0)
    assert image.pixelColor(0, 0).red() == 255


def test_click_is_a_tap_in_device_pixels_with_its_element(qtbot):
    view = make_mirror(qtbot)
    made = gestures(view)
    point = view.widget_point(540, 400).toPoint()
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=point)
    (tap,) = made
    assert tap.type is ActionType.TAP and tap.screen == (1080, 2400)
    assert abs(tap.x - 540) <= 3 and abs(tap.y - 400) <= 5
    assert tap.element.resource_id == "p:id/wifi"


def test_hold_is_a_long_press_and_drag_is_a_swipe(qtbot):
    clock = FakeClock()
    view = make_mirror(qtbot, clock)
    made = gestures(view)
    start = view.widget_point(540, 1800).toPoint()
    qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=start)
    clock.now += 0.7
    qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=start + QPoint(3, 0))
    qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(view, start - QPoint(0, 100))
    clock.now += 0.25
    qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=start - QPoint(0, 200))
    press, swipe = made
    assert press.type is ActionType.LONG_PRESS and press.duration_ms >= 700
    assert swipe.type is ActionType.SWIPE and swipe.direction == "up"
    assert swipe.y - swipe.y2 > 600 and swipe.duration_ms == 250


def test_press_on_the_letterbox_is_ignored(qtbot):
    view = make_mirror(qtbot)
    made = gestures(view)
    qtbot.mouseClick(view, Qt.MouseButton.LeftButton, pos=QPoint(2, 300))
    assert made == []


def test_hover_highlights_the_element_under_the_pointer(qtbot):
    view = make_mirror(qtbot)
    qtbot.mouseMove(view, view.widget_point(100, 450).toPoint())
    assert view.hovered_element is not None and view.hovered_element.text == "Wi-Fi"
    view.set_hierarchy(None)  # busy: no stale highlight
    assert view.hovered_element is None


def test_task_panel_creates_and_edits_tasks_with_labels(qtbot, workspace):
    panel = TaskPanel()
    qtbot.addWidget(panel)
    panel.set_workspace(workspace)
    assert panel.task_id == ""  # no tasks yet: "New task"
    panel.id_edit.setText("alarm-7")
    panel.instruction_edit.setPlainText("uh, wake me up at seven")
    panel.normalized_edit.setText("Set an alarm for 7:00")
    panel.app_edit.setText("com.android.deskclock")
    panel.protocol_combo.setCurrentIndex(panel.protocol_combo.findData("online"))
    panel.scenario_combo.setCurrentIndex(panel.scenario_combo.findData("tool_assistance"))
    panel.semantics_list.item(3).setCheckState(Qt.CheckState.Checked)
    with qtbot.waitSignal(panel.task_saved) as saved:
        panel.save_button.click()
    assert saved.args == ["default", "alarm-7"]
    data = json.loads((workspace.suite_dir("default") / "alarm-7" / "task.json").read_text())
    assert data["normalized_instruction"] == "Set an alarm for 7:00"
    assert data["protocol"] == "online"
    assert data["labels"] == {
        "scenario": "tool_assistance",
        "syntax": [],
        "semantics": ["disfluency_correction"],
    }
    assert data["reset"]["package"] == "com.android.deskclock"
    assert panel.task_id == "alarm-7" and panel.id_edit.isReadOnly()
    # A new task with an existing id is refused, never overwriting the saved one.
    panel.task_combo.setCurrentIndex(0)
    panel.id_edit.setText("alarm-7")
    panel.instruction_edit.setPlainText("something else")
    with qtbot.waitSignal(panel.problem_occurred) as problem:
        panel.save_button.click()
    assert "already exists" in problem.args[0]
    assert workspace.load_task("default", "alarm-7").instruction == "uh, wake me up at seven"


def test_task_panel_reports_a_missing_instruction(qtbot, workspace):
    panel = TaskPanel()
    qtbot.addWidget(panel)
    panel.set_workspace(workspace)
    panel.id_edit.setText("t")
    with qtbot.waitSignal(panel.problem_occurred) as problem:
        assert panel.commit() is None
    assert "instruction" in problem.args[0]


def test_demo_browser_lists_steps_through_and_discards(qtbot, workspace, monkeypatch):
    write_demo(workspace, demo_id="d1")
    write_demo(workspace, demo_id="d2", finish=False)
    browser = DemoBrowser()
    qtbot.addWidget(browser)
    browser.resize(900, 700)
    browser.show()
    browser.set_workspace(workspace)
    task_item = browser.tree.topLevelItem(0)
    assert task_item.text(0) == "wifi  (2 demos)"
    assert "3 steps · complete" in task_item.child(0).text(0)
    assert "2 steps · incomplete" in task_item.child(1).text(0)
    assert browser.select_demo(workspace.demo_folder("wifi", "d1"))
    assert browser.viewer.has_image
    assert browser.step_label.text().startswith("Step 1 of 3: tap (540, 400) 'Wi-Fi'")
    browser.activateWindow()
    qtbot.waitUntil(browser.isActiveWindow)
    browser.tree.setFocus()
    qtbot.keyClick(browser.tree, Qt.Key.Key_Right)
    assert browser.step_index == 1 and "swipe up" in browser.step_label.text()
    qtbot.keyClick(browser.tree, Qt.Key.Key_Right)
    qtbot.keyClick(browser.tree, Qt.Key.Key_Right)  # stays on the last step
    assert browser.step_index == 2
    qtbot.keyClick(browser.tree, Qt.Key.Key_Left)
    assert browser.step_index == 1
    assert not browser.resume_button.isEnabled()  # complete demos do not resume
    browser.discard_button.click()
    assert browser.demo.status is DemoStatus.DISCARDED
    assert browser.tree.topLevelItem(0).text(0) == "wifi  (1 demo)"
    browser.discard_button.click()  # restore
    assert browser.demo.status is DemoStatus.COMPLETE
    # Deleting the trailing 'done' step leaves an incomplete demo that can be resumed.
    assert browser.delete_last_step(confirm=False)
    assert len(browser.demo.steps) == 2 and browser.demo.status is DemoStatus.INCOMPLETE
    with qtbot.waitSignal(browser.resume_requested) as resume:
        browser.resume_button.click()
    assert resume.args == [str(workspace.demo_folder("wifi", "d1"))]


def test_demo_browser_shows_an_unreadable_demo_without_failing(qtbot, workspace):
    write_demo(workspace, demo_id="good")
    bad = workspace.demos_dir / "wifi" / "bad"
    bad.mkdir()
    (bad / "demo.json").write_text("{")
    browser = DemoBrowser()
    qtbot.addWidget(browser)
    browser.set_workspace(workspace)
    assert browser.select_demo(bad)
    assert browser.demo is None and not browser.discard_button.isEnabled()


def test_the_demo_viewer_links_hierarchy_rows_and_the_screenshot_both_ways(qtbot, workspace):
    write_demo(workspace)
    browser = DemoBrowser()
    qtbot.addWidget(browser)
    browser.resize(1200, 800)
    browser.show()
    browser.set_workspace(workspace)
    assert browser.select_demo(workspace.demo_folder("wifi", "d1"))
    browser.view_tabs.setCurrentWidget(browser.hierarchy_view)
    view = browser.hierarchy_view
    # The step's tap landed on the Wi-Fi row: it is selected and outlined.
    assert view.selected is not None and view.selected.text == "Wi-Fi"
    assert view.tree.currentItem().text(2) == "Wi-Fi"
    # A row chosen in the tree lights up its bounds.
    root = view.tree.topLevelItem(0)
    view.tree.setCurrentItem(root)
    assert view.selected.class_name == "android.widget.FrameLayout"
    # A click on the screenshot selects the element there.
    screen = view.screen_view
    point = screen.widget_point(540, 420).toPoint()
    qtbot.mouseClick(screen, Qt.MouseButton.LeftButton, pos=point)
    assert view.tree.currentItem().text(1) == "wifi" and view.selected.text == "Wi-Fi"
    qtbot.mouseClick(
        screen, Qt.MouseButton.LeftButton, pos=screen.widget_point(540, 2000).toPoint()
    )
    assert view.selected.class_name == "android.widget.FrameLayout"


@pytest.mark.parametrize("window", [(400, 600), (1000, 1500)], ids=["small", "large"])
def test_a_drag_is_a_swipe_only_when_the_matcher_can_take_it(qtbot, window):
    """Just under the shortest swipe (device pixels) a drag is a tap or long press; just
    over it, a swipe that an agent repeating it matches on the edge built from it."""
    clock = FakeClock()
    view = make_mirror(qtbot, clock)
    view.resize(*window)
    made = gestures(view)
    screen = (1080, 2400)
    scale = view.image_rect().width / screen[0]
    shortest = shortest_swipe(screen) * scale  # in widget pixels at this size
    start = view.widget_point(540, 1800).toPoint()
    for held, pointed in ((0.1, ActionType.TAP), (0.7, ActionType.LONG_PRESS)):
        for widget_px in (math.floor(shortest) - 1, math.ceil(shortest) + 1):
            made.clear()
            qtbot.mousePress(view, Qt.MouseButton.LeftButton, pos=start)
            clock.now += held
            qtbot.mouseRelease(view, Qt.MouseButton.LeftButton, pos=start - QPoint(0, widget_px))
            (action,) = made
            if widget_px < shortest:
                assert action.type is pointed, (window, widget_px, action.to_json())
                continue
            assert action.type is ActionType.SWIPE, (window, widget_px, action.to_json())
            own = Edge(
                "own",
                "a",
                "b",
                MatchRule(ActionType.SWIPE, direction=action.direction),
                (EdgeSupport(MemberRef("d", 0), action),),
            )
            replayed = action_for_edge(own)
            for again in (replayed, replayed.normalized(), replayed.to_device(screen)):
                assert match_edges([own], again, screen=screen).edge is own
