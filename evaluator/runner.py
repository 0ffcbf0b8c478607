"""Run an agent over a suite, into a run folder, from the CLI or a GUI worker thread.

``iter_run(config)`` is a generator of events (RunStarted, TaskStarted, StepDone,
TaskFinished, WorkerStopped, RunFinished); ``run_suite(config, progress=cb)`` drives it and
calls ``cb`` with each event. Both honour a stop event (the current task is left
unfinished and reruns on ``resume``) and a pause event (checked between steps).

Tasks run on workers, one thread each: one per device online, ``workers`` offline. Every
worker has its own agent. A task that cannot be evaluated (no graph, invalid graph,
endpoint down, device lost) is recorded with status ``error`` and the run goes on; a
worker whose device is lost stops and the others take its remaining tasks.

>>> import tempfile
>>> from importlib.resources import files
>>> tmp = tempfile.TemporaryDirectory()
>>> config = RunConfig(suite=files("task_graphs") / "sample", out=Path(tmp.name) / "run",
...                    agent="replay", tasks=("font_bigger",))
>>> for event in iter_run(config):
...     if isinstance(event, TaskFinished):
...         print(event.task_id, event.result.status.value, event.result.steps)
...     else:
...         print(type(event).__name__)
RunStarted
TaskStarted
StepDone
StepDone
StepDone
StepDone
font_bigger success 4
RunFinished
>>> tmp.cleanup()
"""

from __future__ import annotations

import json
import logging
import platform
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from devices.address import DeviceAddress
from devices.device import Device
from devices.errors import DeviceError
from elderbench import __version__
from evaluator.agents import Agent, create_agent
from evaluator.clean_start import save_clean_state
from evaluator.control import Control
from evaluator.device_owner import hold_run_devices
from evaluator.errors import (
    ConfigError,
    DeviceLostError,
    EvaluatorError,
    RunStopped,
    TaskSetupError,
)
from evaluator.farm.log import FarmLog
from evaluator.farm.pool import DeviceSlot, FarmSettings, lost, prepare
from evaluator.judges import Judge, create_judge
from evaluator.matching import PROFILES
from evaluator.offline import GraphContext, Mode, OfflineSettings, run_offline
from evaluator.records import StepRecord, TaskResult, TaskStatus
from evaluator.run_store import RunStore, TraceWriter
from evaluator.secrets import Secrets, redact
from graph_builder.errors import GraphBuilderError
from graph_builder.io import GRAPH_FILE, load_suite, load_task, shipped_demos, suite_task_dirs
from graph_builder.model import EvalProtocol, InstructionVariant, Labels, Task
from graph_builder.packing import DUPLICATES_FILE, restore

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything a run needs. ``protocol`` None runs each task under its own protocol;
    a protocol selects the tasks declared with it (or, with ``tasks``, forces it)."""

    suite: Path
    out: Path
    agent: str
    agent_config: Mapping[str, Any] = field(default_factory=dict)
    protocol: EvalProtocol | None = None
    tasks: tuple[str, ...] = ()
    variant: InstructionVariant = InstructionVariant.ORIGINAL
    demos: Path | None = None
    mode: Mode = Mode.STRICT
    max_steps: int | None = None
    devices: tuple[str, ...] = ()
    workers: int = 1
    judges: tuple[str, ...] = ("rule",)
    judge_config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    resume: bool = False
    settle_timeout: float = 3.0
    judge_frames: int = 3
    matching: str = "elderbench"  # a profile of evaluator.matching.PROFILES
    farm: FarmSettings = field(default_factory=FarmSettings)
    max_wait: float = 10.0  # seconds a wait action may sleep online

    def __post_init__(self) -> None:
        object.__setattr__(self, "suite", Path(self.suite))
        if self.demos is None:
            # A suite that ships its demonstrations (like task_graphs/sample) needs no --demos.
            object.__setattr__(self, "demos", shipped_demos(self.suite))
        object.__setattr__(self, "out", Path(self.out))
        object.__setattr__(self, "variant", InstructionVariant(self.variant))
        object.__setattr__(self, "mode", Mode(self.mode))
        if self.protocol is not None:
            object.__setattr__(self, "protocol", EvalProtocol(self.protocol))
        object.__setattr__(self, "tasks", tuple(self.tasks))
        object.__setattr__(self, "devices", tuple(self.devices))
        object.__setattr__(self, "judges", tuple(self.judges))
        if self.workers < 1:
            raise ConfigError("workers must be at least 1")
        if self.matching not in PROFILES:
            raise ConfigError(
                f"unknown matching profile {self.matching!r}; choose from: {', '.join(PROFILES)}"
            )
        if self.max_steps is not None and self.max_steps < 1:
            raise ConfigError(f"max_steps must be at least 1, got {self.max_steps}")
        if not self.max_wait >= 0:
            raise ConfigError(f"max_wait must be a number of seconds >= 0, got {self.max_wait}")

    def agent_settings(self) -> dict[str, Any]:
        settings = dict(self.agent_config)
        if self.demos is not None:
            settings.setdefault("demos", str(self.demos))
        return settings

    def secrets(self) -> Secrets:
        """The secret values this run knows (scrubbed from everything it writes)."""
        return Secrets.of(self.agent_config, self.judge_config)

    def to_json(self) -> dict[str, Any]:
        """What run.json records (``_JSON_FIELDS``); ``agent_config`` includes the demos,
        as an absolute path like every other path."""
        out = {name: write(getattr(self, name)) for name, (write, _) in _JSON_FIELDS.items()}
        settings = self.agent_settings()
        if self.demos is not None and settings.get("demos") == str(self.demos):
            settings["demos"] = str(self.demos.resolve())
        out["agent_config"] = settings
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], **overrides: Any) -> RunConfig:
        """A config from ``to_json``'s output. A field that is missing or null takes the
        dataclass default; ``overrides`` win over ``data``. KeyError: a required field is
        missing."""
        values: dict[str, Any] = dict(overrides)
        for f in fields(cls):
            if f.name in values or f.name not in _JSON_FIELDS:
                continue
            raw = data.get(f.name)
            if raw is not None:
                values[f.name] = _JSON_FIELDS[f.name][1](raw)
            elif f.default is MISSING and f.default_factory is MISSING:
                raise KeyError(f.name)
        return cls(**values)


def _same(value: Any) -> Any:
    return value


def _value(member: Any) -> Any:
    return member.value if member is not None else None


# How each RunConfig field is written to run.json and read back (resume). The defaults are
# the dataclass's own, stated once above; ``resume`` is a request, not part of the record.
_JSON_FIELDS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "suite": (lambda path: str(path.resolve()), Path),
    "out": (lambda path: str(path.resolve()), Path),
    "agent": (_same, str),
    "agent_config": (dict, dict),  # written by to_json as agent_settings()
    "protocol": (_value, _same),
    "tasks": (list, tuple),
    "variant": (_value, _same),
    "demos": (
        lambda path: str(path.resolve()) if path else None,
        lambda raw: Path(raw) if raw else None,
    ),
    "mode": (_value, _same),
    "max_steps": (_same, _same),
    "devices": (list, tuple),
    "workers": (_same, int),
    "judges": (list, tuple),
    "judge_config": (lambda configs: {k: dict(v) for k, v in configs.items()}, dict),
    "settle_timeout": (_same, float),
    "judge_frames": (_same, int),
    "matching": (_same, str),
    "farm": (lambda farm: farm.to_json(), FarmSettings.from_json),
    "max_wait": (_same, float),
}


def resume_config(run_dir: Path) -> RunConfig:
    """The configuration recorded in ``run_dir``'s run.json, set to resume that run there
    (what a GUI needs to continue a run it did not start). Keys redacted in run.json stay
    redacted: agents read keys from environment variables, never from the config."""
    data = RunStore.open(run_dir).info().get("config")
    if not isinstance(data, dict):
        raise ConfigError(f"{run_dir} has no run configuration in run.json; start a new run")
    try:
        return RunConfig.from_json(data, out=Path(run_dir), resume=True)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"the configuration in {run_dir}/run.json is damaged: {exc}") from exc


# What a resume may change: where the run lives and what it runs on, never what it measures.
_RESUME_MAY_CHANGE = frozenset({"out", "workers", "devices"})
# The CLI's names for RunConfig fields, so that a refusal names the option to fix.
_OPTION_NAMES = {
    "variant": "--instruction",
    "max_steps": "--max-steps",
    "max_wait": "--max-wait",
    "agent_config": "--agent-config",
    "judge_config": "--judge-config",
    "judges": "--judge",
}


def resume_changes(previous: Mapping[str, Any], config: RunConfig) -> list[str]:
    """How ``config`` differs from the configuration recorded in a run's run.json, one
    phrase per setting (empty: the run may be resumed with it). Settings an older run.json
    did not record are not compared."""
    current = redact(config.to_json())
    changes = []
    for key, value in current.items():
        if key in _RESUME_MAY_CHANGE or key not in previous:
            continue
        before = previous[key]
        if key == "tasks":
            before, value = sorted(before or []), sorted(value)
        if before != value:
            name = _OPTION_NAMES.get(key, "--" + key.replace("_", "-"))
            changes.append(f"{name} {_shown(before)} -> {_shown(value)}")
    return changes


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_resume(config: RunConfig, info: Mapping[str, Any]) -> None:
    previous = info.get("config")
    if not isinstance(previous, dict):
        return
    changes = resume_changes(previous, config)
    if changes:
        raise ConfigError(
            f"{config.out} holds a run with another configuration; --resume would mix "
            f"results of both: {'; '.join(changes)}. Resume with the run's own options "
            "(the studio's Resume does), or choose another --out folder."
        )


# --------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class RunStarted:
    run_dir: Path
    total: int  # tasks selected
    pending: int  # tasks this session will run
    skipped: tuple[str, ...]  # finished before (resume)


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


@dataclass(frozen=True, slots=True)
class _Job:
    task_id: str
    task_dir: Path
    protocol: EvalProtocol
    task: Task | None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class _WorkerExit:
    worker: str


DeviceFactory = Callable[[str], Device]

# After a stop, workers get this many seconds to reach their next checkpoint; a worker
# still inside an agent or device call then is abandoned (its task reruns on resume), so
# a stop or a second Ctrl-C ends the run within seconds whatever a call is doing.
STOP_GRACE = 3.0


def default_device_factory(address: str) -> Device:
    """A real AndroidDevice for ``SERIAL`` (the adb server named by ANDROID_ADB_SERVER_PORT)
    or ``SERIAL@HOST:PORT`` (the adb server there)."""
    from devices.address import open_device

    return open_device(address)


# --------------------------------------------------------------------------- selection


def load_jobs(config: RunConfig) -> list[_Job]:
    """The selected tasks in id order; a task.json that does not load becomes an error job."""
    if not config.suite.is_dir():
        raise ConfigError(f"suite folder {config.suite} does not exist")
    try:
        restore(config.suite)  # a packed suite (the installed sample) gets its copies back
    except OSError as exc:
        raise ConfigError(
            f"{config.suite} is packed ({DUPLICATES_FILE}) and its copies cannot be written "
            f"back ({exc}); copy the folder somewhere writable and run that"
        ) from exc
    jobs: list[_Job] = []
    for task_dir in suite_task_dirs(config.suite):
        try:
            task = load_task(task_dir)
        except GraphBuilderError as exc:
            jobs.append(
                _Job(
                    task_dir.name,
                    task_dir,
                    config.protocol or EvalProtocol.OFFLINE,
                    None,
                    f"cannot load task.json: {exc}",
                )
            )
            continue
        jobs.append(_Job(task.id, task_dir, config.protocol or task.protocol, task))
    seen: dict[str, Path] = {}
    for job in jobs:
        if job.task_id in seen:
            raise ConfigError(
                f"two folders of {config.suite} hold task {job.task_id!r}: "
                f"{seen[job.task_id].name}/ and {job.task_dir.name}/; give each task its own "
                "id (the 'id' in its task.json) or remove one of them"
            )
        seen[job.task_id] = job.task_dir
    if config.tasks:
        known = {j.task_id for j in jobs}
        unknown = [t for t in config.tasks if t not in known]
        if unknown:
            raise ConfigError(f"no such task(s) in {config.suite}: {', '.join(unknown)}")
        by_id = {j.task_id: j for j in jobs}
        return [by_id[t] for t in dict.fromkeys(config.tasks)]  # in the order given
    if config.protocol is not None:
        jobs = [j for j in jobs if j.task is None or j.task.protocol is config.protocol]
    if not jobs:
        raise ConfigError(f"no tasks selected in {config.suite}")
    return jobs


def run_info(config: RunConfig, agent: Agent) -> dict[str, Any]:
    try:
        suite_name = load_suite(config.suite).name
    except GraphBuilderError:
        suite_name = config.suite.name
    describe = agent.describe()
    return {
        "config": config.to_json(),
        "agent": describe,
        "model": describe.get("model"),
        "suite": {"path": str(config.suite.resolve()), "name": suite_name},
        "versions": {"elderbench": __version__, "python": platform.python_version()},
        "started": time.time(),
    }


# --------------------------------------------------------------------------- running


class _Session:
    """Shared state of one run session (the workers and the event queue)."""

    def __init__(
        self,
        config: RunConfig,
        store: RunStore,
        jobs: list[_Job],
        control: Control,
        device_factory: DeviceFactory,
        done_before: int,
        total: int,
    ) -> None:
        self.config = config
        self.store = store
        self.control = control
        self.device_factory = device_factory
        self.jobs: queue.Queue[_Job] = queue.Queue()
        for job in jobs:
            self.jobs.put(job)
        self.events: queue.Queue[RunEvent | _WorkerExit] = queue.Queue()
        self.done = done_before
        self.total = total
        self.lock = threading.Lock()
        self.farm_log = FarmLog(store.run_dir)
        self.attempts: dict[str, int] = {}  # task id -> runs lost with their device
        # device serial -> the whole-phone snapshot saved when it was first used (None: none)
        self.clean_starts: dict[str, str | None] = {}
        self.in_flight = 0  # jobs being run: one may come back to the queue
        self.offline_settings = OfflineSettings(
            config.mode, config.max_steps, PROFILES[config.matching]
        )

    def worker(self, name: str, agent: Agent, serial: str | None) -> None:
        try:
            self._work(name, agent, serial)
        finally:
            agent.close()
            self.events.put(_WorkerExit(name))

    def _work(self, name: str, agent: Agent, serial: str | None) -> None:
        slot: DeviceSlot | None = None
        judges: list[Judge] = []
        if serial is not None:
            # Judge configs were checked before the run started; this cannot fail on them.
            judges = [create_judge(n, self.config.judge_config.get(n)) for n in self.config.judges]
            try:
                slot = DeviceSlot(DeviceAddress.parse(serial))
            except DeviceError as exc:
                self.events.put(WorkerStopped(name, str(exc)))
                return
        try:
            while True:
                job = self._next_job()
                if job is None:
                    return
                device: Device | None = None
                if slot is not None:
                    device = prepare(slot, self.config.farm, self._open, self.farm_log.record)
                    if device is None:
                        self._give_back(job)  # for a healthy device, or for --resume
                        self.events.put(
                            WorkerStopped(name, f"device {slot.name} quarantined: unhealthy")
                        )
                        return
                try:
                    result, was_lost = self._run_job(name, job, agent, device, judges)
                except RunStopped:
                    self._give_back(job, requeue=False)
                    return
                if result.status is TaskStatus.ERROR and self.control.stop.is_set():
                    self._give_back(job, requeue=False)
                    return  # most likely the stop itself (an aborted agent): rerun on resume
                if was_lost and slot is not None:
                    lost(slot)
                    if self._retry(job, slot, result.reason or "device lost"):
                        continue
                self._give_back(job, requeue=False)
                if self.store.secrets:  # what the events carry reaches screens and stderr
                    result = TaskResult.from_json(self.store.secrets.scrub_json(result.to_json()))
                self.store.append_result(result)
                if slot is not None:
                    self.farm_log.record(
                        "task", slot.name, task=job.task_id, status=result.status.value
                    )
                with self.lock:
                    self.done += 1
                    done = self.done
                self.events.put(TaskFinished(job.task_id, name, result, done, self.total))
        finally:
            if slot is not None:
                lost(slot)

    def _next_job(self) -> _Job | None:
        """The next job, or None when none is left: the queue is empty and no job that
        might still come back (its device lost) is running on another worker."""
        while True:
            try:
                self.control.checkpoint()
            except RunStopped:
                return None
            with self.lock:
                try:
                    job = self.jobs.get_nowait()
                except queue.Empty:
                    if self.in_flight == 0:
                        return None
                else:
                    self.in_flight += 1
                    return job
            time.sleep(0.05)

    def _give_back(self, job: _Job, *, requeue: bool = True) -> None:
        with self.lock:
            self.in_flight -= 1
            if requeue:
                self.jobs.put(job)

    def _open(self, address: DeviceAddress) -> Device:
        return self.device_factory(str(address))

    def _retry(self, job: _Job, slot: DeviceSlot, reason: str) -> bool:
        """Give a task whose device was lost back to the queue, up to ``task_retries``."""
        if not self.may_retry(job, slot.name, reason):
            return False
        self._give_back(job)
        return True

    def may_retry(self, job: _Job, device: str, reason: str) -> bool:
        """Count a lost run of ``job``; True (and logged) while retries are left. Both
        executors ask here, then put the job back in their own queue."""
        with self.lock:
            attempt = self.attempts.get(job.task_id, 0) + 1
            self.attempts[job.task_id] = attempt
        if attempt > self.config.farm.task_retries:
            return False
        self.farm_log.record("retry", device, task=job.task_id, attempt=attempt, reason=reason)
        return True

    def _run_job(
        self, name: str, job: _Job, agent: Agent, device: Device | None, judges: list[Judge]
    ) -> tuple[TaskResult, bool]:
        """The task's result, and whether the device was lost while running it."""
        started = time.time()
        task = job.task
        self.events.put(
            TaskStarted(
                job.task_id, name, task.instruction_for(self.config.variant) if task else ""
            )
        )
        trace: TraceWriter | None = None
        steps: list[StepRecord] = []  # what the agent spent before an error, if one comes

        def error(reason: str) -> TaskResult:
            return _error_result(
                job, reason, started, device, self.config.variant, agent.model, steps
            )

        try:
            if task is None:
                raise TaskSetupError(job.problem or "the task could not be loaded")
            trace = self.store.start_trace(job.task_id)
            return self._execute(name, job, task, agent, device, judges, trace, steps), False
        except RunStopped:
            raise
        except DeviceLostError as exc:
            return error(str(exc)), True
        except (EvaluatorError, GraphBuilderError, OSError) as exc:
            return error(str(exc)), False
        except Exception as exc:  # noqa: BLE001 - a bug in one agent must not end a paid run
            log.exception("unexpected error in task %s", job.task_id)
            return error(f"unexpected {type(exc).__name__}: {exc}"), False
        finally:
            if trace is not None:
                trace.close()

    def _execute(
        self,
        name: str,
        job: _Job,
        task: Task,
        agent: Agent,
        device: Device | None,
        judges: list[Judge],
        trace: TraceWriter,
        steps: list[StepRecord],
    ) -> TaskResult:
        if job.protocol is EvalProtocol.OFFLINE:
            context = GraphContext.load(job.task_dir)
            suite = self.config.suite

            def offline_step(record: StepRecord) -> None:
                steps.append(record)
                trace.add(record)
                shot = suite / record.screenshot if record.screenshot else None
                self.events.put(StepDone(job.task_id, name, record, shot))

            return run_offline(
                task,
                context,
                agent,
                variant=self.config.variant,
                settings=self.offline_settings,
                control=self.control,
                on_step=offline_step,
            )
        from evaluator.online import OnlineSettings, run_online

        if device is None:
            raise TaskSetupError(f"task {task.id} is online and no device was given (--device)")
        graph = None
        if (job.task_dir / GRAPH_FILE).is_file():
            try:
                graph = GraphContext.load(job.task_dir)
            except TaskSetupError as exc:
                log.warning("%s: running online without state mapping: %s", task.id, exc)
        run_dir = self.store.run_dir

        def online_step(record: StepRecord) -> None:
            steps.append(record)
            trace.add(record)
            shot = run_dir / record.screenshot if record.screenshot else None
            self.events.put(StepDone(job.task_id, name, record, shot))

        if device.serial not in self.clean_starts:  # one worker per device: no race
            # the phone as the run found it: every task of the run starts from it
            self.clean_starts[device.serial] = save_clean_state(device)
        snapshot = self.clean_starts[device.serial]
        settings = OnlineSettings(
            self.config.max_steps,
            self.config.settle_timeout,
            self.config.judge_frames,
            PROFILES[self.config.matching],
            clean_snapshot=snapshot,
            max_wait=self.config.max_wait,
        )
        return run_online(
            task,
            agent,
            device,
            trace,
            variant=self.config.variant,
            settings=settings,
            judges=judges,
            graph=graph,
            control=self.control,
            on_step=online_step,
        )


def _error_result(
    job: _Job,
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
    return TaskResult(
        task_id=job.task_id,
        status=TaskStatus.ERROR,
        protocol=job.protocol.value,
        instruction=task.instruction_for(variant) if task else "",
        variant=InstructionVariant(variant).value,
        app=task.app if task else "",
        labels=task.labels if task else Labels(),
        steps=len(steps),
        reason=reason,
        parse_failures=sum(1 for r in steps if r.parse_error is not None),
        inference_seconds=sum(r.inference_seconds + r.parsing_seconds for r in steps),
        retry_seconds=sum(r.retry_seconds for r in steps),
        input_tokens=sum(r.input_tokens for r in steps),
        output_tokens=sum(r.output_tokens for r in steps),
        model=model,
        device=device.serial if device is not None else None,
        started=started,
        finished=time.time(),
    )


def iter_run(
    config: RunConfig,
    *,
    control: Control | None = None,
    device_factory: DeviceFactory | None = None,
    owner: str = "elderbench eval",
) -> Iterator[RunEvent]:
    """Run (or resume) an evaluation, yielding events as they happen. Configuration
    problems raise ConfigError before anything is written. The run's devices are held
    (``devices.device_lock``, naming ``owner``) from start to end, pauses included."""
    control = control or Control()
    jobs = load_jobs(config)
    online = [j for j in jobs if j.protocol is EvalProtocol.ONLINE]
    if online and not config.devices:
        raise ConfigError(
            f"{len(online)} selected task(s) run online ({online[0].task_id}, ...); pass "
            "--device SERIAL, or --protocol offline"
        )
    for name in config.judges if config.devices else ():
        create_judge(name, config.judge_config.get(name))  # fail early on a bad judge config
    locks = hold_run_devices(config.devices, config.out, owner)
    first_agent = create_agent(config.agent, config.agent_settings())
    try:
        store = RunStore.create(
            config.out,
            run_info(config, first_agent),
            resume=config.resume,
            check_previous=lambda info: _check_resume(config, info),
            secrets=config.secrets(),
        )
        finished = store.finished_ids() if config.resume else set()
    except BaseException:
        first_agent.close()
        locks.release()
        raise
    try:
        yield from _run_session(config, control, device_factory, jobs, store, finished, first_agent)
    finally:
        store.close()
        locks.release()


def _run_session(
    config: RunConfig,
    control: Control,
    device_factory: DeviceFactory | None,
    jobs: list[_Job],
    store: RunStore,
    finished: set[str],
    first_agent: Agent,
) -> Iterator[RunEvent]:
    pending = [j for j in jobs if j.task_id not in finished]
    skipped = tuple(j.task_id for j in jobs if j.task_id in finished)
    yield RunStarted(store.run_dir, len(jobs), len(pending), skipped)

    session = _Session(
        config,
        store,
        pending,
        control,
        device_factory or default_device_factory,
        len(skipped),
        len(jobs),
    )
    if config.farm.executor == "ray":
        if not config.devices:
            raise ConfigError("the ray executor runs tasks on devices; pass --device")
        from evaluator.farm.ray_executor import run_on_ray

        first_agent.close()  # every actor makes its own
        yield from run_on_ray(session, config.devices)
        yield _finished(store, jobs, control)
        return
    slots: list[str | None] = (
        list(config.devices)
        if config.devices
        else [None] * min(config.workers, max(1, len(pending)))
    )
    threads = []
    agents: list[Agent] = []
    for i, serial in enumerate(slots):
        agent = first_agent if i == 0 else create_agent(config.agent, config.agent_settings())
        agents.append(agent)
        name = serial or f"worker-{i}"
        thread = threading.Thread(
            target=session.worker, args=(name, agent, serial), name=f"eval-{name}", daemon=True
        )
        threads.append(thread)
        thread.start()
    running = len(threads)
    stopped_at: float | None = None
    try:
        while running:
            try:
                event = session.events.get(timeout=0.1)
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
    yield _finished(store, jobs, control)


def _finished(store: RunStore, jobs: list[_Job], control: Control) -> RunFinished:
    done_ids = {r.task_id for r in store.results()}
    not_run = tuple(j.task_id for j in jobs if j.task_id not in done_ids)
    return RunFinished(store.run_dir, control.stop.is_set(), len(jobs) - len(not_run), not_run)


def _abort(agents: list[Agent]) -> None:
    """End agents whose workers are stuck, so that no agent program outlives the run."""
    for agent in agents:
        abort = getattr(agent, "abort", None)
        try:
            abort() if abort is not None else agent.close()
        except Exception:  # noqa: BLE001 - the run is ending; a failing close must not hide why
            log.exception("could not end agent %s", agent.name)


def run_suite(
    config: RunConfig,
    *,
    progress: Callable[[RunEvent], None] | None = None,
    stop_event: threading.Event | None = None,
    pause_event: threading.Event | None = None,
    device_factory: DeviceFactory | None = None,
    owner: str = "elderbench eval",
) -> RunFinished:
    """Run to the end (or until ``stop_event``), calling ``progress`` with every event
    in the calling thread. Use it from a GUI worker thread; set the events from the GUI."""
    control = Control(stop=stop_event or threading.Event(), pause=pause_event or threading.Event())
    last: RunFinished | None = None
    for event in iter_run(config, control=control, device_factory=device_factory, owner=owner):
        if progress is not None:
            progress(event)
        if isinstance(event, RunFinished):
            last = event
    assert last is not None
    return last
