"""The ``constrain`` subcommand: decide a possible merge from the command line.

elderbench constrain SUITE_DIR --task ID --must-link A B [--annotator ID] [--note TEXT]
elderbench constrain SUITE_DIR --task ID --cannot-link A B [--annotator ID] [--note TEXT]
elderbench constrain SUITE_DIR --task ID --withdraw A B
elderbench constrain SUITE_DIR --task ID --list

A and B are demonstration steps written ``DEMO#STEP`` (``20261129-130501#3``), as
``elderbench build --explain`` prints them. The decision is kept in the task's
constraints.json and applied by the next build.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path
from typing import Any

ANNOTATOR_VARIABLE = "ELDERBENCH_ANNOTATOR"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "constrain",
        help="decide whether two screens of a task graph are one state (kept across rebuilds)",
        description="Record a signed must-link (the two steps' screens are one state) or "
        "cannot-link (they are two) in SUITE_DIR/<task>/constraints.json; every build of "
        "the task honours it. Steps are written DEMO#STEP, as `build --explain` lists them.",
    )
    parser.add_argument("suite", type=Path, metavar="SUITE_DIR")
    parser.add_argument("--task", required=True, metavar="ID")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--must-link", nargs=2, metavar=("A", "B"), help="one state")
    what.add_argument("--cannot-link", nargs=2, metavar=("A", "B"), help="two states")
    what.add_argument("--withdraw", nargs=2, metavar=("A", "B"), help="forget the decision")
    what.add_argument("--list", action="store_true", help="list the decisions and their effect")
    parser.add_argument(
        "--annotator",
        metavar="ID",
        help=f"who decides (default: ${ANNOTATOR_VARIABLE}, else the login name)",
    )
    parser.add_argument("--note", default="", help="why, in a few words")
    parser.set_defaults(func=_run)


def _step(text: str) -> Any:
    from graph_builder.model import MemberRef

    demo, sep, step = text.rpartition("#")
    if not sep or not demo or not step.isdigit():
        raise ValueError(f"{text!r} is not a step: write DEMO#STEP, e.g. 20261129-130501#3")
    return MemberRef(demo, int(step))


def _annotator(given: str | None) -> str:
    if given:
        return given
    try:
        return os.environ.get(ANNOTATOR_VARIABLE) or getpass.getuser()
    except (KeyError, OSError):  # no login name (a container without a passwd entry)
        return ""


def _run(args: argparse.Namespace) -> int:
    from graph_builder.constraints import load_constraints, outcomes, set_decision
    from graph_builder.errors import GraphBuilderError
    from graph_builder.io import GRAPH_FILE, load_graph
    from graph_builder.model import Constraint, LinkKind, now_utc

    task_dir = args.suite / args.task
    if not (task_dir / GRAPH_FILE).is_file():
        print(
            f"elderbench constrain: {task_dir} has no graph.json (build it first)", file=sys.stderr
        )
        return 2
    try:
        graph = load_graph(task_dir)
        node_of = {m: n.id for n in graph.nodes for m in n.members}
        if args.list:
            decided = load_constraints(task_dir, graph.task_id).constraints
            print(f"{args.task}: {len(decided)} constraints")
            for outcome in outcomes(decided, node_of, {}):
                print(f"  {outcome.describe()}")
            return 0
        pair = args.must_link or args.cannot_link or args.withdraw
        a, b = (_step(text) for text in pair)
        unknown = [str(m) for m in (a, b) if m not in node_of]
        if unknown:
            print(
                f"elderbench constrain: {', '.join(unknown)} is not a screen of the graph of "
                f"{args.task} (see `elderbench build --explain` for its steps)",
                file=sys.stderr,
            )
            return 2
        constraint = None
        if not args.withdraw:
            kind = LinkKind.MUST_LINK if args.must_link else LinkKind.CANNOT_LINK
            annotator = _annotator(args.annotator)
            constraint = Constraint(kind, a, b, annotator, now_utc(), args.note)
        before = set_decision(task_dir, a, b, constraint)
    except (GraphBuilderError, ValueError) as exc:
        print(f"elderbench constrain: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"elderbench constrain: cannot write in {task_dir}: {exc}", file=sys.stderr)
        return 1
    if constraint is None:
        print(f"withdrew {before.describe()}" if before else f"{a} ~ {b} was not decided")
    else:
        replaced = f" (replaces {before.kind.words} by {before.annotator})" if before else ""
        print(f"recorded {constraint.describe()}{replaced}; the next build applies it")
    return 0
