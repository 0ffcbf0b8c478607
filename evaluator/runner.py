"""Run an agent over a suite, into a run folder, from the CLI or a GUI worker thread.

``iter_run(config)`` is a generator of events (RunStarted, TaskStarted, StepDone,
TaskFinished, WorkerStopped, RunFinished); ``run_suite(config, progress=cb)`` drives it and
calls ``cb`` with each event. Both honour a stop event (the current task is left
unfinished and reruns on ``resume``) and a pause event (checked between steps).

The runner selects the jobs, opens the run store and hands both to the executor the
config names (``evaluator.farm.executors``): worker threads here, or Ray actors. A task
that cannot be evaluated (no graph, invalid graph, endpoint down, device lost) is recorded
with status ``error`` and the run goes on (``evaluator.execution``).

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

import functools
import platform
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from elderbench import __version__
from evaluator.agents import Agent, create_agent
from evaluator.control import Control
from evaluator.device_owner import hold_run_devices
from evaluator.errors import ConfigError
from evaluator.execution import (
    DeviceFactory,
    Job,
    RunEvent,
    RunFinished,
    RunSession,
    RunStarted,
    StepDone,
    TaskFinished,
    TaskStarted,
    WorkerStopped,
    default_device_factory,
)
from evaluator.farm.executors import EXECUTORS, create_executor
from evaluator.judges import create_judge
from evaluator.manifest import add_devices, build_manifest, models_and_prompts, write_manifest
from evaluator.run_config import RunConfig, check_resume, resume_changes, resume_config
from evaluator.run_store import TRACES_DIR, RunStore
from evaluator.users import create_user
from graph_builder.errors import GraphBuilderError
from graph_builder.io import load_suite, load_task, suite_task_dirs
from graph_builder.model import EvalProtocol
from graph_builder.packing import DUPLICATES_FILE, cache_root, complete_suite

__all__ = [
    "DeviceFactory",
    "RunConfig",
    "RunEvent",
    "RunFinished",
    "RunStarted",
    "StepDone",
    "TaskFinished",
    "TaskStarted",
    "WorkerStopped",
    "default_device_factory",
    "iter_run",
    "load_jobs",
    "readable_suite",
    "resume_changes",
    "resume_config",
    "run_info",
    "run_manifest",
    "run_suite",
]


# --------------------------------------------------------------------------- selection


def load_jobs(config: RunConfig) -> list[Job]:
    """The selected tasks in id order; a task.json that does not load becomes an error
    job. Only reads the suite (a packed suite's task.json files are all there)."""
    if not config.suite.is_dir():
        raise ConfigError(f"suite folder {config.suite} does not exist")
    jobs: list[Job] = []
    for task_dir in suite_task_dirs(config.suite):
        try:
            task = load_task(task_dir)
        except GraphBuilderError as exc:
            jobs.append(
                Job(
                    task_dir.name,
                    task_dir,
                    config.protocol or EvalProtocol.OFFLINE,
                    None,
                    f"cannot load task.json: {exc}",
                )
            )
            continue
        jobs.append(Job(task.id, task_dir, config.protocol or task.protocol, task))
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


def readable_suite(config: RunConfig) -> RunConfig:
    """``config`` set to run a complete suite: a packed suite (an installed wheel's sample)
    runs from a complete copy in the user's cache, never restored in place, since reading
    a suite must not change it. Demonstrations shipped inside the suite move with it."""
    try:
        suite = complete_suite(config.suite)
    except OSError as exc:
        raise ConfigError(
            f"{config.suite} is packed ({DUPLICATES_FILE}) and a complete copy of it cannot "
            f"be written under {cache_root()} ({exc}); free space there or set XDG_CACHE_HOME"
        ) from exc
    if suite == config.suite:
        return config
    demos = config.demos
    if demos is not None and demos.is_relative_to(config.suite):
        demos = suite / demos.relative_to(config.suite)
    return replace(config, suite=suite, demos=demos)


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


def run_manifest(config: RunConfig, agent: Agent) -> dict[str, Any]:
    """The manifest of a run of ``config`` (evaluator.manifest), its judges and simulated
    user built to read their models and prompt templates."""
    # judges run online only
    names = config.judges if config.devices else ()
    judges = {n: create_judge(n, config.judge_config.get(n)) for n in names}
    try:
        suite_name = load_suite(config.suite).name
    except GraphBuilderError:
        suite_name = config.suite.name
    return build_manifest(
        config.suite,
        suite_name,
        models_and_prompts(agent, judges, create_user(config.user_simulator)),
        config.secrets(),
        started=time.time(),
    )


# --------------------------------------------------------------------------- running


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
    config = readable_suite(config)
    jobs = load_jobs(config)
    online = [j for j in jobs if j.protocol is EvalProtocol.ONLINE]
    if online and not config.devices:
        raise ConfigError(
            f"{len(online)} selected task(s) run online ({online[0].task_id}, ...); pass "
            "--device SERIAL, or --protocol offline"
        )
    if EXECUTORS[config.farm.executor].needs_devices and not config.devices:
        raise ConfigError(
            f"the {config.farm.executor} executor runs tasks on devices; pass --device"
        )
    for name in config.judges if config.devices else ():
        create_judge(name, config.judge_config.get(name))  # fail early on a bad judge config
    executor = create_executor(config.farm.executor)
    locks = hold_run_devices(config.devices, config.out, owner)
    try:
        first_agent = create_agent(config.agent, config.agent_settings())
    except BaseException:
        locks.release()
        raise
    try:
        store = RunStore.create(
            config.out,
            run_info(config, first_agent),
            resume=config.resume,
            check_previous=lambda info: check_resume(config, info),
            secrets=config.secrets(),
        )
        finished = store.finished_ids() if config.resume else set()
        suite_change = write_manifest(
            store.run_dir, run_manifest(config, first_agent), store.secrets
        )
    except BaseException:
        first_agent.close()
        locks.release()
        raise
    pending = [j for j in jobs if j.task_id not in finished]
    skipped = tuple(j.task_id for j in jobs if j.task_id in finished)
    session = RunSession(
        config,
        store,
        pending,
        control,
        device_factory=device_factory
        or functools.partial(default_device_factory, hierarchy=config.hierarchy),
        done_before=len(skipped),
        total=len(jobs),
        first_agent=first_agent,
    )
    try:
        yield RunStarted(store.run_dir, len(jobs), len(pending), skipped, suite_change)
        yield from executor.run(session)
        yield _finished(store, jobs, control)
    finally:
        session.close_unused_agent()
        add_devices(store.run_dir, store.run_dir / TRACES_DIR, store.secrets)
        store.close()
        locks.release()


def _finished(store: RunStore, jobs: list[Job], control: Control) -> RunFinished:
    done_ids = {r.task_id for r in store.results()}
    not_run = tuple(j.task_id for j in jobs if j.task_id not in done_ids)
    return RunFinished(store.run_dir, control.stop.is_set(), len(jobs) - len(not_run), not_run)


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
