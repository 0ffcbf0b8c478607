"""The Ray executor: one actor per device, placed on the node that holds the device.

Every device ``D`` needs the custom resource ``device-D`` (see ``resource_name``) on the
node whose adb server reaches it; ``ray start --resources '{"device-emulator-5554": 1}'``
declares it there. Without ``ray_address`` the driver starts a local Ray instance that
declares one resource per device itself. Each actor runs a ``DeviceWorker``; the driver
hands out one task at a time per actor, writes every result and trace into the run
folder, and records the farm's events. A task whose device is lost, or whose actor dies
(a killed worker process, a lost node), goes back to the queue and runs on another
device, at most ``task_retries`` times; a dead actor is retired, a quarantined device too.

Ray is an optional dependency: ``pip install 'elderbench-studio[farm]'``.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from evaluator.errors import ConfigError, RunStopped
from evaluator.farm.worker import DeviceWorker
from evaluator.records import StepRecord, TaskResult

if TYPE_CHECKING:
    from evaluator.runner import RunEvent, _Job, _Session

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


def run_on_ray(session: _Session, devices: tuple[str, ...]) -> Iterator[RunEvent]:
    """Run the session's queued jobs on one actor per device; yields the run's events."""
    from evaluator.runner import TaskFinished, TaskStarted, WorkerStopped, _error_result

    ray = _import_ray()
    started_here = _connect(ray, devices, session.config.farm.ray_address)
    actors: dict[str, Any] = {}
    try:
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
        remote = ray.remote(DeviceWorker)
        actors = {
            d: remote.options(
                num_cpus=0, resources={resource_name(d): 1}, max_restarts=0, max_task_retries=0
            ).remote(session.config, d)
            for d in devices
        }
        pending: collections.deque[_Job] = collections.deque()
        while not session.jobs.empty():
            pending.append(session.jobs.get_nowait())
        idle = list(devices)
        running: dict[Any, tuple[str, _Job]] = {}
        while pending or running:
            if session.control.stop.is_set():
                return
            while idle and pending:
                device, job = idle.pop(0), pending.popleft()
                running[actors[device].run.remote(job)] = (device, job)
                instruction = job.task.instruction_for(session.config.variant) if job.task else ""
                yield TaskStarted(job.task_id, device, instruction)
            if not running:
                break  # tasks left, no device left: they run on --resume
            ready, _ = ray.wait(list(running), num_returns=1, timeout=WAIT_SECONDS)
            for ref in ready:
                device, job = running.pop(ref)
                try:
                    outcome = ray.get(ref)
                except ray.exceptions.RayError as exc:  # the actor or its node died
                    session.farm_log.record("actor_lost", device, task=job.task_id, error=str(exc))
                    yield WorkerStopped(device, f"its worker died: {type(exc).__name__}")
                    if not _retry(session, job, device, "the worker process died", pending):
                        result = _error_result(
                            job, "its device worker died", 0.0, None, session.config.variant
                        )
                        yield from _finish(session, job, device, result, [], TaskFinished, None)
                    continue
                for event in outcome["farm"]:
                    session.farm_log.record(**event)
                if outcome.get("quarantined"):
                    pending.appendleft(job)
                    yield WorkerStopped(device, f"device {device} quarantined: unhealthy")
                    continue
                result = TaskResult.from_json(outcome["result"])
                if outcome["lost"] and _retry(
                    session, job, device, result.reason or "device lost", pending
                ):
                    idle.append(device)
                    continue
                yield from _finish(
                    session, job, device, result, outcome["trace"], TaskFinished, outcome["pid"]
                )
                idle.append(device)
    except RunStopped:
        return
    finally:
        for actor in actors.values():
            ray.kill(actor)
        if started_here:
            ray.shutdown()


def _retry(
    session: _Session, job: _Job, device: str, reason: str, pending: collections.deque[_Job]
) -> bool:
    if not session.may_retry(job, device, reason):
        return False
    pending.append(job)
    return True


def _finish(
    session: _Session,
    job: _Job,
    device: str,
    result: TaskResult,
    ops: list[tuple[str, str, Any]],
    finished: Any,
    pid: int | None,
) -> Iterator[RunEvent]:
    """Write the task's trace and result into the run folder; the run's one writer."""
    trace = session.store.start_trace(job.task_id)
    try:
        for kind, name, payload in ops:
            if kind == "step":
                trace.add(StepRecord.from_json(payload))
            elif kind in ("file", "json"):
                if PurePosixPath(name).name != name or name in ("", ".", ".."):
                    raise ConfigError(f"a worker sent a trace file outside its folder: {name!r}")
                if kind == "file":
                    trace.save_file(name, payload)
                else:
                    trace.write_json(name, payload)
    finally:
        trace.close()
    session.store.append_result(result)
    session.farm_log.record(
        "task", device, task=job.task_id, status=result.status.value, worker_pid=pid
    )
    session.done += 1
    yield finished(job.task_id, device, result, session.done, session.total)
