"""``elderbench drift``: has an app update broken a finished suite's graphs?

elderbench drift SUITE --device SERIAL[@HOST:PORT] [--tasks ID ...] [--json] [--out DIR]
                 [--hierarchy uiautomator|u2|auto]

Walks every demonstrated path of each task that has a graph, on the device, and prints
per task ``unchanged`` or ``drifted at NODE: reason (detail)``. Progress goes to stderr.
Exit status: 0 when nothing drifted, 1 when a task drifted or could not be checked, 2 on
bad input (no such suite, task or device).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    from devices.hierarchy import add_hierarchy_argument

    p = subparsers.add_parser(
        "drift",
        help="walk a suite's demonstrated paths on a phone and report where the app changed",
        description="Walk each task graph's demonstrated paths on a device, from the clean "
        "start an online run uses, and report per task 'unchanged' or where it drifted: "
        "screen differs, element gone or moved, unexpected dialog (docs/drift.md).",
    )
    p.add_argument("suite", type=Path, metavar="SUITE", help="the suite folder")
    p.add_argument("--device", required=True, metavar="SERIAL", help="SERIAL or SERIAL@HOST:PORT")
    p.add_argument(
        "--tasks",
        nargs="+",
        default=[],
        metavar="ID",
        help="only these tasks (default: all tasks that have a graph)",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the screenshots and the sheet go (default: ./drift-<suite>)",
    )
    add_hierarchy_argument(p)
    p.set_defaults(func=run_drift)


def _selected(suite: Path, wanted: list[str]) -> list[tuple[Any, Path]] | str:
    """The (task, folder) pairs to walk, or why the input is bad."""
    from graph_builder.errors import GraphBuilderError
    from graph_builder.io import GRAPH_FILE, load_task, suite_task_dirs

    if not suite.is_dir():
        return f"{suite} is not a folder; give the suite folder (the one holding suite.json)"
    folders = {d.name: d for d in suite_task_dirs(suite)}
    unknown = [t for t in wanted if t not in folders]
    if unknown:
        return f"no task {', '.join(unknown)} in {suite}"
    chosen = wanted or [name for name, d in folders.items() if (d / GRAPH_FILE).is_file()]
    missing = [t for t in chosen if not (folders[t] / GRAPH_FILE).is_file()]
    if missing:
        return f"{', '.join(missing)} has no {GRAPH_FILE} to walk (build it first)"
    if not chosen:
        return f"no task in {suite} has a {GRAPH_FILE} to walk"
    try:
        return [(load_task(folders[t]), folders[t]) for t in chosen]
    except GraphBuilderError as exc:
        return str(exc)


def run_drift(args: argparse.Namespace) -> int:
    from devices.address import open_device
    from devices.errors import DeviceError
    from evaluator.drift.sheet import write_sheet
    from evaluator.drift.walk import TaskStatus, check_suite

    selected = _selected(args.suite, list(dict.fromkeys(args.tasks)))
    if isinstance(selected, str):
        print(f"elderbench drift: error: {selected}", file=sys.stderr)
        return 2
    try:
        device = open_device(args.device, hierarchy=args.hierarchy)
    except DeviceError as exc:
        print(f"elderbench drift: error: cannot open {args.device}: {exc}", file=sys.stderr)
        return 2

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    with device:
        results = check_suite(selected, device, progress=progress)
        if device.hierarchy_note:
            progress(f"note: {device.hierarchy_note}")
    suite_name = args.suite.resolve().name
    out = args.out or Path(f"drift-{suite_name}")
    data = write_sheet(out, results, suite=suite_name, device=args.device)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for result in results:
            print(f"{result.task_id}: {result.headline()}")
        print(f"{data['drifted']} of {len(results)} tasks drifted; sheet: {out / 'drift.html'}")
    clean = all(r.status is TaskStatus.UNCHANGED for r in results)
    return 0 if clean else 1
