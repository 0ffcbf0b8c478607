"""The farm's run log, ``farm.jsonl``: health checks, restarts, retries, quarantines.

Kept apart from the pool so that reports read it without importing the device layer.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from evaluator.secrets import mask_json
from graph_builder.errors import GraphBuilderError
from graph_builder.io import parse_json

FARM_LOG = "farm.jsonl"


class FarmLog:
    """Appends events to ``farm.jsonl``; written by the driver only (one writer a run)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / FARM_LOG
        self._lock = threading.Lock()

    def record(self, event: str, device: str, **fields: Any) -> dict[str, Any]:
        # a restart command's output may repeat its token: masked like every writer's data
        entry = mask_json({"time": time.time(), "event": event, "device": device, **fields})
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock, open(self.path, "ab") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        return entry


def read_farm_log(run_dir: Path) -> list[dict[str, Any]]:
    """The farm events of a run (a damaged line is skipped)."""
    path = Path(run_dir) / FARM_LOG
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            value = parse_json(line)
        except GraphBuilderError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def farm_summary(run_dir: Path) -> list[dict[str, Any]]:
    """Per device: tasks finished, health failures, restarts, tasks given back, quarantine."""
    devices: dict[str, dict[str, Any]] = {}
    for e in read_farm_log(run_dir):
        d = devices.setdefault(
            str(e.get("device")),
            {
                "device": str(e.get("device")),
                "tasks": 0,
                "unhealthy": 0,
                "restarts": 0,
                "retries": 0,
                "quarantined": False,
            },
        )
        kind = e.get("event")
        if kind == "task":
            d["tasks"] += 1
        elif kind == "unhealthy":
            d["unhealthy"] += 1
        elif kind == "restart":
            d["restarts"] += 1
        elif kind == "retry":
            d["retries"] += 1
        elif kind == "quarantine":
            d["quarantined"] = True
    return sorted(devices.values(), key=lambda d: d["device"])
