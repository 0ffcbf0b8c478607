"""The Ray executor: one actor per device, placed on the node that holds the device.

Every device ``D`` needs the custom resource ``device-D`` (see ``resource_name``) on the
node whose adb server reaches it; ``ray start --resources '{"device-emulator-5554": 1}'``
declares it there. Without ``ray_address`` the driver starts a local Ray instance that
declares one resource per device itself. Each actor runs a ``DeviceWorker``; the driver
hands out one task at a time per actor. Workers send every trace operation through a Ray
queue as it happens: the driver writes it into the run folder and yields a StepDone for
every step, so a live view follows remote tasks step by step. It writes every result and
records the farm's events. A task whose device is lost, or whose actor dies
(a killed worker process, a lost node), goes back to the queue and runs on another
device, at most ``task_retries`` times; a dead actor is retired, a quarantined device too.

Ray is an optional dependency: ``pip install 'elderbench-studio[farm]'``.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from evaluator.errors import ConfigError, RunStopped
from evaluator.execution import (
    Job,
    RunEvent,
    RunSession,
    StepDone,
    TaskStarted,
    WorkerStopped,
    error_result,
    step_screenshot,
)
from evaluator.farm.worker import DeviceWorker, TraceOp
from evaluator.records import StepRecord, TaskResult
from evaluator.run_store import TraceWriter

WAIT_SECONDS = 0.5  # how often the driver looks at the stop flag while tasks run
LOCAL_OBJECT_STORE = 300 * 1024**2  # traces are small; Ray's default takes 30% of memory


def resource_name(address: str) -> str:
    """The custom Ray resource that marks the node holding ``address``.

    >>> resource_name("emulator-5554@10.0.0.7:5037")
    'device-emulator-5554_10.0.0.7_5037'
    """
    return "device-" + re.sub(r"[^A-Za-z0-9_.-]", "_", address.replace("@", "_"))


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "the ray executor needs Ray: pip install 'elderbench-studio[farm]'"
        ) from exc
    return ray


def _connect(ray: Any, devices: tuple[str, ...], address: str | None) -> bool:
    """Join or start Ray; True when this call started it (and so must shut it down)."""
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "configure_logging": False,
    }
    if address:
        ray.init(address=address, **options)
    else:
        ray.init(
            num_cpus=max(2, len(devices)),
            resources={resource_name(d): 1 for d in devices},
            object_store_memory=LOCAL_OBJECT_STORE,
            **options,
        )
    return True


class RayExecutor:
    """Runs a session's jobs on one Ray actor per device (online tasks only)."""

    def run(self, session: RunSession) -> Iterator[RunEvent]:
        devices = session.config.devices
        session.close_unused_agent()  # every actor makes its own
        ray = _import_ray()
        started_here = _connect(ray, devices, session.config.farm.ray_address)
        actors: dict[str, Any] = {}
        traces = _DriverTraces(session)
        ops: Any = None
        try:
            _check_resources(ray, devices)
            from ray.util.queue import Queue

            ops = Queue(actor_options={"num_cpus": 0})
            remote = ray.remote(DeviceWorker)
            actors = {
                d: remote.options(
                    num_cpus=0, resources={resource_name(d): 1}, max_restarts=0, max_task_retries=0
                ).remote(session.config, d, ops.put)
                for d in devices
            }
            yield from _dispatch(ray, session, actors, ops, traces)
        except RunStopped:
            return
        finally:
            traces.close_all()
            for actor in actors.values():
                ray.kill(actor)
            if ops is not None:
                ops.shutdown()
            if started_here:
                ray.shutdown()


def _check_resources(ray: Any, devices: tuple[str, ...]) -> None:
    available = ray.cluster_resources()
    missing = [d for d in devices if available.get(resource_name(d), 0) < 1]
    if missing:
        raise ConfigError(
            "no Ray node declares the device(s) "
            + ", ".join(missing)
            + "; start the node that holds each one with "
            + "ray start --resources '{\""
            + resource_name(missing[0])
            + "\": 1}' (docs/farm.md)"
        )


def _dispatch(
    ray: Any, session: RunSession, actors: dict[str, Any], ops: Any, traces: _DriverTraces
) -> Iterator[RunEvent]:
    """Hand out one job at a time per actor until every job has a result or no device
    is left; yields the run's events, the streamed steps included."""
    pending: collections.deque[Job] = collections.deque(session.jobs)
    idle = list(actors)
    running: dict[Any, tuple[str, Job]] = {}
    while pending or running:
        if session.control.stop.is_set():
            return
        while idle and pending:
            device, job = idle.pop(0), pending.popleft()
            running[actors[device].run.remote(job)] = (device, job)
            yield TaskStarted(job.task_id, device, job.instruction(session.config.variant))
        if not running:
            break  # tasks left, no device left: they run on --resume
        ready, _ = ray.wait(list(running), num_returns=1, timeout=WAIT_SECONDS)
        # A worker has sent every operation of its task before the task returns.
        yield from traces.apply(_take_all(ops))
        for ref in ready:
            device, job = running.pop(ref)
            try:
                outcome = ray.get(ref)
            except ray.exceptions.RayError as exc:  # the actor or its node died
                session.farm_log.record("actor_lost", device, task=job.task_id, error=str(exc))
                yield WorkerStopped(device, f"its worker died: {type(exc).__name__}")
                if session.may_retry(job, device, "the worker process died"):
                    traces.end(device)
                    pending.append(job)
                else:
                    traces.end(device, job)
                    result = error_result(
                        job, "its device worker died", 0.0, None, session.config.variant
                    )
                    yield session.record(job, device, result, device=device)
                continue
            for event in outcome["farm"]:
                session.farm_log.record(**event)
            if outcome.get("quarantined"):
                traces.end(device)
                pending.appendleft(job)
                yield WorkerStopped(device, f"device {device} quarantined: unhealthy")
                continue
            result = TaskResult.from_json(outcome["result"])
            idle.append(device)
            if outcome["lost"] and session.may_retry(job, device, result.reason or "device lost"):
                traces.end(device)
                pending.append(job)
                continue
            traces.end(device, job)
            yield session.record(job, device, result, device=device, pid=outcome["pid"])


def _take_all(ops: Any) -> list[TraceOp]:
    count = ops.qsize()
    return list(ops.get_nowait_batch(count)) if count else []


class _DriverTraces:
    """The traces of the tasks running on the actors, written by the driver as the
    workers' operations arrive: the run folder's one writer."""

    def __init__(self, session: RunSession) -> None:
        self.session = session
        self.jobs = {job.task_id: job for job in session.jobs}
        self.open: dict[str, tuple[str, TraceWriter]] = {}  # device -> (task id, trace)

    def _trace(self, device: str, task_id: str) -> TraceWriter:
        current = self.open.get(device)
        if current is not None and current[0] == task_id:
            return current[1]
        self.end(device)
        trace = self.session.store.start_trace(task_id)
        self.open[device] = (task_id, trace)
        return trace

    def apply(self, ops: list[TraceOp]) -> Iterator[RunEvent]:
        session = self.session
        for device, task_id, kind, name, payload in ops:
            job = self.jobs.get(task_id)
            if job is None:
                raise ConfigError(f"a worker sent the trace of a task not in this run: {task_id!r}")
            trace = self._trace(device, task_id)
            if kind == "step":
                record = StepRecord.from_json(payload)
                trace.add(record)
                shot = step_screenshot(session.config, session.store.run_dir, job, record)
                yield StepDone(task_id, device, record, shot)
                continue
            if PurePosixPath(name).name != name or name in ("", ".", ".."):
                raise ConfigError(f"a worker sent a trace file outside its folder: {name!r}")
            if kind == "file":
                trace.save_file(name, payload)
            elif kind == "json":
                trace.write_json(name, payload)

    def end(self, device: str, job: Job | None = None) -> None:
        """Close the device's trace; with ``job``, a task with a result: it gets an (empty)
        trace folder even when it sent nothing, as every recorded task has one."""
        current = self.open.pop(device, None)
        if current is not None:
            current[1].close()
        elif job is not None:
            self.session.store.start_trace(job.task_id).close()

    def close_all(self) -> None:
        for device in list(self.open):
            self.end(device)
