"""The local executor: worker threads on this host, one per device online, ``workers``
offline, each with its own agent.

A worker whose device is lost mid-task gives the task back (at most ``task_retries``
times) and heals the device before its next task; one that cannot be healed stops and the
others take its remaining tasks. After a stop the workers get ``STOP_GRACE`` seconds to
reach a checkpoint; one still inside an agent or device call is then abandoned (its agent
is aborted, and the run store refuses anything it writes later), so that a stop ends the
run within seconds whatever a call is doing.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterator

from devices.address import DeviceAddress
from devices.device import Device
from devices.errors import DeviceError
from evaluator.agents import Agent
from evaluator.errors import RunNotOwnedError, RunStopped
from evaluator.execution import (
    Job,
    RunEvent,
    RunSession,
    TaskExecution,
    WorkerStopped,
)
from evaluator.farm.pool import DeviceSlot, lost, prepare
from evaluator.judges import Judge, create_judge
from evaluator.records import TaskStatus

log = logging.getLogger(__name__)

# Seconds the workers get after a stop before the busy ones are abandoned.
STOP_GRACE = 3.0


class _WorkerExit:
    """Put on the event queue by a worker thread as it ends."""


class _JobQueue:
    """The jobs left, and how many are running (one may come back after a lost device)."""

    def __init__(self, jobs: tuple[Job, ...]) -> None:
        self._jobs: queue.Queue[Job] = queue.Queue()
        for job in jobs:
            self._jobs.put(job)
        self._lock = threading.Lock()
        self._in_flight = 0

    def take(self, session: RunSession) -> Job | None:
        """The next job, or None when none is left (or the run stops): the queue is empty
        and no job that might still come back is running on another worker."""
        while True:
            try:
                session.control.checkpoint()
            except RunStopped:
                return None
            with self._lock:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    if self._in_flight == 0:
                        return None
                else:
                    self._in_flight += 1
                    return job
            time.sleep(0.05)

    def give_back(self, job: Job, *, requeue: bool) -> None:
        with self._lock:
            self._in_flight -= 1
            if requeue:
                self._jobs.put(job)


class ThreadExecutor:
    """Runs a session's jobs on worker threads in this process."""

    def run(self, session: RunSession) -> Iterator[RunEvent]:
        config = session.config
        jobs = _JobQueue(session.jobs)
        events: queue.Queue[RunEvent | _WorkerExit] = queue.Queue()
        slots: list[str | None] = (
            list(config.devices)
            if config.devices
            else [None] * min(config.workers, max(1, len(session.jobs)))
        )
        threads, agents = [], []
        for i, serial in enumerate(slots):
            agent = session.new_agent()
            agents.append(agent)
            worker = _Worker(session, jobs, events, serial or f"worker-{i}", agent, serial)
            thread = threading.Thread(target=worker.run, name=f"eval-{worker.name}", daemon=True)
            threads.append(thread)
            thread.start()
        yield from _drain(session, events, threads, agents)


def _drain(
    session: RunSession,
    events: queue.Queue[RunEvent | _WorkerExit],
    threads: list[threading.Thread],
    agents: list[Agent],
) -> Iterator[RunEvent]:
    """The workers' events until every worker has ended, or the stop's grace is over."""
    control = session.control
    running = len(threads)
    stopped_at: float | None = None
    try:
        while running:
            try:
                event = events.get(timeout=0.1)
            except queue.Empty:
                if control.stop.is_set():
                    stopped_at = stopped_at or time.monotonic()
                    if time.monotonic() - stopped_at > STOP_GRACE:
                        log.warning("abandoned %d worker(s) still busy after the stop", running)
                        _abort(agents)
                        break
                continue
            if isinstance(event, _WorkerExit):
                running -= 1
                continue
            yield event
    finally:
        if running and not control.stop.is_set():
            # The consumer went away (Ctrl-C, GUI closed): stop the workers, briefly wait.
            control.stop.set()
            deadline = time.monotonic() + STOP_GRACE
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for thread in threads):
            _abort(agents)


def _abort(agents: list[Agent]) -> None:
    """End agents whose workers are stuck, so that no agent program outlives the run."""
    for agent in agents:
        abort = getattr(agent, "abort", None)
        try:
            abort() if abort is not None else agent.close()
        except Exception:  # noqa: BLE001 - the run is ending; a failing close must not hide why
            log.exception("could not end agent %s", agent.name)


class _Worker:
    """One worker thread: takes jobs until none is left, on its device (None offline)."""

    def __init__(
        self,
        session: RunSession,
        jobs: _JobQueue,
        events: queue.Queue[RunEvent | _WorkerExit],
        name: str,
        agent: Agent,
        serial: str | None,
    ) -> None:
        self.session = session
        self.jobs = jobs
        self.events = events
        self.name = name
        self.agent = agent
        self.serial = serial
        # serial -> the whole-phone snapshot saved when this worker first used the device
        self.clean_starts: dict[str, str | None] = {}

    def run(self) -> None:
        try:
            self._work()
        except RunNotOwnedError as exc:
            log.warning("worker %s: %s", self.name, exc)
        finally:
            self.agent.close()
            self.events.put(_WorkerExit())

    def _work(self) -> None:
        session, config = self.session, self.session.config
        slot: DeviceSlot | None = None
        judges: list[Judge] = []
        if self.serial is not None:
            # Judge configs were checked before the run started; this cannot fail on them.
            judges = [create_judge(n, config.judge_config.get(n)) for n in config.judges]
            try:
                slot = DeviceSlot(DeviceAddress.parse(self.serial))
            except DeviceError as exc:
                self.events.put(WorkerStopped(self.name, str(exc)))
                return
        try:
            while (job := self.jobs.take(session)) is not None:
                if not self._run(job, slot, judges):
                    return
        finally:
            if slot is not None:
                lost(slot)

    def _run(self, job: Job, slot: DeviceSlot | None, judges: list[Judge]) -> bool:
        """Run one job; False when this worker stops (its device quarantined, a stop)."""
        session = self.session
        device: Device | None = None
        if slot is not None:
            device = prepare(slot, session.config.farm, self._open, session.farm_log.record)
            if device is None:
                self.jobs.give_back(job, requeue=True)  # for a healthy device, or --resume
                self.events.put(
                    WorkerStopped(self.name, f"device {slot.name} quarantined: unhealthy")
                )
                return False
        execution = TaskExecution(
            session.config,
            job,
            self.name,
            self.agent,
            device,
            judges,
            session.store,
            session.control,
            self.events.put,
            self.clean_starts,
        )
        try:
            outcome = execution.run()
        except (RunStopped, RunNotOwnedError):
            self.jobs.give_back(job, requeue=False)  # unfinished: it reruns on resume
            return False
        result = outcome.result
        if result.status is TaskStatus.ERROR and session.control.stop.is_set():
            self.jobs.give_back(job, requeue=False)
            return False  # most likely the stop itself (an aborted agent): rerun on resume
        if outcome.device_lost and slot is not None:
            lost(slot)
            reason = result.reason or "device lost"
            if session.may_retry(job, slot.name, reason):
                self.jobs.give_back(job, requeue=True)
                return True
        self.jobs.give_back(job, requeue=False)
        self.events.put(session.record(job, self.name, result, device=slot.name if slot else None))
        return True

    def _open(self, address: DeviceAddress) -> Device:
        return self.session.device_factory(str(address))
