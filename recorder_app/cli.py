"""The ``elderbench studio`` subcommand. Qt is imported only when the studio actually runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from devices.hierarchy import DEFAULT_HIERARCHY, HIERARCHY_CHOICES, HIERARCHY_HELP


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
    parser.add_argument(
        "--hierarchy",
        choices=HIERARCHY_CHOICES,
        help=f"{HIERARCHY_HELP}; kept for the next sessions (default: the last one chosen, "
        f"else {DEFAULT_HIERARCHY})",
    )
    parser.set_defaults(func=run)

    animate = subparsers.add_parser(
        "animate",
        help="a demonstration or a run's task as an animated GIF or an MP4 video with the "
        "actions drawn",
        description="Write an animated GIF or an MP4 video (H.264) of a recorded "
        "demonstration (DEMO_DIR) or of one task of an evaluation run (RUN_DIR --task ID), "
        "each step's action drawn on its screenshot. The format follows the name given "
        "to -o: FILE.gif or FILE.mp4.",
    )
    animate.add_argument("folder", type=Path, metavar="DEMO_DIR|RUN_DIR")
    animate.add_argument("--task", metavar="ID", help="the task of a run folder to animate")
    animate.add_argument("-o", "--out", type=Path, required=True, metavar="FILE.gif|FILE.mp4")
    animate.add_argument("--width", type=int, default=360, help="frame width in pixels")
    animate.add_argument(
        "--ms", type=int, default=1200, metavar="MS", help="time per step in milliseconds"
    )
    animate.set_defaults(func=run_animate)


def run_animate(args: argparse.Namespace) -> int:
    from recorder_app.recording.animation import demo_frames, trace_frames, write_animation

    folder = Path(args.folder)
    frames = trace_frames(folder, args.task) if args.task else demo_frames(folder)
    out = write_animation(frames, args.out, width=args.width, ms_per_step=args.ms)
    print(f"{out}: {len(frames)} steps")
    return 0


def run(args: argparse.Namespace) -> int:
    from recorder_app.qt.app import run_studio

    return run_studio(
        workspace=args.workspace,
        virtual_phone_enabled=args.virtual_phone,
        hierarchy=args.hierarchy,
    )
