"""The remote half of a farm run: one DeviceWorker per device, on the host that holds it.

A worker keeps its device healthy (``pool.prepare``), runs one task at a time exactly as
the local executor does, and sends everything back to the driver: the result, the trace
(steps, screenshots, hierarchies, verdicts, as operations to replay) and the farm events.
It writes nothing itself, so the driver owns the one run folder and resume, reports and
comparisons work unchanged. The suite folder must be readable at the same path on every
host (a shared disk, or the same checkout).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devices.address import DeviceAddress
from evaluator.agents import create_agent
from evaluator.control import Control
from evaluator.farm.pool import DeviceSlot, lost, prepare
from evaluator.judges import create_judge
from evaluator.records import StepRecord


@dataclass
class MemoryTrace:
    """A trace kept as the operations the driver replays on a TraceWriter. Files are also
    written to ``folder``, a scratch folder on the worker's host, because agents read the
    screen they are shown from there; it is removed when the task is sent back."""

    task_id: str
    folder: Path
    ops: list[tuple[str, str, Any]] = field(default_factory=list)

    def save_file(self, name: str, data: bytes | str) -> str:
        payload = data.encode("utf-8") if isinstance(data, str) else data
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / name).write_bytes(payload)
        self.ops.append(("file", name, payload))
        return f"traces/{self.task_id}/{name}"

    def add(self, record: StepRecord) -> None:
        self.ops.append(("step", "", record.to_json()))

    def write_json(self, name: str, data: Any) -> None:
        self.ops.append(("json", name, data))

    def close(self) -> None:
        return None


class MemoryStore:
    """The part of a RunStore a task needs while it runs: traces kept for the driver."""

    def __init__(self) -> None:
        self.run_dir = Path(tempfile.mkdtemp(prefix="elderbench-worker-"))
        self.traces: dict[str, MemoryTrace] = {}

    def start_trace(self, task_id: str) -> MemoryTrace:
        trace = MemoryTrace(task_id, self.run_dir / "traces" / task_id)
        self.traces[task_id] = trace
        return trace

    def take(self, task_id: str) -> MemoryTrace:
        trace = self.traces.pop(task_id, None) or self.start_trace(task_id)
        self.traces.pop(task_id, None)
        shutil.rmtree(trace.folder, ignore_errors=True)
        return trace


class DeviceWorker:
    """Runs tasks on one device. Plain Python: the Ray executor wraps it in an actor."""

    def __init__(self, config: Any, address: str) -> None:
        from evaluator.runner import _Session, default_device_factory

        self.config = config
        self.name = address
        self.slot = DeviceSlot(DeviceAddress.parse(address))
        self.agent = create_agent(config.agent, config.agent_settings())
        self.judges = [create_judge(n, config.judge_config.get(n)) for n in config.judges]
        self.store = MemoryStore()
        self.session = _Session(
            config,
            self.store,  # type: ignore[arg-type]  # the two methods a task uses
            [],
            Control(),
            default_device_factory,
            0,
            0,  # type: ignore[arg-type]
        )

    def pid(self) -> int:
        return os.getpid()

    def run(self, job: Any) -> dict[str, Any]:
        """One task: {"result", "lost", "trace", "farm"} or {"quarantined", "farm"}."""
        events: list[dict[str, Any]] = []

        def record(event: str, device: str, **fields: Any) -> None:
            events.append({"event": event, "device": device, **fields})

        device = prepare(self.slot, self.config.farm, self.session._open, record)
        if device is None:
            return {"quarantined": True, "farm": events}
        result, was_lost = self.session._run_job(self.name, job, self.agent, device, self.judges)
        if was_lost:
            lost(self.slot)
        trace = self.store.take(job.task_id)
        return {
            "result": result.to_json(),
            "lost": was_lost,
            "trace": trace.ops,
            "farm": events,
            "pid": os.getpid(),
        }

    def close(self) -> None:
        self.agent.close()
        lost(self.slot)
        shutil.rmtree(self.store.run_dir, ignore_errors=True)
