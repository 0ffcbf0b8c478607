"""``elderbench figures``: the figures of a paper from N run folders (PDF and SVG).

elderbench figures runs/h-orig runs/h-norm --out figures/
elderbench figures runs/a runs/b --against other_benchmark.txt --name runs/a=GPT-4o --out fig/
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evaluator.table_cli import parse_names


def add_figures(subparsers: Any) -> None:
    fg = subparsers.add_parser(
        "figures",
        help="figures of N runs for a paper: SR by label, latency, cost, failures, language",
        description="Write PDF and SVG figures of the runs, one column wide: SR per label "
        "(bars with 95%% intervals and group sizes), AIL against SR, cost against SR, "
        "analysed failures by cause, and the length and label distributions of the runs' "
        "suite (beside --against). figures.json holds every number as drawn. Runs on other "
        "suites or task sets are refused unless --allow-different-tasks.",
    )
    fg.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders")
    fg.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder to write")
    fg.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="RUN=LABEL",
        help="name a run in the figures (default: its model, or agent, and variant)",
    )
    fg.add_argument(
        "--against",
        type=Path,
        metavar="SUITE_OR_FILE",
        help="compare the language with another suite, or instructions (.txt, .json, "
        ".jsonl, .tsv), as analyze --against",
    )
    fg.add_argument(
        "--allow-different-tasks",
        action="store_true",
        help="draw runs of other suites or task sets together (the differences are printed)",
    )
    fg.add_argument("--prices", type=Path, help="price table (default resources/prices.json)")
    fg.set_defaults(func=run_figures)


def run_figures(args: argparse.Namespace) -> int:
    from evaluator.figures import build_figures, write_figures
    from evaluator.prices import load_prices

    figures = build_figures(
        args.runs,
        names=parse_names(args.name, args.runs),
        against=args.against,
        allow_different_tasks=args.allow_different_tasks,
        prices=load_prices(args.prices) if args.prices else None,
    )
    for note in figures.notes:
        print(f"note: {note}", file=sys.stderr)
    written = write_figures(figures, args.out)
    print(f"wrote {len(written)} files into {args.out}", file=sys.stderr)
    return 0
