"""`elderbench phone`: run virtual phones behind an ADB server in the foreground."""

from __future__ import annotations

import argparse
import re
import sys

DEFAULT_PORT = 5038  # next to adb's 5037, so a real adb server can keep running


def _size(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)x(\d+)", text)
    if match is None or min(int(match[1]), int(match[2])) < 64:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1080x2400, not {text!r}")
    return int(match[1]), int(match[2])


def _app_version(text: str) -> tuple[str, int]:
    package, eq, version = text.partition("=")
    if not eq or not package.strip() or not version.strip().isdigit():
        raise argparse.ArgumentTypeError(
            f"expected PACKAGE=VERSION such as com.android.settings=2, not {text!r}"
        )
    return package.strip(), int(version)


def _device_count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 16:
        raise argparse.ArgumentTypeError(f"expected a number of devices from 1 to 16, not {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text!r}")
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "phone",
        help="run the virtual phone as an ADB server",
        description="Serve simulated Android phones on an ADB server port. Real clients "
        "(adb -P PORT, adbutils, scrcpy mirrors) talk to it unmodified. Ctrl-C stops it.",
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="TCP port (default %(default)s)"
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default %(default)s)"
    )
    parser.add_argument(
        "--devices",
        type=_device_count,
        default=1,
        metavar="K",
        help="number of phones, serials virtual-1..virtual-K (default 1)",
    )
    parser.add_argument(
        "--frozen-clock",
        action="store_true",
        help="show a fixed date and time, for reproducible screens",
    )
    parser.add_argument(
        "--settle-ms",
        type=int,
        nargs=2,
        default=(100, 300),
        metavar=("LOW", "HIGH"),
        help="how long a screen transition takes, drawn between LOW and HIGH ms "
        "(default 100 300, like a phone; 0 0 for instant screens)",
    )
    parser.add_argument(
        "--size",
        type=_size,
        default=(1080, 2400),
        metavar="WxH",
        help="screen size in pixels (default 1080x2400)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=_seconds,
        metavar="S",
        help="close a connection that sends no whole request within S seconds "
        "(default: the server's, 30)",
    )
    parser.add_argument(
        "--no-adb-keyboard",
        action="store_true",
        help="do not install the ADB Keyboard input method",
    )
    parser.add_argument(
        "--app-version",
        type=_app_version,
        action="append",
        default=[],
        metavar="PACKAGE=VERSION",
        help="play an app update, e.g. com.android.settings=2 (repeatable; default 1 for all; "
        "docs/virtual_phone.md lists what each version changes)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from virtual_phone.adb_server import AdbServer
    from virtual_phone.launch import FROZEN_CLOCK
    from virtual_phone.phone import VirtualPhone

    low, high = args.settle_ms
    if not 0 <= low <= high:
        print(
            f"elderbench phone: error: --settle-ms needs 0 <= LOW <= HIGH, not {low} {high}",
            file=sys.stderr,
        )
        return 2
    try:
        phones = [
            VirtualPhone(
                f"virtual-{index}",
                size=args.size,
                settle_ms=(low, high),
                frozen_clock=FROZEN_CLOCK if args.frozen_clock else None,
                adb_keyboard=not args.no_adb_keyboard,
                app_versions=dict(args.app_version),
            )
            for index in range(1, args.devices + 1)
        ]
    except ValueError as exc:
        print(f"elderbench phone: error: {exc}", file=sys.stderr)
        return 2
    try:
        limits = {} if args.idle_timeout is None else {"idle_timeout": args.idle_timeout}
        server = AdbServer(phones, host=args.host, port=args.port, **limits)
    except OSError as exc:
        print(f"cannot listen on {args.host}:{args.port}: {exc.strerror}; try --port")
        return 1
    serials = ", ".join(phone.serial for phone in phones)
    print(
        f"Virtual ADB server on {args.host}:{server.port} with {serials}.\n"
        f"Point adb at it:  adb -P {server.port} devices\n"
        f"or for every client in this shell:  export ANDROID_ADB_SERVER_PORT={server.port}\n"
        "Ctrl-C stops it.",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
