"""The Graphs tab in small windows: at 1024x700 every control is reachable and the page
fits; at 800x500 no panel is squeezed into an unlabelled sliver."""

# ruff: noqa: F811  (the page fixture is imported, then asked for by name)
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QSplitter, QWidget

from recorder_app.qt.graph_editor import GraphEditorPage
from tests.recorder_app.test_graph_editor import (  # noqa: F401  (pytest fixtures)
    page,
    task_dir,
    template,
    ws,
)
from tests.recorder_app.test_main_window import make_window


def toolbar_actions(page: GraphEditorPage) -> list:  # type: ignore[type-arg]
    return [
        page.save_action,
        page.undo_action,
        page.redo_action,
        page.merge_action,
        page.delete_action,
        page.done_action,
        page.start_action,
        page.fit_action,
        page.zoom_in_action,
        page.zoom_out_action,
    ]


def shown_within(widget: QWidget, page: QWidget) -> bool:
    """Visible, and its whole rectangle inside the page (not cut off at an edge)."""
    if not widget.isVisible():
        return False
    rect = QRect(widget.mapTo(page, QPoint(0, 0)), widget.size())
    return page.rect().contains(rect)


def test_at_1024x700_every_graph_action_is_reachable_and_the_page_fits(qtbot, settings, ws) -> None:  # type: ignore[no-untyped-def]
    window = make_window(qtbot, settings)
    window.open_workspace(ws.root)
    page = window.pages["graphs"]
    assert isinstance(page, GraphEditorPage)
    window.show()
    window.show_page("graphs")
    window.resize(1024, 700)
    qtbot.waitExposed(window)
    assert page.open_task(task_dir(ws))
    # What the window's frame, menus, tabs and status bar leave the page at 1024x700
    # (other tabs may hold the window wider; the page must fit the 1024 px anyway).
    chrome = window.size() - page.size()
    room = QSize(1024, 700) - chrome
    hint = page.minimumSizeHint()
    assert hint.width() <= room.width() and hint.height() <= room.height(), (hint, room)
    assert window.height() == 700

    bar = page.toolbar
    assert shown_within(bar, page)
    for action in toolbar_actions(page):
        if action in bar.actions_shown():
            assert shown_within(bar.button(action), page), action.text()
        else:
            assert action in bar.overflow(), action.text()
    assert bar.overflow(), "the bar is narrower than its actions here: some are under More"
    assert shown_within(bar.more_button, page)
    # An action from the More menu works like its button.
    fit = page.fit_action if page.fit_action in bar.overflow() else bar.overflow()[-1]
    page.view.set_zoom(3.0)
    bar.more_menu.actions()[bar.more_menu.actions().index(fit)].trigger()
    if fit is page.fit_action:
        assert page.view.zoom <= 1.0

    # The possible merges get a list with room for several pairs.
    page.side_tabs.setCurrentWidget(page.merges)
    qtbot.mouseClick(page.merges.find_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.merges.pairs.count() > 0)
    pairs = page.merges.pairs
    assert shown_within(pairs, page)
    assert pairs.viewport().height() >= 4 * pairs.sizeHintForRow(0)
    for button in (page.merges.accept_button, page.merges.reject_button, page.merges.find_button):
        assert shown_within(button, page), button.text()
    for widget in (page.build_button, page.open_folder_button, page.view, page.header):
        assert shown_within(widget, page)


def splitter_panes(page: GraphEditorPage) -> list[QWidget]:
    out = []
    for splitter in page.findChildren(QSplitter):
        if splitter.isVisible():
            out.extend(splitter.widget(i) for i in range(splitter.count()))
    return out


def test_at_800x500_no_panel_collapses_into_a_sliver(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    page.resize(790, 430)  # what an 800x500 window leaves the tab
    page.scene.select(["n1"])  # the node inspector, with its own panes, is shown
    assert page.inspector.currentWidget() is page.inspector.node
    qtbot.wait(10)
    hint = page.minimumSizeHint()
    assert hint.width() <= 790 and hint.height() <= 430, hint
    panes = [p for p in splitter_panes(page) if p.isVisible()]
    assert len(panes) >= 5  # tasks, canvas, inspector and tabs, pairs and their pictures
    for pane in panes:
        size, least = pane.size(), pane.minimumSizeHint().expandedTo(pane.minimumSize())
        assert size.width() >= max(least.width(), 60), (pane.objectName(), size)
        assert size.height() >= max(least.height(), 40), (pane.objectName(), size)
    for splitter in page.findChildren(QSplitter):
        assert not splitter.childrenCollapsible()
    # The canvas keeps its keys in view; the minimap folds away on its own when short.
    assert page.view.strip.hint.isVisible() and page.view.viewport().height() >= 150
    assert page.toolbar.more_button.isVisible() and page.toolbar.overflow()
