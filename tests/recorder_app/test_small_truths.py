"""Small truths of issue 23: counts and plurals that say what is there, confirmations
that say where a file went, Help that leads somewhere, labels that are never just cut."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication, QMessageBox

from elderbench import __version__
from graph_builder import io
from graph_builder.build import TaskBuildReport
from graph_builder.model import Action, DemoStatus
from graph_builder.validate import Problem, Severity
from recorder_app.qt.demo_browser import DemoBrowser
from recorder_app.qt.graph_editor.dialogs import BuildReportDialog
from recorder_app.qt.step_viewer import StepViewer
from tests.recorder_app.helpers import png_bytes, write_demo
from tests.recorder_app.test_graph_editor import (  # noqa: F401  (pytest fixtures)
    TASK,
    click_node,
    graph_of,
    page,
    template,
    ws,
)
from tests.recorder_app.test_main_window import make_window

README = Path(__file__).resolve().parents[2] / "README.md"


def test_splitting_one_screen_says_one_screen(qtbot, page):  # noqa: F811
    click_node(qtbot, page, "n1")
    inspector = page.inspector.node
    inspector.set_ticked([graph_of(page).node("n1").members[-1]])
    qtbot.mouseClick(inspector.split_button, Qt.MouseButton.LeftButton)
    assert page.undo_action.text() == "Undo split 1 screen out of n1"


def test_the_build_report_says_written_once_and_counts_the_warning_it_lists(qtbot, tmp_path):
    warning = Problem(Severity.WARNING, "node n3 has no way to DONE", node_id="n3")
    report = TaskBuildReport("t1", tmp_path, True, demos_used=1, nodes=4, problems=(warning,))
    dialog = BuildReportDialog([report], {})
    qtbot.addWidget(dialog)
    text = dialog.plain_text()
    assert "t1: 1 demo, 4 nodes, 0 edges, 0 merges, 1 warning, 0 errors -> written" in text
    assert text.count("written") == 1
    assert "node n3 has no way to DONE" in text


def test_the_demos_column_counts_the_demonstrations_a_build_uses(qtbot, page, ws):  # noqa: F811
    discarded = io.demo_dirs(ws.demos_dir, TASK)[-1]
    io.set_demo_status(discarded, DemoStatus.DISCARDED)
    page.tasks.refresh()
    (entry,) = [e for e in page.tasks.entries() if e.task_id == TASK]
    assert entry.demo_count == 1 and entry.left_out == "1 discarded"
    (item,) = page.tasks.findItems(TASK, Qt.MatchFlag.MatchRecursive)
    assert item.text(2) == "1"
    assert "not used: 1 discarded" in item.toolTip(2)


def test_graph_thumbnails_are_wide_enough_to_read(page):  # noqa: F811
    assert page.scene.node_item("n1").boundingRect().width() >= 160


def test_a_gif_export_says_where_it_went_and_opens_it(qtbot, workspace, tmp_path, monkeypatch):
    write_demo(workspace)
    browser = DemoBrowser()
    qtbot.addWidget(browser)
    browser.show()
    browser.set_workspace(workspace)
    assert browser.select_demo(workspace.demo_folder("wifi", "d1"))
    assert not browser.gif_row.isVisible()
    out = tmp_path / "demo.gif"
    with qtbot.waitSignal(browser.gif_written, timeout=30_000):
        browser.export_gif(out)
    assert out.is_file() and browser.gif_row.isVisible()
    assert browser.gif_row.label.text() == f"GIF written to: {out}"
    opened: list[QUrl] = []
    monkeypatch.setattr(
        QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url) or True)
    )
    assert browser.gif_row.open_button.text() == "Open GIF"
    qtbot.mouseClick(browser.gif_row.open_button, Qt.MouseButton.LeftButton)
    assert [u.toLocalFile() for u in opened] == [str(out)]


def test_help_has_about_with_the_version_and_opens_the_documentation(
    qtbot, settings, workspace, monkeypatch
):
    window = make_window(qtbot, settings)
    window.open_workspace(workspace.root)
    help_menu = next(
        a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Help"
    )
    titles = [a.text() for a in help_menu.actions()]
    assert "About ElderBench Studio" in titles and "Documentation" in titles
    window.about_action.trigger()
    box = next(w for w in QApplication.topLevelWidgets() if w.objectName() == "aboutBox")
    assert isinstance(box, QMessageBox) and f"ElderBench Studio {__version__}" in box.text()
    box.close()
    opened: list[QUrl] = []
    monkeypatch.setattr(
        QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url) or True)
    )
    window.docs_action.trigger()
    (url,) = opened
    docs = Path(url.toLocalFile())
    assert docs.name == "docs" and (docs / "formats.md").is_file()
    assert str(docs) in window.statusBar().currentMessage()


def test_the_readme_puts_the_workspace_lock_where_the_studio_takes_it(qtbot, settings, workspace):
    window = make_window(qtbot, settings)
    window.open_workspace(workspace.root)
    assert (workspace.root / ".lock").is_file()
    assert not (workspace.root / ".studio" / ".lock").exists()
    assert "`<workspace>/.lock`" in README.read_text(encoding="utf-8")


def test_a_long_typed_text_is_never_only_shown_cut(qtbot):
    viewer = StepViewer()
    qtbot.addWidget(viewer)
    viewer.resize(220, 320)
    viewer.show()
    text = "fourteen pills of the blue kind, twice a day after meals"
    viewer.show_step(png_bytes((10, 10, 10)), (1080, 2400), Action.type_text(text))
    assert viewer.toolTip() == f"type “{text}”"
    viewer.clear("nothing")
    assert viewer.toolTip() == ""
