"""The ``elderbench studio`` subcommand. Qt is imported only when the studio actually runs."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "studio",
        help="open the desktop studio (record, browse demos, edit graphs, evaluate)",
        description="Open ElderBench Studio: mirror a phone, record demonstrations by "
        "clicking on the mirror, and browse what was recorded.",
    )
    parser.add_argument(
        "--virtual-phone",
        action="store_true",
        help="start the built-in virtual phone and record on it (no hardware needed)",
    )
    parser.add_argument(
        "--workspace",
        type=Path,
        metavar="DIR",
        help="workspace folder (demos/, suites/, runs/); default: the last one used, "
        "else ~/ElderBench",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from recorder_app.qt.app import run_studio

    return run_studio(workspace=args.workspace, virtual_phone_enabled=args.virtual_phone)
