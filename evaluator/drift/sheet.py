"""What ``elderbench drift`` leaves in ``--out``: both screenshots of every drift, the
results as JSON, and a sheet to read them by (markdown and HTML).

```
OUT/drift.json                         schema_version, suite, device, per task its paths
OUT/drift.md, OUT/drift.html           the sheet: one row per task, then each drift
OUT/<task>/<n>-<node>-expected.png     the node's screenshot in the graph
OUT/<task>/<n>-<node>-live.png         what the phone showed there (and -live.xml)
```

``n`` numbers the task's paths from 1. Every file is written atomically, under the
folder's lock.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluator.drift.walk import Drift, TaskDrift
from graph_builder.folder_lock import FolderLock
from graph_builder.io import atomic_write_bytes, atomic_write_json, atomic_write_text

SCHEMA_VERSION = 1


def results_json(
    results: Sequence[TaskDrift], *, suite: str, device: str, files: dict[int, tuple[str, str]]
) -> dict[str, Any]:
    """The JSON form of the results; ``files`` maps id(drift) to its two screenshots."""
    return {
        "schema_version": SCHEMA_VERSION,
        "suite": suite,
        "device": device,
        "drifted": sum(1 for r in results if r.drift is not None),
        "tasks": [_task_json(r, files) for r in results],
    }


def _task_json(result: TaskDrift, files: dict[int, tuple[str, str]]) -> dict[str, Any]:
    drift = result.drift
    return {
        "task": result.task_id,
        "status": result.status.value,
        "summary": result.headline(),
        "node": drift.node if drift else None,
        "reason": drift.reason.value if drift else None,
        "steps": result.steps,
        "seconds": round(result.seconds, 3),
        "error": result.error or None,
        "notes": list(result.notes),
        "paths": [
            {
                "demos": list(walk.path.demos),
                "edges": list(walk.path.edge_ids),
                "steps": walk.steps,
                "drift": _drift_json(walk.drift, files) if walk.drift else None,
            }
            for walk in result.walks
        ],
    }


def _drift_json(drift: Drift, files: dict[int, tuple[str, str]]) -> dict[str, Any]:
    expected, live = files.get(id(drift), (None, None))
    return {
        "node": drift.node,
        "reason": drift.reason.value,
        "detail": drift.detail,
        "edge": drift.edge,
        "similarity": drift.similarity,
        "expected_screenshot": expected,
        "live_screenshot": live,
    }


def write_sheet(
    out: Path, results: Sequence[TaskDrift], *, suite: str, device: str
) -> dict[str, Any]:
    """Write everything into ``out`` (created if missing); returns the JSON written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with FolderLock(out, purpose="elderbench drift"):
        files = _save_screens(out, results)
        data = results_json(results, suite=suite, device=device, files=files)
        atomic_write_json(out / "drift.json", data)
        atomic_write_text(out / "drift.md", markdown(data))
        atomic_write_text(out / "drift.html", page(data))
    return data


def _save_screens(out: Path, results: Sequence[TaskDrift]) -> dict[int, tuple[str, str]]:
    files: dict[int, tuple[str, str]] = {}
    for result in results:
        for number, walk in enumerate(result.walks, 1):
            drift = walk.drift
            if drift is None:
                continue
            stem = f"{result.task_id}/{number}-{drift.node}"
            atomic_write_bytes(out / f"{stem}-expected.png", drift.expected.png())
            atomic_write_bytes(out / f"{stem}-live.png", drift.live.png())
            xml = drift.live.hierarchy_xml()
            if xml is not None:
                atomic_write_text(out / f"{stem}-live.xml", xml)
            files[id(drift)] = (f"{stem}-expected.png", f"{stem}-live.png")
    return files


def markdown(data: dict[str, Any]) -> str:
    lines = [
        f"# Drift of {data['suite']} on {data['device']}",
        "",
        f"{data['drifted']} of {len(data['tasks'])} tasks drifted.",
        "",
        "| task | result | node | reason | detail |",
        "| --- | --- | --- | --- | --- |",
    ]
    for task in data["tasks"]:
        first = _first_drift(task)
        detail = first["detail"] if first else (task["error"] or "")
        lines.append(
            f"| {task['task']} | {task['status']} | {task['node'] or ''} | "
            f"{task['reason'] or ''} | {_cell(detail)} |"
        )
    for task in data["tasks"]:
        for path in task["paths"]:
            drift = path["drift"]
            if drift is None:
                continue
            lines += [
                "",
                f"## {task['task']}: {'+'.join(path['demos'])} at {drift['node']}",
                "",
                f"{drift['reason']}: {drift['detail']}",
                "",
                f"Similarity: {drift['similarity']}",
                "",
                "| graph | phone |",
                "| --- | --- |",
                f"| ![graph]({drift['expected_screenshot']}) "
                f"| ![phone]({drift['live_screenshot']}) |",
            ]
    return "\n".join(lines) + "\n"


def _first_drift(task: dict[str, Any]) -> dict[str, Any] | None:
    return next((p["drift"] for p in task["paths"] if p["drift"]), None)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def page(data: dict[str, Any]) -> str:
    e = html.escape
    rows = []
    for task in data["tasks"]:
        first = _first_drift(task)
        detail = first["detail"] if first else (task["error"] or "")
        rows.append(
            f"<tr class='{e(task['status'])}'><td>{e(task['task'])}</td>"
            f"<td>{e(task['status'])}</td><td>{e(task['node'] or '')}</td>"
            f"<td>{e(task['reason'] or '')}</td><td>{e(detail)}</td></tr>"
        )
    sections = []
    for task in data["tasks"]:
        for path in task["paths"]:
            drift = path["drift"]
            if drift is None:
                continue
            sections.append(
                f"<section><h2>{e(task['task'])}: {e('+'.join(path['demos']))} at "
                f"{e(drift['node'])}</h2><p><b>{e(drift['reason'])}</b>: {e(drift['detail'])}</p>"
                f"<p class='why'>{e(drift['similarity'])}</p><div class='pair'>"
                f"<figure><img src='{e(drift['expected_screenshot'])}' alt='graph'>"
                "<figcaption>graph</figcaption></figure>"
                f"<figure><img src='{e(drift['live_screenshot'])}' alt='phone'>"
                "<figcaption>phone</figcaption></figure></div></section>"
            )
    title = f"Drift of {data['suite']} on {data['device']}"
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{e(title)}</title><style>"
        "body{font-family:sans-serif;margin:2em}td,th{padding:4px 8px;border-bottom:1px solid #ddd}"
        "tr.drifted td:nth-child(2){color:#b3261e;font-weight:bold}"
        ".pair{display:flex;gap:1em}img{max-height:480px;border:1px solid #ccc}.why{color:#555}"
        f"</style></head><body><h1>{e(title)}</h1>"
        f"<p>{data['drifted']} of {len(data['tasks'])} tasks drifted.</p>"
        "<table><tr><th>task</th><th>result</th><th>node</th><th>reason</th><th>detail</th></tr>"
        + "".join(rows)
        + "</table>"
        + "".join(sections)
        + "</body></html>\n"
    )
