"""The Record tab's view-hierarchy tool: recording through the uiautomator2 server, the
fallback's reason in the status bar, and the choice kept between sessions."""

from __future__ import annotations

from PySide6.QtCore import Qt

from graph_builder import io
from graph_builder.hierarchy import load_hierarchy
from graph_builder.model import ActionType, DemoStatus
from recorder_app.connection import HIERARCHY_SETTING
from recorder_app.qt.app import studio_hierarchy
from tests.recorder_app.studio_driver import SERIAL, Recording, start_demo


def choose(window, hierarchy: str) -> None:
    combo = window.record_page.hierarchy_combo
    combo.setCurrentIndex(combo.findData(hierarchy))


def counting_dumps(virtual_server) -> list[list[str]]:
    commands = virtual_server.device(SERIAL).commands
    original = commands["uiautomator"]
    dumped: list[list[str]] = []

    def counted(inv):
        dumped.append(list(inv.args))
        return original(inv)

    commands["uiautomator"] = counted
    return dumped


def test_a_demo_recorded_through_the_u2_server(qtbot, studio, workspace, virtual_server, settings):
    window = studio()
    choose(window, "u2")
    assert settings.value(HIERARCHY_SETTING) == "u2"
    assert window.eval_page.hierarchy == "u2"  # the Evaluate tab's next run uses it too
    dumped = counting_dumps(virtual_server)
    rec = Recording(qtbot, window, virtual_server.phones[0])
    start_demo(rec, "settings-open")
    rec.tap("Settings")
    rec.wait_ready()
    rec.key(Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # task complete
    qtbot.waitUntil(lambda: not rec.page.recorder.recording, timeout=10_000)
    (folder,) = io.demo_dirs(workspace.demos_dir, "settings-open")
    demo = io.load_demo(folder)
    assert demo.status is DemoStatus.COMPLETE
    assert [s.action.type for s in demo.steps] == [ActionType.TAP, ActionType.DONE]
    first = demo.steps[0].observation
    assert first.hierarchy is not None and first.activity is not None
    assert any(e.label() == "Settings" for e in load_hierarchy(folder / first.hierarchy))
    assert dumped == []  # every screen's hierarchy came from the u2 server
    assert virtual_server.device(SERIAL).fs.read_bytes("/data/local/tmp/u2.jar")


def test_auto_says_in_the_status_bar_why_it_fell_back(qtbot, studio, virtual_server):
    def crashing_server(inv):
        inv.error("java.lang.SecurityException: instrumentation is disabled\n")
        return 1

    virtual_server.device(SERIAL).commands["app_process"] = crashing_server
    window = studio()
    choose(window, "auto")
    messages: list[str] = []
    window.record_page.message_posted.connect(lambda text, _ms: messages.append(text))
    rec = Recording(qtbot, window, virtual_server.phones[0])
    start_demo(rec, "settings-open")
    assert rec.page.recorder.screen is not None and rec.page.recorder.screen.hierarchy
    said = [m for m in messages if m.startswith("View hierarchy:")]
    assert len(said) == 1 and "instrumentation is disabled" in said[0]
    assert "uiautomator dump" in said[0]


def test_the_choice_is_kept_and_a_damaged_setting_falls_back(settings) -> None:
    assert studio_hierarchy(settings, None) == "uiautomator"
    assert studio_hierarchy(settings, "auto") == "auto"
    assert studio_hierarchy(settings, None) == "auto"  # the next session without the option
    settings.setValue(HIERARCHY_SETTING, "quick")
    assert studio_hierarchy(settings, None) == "uiautomator"
