"""Run folders: the durable record of an evaluation.

    <run>/run.json              config, agent, model, suite, versions, start time (never keys)
    <run>/results.jsonl         one TaskResult per line, appended with flush + fsync
    <run>/traces/<task>/        steps.jsonl, and online the screenshots and hierarchies
    <run>/overrides.json        human verdicts that override the judges
    <run>/tags.json             failure categories per task (with the step they refer to)
    <run>/.lock                 the run's lock, held by the evaluation writing it
    <run>/.annotations.lock     held for each read-modify-write of overrides.json / tags.json
    <run>/report.md, report.html

A crash can at worst leave a torn last line in results.jsonl; loading skips it and the next
append cuts it off (it belongs to a task that had not finished, which reruns on resume).
The studio's evaluation panel writes overrides and tags through ``RunStore``.

Writers of results hold the folder's lock: a run (``create``) or ``elderbench judge``
(``open_locked``). A store made by ``create`` is one session: once closed, its results and
traces are refused, so a worker abandoned at a stop never writes after a resumed session.

>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> store = RunStore.create(Path(tmp.name) / "run", {"agent": {"name": "random"}})
>>> store.append_result(TaskResult("t1", TaskStatus.FAILURE, "online", steps=3))
>>> store.set_override("t1", HumanVerdict(True, note="the judge missed it"))
>>> [(r.task_id, r.status.value) for r in store.results()], store.overrides()["t1"].success
([('t1', 'failure')], True)
>>> tmp.cleanup()
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, Protocol

from evaluator.errors import RunNotOwnedError, RunStoreError
from evaluator.records import StepRecord, TaskResult, TaskStatus, stored_text
from evaluator.secrets import Secrets, redact
from graph_builder.errors import GraphBuilderError
from graph_builder.folder_lock import LOCK_FILE, FolderLock, FolderLockedError
from graph_builder.io import (
    atomic_write_bytes,
    atomic_write_json,
    confined,
    parse_json,
    read_json,
)
from graph_builder.model import validate_id

RUN_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
TRACES_DIR = "traces"
STEPS_FILE = "steps.jsonl"
SCREEN_VIDEO_FILE = "screen.mp4"  # an online episode recorded on the phone (--record-screen)
OVERRIDES_FILE = "overrides.json"
TAGS_FILE = "tags.json"
ANNOTATION_LOCK = ".annotations.lock"
# Each holder keeps the annotation lock for one small read-modify-write (milliseconds).
ANNOTATION_LOCK_WAIT_S = 10.0
RUN_SCHEMA_VERSION = 1


class FailureCategory(StrEnum):
    """ElderBench's failure taxonomy (section 5); ``custom`` carries its own label."""

    INTENT = "intent_understanding"
    PLANNING = "long_horizon_planning"
    ENVIRONMENT = "device_environment_awareness"
    GROUNDING = "visual_grounding"
    CUSTOM = "custom"


CATEGORY_TITLES: dict[FailureCategory, str] = {
    FailureCategory.INTENT: "Intent understanding / capability boundary",
    FailureCategory.PLANNING: "Long-horizon planning / state tracking",
    FailureCategory.ENVIRONMENT: "Device-environment awareness",
    FailureCategory.GROUNDING: "Visual grounding / action execution",
    FailureCategory.CUSTOM: "Custom",
}


@dataclass(frozen=True, slots=True)
class HumanVerdict:
    """A person's success verdict for a task; it overrides every judge."""

    success: bool
    note: str = ""
    annotator: str = ""
    time: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "success": self.success,
            "note": self.note,
            "annotator": self.annotator,
            "time": self.time,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HumanVerdict:
        if not isinstance(data.get("success"), bool):
            # bool("false") is True: a verdict must be a JSON true or false, nothing else.
            raise ValueError(f"'success' must be true or false, not {data.get('success')!r}")
        return cls(
            data["success"],
            str(data.get("note", "")),
            str(data.get("annotator", "")),
            float(data.get("time", 0.0)),
        )


@dataclass(frozen=True, slots=True)
class FailureTag:
    """Why a task failed; ``step`` is the step index the failure shows at (None: overall)."""

    category: FailureCategory
    step: int | None = None
    note: str = ""
    label: str = ""  # the name of a custom category

    def __post_init__(self) -> None:
        object.__setattr__(self, "category", FailureCategory(self.category))
        if self.category is FailureCategory.CUSTOM and not self.label.strip():
            raise ValueError("a custom failure tag needs a label")

    @property
    def title(self) -> str:
        return (
            self.label
            if self.category is FailureCategory.CUSTOM
            else CATEGORY_TITLES[self.category]
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category.value,
            "step": self.step,
            "note": self.note,
            "label": self.label,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FailureTag:
        step = data.get("step")
        return cls(
            FailureCategory(data["category"]),
            step if isinstance(step, int) else None,
            str(data.get("note", "")),
            str(data.get("label", "")),
        )


# What a model wrote, kept whole up to records.MAX_STORED_TEXT characters.
_CAPPED_STEP_TEXTS = ("raw_output", "reasoning", "parse_error")


class Trace(Protocol):
    """What a running task writes its trace through (a TraceWriter, or a remote worker's
    trace that the driver replays into one)."""

    @property
    def folder(self) -> Path: ...

    def save_file(self, name: str, data: bytes | str) -> str: ...

    def add(self, record: StepRecord) -> None: ...

    def write_json(self, name: str, data: Any) -> None: ...

    def close(self) -> None: ...


class Ownership:
    """Whether a session still owns its run folder. A store made by ``RunStore.create``
    owns it until ``close()``; afterwards its results and traces are refused, so that a
    worker abandoned at a stop cannot write after the session that resumed the run."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.lock = threading.RLock()
        self.ended = False

    def check(self) -> None:
        """Raise RunNotOwnedError when the session has ended; call it under ``lock``."""
        if self.ended:
            raise RunNotOwnedError(
                f"{self.run_dir}: this session was stopped and no longer owns the run; "
                "what it wrote late is dropped (the task reruns on resume)"
            )


class TraceWriter:
    """Writes one task's trace: files beside ``steps.jsonl``, one line per step."""

    def __init__(
        self,
        run_dir: Path,
        task_id: str,
        secrets: Secrets | None = None,
        ownership: Ownership | None = None,
    ) -> None:
        self.run_dir = run_dir
        self.secrets = secrets or Secrets()
        self.ownership = ownership or Ownership(run_dir)
        self.folder = run_dir / TRACES_DIR / task_id
        with self.ownership.lock:
            self.ownership.check()
            if self.folder.exists():
                shutil.rmtree(self.folder)  # a task that did not finish before: start afresh
            self.folder.mkdir(parents=True)
            self._steps: IO[str] | None = open(self.folder / STEPS_FILE, "a", encoding="utf-8")  # noqa: SIM115

    def save_file(self, name: str, data: bytes | str) -> str:
        """Store a screenshot or hierarchy; returns its path relative to the run folder."""
        payload = self.secrets.scrub(data).encode("utf-8") if isinstance(data, str) else data
        with self.ownership.lock:
            self.ownership.check()
            (self.folder / name).write_bytes(payload)
        return (self.folder / name).relative_to(self.run_dir).as_posix()

    def add(self, record: StepRecord) -> None:
        data = self.secrets.scrub_json(record.to_json())
        for name in _CAPPED_STEP_TEXTS:
            if isinstance(data.get(name), str):
                data[name] = stored_text(data[name])
        line = json.dumps(data, ensure_ascii=False)
        with self.ownership.lock:
            self.ownership.check()
            if self._steps is None:
                raise RunStoreError(f"the trace of {self.folder.name} is already closed")
            self._steps.write(line + "\n")
            self._steps.flush()

    def write_json(self, name: str, data: Any) -> None:
        with self.ownership.lock:
            self.ownership.check()
            atomic_write_json(self.folder / name, self.secrets.scrub_json(data))

    def close(self) -> None:
        if self._steps is not None:
            self._steps.close()
            self._steps = None


def _parse_tags(value: Any) -> tuple[FailureTag, ...]:
    if not isinstance(value, list):
        raise TypeError("expected a list of tags")
    return tuple(FailureTag.from_json(t) for t in value)


def _has_content(folder: Path) -> bool:
    """True when ``folder`` holds anything but a lock file and a torn first run.json."""
    return any(
        p.name not in (LOCK_FILE, ANNOTATION_LOCK)
        and not (p.name.startswith(f".{RUN_FILE}.") and p.suffix == ".tmp")
        for p in folder.iterdir()
    )


def _result_line(line: bytes) -> TaskResult:
    data = parse_json(line)
    if not isinstance(data, dict):
        raise TypeError(f"a result line must be an object, not {type(data).__name__}")
    for key, kind in (("labels", dict), ("verification", list)):
        if data.get(key) is not None and not isinstance(data[key], kind):
            raise TypeError(f"a result's {key} must be a {kind.__name__}")
    result = TaskResult.from_json(data)
    if not isinstance(result.task_id, str) or not result.task_id:
        raise TypeError("a result line needs a task_id string")
    return result


class RunStore:
    """One run folder. Thread-safe: workers append results while the GUI writes verdicts."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self._folder_lock: FolderLock | None = None
        # The run's secret values, scrubbed out of everything this store writes.
        self.secrets = Secrets()
        self.ownership = Ownership(self.run_dir)
        self._lock = self.ownership.lock  # one lock: a write and the session's end exclude
        self._tail_checked = False
        self.skipped_lines = 0

    # -- creation

    @classmethod
    def create(
        cls,
        run_dir: Path,
        info: Mapping[str, Any],
        *,
        resume: bool = False,
        check_previous: Callable[[dict[str, Any]], None] | None = None,
        secrets: Secrets | None = None,
    ) -> RunStore:
        """Start a run folder, or continue one with ``resume``. Never overwrites a run.

        The store holds the folder's lock until ``close()``: a second process (or a second
        run in this one) is refused with a message naming the holder. ``check_previous``
        sees the previous run.json under the lock before a resume is recorded.
        """
        run_dir = Path(run_dir)
        if run_dir.exists() and not (run_dir / RUN_FILE).exists() and _has_content(run_dir):
            raise RunStoreError(f"{run_dir} exists and is not empty; choose another --out folder")
        created = not run_dir.exists()
        run_dir.mkdir(parents=True, exist_ok=True)
        lock = FolderLock(run_dir, purpose="elderbench eval")
        try:
            lock.acquire()
        except FolderLockedError as exc:
            raise RunStoreError(str(exc)) from None
        try:
            store = cls._create_locked(run_dir, info, resume, check_previous, secrets or Secrets())
        except BaseException:
            lock.release()
            if created:
                shutil.rmtree(run_dir, ignore_errors=True)
            raise
        store._folder_lock = lock
        return store

    @classmethod
    def _create_locked(
        cls,
        run_dir: Path,
        info: Mapping[str, Any],
        resume: bool,
        check_previous: Callable[[dict[str, Any]], None] | None,
        secrets: Secrets,
    ) -> RunStore:
        store = cls(run_dir)
        store.secrets = secrets
        path = run_dir / RUN_FILE
        if path.exists():
            if not resume:
                raise RunStoreError(
                    f"{run_dir} already holds a run; pass --resume to continue it or choose "
                    "another --out folder"
                )
            previous = store.info()
            if check_previous is not None:
                check_previous(previous)
            if previous.get("agent", {}).get("name") != info.get("agent", {}).get("name"):
                raise RunStoreError(
                    f"{run_dir} holds a run of agent {previous.get('agent', {}).get('name')!r}; "
                    "resume it with the same agent or choose another --out folder"
                )
            resumed = [*previous.get("resumed", []), time.time()]
            atomic_write_json(path, {**previous, "resumed": resumed})
            return store
        if _has_content(run_dir):
            raise RunStoreError(f"{run_dir} exists and is not empty; choose another --out folder")
        for leftover in run_dir.glob(f".{RUN_FILE}.*.tmp"):
            leftover.unlink(missing_ok=True)  # a run killed while writing its first run.json
        atomic_write_json(
            path,
            {
                "schema_version": RUN_SCHEMA_VERSION,
                "created": time.time(),
                **secrets.scrub_json(redact(dict(info))),
            },
        )
        return store

    def close(self) -> None:
        """End this session: release the run folder's lock (taken by ``create``). Results
        and traces written through this store afterwards are refused (RunNotOwnedError)."""
        with self._lock:
            if self._folder_lock is not None:
                self.ownership.ended = True
                self._folder_lock.release()
                self._folder_lock = None

    @classmethod
    def open(cls, run_dir: Path) -> RunStore:
        run_dir = Path(run_dir)
        if not (run_dir / RUN_FILE).is_file():
            raise RunStoreError(f"{run_dir} is not a run folder (no {RUN_FILE})")
        return cls(run_dir)

    @classmethod
    def open_locked(cls, run_dir: Path, *, purpose: str) -> RunStore:
        """An existing run folder, to write results into it: the store holds the folder's
        lock (the one ``create`` takes) until ``close()``. Refused, naming the holder, while
        a run (``eval``, a resume) or another writer holds it."""
        store = cls.open(run_dir)
        lock = FolderLock(store.run_dir, purpose=purpose)
        try:
            lock.acquire()
        except FolderLockedError as exc:
            raise RunStoreError(str(exc)) from None
        store._folder_lock = lock
        return store

    def info(self) -> dict[str, Any]:
        try:
            data = read_json(self.run_dir / RUN_FILE)
        except GraphBuilderError as exc:
            raise RunStoreError(str(exc)) from exc
        if not isinstance(data, dict):
            raise RunStoreError(f"{self.run_dir / RUN_FILE} is not a JSON object")
        return data

    # -- results

    def results(self) -> list[TaskResult]:
        """The latest result of every task, in the order tasks first finished.

        A torn last line (a crash mid-write) and damaged lines are skipped and counted in
        ``skipped_lines``.
        """
        path = self.run_dir / RESULTS_FILE
        if not path.exists():
            return []
        latest: dict[str, TaskResult] = {}
        skipped = 0
        for line in path.read_bytes().split(b"\n"):
            if not line.strip():
                continue
            try:
                result = _result_line(line)
            except (ValueError, TypeError, KeyError, AttributeError, GraphBuilderError):
                skipped += 1  # valid JSON of the wrong shape is as unreadable as a torn line
                continue
            latest[result.task_id] = result
        self.skipped_lines = skipped
        return list(latest.values())

    def finished_ids(self, *, include_errors: bool = False) -> set[str]:
        """Tasks resume skips: every recorded task, except errored ones unless asked."""
        return {
            r.task_id for r in self.results() if include_errors or r.status is not TaskStatus.ERROR
        }

    def append_result(self, result: TaskResult) -> None:
        """Append one line atomically enough: write, flush, fsync (a torn tail is cut first)."""
        data = self.secrets.scrub_json(result.to_json())
        line = (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8")
        path = self.run_dir / RESULTS_FILE
        with self._lock:
            self.ownership.check()
            if not self._tail_checked:
                self._cut_torn_tail(path)
                self._tail_checked = True
            with open(path, "ab") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())

    @staticmethod
    def _cut_torn_tail(path: Path) -> None:
        if not path.exists() or path.stat().st_size == 0:
            return
        with open(path, "rb+") as fh:
            data = fh.read()
            if data.endswith(b"\n"):
                return
            keep = data.rfind(b"\n") + 1
            with open(path.with_name(RESULTS_FILE + ".torn"), "ab") as torn:
                torn.write(data[keep:] + b"\n")
            fh.truncate(keep)
            fh.flush()
            os.fsync(fh.fileno())

    # -- traces

    def start_trace(self, task_id: str) -> TraceWriter:
        task_id = validate_id(task_id, "task id")
        return TraceWriter(self.run_dir, task_id, self.secrets, self.ownership)

    def trace_dir(self, task_id: str) -> Path:
        return self.run_dir / TRACES_DIR / validate_id(task_id, "task id")

    def read_steps(self, task_id: str) -> list[StepRecord]:
        """A task's steps (a torn last line is skipped; a task whose folder name is not a
        valid id, recorded as an error, has none)."""
        try:
            path = self.trace_dir(task_id) / STEPS_FILE
        except GraphBuilderError:
            return []
        if not path.exists():
            return []
        steps = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                steps.append(StepRecord.from_json(parse_json(line)))
            except (ValueError, TypeError, KeyError, AttributeError, GraphBuilderError):
                continue
        return steps

    def step_file(self, protocol: str, relative: str | None) -> Path | None:
        """Where a step's screenshot or hierarchy lives: online in the run folder, offline
        in the suite (the node's representative files)."""
        if not relative:
            return None
        if protocol == "online":
            folder = self.run_dir
        else:
            info = self.info()
            suite = info.get("suite", {}).get("path") or info.get("config", {}).get("suite")
            if not suite:
                raise RunStoreError(f"{self.run_dir / RUN_FILE} does not say which suite was run")
            folder = Path(suite)
        try:
            return confined(folder, relative, source=self.run_dir / TRACES_DIR)
        except GraphBuilderError as exc:
            raise RunStoreError(str(exc)) from exc

    # -- human verdicts and failure tags

    def _read_map(self, name: str) -> dict[str, Any]:
        path = self.run_dir / name
        if not path.exists():
            return {}
        try:
            data = read_json(path)
        except GraphBuilderError as exc:
            raise RunStoreError(str(exc)) from exc
        tasks = data.get("tasks", {}) if isinstance(data, dict) else None
        if not isinstance(tasks, dict):
            raise RunStoreError(
                f"{path}: expected an object with a 'tasks' object; fix or remove it"
            )
        return tasks

    def _parse_map[T](self, name: str, parse: Callable[[Any], T]) -> dict[str, T]:
        out = {}
        for task_id, value in self._read_map(name).items():
            try:
                out[task_id] = parse(value)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise RunStoreError(
                    f"{self.run_dir / name}: the entry of task {task_id!r} is damaged ({exc}); "
                    "fix or remove it"
                ) from exc
        return out

    def _update_map(self, name: str, change: Callable[[dict[str, Any]], None]) -> None:
        """Read ``name``, apply ``change`` to its tasks and write it back, all under the
        run's annotation lock: another process writing meanwhile waits instead of having
        its write overwritten by our stale copy."""
        with self._lock, self.annotation_lock():
            tasks = self._read_map(name)
            change(tasks)
            atomic_write_json(
                self.run_dir / name,
                {"schema_version": RUN_SCHEMA_VERSION, "tasks": dict(sorted(tasks.items()))},
            )

    @contextmanager
    def annotation_lock(self) -> Iterator[None]:
        """Hold ``<run>/.annotations.lock`` for one read-modify-write of a person's
        annotations (verdicts, tags, reviewed proposals). It is not the run's lock, which a
        running evaluation holds for hours: people annotate while a run goes on."""
        lock = FolderLock(self.run_dir, purpose="a verdict or tag write", name=ANNOTATION_LOCK)
        try:
            lock.acquire(wait=ANNOTATION_LOCK_WAIT_S)
        except FolderLockedError as exc:
            raise RunStoreError(str(exc)) from None
        try:
            yield
        finally:
            lock.release()

    def overrides(self) -> dict[str, HumanVerdict]:
        return self._parse_map(OVERRIDES_FILE, HumanVerdict.from_json)

    def set_override(self, task_id: str, verdict: HumanVerdict | None) -> None:
        """Record (or with None, remove) a human verdict for ``task_id``."""
        validate_id(task_id, "task id")
        stamped = (
            None
            if verdict is None
            else verdict
            if verdict.time
            else HumanVerdict(verdict.success, verdict.note, verdict.annotator, time.time())
        )

        def change(tasks: dict[str, Any]) -> None:
            if stamped is None:
                tasks.pop(task_id, None)
            else:
                tasks[task_id] = stamped.to_json()

        self._update_map(OVERRIDES_FILE, change)

    def tags(self) -> dict[str, tuple[FailureTag, ...]]:
        return self._parse_map(TAGS_FILE, _parse_tags)

    def set_tags(self, task_id: str, tags: tuple[FailureTag, ...] | list[FailureTag]) -> None:
        """Replace the failure tags of ``task_id`` (an empty list removes them)."""
        validate_id(task_id, "task id")
        entries = [t.to_json() for t in tags]

        def change(tasks: dict[str, Any]) -> None:
            if entries:
                tasks[task_id] = entries
            else:
                tasks.pop(task_id, None)

        self._update_map(TAGS_FILE, change)

    def add_tag(self, task_id: str, tag: FailureTag) -> None:
        """Append one tag to those of ``task_id`` as they are on disk at this moment."""
        validate_id(task_id, "task id")

        def change(tasks: dict[str, Any]) -> None:
            try:
                present = _parse_tags(tasks.get(task_id, []))
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise RunStoreError(
                    f"{self.run_dir / TAGS_FILE}: the entry of task {task_id!r} is damaged "
                    f"({exc}); fix or remove it"
                ) from exc
            tasks[task_id] = [t.to_json() for t in (*present, tag)]

        self._update_map(TAGS_FILE, change)

    def remove_tag(self, task_id: str, tag: FailureTag) -> bool:
        """Remove the first tag of ``task_id`` equal to ``tag`` as they are on disk at this
        moment (a tag another writer added meanwhile stays); False when none is equal."""
        validate_id(task_id, "task id")
        removed = False

        def change(tasks: dict[str, Any]) -> None:
            nonlocal removed
            entries = list(tasks.get(task_id, []))
            for i, entry in enumerate(entries):
                try:
                    same = FailureTag.from_json(entry) == tag
                except (ValueError, TypeError, KeyError, AttributeError):
                    same = False
                if same:
                    del entries[i]
                    removed = True
                    break
            if entries:
                tasks[task_id] = entries
            else:
                tasks.pop(task_id, None)

        self._update_map(TAGS_FILE, change)
        return removed

    def write_text(self, name: str, text: str) -> Path:
        path = self.run_dir / name
        atomic_write_bytes(path, self.secrets.scrub(text).encode("utf-8"))
        return path
