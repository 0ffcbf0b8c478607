"""``elderbench audit``: list, show and mark what the graph did not credit.

elderbench audit runs/h runs/r [--json] [--out audit/]
elderbench audit runs/h runs/r --mark g1a2b3c4d5e valid --annotator ana [--note "..."]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def add_audit(subparsers: Any) -> None:
    au = subparsers.add_parser(
        "audit",
        help="list offline steps that matched no edge, grouped; mark groups valid/wrong/unsure",
        description="Group every offline step whose action matched no outgoing edge (same "
        "task, node and target) across the runs, with counts and agents; write an HTML "
        "sheet with --out; record a person's verdict on a group with --mark. Marks live in "
        "the suite (<task>/audit_marks.json) and bound the SR in the report.",
    )
    au.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders")
    au.add_argument("--suite", type=Path, help="the suite (default: the one the runs name)")
    au.add_argument("--json", action="store_true", help="print the groups as JSON")
    au.add_argument("--out", type=Path, metavar="DIR", help="write audit.html and audit.json")
    au.add_argument(
        "--mark",
        nargs=2,
        metavar=("GROUP", "VERDICT"),
        help="record VERDICT (valid, wrong or unsure) on GROUP",
    )
    au.add_argument("--annotator", default="", help="who marks (required with --mark)")
    au.add_argument("--note", default="", help="a note kept with the mark")
    au.set_defaults(func=run_audit)


def run_audit(args: argparse.Namespace) -> int:
    from evaluator.audit_groups import collect
    from evaluator.audit_marks import set_mark
    from evaluator.audit_sheet import write_sheet

    audit = collect(args.runs, args.suite)
    if args.mark:
        group = audit.group(args.mark[0])
        mark = set_mark(
            audit.suite,
            group.task_id,
            group=group.id,
            verdict=args.mark[1],
            annotator=args.annotator,
            node_members=group.node_members,
            target=group.target,
            note=args.note,
        )
        print(
            f"marked {group.id} ({group.task_id}, {group.target.describe()}) "
            f"{mark.verdict.value}, signed {mark.annotator}"
        )
        return 0
    if args.out:
        page, data = write_sheet(audit, args.out)
        print(f"wrote {page} and {data}", file=sys.stderr)
    if args.json:
        json.dump(audit.to_json(), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    steps = sum(len(g.steps) for g in audit.groups)
    print(f"{steps} unmatched step(s) in {len(audit.groups)} group(s); suite {audit.suite}")
    for g in audit.groups:
        said = f"{g.mark.verdict.value} ({g.mark.annotator})" if g.mark else "unmarked"
        print(
            f"{g.id}  {g.task_id} @ {g.node_id}: {g.target.describe()}  x{len(g.steps)}  "
            f"[{', '.join(g.agents)}]  {said}"
        )
    for note in audit.notes:
        print(f"note: {note}")
    return 0
