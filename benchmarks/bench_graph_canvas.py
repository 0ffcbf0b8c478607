"""Benchmark: the Graphs tab's canvas on 8- and 30-node graphs (offscreen Qt).

1. Open: from ``open_task`` to the graph drawn and fitted (layout computed once).
2. Move: one Alt+arrow on the selected screen until the scene is redrawn with its edges
   (what every keyboard nudge or mouse drop costs: a move command and a redraw).
3. Split: one split from the inspector until the new node is placed beside its origin.

    .venv/bin/python benchmarks/bench_graph_canvas.py [--repeats 30]

Graphs are synthetic (START, four branches, DONE; no pictures), so the figures are the
canvas's own cost. Prints medians in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from graph_builder import io  # noqa: E402
from graph_builder.edits import SplitMembers  # noqa: E402
from graph_builder.model import (  # noqa: E402
    ActionType,
    Edge,
    MatchRule,
    MemberRef,
    Node,
    NodeKind,
    TaskGraph,
)
from recorder_app.qt.graph_editor import GraphEditorPage  # noqa: E402


def write_graph(task_dir: Path, n: int) -> None:
    """START, four branches side by side, DONE: ``n`` nodes; the middle ones hold 2 screens."""
    back = MatchRule(ActionType.BACK)

    def node(node_id: str, kind: NodeKind, *members: MemberRef) -> Node:
        return Node(node_id, kind, f"nodes/{node_id}.png", (1080, 2400), members)

    nodes = [node("start", NodeKind.START, MemberRef("d0", 0))]
    edges: list[Edge] = []
    per_branch = (n - 2) // 4
    for b in range(4):
        previous = "start"
        count = per_branch + (1 if b < (n - 2) % 4 else 0)
        for s in range(1, count + 1):
            node_id = f"b{b}s{s}"
            nodes.append(
                node(node_id, NodeKind.STATE, MemberRef(f"d{b}", s), MemberRef(f"e{b}", s))
            )
            edges.append(Edge(f"e{len(edges) + 1}", previous, node_id, back))
            previous = node_id
        edges.append(Edge(f"e{len(edges) + 1}", previous, "done", back))
    nodes.append(node("done", NodeKind.DONE, MemberRef("d0", 99)))
    task_dir.mkdir(parents=True)
    io.save_graph(TaskGraph(task_dir.name, tuple(nodes), tuple(edges)), task_dir)


def ms(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1000:.1f} ms"


def bench(app: QApplication, folder: Path, n: int, repeats: int) -> None:
    task = folder / f"task{n}"
    write_graph(task, n)
    page = GraphEditorPage()
    page.resize(1024, 640)
    page.show()
    opened, moved, split = [], [], []
    for _ in range(repeats):
        page.document.close()
        t0 = time.perf_counter()
        page.open_task(task)
        app.processEvents()
        opened.append(time.perf_counter() - t0)
    page.scene.select(["b1s1"])
    page.view.setFocus()
    for k in range(repeats):
        key = Qt.Key.Key_Right if k % 2 == 0 else Qt.Key.Key_Left
        t0 = time.perf_counter()
        QTest.keyClick(page.view, key, Qt.KeyboardModifier.AltModifier)
        app.processEvents()
        moved.append(time.perf_counter() - t0)
    for _ in range(repeats):
        t0 = time.perf_counter()
        page.apply(SplitMembers("b2s1", (MemberRef("e2", 1),), "bench_new"))
        app.processEvents()
        split.append(time.perf_counter() - t0)
        page.undo()
    print(f"{n:>2} nodes: open {ms(opened)} · move {ms(moved)} · split {ms(split)}")
    page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    with tempfile.TemporaryDirectory() as tmp:
        for n in (8, 30):
            bench(app, Path(tmp), n, args.repeats)


if __name__ == "__main__":
    main()
