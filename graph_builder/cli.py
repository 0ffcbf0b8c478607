"""The ``build`` and ``import`` subcommands.

elderbench build DEMOS_DIR -o SUITE_DIR [--task ID ...] [--settings FILE] [--explain]
                     [--jobs N] [--force] [--skip-unreadable]
elderbench import llamatouch|droidbot FOLDER --task ID -o DEMOS_DIR [--demo-id ID]
elderbench import colorbench GRAPH_JSON --task ID -o SUITE_DIR --images DIR --start IMAGE
                     --done IMAGE [--done IMAGE ...] --instruction TEXT

Packages above this one add formats of their own to ``import`` through
``import_formats`` (the evaluator adds ``import run``).
"""

from __future__ import annotations

import argparse
import sys
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from graph_builder.build import TaskBuildReport


# The FORMAT subcommands of each `import` parser made by `register`.
_IMPORT_FORMATS: weakref.WeakKeyDictionary[argparse.ArgumentParser, Any] = (
    weakref.WeakKeyDictionary()
)


def import_formats(subparsers: Any) -> Any:
    """The ``import`` command's FORMAT subcommands (``add_parser`` adds one), for a
    package above this one; ``register`` must have run on ``subparsers``."""
    return _IMPORT_FORMATS[subparsers.choices["import"]]


def register(subparsers: Any) -> None:
    build = subparsers.add_parser(
        "build",
        help="merge recorded demonstrations into task graphs",
        description="Merge the complete demonstrations under DEMOS_DIR/<task>/ into task "
        "graphs written to SUITE_DIR/<task>/ (graph.json, nodes/, task.json).",
    )
    build.add_argument("demos", type=Path, metavar="DEMOS_DIR")
    build.add_argument("-o", "--output", type=Path, required=True, metavar="SUITE_DIR")
    build.add_argument(
        "--task",
        action="append",
        dest="tasks",
        metavar="ID",
        help="build only this task (repeatable); default: every task",
    )
    build.add_argument(
        "--settings",
        type=Path,
        metavar="FILE",
        help="JSON file of similarity settings (docs/graph_builder.md); default: a task "
        "that has a graph is rebuilt with the settings stored in it, a new one with the defaults",
    )
    build.add_argument(
        "--explain",
        action="store_true",
        help="print every merge decision with its scores, the possible merges to decide "
        "(`elderbench constrain`) and the mixed and split nodes",
    )
    build.add_argument(
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="worker processes building tasks side by side (default: one per core)",
    )
    build.add_argument(
        "--force",
        action="store_true",
        help="write a graph with errors even over a valid existing graph",
    )
    build.add_argument(
        "--skip-unreadable",
        action="store_true",
        help="build without demonstrations whose demo.json cannot be read (default: such "
        "a task is not built and keeps its graph)",
    )
    build.set_defaults(func=_run_build)

    from graph_builder.importers import IMPORTERS

    imp = subparsers.add_parser(
        "import",
        help="import foreign trajectories as demonstrations",
        description="Convert a trajectory folder of another dataset into a demonstration "
        "under DEMOS_DIR/<task>/, with DEMOS_DIR/<task>/task.json made from its instruction "
        "when the task has none yet.",
    )
    formats = imp.add_subparsers(title="formats", metavar="FORMAT", required=True)
    _IMPORT_FORMATS[imp] = formats
    for name in IMPORTERS:
        fmt = formats.add_parser(name, help=f"import a {name} trajectory folder")
        fmt.add_argument("source", type=Path, metavar="TRACE_DIR")
        fmt.add_argument("--task", required=True, metavar="ID", help="task id for the demo")
        fmt.add_argument("-o", "--output", type=Path, required=True, metavar="DEMOS_DIR")
        fmt.add_argument("--demo-id", metavar="ID", help="default: the folder's name")
        fmt.set_defaults(func=_run_import, importer=name)
    colorbench = formats.add_parser(
        "colorbench",
        help="import the task between two screenshots of a ColorBench graph.json as a task graph",
    )
    colorbench.add_argument("source", type=Path, metavar="GRAPH_JSON")
    colorbench.add_argument("--task", required=True, metavar="ID", help="task id")
    colorbench.add_argument("-o", "--output", type=Path, required=True, metavar="SUITE_DIR")
    colorbench.add_argument(
        "--images", type=Path, required=True, metavar="DIR", help="the graph's screenshots"
    )
    colorbench.add_argument("--start", required=True, metavar="IMAGE", help="the first screen")
    colorbench.add_argument(
        "--done", action="append", required=True, metavar="IMAGE", help="a final screen"
    )
    colorbench.add_argument("--instruction", required=True, help="the task's instruction")
    colorbench.set_defaults(func=_run_colorbench)


class _ProgressBar:
    """A one-line text bar on stderr."""

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self.stream, self.width = stream, width

    def __call__(self, done: int, total: int, what: str) -> None:
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        end = "\n" if done >= total else ""
        self.stream.write(f"\r[{bar}] {done}/{total} {what[:40]:<40}{end}")
        self.stream.flush()


def _run_build(args: argparse.Namespace) -> int:
    from graph_builder.build import build_workspace, default_jobs
    from graph_builder.similarity import load_settings

    settings = load_settings(args.settings) if args.settings else None
    if not args.demos.is_dir():
        print(f"elderbench build: {args.demos} is not a folder of demonstrations", file=sys.stderr)
        return 2
    reports = build_workspace(
        args.demos,
        args.output,
        settings=settings,
        tasks=args.tasks,
        force=args.force,
        skip_unreadable=args.skip_unreadable,
        jobs=args.jobs or default_jobs(),
        progress=_ProgressBar(sys.stderr),
    )
    if not reports:
        print(f"no demonstrations found under {args.demos} (expected <task>/<demo>/demo.json)")
        return 1
    for report in reports:
        _print_report(report, explain=args.explain)
        if args.explain and report.written:
            from graph_builder.review import review_task

            for line in review_task(report.output, args.demos).lines():
                print(f"  {line}")
    return 0 if all(r.written for r in reports) else 1


def _print_report(report: TaskBuildReport, *, explain: bool) -> None:
    print(report.summary())
    if report.settings_origin:
        print(f"  settings: {report.settings_origin}")
    for note in report.cleaned:
        print(f"  {note}")
    for note in report.skipped:
        print(f"  skipped {note}")
    for warning in report.warnings:
        print(f"  warning: {warning}")
    for problem in report.problems:
        print(f"  {problem}")
    for kept in report.hand_edits.kept:
        print(f"  kept {kept}")
    for dropped in report.hand_edits.dropped:
        print(f"  dropped {dropped}")
    for outcome in report.constraints:
        print(f"  constraint {outcome.describe()}")
    if report.written and not report.task_source:
        print(
            "  note: no task.json found; wrote a minimal offline one from the "
            "demonstrations (add labels, criteria and the protocol in the studio)"
        )
    if explain:
        steps = len({r.partition(": ")[0] for r in report.repairs})
        print(f"  hierarchy repairs: {len(report.repairs)} in {steps} steps")
        for decision in report.decisions:
            print(f"  {decision.describe()}")


def _run_colorbench(args: argparse.Namespace) -> int:
    from graph_builder.importers.colorbench import import_colorbench

    result = import_colorbench(
        args.source,
        task_id=args.task,
        suite_dir=args.output,
        images=args.images,
        start=args.start,
        done=args.done,
        instruction=args.instruction,
    )
    graph = result.graph
    print(f"imported {len(graph.nodes)} nodes and {len(graph.edges)} edges into {result.folder}")
    for note in result.notes:
        print(f"  note: {note}")
    return 0


def _run_import(args: argparse.Namespace) -> int:
    from graph_builder.importers import IMPORTERS

    result = IMPORTERS[args.importer](
        args.source, task_id=args.task, demos_root=args.output, demo_id=args.demo_id
    )
    print(f"imported {len(result.demo.steps)} steps into {result.folder}")
    print(f"task: {result.task_file}")
    for note in result.notes:
        print(f"  note: {note}")
    return 0
