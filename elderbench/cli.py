"""The `elderbench` command: a thin dispatcher over the packages' own subcommands.

Each package exposes `register(subparsers)` in its `cli` module; the module adds its
subcommands and sets `func` on each parser. Modules are imported lazily by name so that a
headless `elderbench eval` never imports Qt and a missing optional piece breaks only its
own subcommand.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from elderbench import __version__

# Order is the order shown in --help.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "recorder_app.cli",  # studio
    "virtual_phone.cli",  # phone
    "devices.cli",  # devices
    "graph_builder.cli",  # build, import
    "graph_builder.constraints_cli",  # constrain
    "evaluator.cli",  # eval, report
    "evaluator.grow_cli",  # import run, explore
    "evaluator.drift.cli",  # drift
    "evaluator.language.cli",  # analyze, label, normalize, failures
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="elderbench",
        description="ElderBench Studio: record demonstrations on Android phones, merge them "
        "into task graphs, and evaluate GUI agents offline and online.",
    )
    parser.add_argument("--version", action="version", version=f"elderbench {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue  # that package has no subcommands yet
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error worth a message.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # the one broad catch: turn library errors into a message
        if args.verbose:
            raise
        print(f"elderbench: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
