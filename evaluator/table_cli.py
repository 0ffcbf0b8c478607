"""``elderbench table``: the tables of a paper from N run folders.

elderbench table runs/h-orig runs/h-norm --format latex --out tables.tex
elderbench table runs/a runs/b --name runs/a=GPT-4o --allow-different-tasks
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evaluator.errors import ConfigError


def add_table(subparsers: Any) -> None:
    from evaluator.table_formats import FORMATS

    tb = subparsers.add_parser(
        "table",
        help="tables of N runs for a paper: metrics, paired McNemar (Holm), SR per label",
        description="Write three tables of the runs: SR (offline, online, all; 95%% CI and "
        "counts), CR, DA, AIL, tokens and cost per run, the best of each column marked; "
        "exact McNemar p of every pair on the tasks both evaluated, Holm-adjusted; SR per "
        "label and run. Runs on other suites or task sets are refused unless "
        "--allow-different-tasks.",
    )
    tb.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders")
    tb.add_argument("--format", choices=list(FORMATS), default="md", help="default md")
    tb.add_argument("--out", type=Path, metavar="FILE", help="write here (default: stdout)")
    tb.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="RUN=LABEL",
        help="name a run in the tables (default: its model, or agent, and variant)",
    )
    tb.add_argument(
        "--allow-different-tasks",
        action="store_true",
        help="put runs of other suites or task sets in one table, the differences as notes",
    )
    tb.add_argument("--prices", type=Path, help="price table (default resources/prices.json)")
    tb.add_argument("--seed", type=int, default=0, help="bootstrap seed of the paired intervals")
    tb.set_defaults(func=run_table)


def parse_names(pairs: list[str], runs: list[Path]) -> dict[Path, str]:
    """``--name RUN=LABEL`` options as run folder -> label (of table and figures)."""
    given = {r.resolve() for r in runs}
    out: dict[Path, str] = {}
    for item in pairs:
        run, sep, label = item.partition("=")
        if not sep or not label.strip():
            raise ConfigError(f"--name takes RUN=LABEL, got {item!r}")
        if Path(run).resolve() not in given:
            raise ConfigError(f"--name {item!r}: {run} is not one of the runs named")
        out[Path(run).resolve()] = label.strip()
    return out


def run_table(args: argparse.Namespace) -> int:
    from evaluator.prices import load_prices
    from evaluator.table_formats import render
    from evaluator.tables import build_tables
    from graph_builder.io import atomic_write_text

    tables = build_tables(
        args.runs,
        names=parse_names(args.name, args.runs),
        allow_different_tasks=args.allow_different_tasks,
        prices=load_prices(args.prices) if args.prices else None,
        seed=args.seed,
    )
    text = render(tables, args.format)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    atomic_write_text(args.out, text)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0
