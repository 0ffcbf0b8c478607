"""Executing a run's tasks: the job, the run's events, and the seam executors plug into.

The runner selects jobs, opens the run store and hands both, as a ``RunSession``, to an
``Executor`` chosen by name (``evaluator.farm.executors.EXECUTORS``): worker threads on
this host, or one Ray actor per device. Whatever the executor, one ``TaskExecution`` runs
one job on one device (None offline) with one agent and reports its events through a
callback; the session writes results, counts them and decides retries, so both executors
account for a run the same way.

>>> job = Job("t1", Path("suite/t1"), EvalProtocol.OFFLINE, None, "task.json is damaged")
>>> result = error_result(job, "cannot load task.json", started=0.0, device=None)
>>> result.status.value, result.reason, result.steps
('error', 'cannot load task.json', 0)
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from devices.device import Device
from devices.hierarchy import DEFAULT_HIERARCHY
from devices.screen_recording import recording
from evaluator.agents import Agent, create_agent
from evaluator.clean_start import save_clean_state
from evaluator.control import Control
from evaluator.errors import (
    DeviceLostError,
    EvaluatorError,
    RunNotOwnedError,
    RunStopped,
    TaskSetupError,
)
from evaluator.farm.log import FarmLog
from evaluator.judges import Judge
from evaluator.manifest import DEVICE_FILE, device_fingerprint, suite_packages
from evaluator.matching import PROFILES
from evaluator.offline import GraphContext, OfflineSettings, run_offline
from evaluator.records import StepRecord, TaskResult, TaskStatus, outcome_counts
from evaluator.run_config import RunConfig
from evaluator.run_store import SCREEN_VIDEO_FILE, RunStore, Trace
from evaluator.users import create_user
from graph_builder.errors import GraphBuilderError
from graph_builder.io import GRAPH_FILE
from graph_builder.model import EvalProtocol, InstructionVariant, Labels, Task

if TYPE_CHECKING:
    from evaluator.online import OnlineSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Job:
    """One selected task; ``task`` None when its task.json did not load (``problem`` says
    why), which runs as an error result."""

    task_id: str
    task_dir: Path
    protocol: EvalProtocol
    task: Task | None
    problem: str | None = None

    def instruction(self, variant: InstructionVariant) -> str:
        return self.task.instruction_for(variant) if self.task else ""


# --------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class RunStarted:
    run_dir: Path
    total: int  # tasks selected
    pending: int  # tasks this session will run
    skipped: tuple[str, ...]  # finished before (resume)
    suite_change: str | None = None  # a resume found the suite changed (evaluator.manifest)


@dataclass(frozen=True, slots=True)
class TaskStarted:
    task_id: str
    worker: str
    instruction: str


@dataclass(frozen=True, slots=True)
class StepDone:
    """One step, with what a live view shows: the screenshot file, action, raw output."""

    task_id: str
    worker: str
    record: StepRecord
    screenshot_path: Path | None


@dataclass(frozen=True, slots=True)
class TaskFinished:
    task_id: str
    worker: str
    result: TaskResult
    done: int  # tasks finished so far, including those skipped on resume
    total: int


@dataclass(frozen=True, slots=True)
class WorkerStopped:
    worker: str
    reason: str


@dataclass(frozen=True, slots=True)
class RunFinished:
    run_dir: Path
    stopped: bool
    finished: int
    not_run: tuple[str, ...]


RunEvent = RunStarted | TaskStarted | StepDone | TaskFinished | WorkerStopped | RunFinished
Report = Callable[[RunEvent], None]
DeviceFactory = Callable[[str], Device]


def default_device_factory(address: str, *, hierarchy: str = DEFAULT_HIERARCHY) -> Device:
    """A real AndroidDevice for ``SERIAL`` (the adb server named by ANDROID_ADB_SERVER_PORT)
    or ``SERIAL@HOST:PORT`` (the adb server there), dumping with ``hierarchy``."""
    from devices.address import open_device

    return open_device(address, hierarchy=hierarchy)


def error_result(
    job: Job,
    reason: str,
    started: float,
    device: Device | None,
    variant: InstructionVariant = InstructionVariant.ORIGINAL,
    model: str | None = None,
    steps: Sequence[StepRecord] = (),
) -> TaskResult:
    """A task that could not be evaluated, with the run's variant and model and what the
    agent spent on the steps it took before the error."""
    task = job.task
    counts = outcome_counts(steps)
    return TaskResult(
        task_id=job.task_id,
        status=TaskStatus.ERROR,
        protocol=job.protocol.value,
        instruction=job.instruction(variant),
        variant=InstructionVariant(variant).value,
        app=task.app if task else "",
        labels=task.labels if task else Labels(),
        steps=len(steps),
        reason=reason,
        parse_failures=sum(1 for r in steps if r.parse_error is not None),
        questions=counts["questions"],
        answers_given=counts["answers_given"],
        give_ups=counts["give_ups"],
        invalid_actions=counts["invalid_actions"],
        inference_seconds=sum(r.inference_seconds + r.parsing_seconds for r in steps),
        retry_seconds=sum(r.retry_seconds for r in steps),
        input_tokens=sum(r.input_tokens for r in steps),
        output_tokens=sum(r.output_tokens for r in steps),
        model=model,
        device=device.serial if device is not None else None,
        started=started,
        finished=time.time(),
    )


def step_screenshot(config: RunConfig, run_dir: Path, job: Job, record: StepRecord) -> Path | None:
    """Where a step's screenshot lives: offline in the suite (the node's image), online in
    the run folder (the trace)."""
    if not record.screenshot:
        return None
    folder = config.suite if job.protocol is EvalProtocol.OFFLINE else run_dir
    return folder / record.screenshot


# --------------------------------------------------------------------------- one task


class TraceStore(Protocol):
    """Where a task's trace goes: the run folder, or a remote worker's memory."""

    @property
    def run_dir(self) -> Path: ...

    def start_trace(self, task_id: str) -> Trace: ...


@dataclass(frozen=True, slots=True)
class Outcome:
    result: TaskResult
    device_lost: bool  # the device went away while the task ran: it may run elsewhere


@dataclass(frozen=True, slots=True)
class TaskExecution:
    """Runs one job on one device (None offline) with one agent, writing its trace into
    ``store`` and reporting TaskStarted and every StepDone through ``report``.

    ``clean_starts`` maps a device serial to the whole-phone snapshot saved when the run
    first used it (None: the phone could not be saved); a task starts from it. RunStopped
    passes through: the task is left unfinished, for ``--resume``.
    """

    config: RunConfig
    job: Job
    worker: str
    agent: Agent
    device: Device | None
    judges: Sequence[Judge]
    store: TraceStore
    control: Control
    report: Report
    clean_starts: dict[str, str | None] = field(default_factory=dict)

    def run(self) -> Outcome:
        job, started = self.job, time.time()
        self.report(TaskStarted(job.task_id, self.worker, job.instruction(self.config.variant)))
        trace: Trace | None = None
        steps: list[StepRecord] = []  # what the agent spent before an error, if one comes

        def error(reason: str) -> TaskResult:
            return error_result(
                job, reason, started, self.device, self.config.variant, self.agent.model, steps
            )

        try:
            if job.task is None:
                raise TaskSetupError(job.problem or "the task could not be loaded")
            trace = self.store.start_trace(job.task_id)
            return Outcome(self._execute(job.task, trace, steps), False)
        except (RunStopped, RunNotOwnedError):
            raise  # a stop, or a store this session no longer owns: nothing to record
        except DeviceLostError as exc:
            return Outcome(error(str(exc)), True)
        except (EvaluatorError, GraphBuilderError, OSError) as exc:
            return Outcome(error(str(exc)), False)
        except Exception as exc:  # noqa: BLE001 - a bug in one agent must not end a paid run
            log.exception("unexpected error in task %s", job.task_id)
            return Outcome(error(f"unexpected {type(exc).__name__}: {exc}"), False)
        finally:
            if trace is not None:
                trace.close()

    def _on_step(self, trace: Trace, steps: list[StepRecord]) -> Callable[[StepRecord], None]:
        def on_step(record: StepRecord) -> None:
            steps.append(record)
            trace.add(record)
            shot = step_screenshot(self.config, self.store.run_dir, self.job, record)
            self.report(StepDone(self.job.task_id, self.worker, record, shot))

        return on_step

    def _execute(self, task: Task, trace: Trace, steps: list[StepRecord]) -> TaskResult:
        config, job = self.config, self.job
        if job.protocol is EvalProtocol.OFFLINE:
            return run_offline(
                task,
                GraphContext.load(job.task_dir),
                self.agent,
                variant=config.variant,
                settings=OfflineSettings(config.mode, config.max_steps, PROFILES[config.matching]),
                control=self.control,
                on_step=self._on_step(trace, steps),
                user=create_user(config.user_simulator),
            )
        from evaluator.online import run_online

        if self.device is None:
            raise TaskSetupError(f"task {task.id} is online and no device was given (--device)")
        if self.device.serial not in self.clean_starts:  # the run's first task on this device
            packages = suite_packages(config.suite)
            trace.write_json(DEVICE_FILE, device_fingerprint(self.device, packages))
        graph = None
        if (job.task_dir / GRAPH_FILE).is_file():
            try:
                graph = GraphContext.load(job.task_dir)
            except TaskSetupError as exc:
                log.warning("%s: running online without state mapping: %s", task.id, exc)
        video = (
            recording(self.device, trace.folder / SCREEN_VIDEO_FILE)
            if config.record_screen
            else contextlib.nullcontext()
        )
        with video:  # from before the reset until after the last step
            return run_online(
                task,
                self.agent,
                self.device,
                trace,
                variant=config.variant,
                settings=self._online_settings(self.device),
                judges=list(self.judges),
                graph=graph,
                control=self.control,
                on_step=self._on_step(trace, steps),
                user=create_user(config.user_simulator),
            )

    def _online_settings(self, device: Device) -> OnlineSettings:
        from evaluator.online import OnlineSettings

        if device.serial not in self.clean_starts:  # one worker per device: no race
            # the phone as the run found it: every task of the run starts from it
            self.clean_starts[device.serial] = save_clean_state(device)
        config = self.config
        return OnlineSettings(
            config.max_steps,
            config.settle_timeout,
            config.judge_frames,
            PROFILES[config.matching],
            clean_snapshot=self.clean_starts[device.serial],
            max_wait=config.max_wait,
        )


# --------------------------------------------------------------------------- the session


class RunSession:
    """One session of a run, as an executor sees it: the jobs to run, the run store and
    its farm log, and the accounting both executors share (retries, results, counts)."""

    def __init__(
        self,
        config: RunConfig,
        store: RunStore,
        jobs: Sequence[Job],
        control: Control,
        *,
        device_factory: DeviceFactory = default_device_factory,
        done_before: int = 0,
        total: int | None = None,
        first_agent: Agent | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.jobs = tuple(jobs)
        self.control = control
        self.device_factory = device_factory
        self.done = done_before
        self.total = len(jobs) + done_before if total is None else total
        self.farm_log = FarmLog(store.run_dir)
        self._lock = threading.Lock()
        self._attempts: dict[str, int] = {}  # task id -> runs lost with their device
        self._first_agent = first_agent

    def new_agent(self) -> Agent:
        """An agent for one worker: the one the runner made to describe the run, then new
        ones (every worker has its own)."""
        with self._lock:
            agent, self._first_agent = self._first_agent, None
        return agent or create_agent(self.config.agent, self.config.agent_settings())

    def close_unused_agent(self) -> None:
        with self._lock:
            agent, self._first_agent = self._first_agent, None
        if agent is not None:
            agent.close()

    def may_retry(self, job: Job, device: str, reason: str) -> bool:
        """Count a lost run of ``job``; True (and logged) while retries are left. The
        executor then puts the job back in its own queue."""
        with self._lock:
            attempt = self._attempts.get(job.task_id, 0) + 1
            self._attempts[job.task_id] = attempt
        if attempt > self.config.farm.task_retries:
            return False
        self.farm_log.record("retry", device, task=job.task_id, attempt=attempt, reason=reason)
        return True

    def record(
        self,
        job: Job,
        worker: str,
        result: TaskResult,
        *,
        device: str | None,
        pid: int | None = None,
    ) -> TaskFinished:
        """Append ``result`` to the run (scrubbed of the run's secrets, since the event
        reaches screens and stderr too) and count it. RunNotOwnedError: this session no
        longer owns the run folder (it was stopped; another session may own it now)."""
        if self.store.secrets:
            result = TaskResult.from_json(self.store.secrets.scrub_json(result.to_json()))
        self.store.append_result(result)
        if device is not None:
            fields = {"worker_pid": pid} if pid is not None else {}
            self.farm_log.record(
                "task", device, task=job.task_id, status=result.status.value, **fields
            )
        with self._lock:
            self.done += 1
            done = self.done
        return TaskFinished(job.task_id, worker, result, done, self.total)


class Executor(Protocol):
    """Runs a session's jobs and yields the events between RunStarted and RunFinished
    (TaskStarted, StepDone, TaskFinished, WorkerStopped). It returns when every job has
    a result, when no worker is left (the rest run on ``--resume``), or soon after the
    session's stop event is set; leaving early (the consumer went away) stops it too."""

    def run(self, session: RunSession) -> Iterator[RunEvent]: ...
