"""The Graphs tab's canvas, driven through its widgets and keys: steady layouts, keyboard
selection and moves, Fit that keeps labels readable, a minimap that covers no node."""

# ruff: noqa: F811  (the page fixture is imported, then asked for by name)
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from graph_builder import io
from graph_builder.edits import MergeNodes
from graph_builder.model import ActionType, Edge, MatchRule, MemberRef, Node, NodeKind, TaskGraph
from recorder_app.qt.graph_editor import GraphEditorPage
from recorder_app.qt.graph_editor.scene import LABEL_PX
from recorder_app.qt.graph_editor.view import READABLE_PX
from tests.recorder_app.test_graph_editor import (  # noqa: F401  (pytest fixtures)
    click_node,
    graph_of,
    page,
    rebuild,
    template,
    ws,
)

# --------------------------------------------------------------------------- helpers


def positions(page: GraphEditorPage) -> dict[str, tuple[float, float]]:
    out = {}
    for node_id in page.scene.node_ids():
        pos = page.scene.node_item(node_id).pos()
        out[node_id] = (pos.x(), pos.y())
    return out


def on_screen(page: GraphEditorPage) -> dict[str, QPoint]:
    """Where each node's top-left is drawn in the viewport."""
    return {
        node_id: page.view.mapFromScene(page.scene.node_item(node_id).pos())
        for node_id in page.scene.node_ids()
    }


def frame(page: GraphEditorPage, node_id: str) -> QRectF:
    item = page.scene.node_item(node_id)
    return item.frame.translated(item.pos())


def overlapping(page: GraphEditorPage) -> list[tuple[str, str]]:
    ids = page.scene.node_ids()
    return [
        (a, b)
        for i, a in enumerate(ids)
        for b in ids[i + 1 :]
        if frame(page, a).adjusted(0, -20, 0, 0).intersects(frame(page, b).adjusted(0, -20, 0, 0))
    ]


def split_out(qtbot, page: GraphEditorPage, node_id: str, member: MemberRef) -> str:  # type: ignore[no-untyped-def]
    """Split ``member`` out of ``node_id`` with the inspector; returns the new node's id."""
    page.scene.select([node_id])
    inspector = page.inspector.node
    assert inspector.node_id == node_id
    inspector.set_ticked([member])
    before = set(page.scene.node_ids())
    qtbot.mouseClick(inspector.split_button, Qt.MouseButton.LeftButton)
    (new,) = set(page.scene.node_ids()) - before
    return new


# --------------------------------------------------------------------------- steady layouts


def test_a_merge_moves_no_other_node_on_screen(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    before, drawn = positions(page), on_screen(page)
    page.scene.select(["n2", "n3"])
    assert page.merge_selected()
    after = positions(page)
    assert "n3" not in after
    assert after == {i: p for i, p in before.items() if i != "n3"}
    assert on_screen(page) == {i: p for i, p in drawn.items() if i != "n3"}  # no scroll
    page.undo_action.trigger()
    assert positions(page) == before  # undo puts the merged node back where it was


def test_a_deleted_node_comes_back_where_it_was(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    before = positions(page)
    page.scene.select(["n3"])
    assert page.delete_selected()
    assert positions(page) == {i: p for i, p in before.items() if i != "n3"}
    page.undo_action.trigger()
    assert positions(page) == before


def test_a_split_node_is_placed_beside_the_original_on_screen(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    before = positions(page)
    n1 = graph_of(page).node("n1")
    new = split_out(qtbot, page, "n1", n1.members[-1])
    after = positions(page)
    assert {i: after[i] for i in before} == before  # nothing else moved
    x, y = after[new]
    assert x == before["n1"][0]  # in the original's column, the next free row
    assert abs(y - before["n1"][1]) <= 2 * frame(page, "n1").height() + 200
    assert overlapping(page) == []
    assert page.view.visible_scene_rect().contains(frame(page, new))
    assert graph_of(page).node(new).kind is NodeKind.STATE
    page.undo_action.trigger()
    assert new not in page.scene.node_ids() and positions(page) == before
    page.redo_action.trigger()
    assert positions(page)[new] == (x, y)  # redo: the same place again


def test_a_screen_split_out_of_done_that_the_demonstration_left_is_not_done(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    # A wrong merge: Display (which each demonstration left by a tap) into DONE.
    display = graph_of(page).node("n2").members[0]
    assert page.apply(MergeNodes("done", ("n2",)))
    new = split_out(qtbot, page, "done", display)
    assert graph_of(page).node(new).kind is NodeKind.STATE
    assert page.scene.node_item(new).look.kind is NodeKind.STATE
    assert overlapping(page) == []


# --------------------------------------------------------------------------- keyboard


def press(qtbot, page: GraphEditorPage, key: Qt.Key, *mods: Qt.KeyboardModifier) -> None:  # type: ignore[no-untyped-def]
    modifiers = Qt.KeyboardModifier.NoModifier
    for mod in mods:
        modifiers |= mod
    qtbot.keyClick(page.view, key, modifiers)


def test_arrow_keys_select_the_nearest_screen_in_that_direction(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    page.view.setFocus()
    assert page.scene.selected_node_ids() == []
    press(qtbot, page, Qt.Key.Key_Right)
    assert page.scene.selected_node_ids() == ["start"]  # nothing selected: START first
    assert page.inspector.node.node_id == "start"
    press(qtbot, page, Qt.Key.Key_Right)
    assert page.scene.selected_node_ids() == ["n1"]
    press(qtbot, page, Qt.Key.Key_Down)
    assert page.scene.selected_node_ids() == ["n3"]
    press(qtbot, page, Qt.Key.Key_Up)
    assert page.scene.selected_node_ids() == ["n1"]
    press(qtbot, page, Qt.Key.Key_Right)
    assert page.scene.selected_node_ids() == ["n2"]
    press(qtbot, page, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert sorted(page.scene.selected_node_ids()) == ["done", "n2"]
    press(qtbot, page, Qt.Key.Key_Right)  # nothing further right: the selection stays
    assert sorted(page.scene.selected_node_ids()) == ["done", "n2"]
    assert "Alt+arrows" in page.view.toolTip() and "Arrows" in page.view.toolTip()


def test_alt_arrows_move_the_selected_screens_as_one_undo_step(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    before = positions(page)
    page.scene.select(["n1", "n3"])
    page.view.setFocus()
    for _ in range(3):
        press(qtbot, page, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    press(qtbot, page, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    after = positions(page)
    for node_id in ("n1", "n3"):
        assert after[node_id] == (before[node_id][0] + 30, before[node_id][1] + 10)
    assert {i: after[i] for i in ("start", "n2", "done")} == {
        i: before[i] for i in ("start", "n2", "done")
    }
    assert sorted(page.scene.selected_node_ids()) == ["n1", "n3"]
    assert page.document.modified and page.document.graph == io.load_graph(page.document.task_dir)
    assert page.undo_action.text() == "Undo move n1, n3"
    page.undo_action.trigger()
    assert positions(page) == before  # the four nudges were one step
    page.redo_action.trigger()
    assert positions(page) == after
    press(
        qtbot,
        page,
        Qt.Key.Key_Left,
        Qt.KeyboardModifier.AltModifier,
        Qt.KeyboardModifier.ShiftModifier,
    )
    assert positions(page)["n1"] == (after["n1"][0] - 50, after["n1"][1])


def test_moved_screens_are_saved_and_come_back_when_the_graph_is_reopened(qtbot, page, ws) -> None:  # type: ignore[no-untyped-def]
    graph_file = page.document.task_dir / io.GRAPH_FILE
    saved_graph = graph_file.read_bytes()
    page.scene.select(["n3"])
    page.view.setFocus()
    press(qtbot, page, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    moved = positions(page)
    assert page.save()
    assert graph_file.read_bytes() == saved_graph  # the graph itself did not change
    layout = io.load_layout(page.document.task_dir)
    assert layout is not None and {p.node_id for p in layout.places} == set(moved)
    page.document.close()
    assert page.scene.node_ids() == []
    assert page.open_task(page.tasks.current_entry().task_dir)
    assert positions(page) == moved
    # A rebuild keeps the file; the rebuilt graph's nodes stay where they were.
    report, _ = rebuild(qtbot, page)
    assert report.written and io.load_layout(page.document.task_dir) == layout
    assert positions(page) == moved


def test_an_unreadable_layout_file_is_laid_out_afresh_and_kept_on_save(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    before = positions(page)
    task = page.document.task_dir
    newer = '{"schema_version": 9, "task_id": "task1", "places": []}'
    (task / io.LAYOUT_FILE).write_text(newer)
    page.document.close()
    assert page.open_task(task)
    assert positions(page) == before  # the layered layout, as at first
    page.scene.select(["n3"])
    assert page.nudge_selected(0, 50)
    said: list[str] = []
    page.message_posted.connect(said.append)
    assert page.save()
    assert (task / io.LAYOUT_FILE).read_text() == newer  # a newer studio's file is not lost
    assert "node positions not saved" in said[-1] and "layout.json" in said[-1]


def test_a_screen_dragged_with_the_mouse_moves_its_edges_and_undoes_in_one_step(
    qtbot, page
) -> None:  # type: ignore[no-untyped-def]
    before = positions(page)
    edge = next(e for e in graph_of(page).edges if e.target == "n3")
    path_before = page.scene.edge_item(edge.id).sceneBoundingRect()
    item = page.scene.node_item("n3")
    page.view.centerOn(item)
    viewport = page.view.viewport()
    start = page.view.mapFromScene(item.sceneBoundingRect().center())
    end = start + QPoint(80, 60)
    qtbot.mousePress(viewport, Qt.MouseButton.LeftButton, pos=start)
    for k in range(1, 5):  # in steps, as a hand moves
        event = QMouseEvent(
            QEvent.Type.MouseMove,
            QPointF(start + (end - start) * k / 4),
            QPointF(viewport.mapToGlobal(start + (end - start) * k / 4)),
            Qt.MouseButton.NoButton,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(viewport, event)
    # the edge follows while the screen is dragged
    assert page.scene.edge_item(edge.id).sceneBoundingRect() != path_before
    qtbot.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=end)
    qtbot.waitUntil(lambda: page.document.undo_stack.canUndo())
    after = positions(page)
    zoom = page.view.zoom
    assert after["n3"][0] == pytest.approx(before["n3"][0] + 80 / zoom, abs=2 / zoom + 1)
    assert after["n3"][1] == pytest.approx(before["n3"][1] + 60 / zoom, abs=2 / zoom + 1)
    assert {i: after[i] for i in before if i != "n3"} == {i: before[i] for i in before if i != "n3"}
    assert page.undo_action.text() == "Undo move n3"
    page.undo_action.trigger()
    assert positions(page) == before


def test_an_edge_follows_a_moved_screen(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    edge = next(e for e in graph_of(page).edges if e.source == "n2" and e.target == "done")
    end_before = page.scene.edge_item(edge.id).sceneBoundingRect()
    page.scene.select(["done"])
    page.view.setFocus()
    press(
        qtbot,
        page,
        Qt.Key.Key_Down,
        Qt.KeyboardModifier.AltModifier,
        Qt.KeyboardModifier.ShiftModifier,
    )
    end_after = page.scene.edge_item(edge.id).sceneBoundingRect()
    assert end_after.bottom() == pytest.approx(end_before.bottom() + 50, abs=15)


# --------------------------------------------------------------------------- fit and minimap


def _node(node_id: str, kind: NodeKind, member: MemberRef) -> Node:
    return Node(node_id, kind, f"nodes/{node_id}.png", (1080, 2400), (member,))


def make_graph(task_dir: Path, n: int) -> None:
    """``n`` nodes without pictures: START, then branches side by side; with 8 nodes the
    last column (five DONE screens) is the tallest, so the graph reaches every corner."""
    back = MatchRule(ActionType.BACK)
    nodes = [_node("start", NodeKind.START, MemberRef("d0", 0))]
    edges: list[Edge] = []

    def link(source: str, target: str) -> None:
        edges.append(Edge(f"e{len(edges) + 1}", source, target, back))

    if n == 8:
        for a, ends in (("a", 3), ("b", 2)):
            nodes.append(_node(a, NodeKind.STATE, MemberRef(a, 1)))
            link("start", a)
            for k in range(ends):
                nodes.append(_node(f"{a}_done{k}", NodeKind.DONE, MemberRef(f"{a}{k}", 2)))
                link(a, f"{a}_done{k}")
    else:
        branches, length = 4, (n - 2) // 4
        for b in range(branches):
            previous = "start"
            for step in range(1, length + 1):
                nodes.append(_node(f"b{b}s{step}", NodeKind.STATE, MemberRef(f"d{b}", step)))
                link(previous, f"b{b}s{step}")
                previous = f"b{b}s{step}"
            link(previous, "done")
        nodes.append(_node("done", NodeKind.DONE, MemberRef("d0", 99)))
    assert len(nodes) == n
    task_dir.mkdir(parents=True)
    io.save_graph(TaskGraph(task_dir.name, tuple(nodes), tuple(edges)), task_dir)


def covered_by_minimap(page: GraphEditorPage) -> list[str]:
    """Nodes whose visible part the minimap hides (both in the view's coordinates)."""
    view, minimap = page.view, page.view.minimap
    shown = QRect(minimap.mapTo(view, QPoint(0, 0)), minimap.size())
    viewport = view.viewport()
    offset = viewport.mapTo(view, QPoint(0, 0))
    out = []
    for node_id in page.scene.node_ids():
        rect = view.mapFromScene(page.scene.node_item(node_id).sceneBoundingRect()).boundingRect()
        rect = rect.intersected(viewport.rect())
        if not rect.isEmpty() and rect.translated(offset).intersects(shown):
            out.append(node_id)
    return out


def label_px_on_screen(page: GraphEditorPage) -> float:
    return page.view.mapFromScene(QRectF(0, 0, LABEL_PX, LABEL_PX)).boundingRect().height()


@pytest.mark.parametrize("size", [(1024, 640), (1600, 940)])  # the tab in 1024x700, 1600x1000
@pytest.mark.parametrize("n", [8, 30])
def test_fit_keeps_labels_readable_and_the_minimap_covers_no_node(qtbot, tmp_path, n, size) -> None:  # type: ignore[no-untyped-def]
    make_graph(tmp_path / "suite" / f"task{n}", n)
    page = GraphEditorPage()
    qtbot.addWidget(page)
    page.resize(*size)
    page.show()
    qtbot.waitExposed(page)
    assert page.open_task(tmp_path / "suite" / f"task{n}")
    assert len(page.scene.node_ids()) == n
    page.fit_action.trigger()
    assert page.view.minimap.isVisible()
    assert label_px_on_screen(page) >= READABLE_PX
    assert covered_by_minimap(page) == []
    # What does not fit at a readable size is a scroll away, from START on.
    assert page.view.visible_scene_rect().contains(frame(page, "start"))
    assert all(page.scene.sceneRect().contains(frame(page, i)) for i in page.scene.node_ids())
    for bar in (page.view.horizontalScrollBar(), page.view.verticalScrollBar()):
        bar.setValue(bar.maximum())  # the far corner, where an overlay would sit
    assert covered_by_minimap(page) == []
    page.view.zoom_out()
    page.view.zoom_out()
    assert covered_by_minimap(page) == []
    # At 100 %, a node scrolled into the canvas's bottom-right corner is not hidden.
    page.view.set_zoom(1.0)
    corner = frame(page, page.scene.node_ids()[n // 2]).bottomRight()
    viewport = page.view.viewport().rect()
    page.view.centerOn(corner - QPointF(viewport.width() / 2 - 6, viewport.height() / 2 - 6))
    assert covered_by_minimap(page) == []
    # Folded, the minimap gives its room back to the canvas.
    height = page.view.viewport().height()
    qtbot.mouseClick(page.view.strip.fold_button, Qt.MouseButton.LeftButton)
    assert not page.view.minimap.isVisible() and page.view.viewport().height() > height
