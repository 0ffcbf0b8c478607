"""The Graphs tab, driven through its widgets: open, edit, undo, validate, save, build."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from graph_builder import io
from graph_builder.build import build_task
from graph_builder.edits import AddEdge
from graph_builder.model import (
    Action,
    ActionType,
    DemoStatus,
    Edge,
    MatchRule,
    MemberRef,
    NodeKind,
    PinKind,
)
from graph_builder.similarity import SimilaritySettings
from recorder_app.qt.graph_editor import GraphEditorPage
from recorder_app.qt.graph_editor.dialogs import NewEdgeDialog
from recorder_app.qt.graph_editor.layout import layered_layout
from recorder_app.qt.graph_editor.scene import EdgeItem, NodeItem
from recorder_app.recording.workspace import Workspace
from tests.graph_builder.gb_synthetic import SIZE, Sketch, tap_row, write_demo

TASK = "task1"
HOME = Sketch("Home", ("Settings", "Contacts", "Clock"))
SETTINGS = Sketch("Settings", ("Display", "Sound", "Battery"))
DISPLAY = Sketch("Display", ("Brightness", "Dark theme", "Font size"))
DARK = Sketch("Display", DISPLAY.rows, dialog="Dark theme is on")
CONTACTS = Sketch("Contacts", ("Alice", "Bob", "Carol"))


def write_demos(demos_root: Path) -> None:
    """Two paths to dark mode; the second detours through Contacts and scrolls Settings.

    The graph: start -> n1 (Settings) -> n2 (Display) -> done, start -> n3 (Contacts),
    n3 -back-> start, and a swipe loop on n1.
    """
    x, y = HOME.row_center("Settings")
    write_demo(
        demos_root,
        "d1",
        [
            (HOME, tap_row(HOME, "Settings")),
            (SETTINGS, tap_row(SETTINGS, "Display")),
            (DISPLAY, tap_row(DISPLAY, "Dark theme")),
            (DARK, Action.done()),
        ],
        task_id=TASK,
    )
    write_demo(
        demos_root,
        "d2",
        [
            (HOME.with_clock("12:05"), tap_row(HOME, "Contacts")),
            (CONTACTS, Action.back()),
            (HOME.with_clock("12:06"), Action.tap(x + 20, y + 5, screen=SIZE)),
            (SETTINGS.with_clock("12:07"), Action.swipe(135, 400, 135, 200, screen=SIZE)),
            (SETTINGS, tap_row(SETTINGS, "Display")),
            (DISPLAY, tap_row(DISPLAY, "Dark theme")),
            (DARK.with_clock("12:09"), Action.done()),
        ],
        task_id=TASK,
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with two demos and their built graph, made once and copied per test."""
    root = tmp_path_factory.mktemp("template") / "ws"
    ws = Workspace.open(root)
    write_demos(ws.demos_dir)
    report = build_task(ws.demos_dir, TASK, ws.suite_dir("default"), settings=SimilaritySettings())
    assert report.written
    return root


@pytest.fixture
def ws(template: Path, tmp_path: Path) -> Workspace:
    shutil.copytree(template, tmp_path / "ws")
    return Workspace.open(tmp_path / "ws")


@pytest.fixture
def page(qtbot, ws: Workspace) -> GraphEditorPage:
    page = GraphEditorPage()
    qtbot.addWidget(page)
    page.resize(1400, 900)
    page.show()
    qtbot.waitExposed(page)
    page.set_workspace(ws)
    assert page.open_task(task_dir(ws))
    return page


def task_dir(ws: Workspace) -> Path:
    return ws.suite_dir("default") / TASK


def graph_of(page: GraphEditorPage):  # type: ignore[no-untyped-def]
    graph = page.document.graph
    assert graph is not None
    return graph


def click_node(qtbot, page: GraphEditorPage, node_id: str, *, ctrl: bool = False) -> None:  # type: ignore[no-untyped-def]
    item = page.scene.node_item(node_id)
    page.view.centerOn(item)
    pos = page.view.mapFromScene(item.sceneBoundingRect().center())
    modifier = Qt.KeyboardModifier.ControlModifier if ctrl else Qt.KeyboardModifier.NoModifier
    qtbot.mouseClick(page.view.viewport(), Qt.MouseButton.LeftButton, modifier, pos)


def answer(monkeypatch, button: QMessageBox.StandardButton) -> list[str]:  # type: ignore[no-untyped-def]
    """Make QMessageBox.question answer ``button``; returns the titles asked."""
    asked: list[str] = []

    def question(parent, title, text, *args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(title)
        return button

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    return asked


# --------------------------------------------------------------------------- opening


def test_the_scene_shows_one_item_per_node_and_edge_laid_out_by_depth(page, ws) -> None:  # type: ignore[no-untyped-def]
    graph = graph_of(page)
    assert [n.id for n in graph.nodes] == ["start", "n1", "n2", "n3", "done"]
    items = page.scene.items()
    assert sorted(i.node_id for i in items if isinstance(i, NodeItem)) == sorted(
        n.id for n in graph.nodes
    )
    assert sorted(i.edge_id for i in items if isinstance(i, EdgeItem)) == sorted(
        e.id for e in graph.edges
    )
    assert all(page.scene.node_item(n.id).has_picture for n in graph.nodes)
    x = {n.id: page.scene.node_item(n.id).pos().x() for n in graph.nodes}
    assert x["start"] < x["n1"] == x["n3"] < x["n2"] < x["done"]  # columns by depth
    assert layered_layout(graph)["done"] == (3, 0)
    assert page.scene.node_item("done").look.kind is NodeKind.DONE
    kinds = {e.rule.action_type for e in graph.edges}
    assert {ActionType.TAP, ActionType.BACK, ActionType.SWIPE} <= kinds
    assert page.problems.problem_count() == 0
    assert "task1" in page.header.text() and "5 nodes" in page.header.text()


def test_any_suite_folder_can_be_opened(qtbot, page, ws, tmp_path) -> None:  # type: ignore[no-untyped-def]
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(ws.suite_dir("default"), elsewhere)
    page.open_suite_folder(elsewhere)
    assert page.document.task_dir == elsewhere / TASK
    assert len(graph_of(page).nodes) == 5
    assert [e.task_dir for e in page.tasks.entries()][-1] == elsewhere / TASK


def test_a_broken_graph_file_is_reported_not_raised(qtbot, page, ws, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    shown: list[str] = []
    monkeypatch.setattr(
        "recorder_app.qt.graph_editor.page.show_problem",
        lambda parent, title, text: shown.append(text),
    )
    broken = ws.suite_dir("default") / "broken"
    broken.mkdir()
    (broken / io.GRAPH_FILE).write_text("{")
    assert not page.open_task(broken)
    assert shown and "not valid JSON" in shown[0]
    assert page.document.graph is None and page.scene.node_ids() == []


# --------------------------------------------------------------------------- editing


def test_merge_selected_nodes_then_undo_and_redo(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    before = graph_of(page)
    click_node(qtbot, page, "n2")
    click_node(qtbot, page, "n3", ctrl=True)
    assert sorted(page.scene.selected_node_ids()) == ["n2", "n3"]
    assert page.merge_action.isEnabled()
    page.merge_action.trigger()
    merged = graph_of(page)
    assert "n3" not in page.scene.node_ids() and len(page.scene.node_ids()) == 4
    assert set(merged.node("n2").members) == set(before.node("n2").members) | set(
        before.node("n3").members
    )
    assert merged.pins[-1].kind is PinKind.TOGETHER
    assert page.document.modified and "unsaved" in page.header.text()
    assert page.undo_action.text().startswith("Undo merge")

    page.undo_action.trigger()
    assert graph_of(page) == before
    assert sorted(page.scene.node_ids()) == sorted(n.id for n in before.nodes)
    assert not page.document.modified
    page.redo_action.trigger()
    assert graph_of(page) == merged


def test_keyboard_shortcuts_reach_the_actions(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    page.activateWindow()
    qtbot.waitUntil(lambda: page.isActiveWindow())
    click_node(qtbot, page, "n2")
    qtbot.keyClick(page.view, Qt.Key.Key_D)
    assert graph_of(page).node("n2").kind is NodeKind.DONE
    qtbot.keyClick(page.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert graph_of(page).node("n2").kind is NodeKind.STATE
    modifiers = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(page.view, Qt.Key.Key_Z, modifiers)
    assert graph_of(page).node("n2").kind is NodeKind.DONE
    zoom = page.view.zoom
    qtbot.keyClick(page.view, Qt.Key.Key_Plus)
    assert page.view.zoom > zoom
    qtbot.keyClick(page.view, Qt.Key.Key_F)
    assert page.view.zoom <= 1.0
    assert "(D)" in page.done_action.toolTip() and "(Ctrl+S)" in page.save_action.toolTip()
    page.hide()  # another tab: single-key shortcuts must not edit a graph nobody sees
    assert not page.done_action.isEnabled()


def test_split_ticked_members_into_a_new_node(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    click_node(qtbot, page, "n1")
    inspector = page.inspector.node
    assert page.inspector.currentWidget() is inspector and inspector.node_id == "n1"
    members = graph_of(page).node("n1").members
    assert inspector.members.count() == len(members) == 3
    assert not inspector.split_button.isEnabled()
    moving = members[-1]
    inspector.set_ticked([moving])
    assert inspector.split_button.isEnabled()
    qtbot.mouseClick(inspector.split_button, Qt.MouseButton.LeftButton)
    graph = graph_of(page)
    new = [n for n in graph.nodes if moving in n.members]
    assert len(new) == 1 and new[0].id not in ("n1", "n2", "n3")
    assert moving not in graph.node("n1").members
    assert graph.pins[-1].kind is PinKind.APART
    assert new[0].id in page.scene.node_ids()
    assert page.scene.node_item(new[0].id).has_picture  # drawn from the demo's step
    page.undo_action.trigger()
    assert graph_of(page).node("n1").members == members


def test_node_inspector_shows_members_hierarchy_and_similarity(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    click_node(qtbot, page, "n1")
    inspector = page.inspector.node
    assert inspector.similarity.topLevelItemCount() == 2  # each non-representative member
    row = inspector.similarity.topLevelItem(0)
    assert row.text(1) == "same" and float(row.text(2)) > 0.8
    assert inspector.hierarchy.topLevelItemCount() >= 1
    texts = []
    stack = [
        inspector.hierarchy.topLevelItem(i) for i in range(inspector.hierarchy.topLevelItemCount())
    ]
    while stack:
        item = stack.pop()
        texts.append(item.text(2))
        stack += [item.child(k) for k in range(item.childCount())]
    assert "Display" in texts
    assert "com.example.app/.Main" in inspector.title.text()
    # Rows and the screenshot are linked: a click on "Display" selects its row.
    inspector.tabs.setCurrentIndex(1)
    view = inspector.hierarchy_view
    (display,) = [e for e in view.hierarchy.elements if e.text == "Display"]
    screen = view.screen_view
    qtbot.mouseClick(
        screen, Qt.MouseButton.LeftButton, pos=screen.widget_point(*display.bounds.center).toPoint()
    )
    assert view.selected is not None and view.selected.bounds.contains(*display.bounds.center)
    assert view.tree.currentItem() is not None


def test_delete_the_only_edge_to_done_lists_problems_live(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    graph = graph_of(page)
    (to_done,) = [e for e in graph.edges if e.target == "done"]
    page.scene.select(edge_ids=[to_done.id])
    assert page.inspector.currentWidget() is page.inspector.edge
    page.delete_action.trigger()
    assert to_done.id not in page.scene.edge_ids()
    texts = page.problems.problem_texts()
    assert any("no DONE node can be reached from node start" in t for t in texts)
    assert any("node done cannot be reached from START" in t for t in texts)
    assert page.scene.node_item("n2").look.problem  # flagged on the canvas too
    # clicking a problem selects what it is about
    row = next(
        i for i in range(page.problems.count()) if "from node n1" in page.problems.item(i).text()
    )
    item = page.problems.item(row)
    qtbot.mouseClick(
        page.problems.viewport(),
        Qt.MouseButton.LeftButton,
        pos=page.problems.visualItemRect(item).center(),
    )
    assert page.scene.selected_node_ids() == ["n1"]
    page.undo_action.trigger()
    assert page.problems.problem_count() == 0


def test_delete_a_node_removes_its_edges_in_one_undo_step(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    before = graph_of(page)
    click_node(qtbot, page, "n3")
    page.delete_action.trigger()
    graph = graph_of(page)
    assert "n3" not in [n.id for n in graph.nodes]
    assert all("n3" not in (e.source, e.target) for e in graph.edges)
    page.undo()
    assert graph_of(page) == before


def test_toggle_done_and_set_start(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    click_node(qtbot, page, "n2")
    page.done_action.trigger()
    assert graph_of(page).node("n2").kind is NodeKind.DONE
    assert page.scene.node_item("n2").look.kind is NodeKind.DONE
    page.done_action.trigger()
    assert graph_of(page).node("n2").kind is NodeKind.STATE
    click_node(qtbot, page, "n1")
    page.start_action.trigger()
    graph = graph_of(page)
    assert graph.start is not None and graph.start.id == "n1"
    assert graph.node("start").kind is NodeKind.STATE
    page.undo()
    assert graph_of(page).start.id == "start"  # type: ignore[union-attr]


def test_edge_rule_is_edited_in_place_and_undoable(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    graph = graph_of(page)
    tap = next(e for e in graph.edges if e.source == "start" and e.target == "n1")
    page.scene.select(edge_ids=[tap.id])
    inspector = page.inspector.edge
    assert inspector.edge_id == tap.id and inspector.overlay.has_image
    assert inspector.screen_choice.count() == 1 + len(tap.support)
    inspector.radius.setValue(80)
    assert graph_of(page).edge(tap.id).rule.radius == 80
    inspector.screen_choice.setCurrentIndex(1)  # a demonstrated step's own screen
    assert inspector.overlay.has_image
    page.undo()
    assert graph_of(page).edge(tap.id).rule.radius == tap.rule.radius
    assert inspector.radius.value() == tap.rule.radius


def test_ctrl_z_in_the_tolerance_box_undoes_the_graph_edit(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    page.activateWindow()
    qtbot.waitUntil(lambda: page.isActiveWindow())
    tap = next(e for e in graph_of(page).edges if e.source == "start" and e.target == "n1")
    page.scene.select(edge_ids=[tap.id])
    spin = page.inspector.edge.radius
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "120")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert graph_of(page).edge(tap.id).rule.radius == 120
    qtbot.keyClick(spin, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # focus still there
    assert graph_of(page).edge(tap.id).rule.radius == tap.rule.radius
    assert spin.value() == tap.rule.radius
    modifiers = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(spin, Qt.Key.Key_Z, modifiers)
    assert graph_of(page).edge(tap.id).rule.radius == 120


def test_drag_from_a_node_handle_adds_an_edge_with_the_chosen_action(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    before = len(graph_of(page).edges)
    page.view.fit_all()
    port = page.scene.node_item("n2").port
    target = page.scene.node_item("n3")
    start = page.view.mapFromScene(port.scenePos())
    end = page.view.mapFromScene(target.sceneBoundingRect().center())
    viewport = page.view.viewport()
    qtbot.mousePress(viewport, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(viewport, (start + end) / 2)
    qtbot.mouseMove(viewport, end)
    qtbot.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=end)
    dialog = page.edge_dialog
    assert isinstance(dialog, NewEdgeDialog)
    assert (dialog.source, dialog.target) == ("n2", "n3")
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    assert not ok.isEnabled()  # a tap needs a point first
    dialog.set_point(500, 250)
    assert ok.isEnabled() and dialog.rule().bounds is not None  # the row under the point
    dialog.set_type(ActionType.TYPE)
    assert not ok.isEnabled()
    dialog.texts.setPlainText("hello\nhi there")
    assert ok.isEnabled()
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    graph = graph_of(page)
    assert len(graph.edges) == before + 1
    edge = graph.edges[-1]
    assert (edge.source, edge.target, edge.rule.texts) == ("n2", "n3", ("hello", "hi there"))
    assert page.scene.selected_edge_ids() == [edge.id]


# --------------------------------------------------------------------------- saving


def test_save_writes_a_graph_that_loads_back_equal(qtbot, page, ws) -> None:  # type: ignore[no-untyped-def]
    click_node(qtbot, page, "n1")
    page.inspector.node.set_ticked([graph_of(page).node("n1").members[0]])  # the representative
    page.inspector.node.split_button.click()
    click_node(qtbot, page, "n2")
    page.done_action.trigger()
    assert page.save_action.isEnabled()
    page.save_action.trigger()
    saved = io.load_graph(task_dir(ws))
    assert saved == graph_of(page)
    assert not page.document.modified
    for node in saved.nodes:  # the split-off node and re-pictured n1 have images
        assert (task_dir(ws) / node.screenshot).read_bytes().startswith(b"\x89PNG")
    assert not list(task_dir(ws).glob(".graph.json.*"))  # no temporary file left


def test_saving_an_invalid_graph_asks_first(qtbot, page, ws, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    before = (task_dir(ws) / io.GRAPH_FILE).read_bytes()
    click_node(qtbot, page, "done")
    page.done_action.trigger()  # no DONE node left: an error
    assert any("no DONE node" in t for t in page.problems.problem_texts())
    asked = answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    assert not page.save()
    assert asked == ["Save a graph with errors?"]
    assert (task_dir(ws) / io.GRAPH_FILE).read_bytes() == before
    assert page.document.modified
    answer(monkeypatch, QMessageBox.StandardButton.Save)
    assert page.save()
    assert io.load_graph(task_dir(ws)).done_nodes == ()


def test_unsaved_edits_are_offered_for_saving_when_switching(qtbot, page, ws, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    other = ws.suite_dir("default") / "other"
    shutil.copytree(task_dir(ws), other)
    page.tasks.refresh()
    click_node(qtbot, page, "n2")
    page.done_action.trigger()
    asked = answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    page.tasks.select_task_dir(other)
    assert asked == ["Unsaved graph edits"]
    assert page.document.task_dir == task_dir(ws)  # kept, with the edit
    assert page.tasks.current_entry().task_id == TASK
    assert graph_of(page).node("n2").kind is NodeKind.DONE
    asked = answer(monkeypatch, QMessageBox.StandardButton.Discard)
    page.tasks.select_task_dir(other)
    assert page.document.task_dir == other
    assert io.load_graph(task_dir(ws)).node("n2").kind is NodeKind.STATE  # discarded
    asked.clear()
    assert page.can_close() and asked == []  # nothing unsaved now: no question


# --------------------------------------------------------------------------- building


def test_build_button_builds_a_graph_from_demos_in_a_worker(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    ws = Workspace.open(tmp_path / "fresh")
    write_demos(ws.demos_dir)
    page = GraphEditorPage()
    qtbot.addWidget(page)
    page.show()
    page.set_workspace(ws)
    (entry,) = page.tasks.entries()
    assert entry.task_id == TASK and not entry.has_graph and entry.demo_count == 2
    page.tasks.select_task_dir(entry.task_dir)
    assert page.document.graph is None and "has no graph yet" in page.header.text()
    assert page.build_button.isEnabled()
    with qtbot.waitSignal(page.build_finished, timeout=60_000) as finished:
        qtbot.mouseClick(page.build_button, Qt.MouseButton.LeftButton)
        assert page.building and not page.build_button.isEnabled()
        assert page.progress.isVisible() and page.progress.maximum() == 0  # busy
    (report,) = finished.args[0]
    assert report.written and report.nodes == 5
    assert page.progress.value() == page.progress.maximum() == 1
    assert len(graph_of(page).nodes) == 5 and len(page.scene.node_ids()) == 5
    assert page.report_dialog is not None
    assert "task1: 2 demos" in page.report_dialog.plain_text()
    page.report_dialog.close()


def test_rebuild_keeps_manual_decisions_and_reports_the_stale_ones(
    qtbot, page, ws, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    # A split of d2's Settings screen, and a merge of Contacts into Display.
    click_node(qtbot, page, "n1")
    page.inspector.node.set_ticked([MemberRef("d2", 4)])
    page.inspector.node.split_button.click()
    click_node(qtbot, page, "n2")
    click_node(qtbot, page, "n3", ctrl=True)
    page.merge_action.trigger()
    page.save()
    pins = io.load_graph(task_dir(ws)).pins
    assert [p.kind for p in pins] == [PinKind.APART, PinKind.TOGETHER]

    def build_and_wait():  # type: ignore[no-untyped-def]
        with qtbot.waitSignal(page.build_finished, timeout=60_000) as finished:
            page.build_action.trigger()
        page.report_dialog.close()
        return finished.args[0][0]

    report = build_and_wait()
    assert report.written and report.stale_pins == ()
    graph = graph_of(page)
    holder = [n for n in graph.nodes if MemberRef("d2", 1) in n.members]
    assert MemberRef("d1", 2) in holder[0].members  # Contacts still merged with Display
    assert MemberRef("d2", 4) not in [m for n in graph.nodes for m in n.members if n.id == "n1"]

    # Without d2, both decisions name screens that are gone: the report says so.
    io.set_demo_status(ws.demos_dir / TASK / "d2", DemoStatus.DISCARDED)
    with qtbot.waitSignal(page.build_finished, timeout=60_000) as finished:
        page.build_action.trigger()
    report = finished.args[0][0]
    assert len(report.stale_pins) == 2
    text = page.report_dialog.plain_text()
    assert "Manual decisions applied in full: 0 of 2" in text
    assert "no longer apply in full" in text and "d2#4" in text


def test_edits_wait_for_a_running_build(qtbot, page, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(page.build_finished, timeout=60_000):
        page.build_action.trigger()
        assert page.building
        assert not page.done_action.isEnabled() and not page.save_action.isEnabled()
        click_node(qtbot, page, "n2")
        assert not page.toggle_done()  # refused while the graph file is being replaced
        assert graph_of(page).node("n2").kind is NodeKind.STATE
    page.report_dialog.close()
    assert not page.building and page.save_action.isEnabled()


# --------------------------------------------------------------------------- main window


def test_the_main_window_has_the_graphs_tab_with_its_menus(
    qtbot, settings, ws, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    import socket

    from recorder_app.connection import DeviceConnection
    from recorder_app.qt.main_window import StudioMainWindow

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    window = StudioMainWindow(settings, DeviceConnection(port=port), poll_ms=200)
    qtbot.addWidget(window)
    window.open_workspace(ws.root)
    page = window.pages["graphs"]
    assert isinstance(page, GraphEditorPage)
    titles = [a.text() for a in window.menuBar().actions()]
    assert "&Edit" in titles and "&Graph" in titles
    window.show()
    window.show_page("graphs")
    assert page.open_task(task_dir(ws))
    # On another tab the menus still work (and bring the graph to the front); the
    # single-key shortcuts do not.
    window.show_page("record")
    build = page.menu_action(page.build_action)
    assert build.isEnabled() and not page.build_action.isEnabled()
    assert build.text().endswith("\tCtrl+B") and build.shortcut().isEmpty()
    page.menu_action(page.fit_action).trigger()
    assert window.tabs.currentWidget() is page
    click_node(qtbot, page, "n2")
    page.done_action.trigger()
    asked = answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    window.close()
    assert asked == ["Unsaved graph edits"] and window.isVisible()
    answer(monkeypatch, QMessageBox.StandardButton.Discard)
    assert window.close()


def test_minimap_moves_the_view(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    page.view.set_zoom(2.0)
    minimap = page.view.minimap
    assert minimap.isVisible()
    before = page.view.visible_scene_rect().center()
    target = page.scene.node_item("done").sceneBoundingRect().center()
    qtbot.mouseClick(
        minimap.viewport(), Qt.MouseButton.LeftButton, pos=minimap.mapFromScene(target)
    )
    after = page.view.visible_scene_rect().center()
    assert (after - target).manhattanLength() < (before - target).manhattanLength()


def test_a_suite_with_its_own_demos_uses_them(qtbot, page, ws, tmp_path) -> None:  # type: ignore[no-untyped-def]
    shipped = tmp_path / "shipped"
    shutil.copytree(ws.suite_dir("default"), shipped)
    shutil.copytree(ws.demos_dir, shipped / "demos")
    shutil.rmtree(ws.demos_dir)  # only the suite's own copy is left
    page.open_suite_folder(shipped)
    entry = page.tasks.current_entry()
    assert entry.demos_root == shipped / "demos"
    assert entry.demo_count == len(io.demo_dirs(shipped / "demos", TASK)) > 0
    member = graph_of(page).nodes[0].members[0]
    assert page.document.sources.member_observation(member) is not None


def rebuild(qtbot, page: GraphEditorPage):  # type: ignore[no-untyped-def]
    """Press Build and wait for its report; returns the report and closes its dialog."""
    with qtbot.waitSignal(page.build_finished, timeout=60_000) as finished:
        page.build_action.trigger()
    text = page.report_dialog.plain_text()
    page.report_dialog.close()
    (report,) = finished.args[0]
    return report, text


def test_the_build_report_says_which_hand_edits_a_rebuild_kept(qtbot, page, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    tap = next(e for e in graph_of(page).edges if e.source == "start" and e.target == "n1")
    page.scene.select(edge_ids=[tap.id])
    page.inspector.edge.radius.setValue(80)
    page.save()
    asked = answer(monkeypatch, QMessageBox.StandardButton.Yes)
    report, text = rebuild(qtbot, page)
    rebuilt = next(e for e in graph_of(page).edges if e.source == "start" and e.target == "n1")
    assert asked == ["Rebuild over hand edits"] and rebuilt.rule.radius == 80
    assert "Hand edits kept" in text and f"the edited rule of edge {tap.id}" in text
    assert "radius 80" in text and "Built with the settings stored in the previous graph" in text


def test_two_rebuilds_are_byte_identical_match_their_report_and_undo(
    qtbot, page, ws, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    graph_file = task_dir(ws) / io.GRAPH_FILE
    tap = next(e for e in graph_of(page).edges if e.source == "start" and e.target == "n1")
    page.scene.select(edge_ids=[tap.id])
    page.inspector.edge.radius.setValue(80)  # a rule edit and an edge drawn by hand
    assert page.apply(AddEdge(Edge("e99", "n2", "n1", MatchRule(ActionType.BACK))))
    page.save()
    edited = graph_file.read_bytes()
    asked = answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    report, _ = rebuild(qtbot, page)
    assert asked == ["Rebuild over hand edits"] and not report.written
    assert graph_file.read_bytes() == edited  # cancelled: nothing written

    answer(monkeypatch, QMessageBox.StandardButton.Yes)
    first, text = rebuild(qtbot, page)
    once = graph_file.read_bytes()
    second, _ = rebuild(qtbot, page)
    assert graph_file.read_bytes() == once  # idempotent: the same bytes
    graph = io.load_graph(task_dir(ws))
    assert all(len(e.rule.points) <= len(e.support) for e in graph.edges if e.support)
    # The report matches the graph: the drawn edge is kept and said to be kept.
    assert any(e.id == "e99" and not e.support for e in graph.edges)
    assert "edge e99, drawn by hand, as e99 (n2 -> n1)" in first.hand_edits.kept
    assert first.hand_edits.dropped == () and "Bounds(" not in text
    assert all("drawn by hand" in k or "edited rule" in k for k in first.hand_edits.kept)
    assert graph_of(page) == graph and not page.document.modified

    # Each rebuild is one undoable step: undo twice brings back the edited graph.
    assert page.undo_action.text() == "Undo rebuild from the demonstrations"
    page.undo_action.trigger()
    assert graph_of(page) == io.load_graph(task_dir(ws)) and page.document.modified
    page.undo_action.trigger()
    assert page.document.undo_stack.canUndo()  # the edits before the rebuilds are still there
    answer(monkeypatch, QMessageBox.StandardButton.Save)
    assert page.save()
    assert graph_file.read_bytes() == edited


def test_the_cli_and_the_studio_rebuild_the_same_demonstrations_into_the_same_bytes(
    qtbot, ws, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    from elderbench.cli import main

    suite = ws.suite_dir("default")
    tuned = SimilaritySettings(tap_radius=70.0, text_threshold=90.0)
    assert build_task(ws.demos_dir, TASK, suite, settings=tuned).written
    shutil.copytree(suite, tmp_path / "cli")
    assert main(["build", str(ws.demos_dir), "-o", str(tmp_path / "cli")]) == 0
    page = GraphEditorPage()
    qtbot.addWidget(page)
    page.show()
    qtbot.waitExposed(page)
    page.set_workspace(ws)
    assert page.open_task(task_dir(ws))
    report, text = rebuild(qtbot, page)
    assert report.written and report.settings_origin == "the settings stored in the previous graph"
    assert "Built with the settings stored in the previous graph" in text
    studio = (task_dir(ws) / io.GRAPH_FILE).read_bytes()
    assert studio == (tmp_path / "cli" / TASK / io.GRAPH_FILE).read_bytes()
    assert io.load_graph(task_dir(ws)).meta["settings"]["tap_radius"] == 70.0


def test_an_unreadable_demo_is_named_and_the_studio_builds_without_it_only_when_asked(
    qtbot, page, ws, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    graph_file = task_dir(ws) / io.GRAPH_FILE
    before = graph_file.read_bytes()
    broken = ws.demos_dir / TASK / "d2" / io.DEMO_FILE
    broken.write_bytes(broken.read_bytes()[:50])
    asked = answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    report, text = rebuild(qtbot, page)
    assert asked == ["Demonstrations cannot be read"] and not report.written
    assert f"cannot read {broken}" in text and graph_file.read_bytes() == before
    asked = answer(monkeypatch, QMessageBox.StandardButton.Yes)
    report, _ = rebuild(qtbot, page)
    assert asked[0] == "Demonstrations cannot be read" and report.written
    assert io.load_graph(task_dir(ws)).meta["demos"] == ("d1",)
    assert graph_of(page).meta["demos"] == ("d1",)


def test_saving_is_refused_while_a_build_holds_the_suite_and_names_it(
    qtbot, page, ws, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from graph_builder.folder_lock import FolderLock

    shown: list[str] = []
    monkeypatch.setattr(
        "recorder_app.qt.graph_editor.page.show_problem",
        lambda parent, title, text: shown.append(text),
    )
    graph_file = task_dir(ws) / io.GRAPH_FILE
    before = graph_file.read_bytes()
    click_node(qtbot, page, "n2")
    page.done_action.trigger()
    with FolderLock(ws.suite_dir("default"), purpose="elderbench build (in a terminal)"):
        assert not page.save()
    assert shown and "in use by elderbench build (in a terminal)" in shown[0]
    assert graph_file.read_bytes() == before and page.document.modified
    assert page.save() and io.load_graph(task_dir(ws)).node("n2").kind is NodeKind.DONE
