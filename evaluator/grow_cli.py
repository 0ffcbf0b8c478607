"""Growing a graph from the command line: ``import run`` and ``explore``.

elderbench import run RUN_DIR --task ID -o DEMOS_DIR [--demo-id ID]
elderbench explore SUITE --task ID --group G --device SERIAL[@HOST:PORT] [-o DEMOS_DIR]
                   [--script FILE] [--rest-on-graph] [--annotator NAME] [--demo-id ID]
                   [--hierarchy uiautomator|u2|auto]

``import run`` turns a verified successful online episode into a demonstration
(evaluator/run_import.py); ``explore`` records the branch of an audit group marked
``valid`` (evaluator/explore.py). Either way the next ``elderbench build`` merges it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    from devices.hierarchy import add_hierarchy_argument
    from graph_builder.cli import import_formats

    run = import_formats(subparsers).add_parser(
        "run",
        help="import a verified successful online episode of an evaluation run",
        description="Turn the online episode of TASK in RUN_DIR into a demonstration of "
        "that task, when it is a verified success (a person's verdict wins over the "
        "judges). Offline episodes, failures and traces with missing files are refused.",
    )
    run.add_argument("source", type=Path, metavar="RUN_DIR")
    run.add_argument("--task", required=True, metavar="ID", help="the task whose episode")
    run.add_argument("-o", "--output", type=Path, required=True, metavar="DEMOS_DIR")
    run.add_argument("--demo-id", metavar="ID", help="default: run-<run folder name>")
    run.set_defaults(func=run_import_run)

    p = subparsers.add_parser(
        "explore",
        help="record the branch of an audit group marked valid as a new demonstration",
        description="Drive the phone along the task graph from START to the node of an "
        "audit group marked 'valid', perform the group's action and record the whole as a "
        "demonstration: finished by --script, else left incomplete for a person to finish "
        "in the studio. The next build merges it (docs/evaluation.md).",
    )
    p.add_argument("suite", type=Path, metavar="SUITE")
    p.add_argument("--task", required=True, metavar="ID")
    p.add_argument("--group", required=True, metavar="G", help="the audit group (marked valid)")
    p.add_argument("--device", required=True, metavar="SERIAL", help="SERIAL or SERIAL@HOST:PORT")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="DEMOS_DIR",
        help="where the demonstration goes (default: the demos/ the suite ships)",
    )
    p.add_argument(
        "--script", type=Path, metavar="FILE", help="JSON list of the actions after the branch"
    )
    p.add_argument(
        "--rest-on-graph",
        action="store_true",
        help="then, from the node of the graph the phone is on, follow a demonstrated way to DONE",
    )
    p.add_argument("--annotator", default="", metavar="NAME")
    p.add_argument("--demo-id", metavar="ID", help="default: explore-<group>")
    add_hierarchy_argument(p)
    p.set_defaults(func=run_explore)


def run_import_run(args: argparse.Namespace) -> int:
    from evaluator.run_import import import_run

    result = import_run(
        args.source, task_id=args.task, demos_root=args.output, demo_id=args.demo_id
    )
    print(f"imported {len(result.demo.steps)} steps into {result.folder}")
    print(f"task: {result.task_file}")
    for note in result.notes:
        print(f"  note: {note}")
    return 0


def run_explore(args: argparse.Namespace) -> int:
    from devices.address import open_device
    from evaluator.explore import explore, load_script
    from graph_builder.io import shipped_demos

    demos = args.output or shipped_demos(args.suite)
    if demos is None:
        print(
            f"elderbench explore: error: {args.suite} ships no demos/; give -o DEMOS_DIR",
            file=sys.stderr,
        )
        return 2
    script = load_script(args.script) if args.script is not None else None

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    with open_device(args.device, hierarchy=args.hierarchy) as device:
        explored = explore(
            args.suite,
            args.task,
            args.group,
            device,
            demos,
            script=script,
            rest_on_graph=args.rest_on_graph,
            annotator=args.annotator,
            demo_id=args.demo_id,
            progress=progress,
        )
        if device.hierarchy_note:
            progress(f"note: {device.hierarchy_note}")
    state = explored.demo.status.value
    print(f"recorded {len(explored.demo.steps)} steps ({state}) into {explored.folder}")
    if script is None and not args.rest_on_graph:
        print("finish it in the studio (resume the demonstration), then build the task")
    else:
        print(f"next: elderbench build {demos} -o {args.suite} --task {args.task}")
    return 0
