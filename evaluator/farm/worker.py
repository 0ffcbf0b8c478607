"""The remote half of a farm run: one DeviceWorker per device, on the host that holds it.

A worker keeps its device healthy (``pool.prepare``) and runs one task at a time with the
same ``TaskExecution`` as the local executor. It writes nothing into the run folder: every
trace operation (a step, a screenshot, a verdict file) goes to the driver as it happens,
through ``send``, so the driver writes the one run folder and shows the steps live; the
result and the farm events come back when the task ends. The suite folder must be
readable at the same path on every host (a shared disk, or the same checkout).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devices.address import DeviceAddress
from devices.device import Device
from evaluator.agents import create_agent
from evaluator.control import Control
from evaluator.execution import Job, TaskExecution, default_device_factory
from evaluator.farm.pool import DeviceSlot, lost, prepare
from evaluator.judges import create_judge
from evaluator.records import StepRecord
from evaluator.run_config import RunConfig

# (device, task id, kind, name, payload); kind is "step", "file" or "json"
TraceOp = tuple[str, str, str, str, Any]
Send = Callable[[TraceOp], None]


@dataclass(frozen=True, slots=True)
class StreamedTrace:
    """A trace sent to the driver operation by operation. Files are also written to
    ``folder``, a scratch folder on the worker's host, because agents read the screen they
    are shown from there; it is removed when the task ends."""

    task_id: str
    folder: Path
    send: Callable[[str, str, Any], None]

    def save_file(self, name: str, data: bytes | str) -> str:
        payload = data.encode("utf-8") if isinstance(data, str) else data
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / name).write_bytes(payload)
        self.send("file", name, payload)
        return f"traces/{self.task_id}/{name}"

    def add(self, record: StepRecord) -> None:
        self.send("step", "", record.to_json())

    def write_json(self, name: str, data: Any) -> None:
        self.send("json", name, data)

    def close(self) -> None:
        return None


class StreamingStore:
    """The part of a run store a task needs while it runs, on a worker's host."""

    def __init__(self, device: str, send: Send) -> None:
        self.device = device
        self.send = send
        self.run_dir = Path(tempfile.mkdtemp(prefix="elderbench-worker-"))

    def start_trace(self, task_id: str) -> StreamedTrace:
        def send(kind: str, name: str, payload: Any) -> None:
            self.send((self.device, task_id, kind, name, payload))

        return StreamedTrace(task_id, self.run_dir / "traces" / task_id, send)

    def clear(self, task_id: str) -> None:
        shutil.rmtree(self.run_dir / "traces" / task_id, ignore_errors=True)


class DeviceWorker:
    """Runs tasks on one device. Plain Python: the Ray executor wraps it in an actor and
    passes a queue's ``put`` as ``send``."""

    def __init__(self, config: RunConfig, address: str, send: Send) -> None:
        self.config = config
        self.name = address
        self.slot = DeviceSlot(DeviceAddress.parse(address))
        self.agent = create_agent(config.agent, config.agent_settings())
        self.judges = [create_judge(n, config.judge_config.get(n)) for n in config.judges]
        self.store = StreamingStore(address, send)
        self.clean_starts: dict[str, str | None] = {}

    def pid(self) -> int:
        return os.getpid()

    def run(self, job: Job) -> dict[str, Any]:
        """One task: {"result", "lost", "farm", "pid"} or {"quarantined", "farm"}. Every
        trace operation of the task was sent before this returns."""
        events: list[dict[str, Any]] = []

        def record(event: str, device: str, **fields: Any) -> None:
            events.append({"event": event, "device": device, **fields})

        device = prepare(self.slot, self.config.farm, self._open, record)
        if device is None:
            return {"quarantined": True, "farm": events}
        execution = TaskExecution(
            self.config,
            job,
            self.name,
            self.agent,
            device,
            self.judges,
            self.store,
            Control(),  # the driver stops a run by ending the actors
            lambda event: None,  # the driver tells steps from the trace it is sent
            self.clean_starts,
        )
        try:
            outcome = execution.run()
        finally:
            self.store.clear(job.task_id)
        if outcome.device_lost:
            lost(self.slot)
        return {
            "result": outcome.result.to_json(),
            "lost": outcome.device_lost,
            "farm": events,
            "pid": os.getpid(),
        }

    def _open(self, address: DeviceAddress) -> Device:
        return default_device_factory(str(address), hierarchy=self.config.hierarchy)

    def close(self) -> None:
        self.agent.close()
        lost(self.slot)
        shutil.rmtree(self.store.run_dir, ignore_errors=True)
