"""``elderbench devices``: every phone on every adb server, with its state and health.

elderbench devices                                  # the local adb server
elderbench devices --server farm-1:5037 --server farm-2:5037 [--json] [--no-health]
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "devices",
        help="list the phones on one or more adb servers, with state, model, size and health",
        description="List every device on the given adb servers (default: the local one, "
        "ANDROID_ADB_SERVER_PORT or 5037). Address a device in --device as SERIAL@HOST:PORT.",
    )
    p.add_argument(
        "--server", action="append", default=[], metavar="HOST:PORT", help="an adb server"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per device")
    p.add_argument("--no-health", action="store_true", help="skip the health checks")
    p.set_defaults(func=run_devices)


def survey(servers: list[str], *, health: bool = True) -> list[dict[str, Any]]:
    """One row per device: address, state, model, size, health (or why it is unknown)."""
    from devices.address import DeviceAddress, open_device, parse_server
    from devices.android import DEFAULT_HOST, adb_client
    from devices.errors import DeviceError
    from devices.health import check_health

    rows: list[dict[str, Any]] = []
    targets: list[tuple[str, int | None]] = [parse_server(s) for s in servers]
    targets = targets or [(DEFAULT_HOST, None)]
    for host, port in targets:
        explicit = bool(servers)
        try:
            client = adb_client(host, port)
            listed = client.list()
        except (DeviceError, OSError) as exc:
            rows.append({"server": f"{host}:{port or 'default'}", "error": str(exc)})
            continue
        for info in listed:
            address = (
                DeviceAddress(info.serial, host, port) if explicit else DeviceAddress(info.serial)
            )
            row: dict[str, Any] = {"address": str(address), "state": info.state}
            if info.state == "device":
                try:
                    device = open_device(address)
                    try:
                        di = device.info()
                        row.update(model=di.model, size=f"{di.width}x{di.height}")
                        if health:
                            report = check_health(device)
                            row["health"] = report.summary()
                            row["checks"] = report.to_json()["checks"]
                    finally:
                        device.close()
                except DeviceError as exc:
                    row["health"] = f"unreachable: {exc}"
            rows.append(row)
    return rows


def run_devices(args: argparse.Namespace) -> int:
    rows = survey(args.server, health=not args.no_health)
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return 0 if all("error" not in r for r in rows) else 1
    if not rows:
        print("no devices")
    for row in rows:
        if "error" in row:
            print(f"{row['server']}: {row['error']}")
            continue
        parts = [row["address"], row["state"], row.get("model", ""), row.get("size", "")]
        if "health" in row:
            parts.append(row["health"])
        print("  ".join(p for p in parts if p))
    return 0 if all("error" not in r for r in rows) else 1
