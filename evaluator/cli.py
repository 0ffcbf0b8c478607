"""``elderbench eval`` and ``elderbench report``.

    elderbench eval --suite SUITE --agent replay --demos DEMOS --out runs/replay
    elderbench eval --suite SUITE --agent openai --agent-config gpt4o.json \\
        --instruction normalized --out runs/gpt4o-normalized
    elderbench eval ... --protocol online --device emulator-5554 --device R58M12345 --out ...
    elderbench eval ... --out runs/gpt4o --resume          # after Ctrl-C or a crash
    elderbench report runs/gpt4o --compare runs/gpt4o-normalized [--json]
    elderbench verify runs/gpt4o                            # does the run still hold?
    elderbench parse-action --family ui-tars-1.5 --screen 1080x2400 "Action: click(...)"
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from devices.hierarchy import DEFAULT_HIERARCHY, HIERARCHY_CHOICES, HIERARCHY_HELP
from evaluator.audit_cli import add_audit
from evaluator.errors import ConfigError, EvaluatorError
from evaluator.farm.executors import EXECUTORS
from evaluator.figures_cli import add_figures
from evaluator.secrets import SecretFilter
from evaluator.table_cli import add_table

if TYPE_CHECKING:
    from evaluator.run_config import RunConfig


def register(subparsers: Any) -> None:
    _add_eval(subparsers)
    _add_judge(subparsers)
    _add_report(subparsers)
    _add_verify(subparsers)
    _add_parse_action(subparsers)
    add_audit(subparsers)
    add_table(subparsers)
    add_figures(subparsers)


def _add_eval(subparsers: Any) -> None:
    # Agent and judge names are checked by their registries when the run starts, so that
    # building the parser (every `elderbench` call) imports nothing heavy.
    ev = subparsers.add_parser(
        "eval",
        help="evaluate an agent on a suite (offline on task graphs, or online)",
        description="Run an agent over a suite's tasks into a run folder. Ctrl-C leaves a "
        "resumable run; --resume continues it (errored tasks are retried).",
    )
    ev.add_argument("--suite", type=Path, required=True, help="suite folder (suite.json, tasks)")
    ev.add_argument(
        "--agent",
        action=_AgentOption,
        required=True,
        help="agent to evaluate: %(registered)s (docs/agents.md)",
    )
    ev.add_argument(
        "--agent-config",
        type=Path,
        metavar="FILE",
        help="agent settings, JSON or TOML (API keys only by env var name)",
    )
    ev.add_argument(
        "--protocol",
        choices=["offline", "online"],
        help="run the tasks declared with this protocol (default: each task's own); "
        "with --tasks, force it",
    )
    ev.add_argument(
        "--device",
        action="append",
        default=[],
        metavar="SERIAL",
        help="device for online tasks; repeat to shard tasks over devices",
    )
    ev.add_argument("--tasks", nargs="+", default=[], metavar="ID", help="only these tasks")
    ev.add_argument(
        "--instruction",
        choices=["original", "normalized"],
        default="original",
        help="which instruction the agent sees",
    )
    ev.add_argument(
        "--demos",
        type=Path,
        help="demonstrations root for the replay agent (default: the suite's demos/, if any)",
    )
    ev.add_argument(
        "--mode",
        choices=["strict", "tolerant"],
        default="strict",
        help="offline: fail at the first unmatched action, or stay on the node",
    )
    ev.add_argument(
        "--matching",
        choices=["elderbench", "aitw", "gui_odyssey", "androidcontrol", "colorbench"],
        default="elderbench",
        help="ours or a benchmark's step rule (docs/evaluation.md, Matching profiles)",
    )
    ev.add_argument("--max-steps", type=int, help="override every task's max_steps")
    ev.add_argument(
        "--max-wait",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="online: the longest a wait action may sleep (default 10)",
    )
    ev.add_argument(
        "--record-screen",
        action="store_true",
        help="online: record each episode with the phone's screenrecord into "
        "traces/TASK/screen.mp4 (at most 180 s; a failed recording is only a warning)",
    )
    ev.add_argument(
        "--hierarchy",
        choices=HIERARCHY_CHOICES,
        default=DEFAULT_HIERARCHY,
        help=f"online: {HIERARCHY_HELP} (default {DEFAULT_HIERARCHY})",
    )
    ev.add_argument(
        "--workers", type=int, default=1, help="parallel offline workers (each with its own agent)"
    )
    ev.add_argument(
        "--judge",
        action="append",
        dest="judges",
        metavar="NAME",
        help="online verification: rule (default) and/or vlm; repeat for several",
    )
    ev.add_argument(
        "--judge-config",
        type=Path,
        metavar="FILE",
        help='judge settings, e.g. {"vlm": {"base_url": ..., "model": ...}}',
    )
    ev.add_argument(
        "--user-simulator",
        type=Path,
        metavar="FILE",
        help="a model that plays the user when the agent asks (ask_user), JSON or TOML: "
        "base_url, model, api_key_env, optional persona (default: the tasks' scripted "
        "clarifications; docs/evaluation.md)",
    )
    farm = ev.add_argument_group("device farms (docs/farm.md)")
    farm.add_argument(
        "--executor",
        choices=list(EXECUTORS),
        default="local",
        help="; ".join(f"{name}: {entry.description}" for name, entry in EXECUTORS.items()),
    )
    farm.add_argument("--ray-address", metavar="ADDR", help="an existing Ray cluster (auto, ...)")
    farm.add_argument(
        "--task-retries",
        type=int,
        default=2,
        metavar="N",
        help="reruns of a task whose device was lost, on another device (default 2)",
    )
    farm.add_argument(
        "--device-restart",
        metavar="CMD",
        help="heals an unhealthy device; {serial} {host} {port} {address} are filled in",
    )
    farm.add_argument(
        "--quarantine-after",
        type=int,
        default=3,
        metavar="N",
        help="failed heals in a row before a device gets no more tasks (default 3)",
    )
    ev.add_argument("--out", type=Path, required=True, help="run folder to create (or resume)")
    ev.add_argument("--resume", action="store_true", help="continue the run in --out")
    ev.add_argument(
        "--trials",
        type=int,
        default=1,
        metavar="K",
        help="run every task K times (OUT/trial-01..); mean SR, pass@k, pass^k, flips",
    )
    ev.add_argument("--no-report", action="store_true", help="do not write report.md/html")
    ev.add_argument("--prices", type=Path, help="price table (default resources/prices.json)")
    ev.set_defaults(func=run_eval)


class _RegisteredAgents:
    """The names in the agent registry (evaluator.agents.AGENTS), read when the help is
    shown, so that building the parser imports no agent."""

    def __str__(self) -> str:
        from evaluator.agents import AGENTS

        names = list(AGENTS)
        return " or ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else "".join(names)


class _AgentOption(argparse.Action):
    """``--agent NAME``: stores the name; ``%(registered)s`` in its help lists the agents."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.registered = _RegisteredAgents()

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)


def _add_judge(subparsers: Any) -> None:
    jd = subparsers.add_parser(
        "judge",
        help="re-run only the judges of a finished online run (no agent calls)",
        description="Judge every terminated online task of a run again from its traces; "
        "the new verdicts replace the old ones (their tokens stay counted) and the report "
        "is rewritten.",
    )
    jd.add_argument("run", type=Path, help="run folder")
    jd.add_argument(
        "--judge",
        action="append",
        dest="judges",
        metavar="NAME",
        help="rule and/or vlm (default: the run's own judges); repeat for several",
    )
    jd.add_argument("--judge-config", type=Path, metavar="FILE", help="judge settings")
    jd.add_argument("--prices", type=Path, help="price table (default resources/prices.json)")
    jd.set_defaults(func=run_judge)


def _add_report(subparsers: Any) -> None:
    rp = subparsers.add_parser(
        "report",
        help="write report.md/html for a run folder",
        description="Summarize a run; optionally compare it with "
        "another run on the same tasks (McNemar, paired bootstrap).",
    )
    rp.add_argument("run", type=Path, help="run folder")
    rp.add_argument("--compare", type=Path, metavar="OTHER_RUN", help="paired comparison")
    rp.add_argument(
        "--agreement",
        type=Path,
        metavar="ONLINE_RUN",
        help="pair this offline run with an online run of the same tasks (kappa, "
        "offline false negatives)",
    )
    rp.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    rp.add_argument("--prices", type=Path, help="price table (default resources/prices.json)")
    rp.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    rp.set_defaults(func=run_report)


def _add_verify(subparsers: Any) -> None:
    vf = subparsers.add_parser(
        "verify",
        help="check that a run still says what it said (suite hashes, traces, report)",
        description="Recompute the report's numbers from results, traces and the suite, "
        "check the hashes of manifest.json, and name every mismatch (exit status 1).",
    )
    vf.add_argument("run", type=Path, help="run folder")
    vf.set_defaults(func=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    from evaluator.verify import verify_run

    found = verify_run(args.run)
    if found.ok:
        print(f"verified: {args.run} ({found.tasks} tasks, suite {found.suite_hash})")
    for mismatch in found.mismatches:
        print(mismatch)
    if found.basis:
        print(f"the report's numbers were recomputed with {found.basis}")
    if found.ok:
        return 0
    print(f"{len(found.mismatches)} mismatch(es) in {args.run}", file=sys.stderr)
    return 1


def _add_parse_action(subparsers: Any) -> None:
    pa = subparsers.add_parser(
        "parse-action",
        help="show what a model's reply means: the action in device pixels and [0,1000]",
        description="Read one reply the way the evaluator reads it for the named model "
        "family, and print the action as one JSON line (exit status 1 with "
        '{"error": ...} when it cannot be read).',
    )
    pa.add_argument(
        "--family",
        required=True,
        help="ui-tars-1.0, ui-tars-1.5, autoglm, qwen2.5-vl, qwen3-vl, gui-owl, json "
        "or mobile-agent-v2",
    )
    pa.add_argument("--screen", required=True, metavar="WxH", help="screenshot size (pixels)")
    pa.add_argument(
        "--sent",
        metavar="WxH",
        help="size of the image sent to the model, before the family's own resize "
        "(default: what the agent sends)",
    )
    pa.add_argument("text", help="the model's reply ('-' reads it from stdin)")
    pa.set_defaults(func=run_parse_action)


def _wxh(value: str, what: str) -> tuple[int, int]:
    parts = value.lower().replace("×", "x").split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise ConfigError(f"{what} must be WIDTHxHEIGHT in pixels, e.g. 1080x2400; got {value!r}")
    return int(parts[0]), int(parts[1])


def run_parse_action(args: argparse.Namespace) -> int:
    from evaluator.agents.families import ActionParseError, read_reply

    text = sys.stdin.read() if args.text == "-" else args.text
    try:
        screen = _wxh(args.screen, "--screen")
        sent = _wxh(args.sent, "--sent") if args.sent else None
        out = read_reply(args.family, text, screen, sent)
    except (ActionParseError, ConfigError) as exc:
        print(json.dumps({"error": str(exc)}, ensure_ascii=False))
        return 1
    print(json.dumps(out, ensure_ascii=False))
    return 0


def read_config(path: Path | None) -> dict[str, Any]:
    from graph_builder.errors import GraphBuilderError
    from graph_builder.io import parse_json

    if path is None:
        return {}
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else parse_json(text, source=path)
    except GraphBuilderError as exc:
        raise ConfigError(str(exc)) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            f"{path} is not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {exc}"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold an object of settings")
    return data


class ProgressPrinter:
    """A one-line progress bar on a terminal; one line per task otherwise."""

    def __init__(self, stream: TextIO | None = None, *, scrub: Callable[[str], str] = str) -> None:
        self.stream = stream or sys.stderr
        self.scrub = scrub
        self.tty = self.stream.isatty()
        self.counts = {"success": 0, "failure": 0, "error": 0}

    def __call__(self, event: Any) -> None:
        from evaluator.runner import RunFinished, RunStarted, TaskFinished, WorkerStopped

        if isinstance(event, RunStarted):
            skipped = f", {len(event.skipped)} already finished" if event.skipped else ""
            self._line(f"{event.total} tasks{skipped} -> {event.run_dir}")
            if event.suite_change:
                self._line(f"warning: {event.suite_change}")
        elif isinstance(event, TaskFinished):
            self.counts[event.result.status.value] += 1
            width = 30
            filled = width * event.done // max(1, event.total)
            c = self.counts
            text = (
                f"[{'#' * filled}{'.' * (width - filled)}] {event.done}/{event.total} "
                f"ok {c['success']} fail {c['failure']} err {c['error']}  {event.task_id}"
            )
            text = self.scrub(text)
            if self.tty:
                self.stream.write("\r" + text.ljust(100))
                self.stream.flush()
            else:
                reason = f": {event.result.reason}" if event.result.reason else ""
                self._line(f"{text} {event.result.status.value}{self.scrub(reason)}")
        elif isinstance(event, WorkerStopped):
            self._line(f"worker {event.worker} stopped: {self.scrub(event.reason)}")
        elif isinstance(event, RunFinished) and self.tty:
            self.stream.write("\n")

    def _line(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r")
        self.stream.write(text + "\n")
        self.stream.flush()


def eval_config(args: argparse.Namespace) -> RunConfig:
    """The RunConfig that ``elderbench eval``'s options describe (the studio's run form
    builds the same one from the same settings); ConfigError says what is wrong."""
    from evaluator.farm.pool import FarmSettings
    from evaluator.run_config import RunConfig

    if args.trials < 1:
        raise ConfigError("--trials must be at least 1")
    return RunConfig(
        suite=args.suite,
        out=args.out,
        agent=args.agent,
        agent_config=read_config(args.agent_config),
        protocol=args.protocol,
        tasks=tuple(args.tasks),
        variant=args.instruction,
        demos=args.demos,
        mode=args.mode,
        matching=args.matching,
        max_steps=args.max_steps,
        max_wait=args.max_wait,
        record_screen=args.record_screen,
        hierarchy=args.hierarchy,
        devices=tuple(args.device),
        workers=args.workers,
        judges=tuple(args.judges or ("rule",)),
        judge_config=read_config(args.judge_config),
        user_simulator=read_config(args.user_simulator),
        resume=args.resume,
        farm=FarmSettings(
            executor=args.executor,
            ray_address=args.ray_address,
            task_retries=args.task_retries,
            restart_command=args.device_restart,
            quarantine_after=args.quarantine_after,
        ),
    )


def run_eval(args: argparse.Namespace) -> int:
    from evaluator.prices import load_prices

    prices = load_prices(args.prices) if args.prices else None
    config = eval_config(args)
    secrets = config.secrets()
    printer = ProgressPrinter(scrub=secrets.scrub)
    log_filter = SecretFilter(secrets)
    for handler in logging.getLogger().handlers:
        handler.addFilter(log_filter)
    try:
        if args.trials == 1:
            return _run_eval(args, config, printer, prices)
        return _run_trials(args, config, printer, prices)
    except Exception as exc:
        said = secrets.scrub(str(exc))
        if said != str(exc):
            raise EvaluatorError(said) from None
        raise
    finally:
        for handler in logging.getLogger().handlers:
            handler.removeFilter(log_filter)


def _run_trials(
    args: argparse.Namespace, config: Any, printer: ProgressPrinter, prices: Any
) -> int:
    """``--trials K``: K run folders OUT/trial-01.. and their summary in OUT/trials.*."""
    from dataclasses import replace

    from evaluator.trials import trial_dir, write_trials

    for index in range(1, args.trials + 1):
        print(f"trial {index} of {args.trials}", file=sys.stderr)
        code = _run_eval(args, replace(config, out=trial_dir(args.out, index)), printer, prices)
        if code != 0:
            return code
    summary = write_trials(args.out)
    mean = summary["mean_sr"]
    print(
        f"mean SR {'n/a' if mean is None else f'{100 * mean:.1f}%'} over {args.trials} trials; "
        f"{len(summary['flipping_tasks'])} task(s) flipped; {args.out}/trials.md",
        file=sys.stderr,
    )
    return 0


def _run_eval(args: argparse.Namespace, config: Any, printer: ProgressPrinter, prices: Any) -> int:
    from evaluator.control import Control
    from evaluator.report import write_report
    from evaluator.runner import RunFinished, iter_run

    control = Control()
    resume_hint = f"finished tasks are saved; continue with: --out {args.out} --resume"
    out = config.out

    def stop_softly(signum: int, frame: object) -> None:
        print("\nstopping after the current step (Ctrl-C again to quit at once)", file=sys.stderr)
        control.stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    previous = signal.signal(signal.SIGINT, stop_softly)
    finished: RunFinished | None = None
    try:
        for event in iter_run(config, control=control):
            printer(event)
            if isinstance(event, RunFinished):
                finished = event
    except KeyboardInterrupt:
        print(f"\nquit; {resume_hint}", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)
    assert finished is not None
    if finished.stopped:
        print(f"stopped; {resume_hint}", file=sys.stderr)
        return 130
    assert finished is not None
    if not args.no_report:
        md, page = write_report(out, prices=prices)
        print(f"report: {md} and {page}", file=sys.stderr)
    if finished.not_run:
        print(
            f"{len(finished.not_run)} task(s) not run ({', '.join(finished.not_run[:5])}...); "
            "continue with --resume",
            file=sys.stderr,
        )
        return 3
    return 0


def run_judge(args: argparse.Namespace) -> int:
    from evaluator.metrics import group_metrics
    from evaluator.prices import load_prices
    from evaluator.rejudge import Rejudged, rejudge
    from evaluator.report import write_report
    from evaluator.run_store import RunStore

    def show(item: Rejudged) -> None:
        before, after = item.before.status.value, item.after.status.value
        change = before if before == after else f"{before} -> {after}"
        if item.problem:
            change, reason = "not judged again", f": {item.problem}"
        else:
            reason = f": {item.after.reason}" if item.after.reason else ""
        print(f"{item.task_id}: {change}{reason}", file=sys.stderr)

    done = rejudge(args.run, args.judges, read_config(args.judge_config) or None, progress=show)
    prices = load_prices(args.prices) if args.prices else None
    store = RunStore.open(args.run)
    overall = group_metrics(store.results(), store.overrides(), prices or load_prices())
    md, _ = write_report(args.run, prices=prices)
    print(f"{len(done)} task(s) judged again; {overall.sr_line}; report: {md}")
    return 0


def run_report(args: argparse.Namespace) -> int:
    from evaluator.document import render_markdown
    from evaluator.prices import load_prices
    from evaluator.report import write_report
    from evaluator.report_audit import agreement_blocks, bounds_blocks
    from evaluator.run_summary import summarize

    prices = load_prices(args.prices) if args.prices else None
    summary = summarize(
        args.run,
        compare=args.compare,
        agreement_with=args.agreement,
        prices=prices,
        seed=args.seed,
    )
    md, page = write_report(args.run, summary=summary)
    if args.json:
        from evaluator.report import manifest_json

        # the summary (report.json) and, apart from it, what pins the run
        data = {**summary.to_json(), "manifest": manifest_json(args.run)}
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    print(summary.sr_line)
    shown = [*bounds_blocks(summary.bounds), *agreement_blocks(summary.agreement)]
    if shown:
        print(render_markdown(shown), end="")
    from evaluator.manifest import essentials, read_manifest

    manifest = read_manifest(args.run)
    for line in essentials(manifest) if manifest else ():
        print(line)
    print(f"wrote {md} and {page}")
    return 0
