"""``elderbench analyze``, ``label``, ``normalize`` and ``failures``.

elderbench analyze task_graphs/sample --against other_benchmark.txt --runs runs/a runs/b
elderbench label task_graphs/sample --endpoint labeller.json      # proposals only
elderbench label task_graphs/sample --accept call_daughter --annotator ann-1
elderbench normalize task_graphs/sample --endpoint labeller.json
elderbench failures runs/gpt4o --endpoint labeller.json           # a first pass
elderbench failures runs/gpt4o --confirm call_daughter --annotator ann-1
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from evaluator.errors import ConfigError


def register(subparsers: Any) -> None:
    an = subparsers.add_parser(
        "analyze",
        help="instruction statistics, label agreement, feature attribution, failure analysis",
        description="Describe the language of a suite's requests; compare it with another "
        "suite or a list of instructions; with --runs, relate features to success and "
        "summarize the analysed failures.",
    )
    an.add_argument("suite", type=Path, help="suite folder")
    an.add_argument(
        "--against",
        type=Path,
        metavar="SUITE_OR_FILE",
        help="another suite, or instructions: .txt (a line each), .json, .jsonl or .tsv",
    )
    an.add_argument("--runs", type=Path, nargs="+", default=[], metavar="RUN", help="run folders")
    an.add_argument("--min-group", type=int, default=5, help="smallest group a test may use")
    an.add_argument("--json", action="store_true", help="print everything as JSON on stdout")
    an.add_argument("--out", type=Path, help="also write analysis.md and analysis.html here")
    an.set_defaults(func=run_analyze)

    for name, what in (("label", "labels"), ("normalize", "normalized rewrites")):
        p = subparsers.add_parser(
            name,
            help=f"propose {what} for a suite's instructions with a model; review them",
            description=f"Propose {what} through an OpenAI-compatible endpoint. Proposals are "
            "stored in <suite>/language/proposals.json, apart from task.json; a task's own "
            "values change only by a person's review (--accept / --correct, or the studio).",
        )
        p.add_argument("suite", type=Path, help="suite folder")
        _endpoint_arguments(p)
        p.add_argument("--tasks", nargs="+", default=[], metavar="ID", help="only these tasks")
        p.add_argument("--force", action="store_true", help="propose again where one exists")
        p.add_argument("--accept", nargs="+", metavar="ID", help="accept these proposals")
        p.add_argument(
            "--correct",
            nargs=2,
            metavar=("ID", "VALUE"),
            help="write a person's value: labels as JSON, or the rewrite text",
        )
        p.add_argument("--annotator", help="who reviews (required with --accept/--correct)")
        p.set_defaults(func=run_label if name == "label" else run_normalize)

    fa = subparsers.add_parser(
        "failures",
        help="propose failure categories for a run's failed tasks; confirm them",
        description="A model's first pass over a run's failed, untagged tasks: one category "
        "of ElderBench's taxonomy each, stored in failure_proposals.json; --confirm writes a "
        "person's tag.",
    )
    fa.add_argument("run", type=Path, help="run folder")
    _endpoint_arguments(fa)
    fa.add_argument("--force", action="store_true", help="propose again where one exists")
    fa.add_argument("--confirm", nargs="+", metavar="ID", help="confirm these tasks' proposals")
    fa.add_argument("--category", help="with --confirm: this category instead of the proposal")
    fa.add_argument("--annotator", help="who confirms (required with --confirm)")
    fa.set_defaults(func=run_failures)


def _endpoint_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--endpoint",
        type=Path,
        metavar="FILE",
        help="model endpoint, JSON or TOML: base_url, model, api_key_env (the variable's name)",
    )


def _client(args: argparse.Namespace) -> Any:
    if args.endpoint is None:
        raise ConfigError("pass --endpoint FILE naming the model to ask (docs/language.md)")
    return endpoint_client(args.endpoint)


def endpoint_client(path: Path) -> Any:
    """The chat client an endpoint file names (the CLI's --endpoint, the studio's field)."""
    from evaluator.chat_client import ChatClient, EndpointConfig
    from evaluator.cli import read_config

    return ChatClient(EndpointConfig.from_config(read_config(path)))


class _Progress:
    """A line per item on stderr; counts the replies that gave no usable proposal."""

    def __init__(self) -> None:
        self.errors = 0

    def __call__(self, event: Any) -> None:
        state = "kept" if event.skipped else ("error: " + event.error if event.error else "ok")
        self.errors += bool(event.error)
        print(f"[{event.done}/{event.total}] {event.task_id}: {state}", file=sys.stderr)

    def summary(self) -> str:
        return f" ({self.errors} replies unusable; run again to retry them)" if self.errors else ""


def run_analyze(args: argparse.Namespace) -> int:
    from evaluator.document import render_markdown
    from evaluator.language.analysis import analyze, blocks, write_analysis

    analysis = analyze(args.suite, against=args.against, runs=args.runs, min_group=args.min_group)
    if args.out:
        md, page = write_analysis(analysis, args.out)
        print(f"analysis: {md} and {page}", file=sys.stderr)
    if args.json:
        print(json.dumps(analysis.to_json(), indent=2, ensure_ascii=False))
    else:
        print(render_markdown(blocks(analysis)))
    return 0


def _propose_or_review(args: argparse.Namespace, kind: Any) -> int:
    from evaluator.language.proposals import Decision, propose, review

    reviewing = bool(args.accept or args.correct)
    if reviewing:
        if not args.annotator:
            raise ConfigError("--accept and --correct need --annotator (who decided)")
        for task_id in args.accept or ():
            review(args.suite, kind, task_id, Decision.ACCEPTED, annotator=args.annotator)
            print(f"{task_id}: accepted", file=sys.stderr)
        if args.correct:
            task_id, raw = args.correct
            value: Any = raw
            if kind.value == "labels":
                try:
                    value = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise ConfigError(f"--correct {task_id}: labels must be JSON ({exc})") from exc
            review(
                args.suite, kind, task_id, Decision.CORRECTED, annotator=args.annotator, value=value
            )
            print(f"{task_id}: corrected", file=sys.stderr)
        return 0
    progress = _Progress()
    store = propose(
        args.suite, kind, _client(args), tasks=args.tasks, force=args.force, on_event=progress
    )
    print(f"proposals: {store.path}" + progress.summary())
    return 1 if progress.errors else 0


def run_label(args: argparse.Namespace) -> int:
    from evaluator.language.proposals import Kind

    return _propose_or_review(args, Kind.LABELS)


def run_normalize(args: argparse.Namespace) -> int:
    from evaluator.language.proposals import Kind

    return _propose_or_review(args, Kind.REWRITES)


def run_failures(args: argparse.Namespace) -> int:
    from evaluator.language.failures import PROPOSALS_FILE, confirm_failure, propose_failures
    from evaluator.run_store import RunStore

    store = RunStore.open(args.run)
    if args.confirm:
        if not args.annotator:
            raise ConfigError("--confirm needs --annotator (who decided)")
        for task_id in args.confirm:
            tag = confirm_failure(store, task_id, annotator=args.annotator, category=args.category)
            print(f"{task_id}: {tag.title}", file=sys.stderr)
        return 0
    progress = _Progress()
    propose_failures(store, _client(args), force=args.force, on_event=progress)
    print(f"proposals: {store.run_dir / PROPOSALS_FILE}" + progress.summary())
    return 1 if progress.errors else 0
