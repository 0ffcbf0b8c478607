"""The studio's workspace: one folder holding demos, task suites and evaluation runs.

No Qt here, so scripts and tests can use it directly.

    <workspace>/demos/<task_id>/<demo_id>/demo.json   recorded demonstrations
    <workspace>/suites/<suite>/suite.json             suite header and label vocabularies
    <workspace>/suites/<suite>/<task_id>/task.json    one task
    <workspace>/runs/                                 evaluation runs

>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> ws = Workspace.open(Path(tmp.name) / "ws")
>>> path = ws.save_task("default", Task("wifi-on", "turn on the wifi please"))
>>> path.relative_to(ws.root).as_posix(), ws.task_ids("default")
('suites/default/wifi-on/task.json', ['wifi-on'])
>>> tmp.cleanup()
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from graph_builder import io
from graph_builder.errors import GraphBuilderError
from graph_builder.model import DemoStatus, Suite, Task, validate_id
from recorder_app.errors import WorkspaceError, explain_os_error

DEFAULT_SUITE = "default"
DEMOS_DIR = "demos"
SUITES_DIR = "suites"
RUNS_DIR = "runs"
RECENT_LIMIT = 8


def default_workspace_path() -> Path:
    """Where the studio keeps its data when the user has not chosen a folder yet."""
    return Path.home() / "ElderBench"


def push_recent(recent: Sequence[str], path: str | Path, limit: int = RECENT_LIMIT) -> list[str]:
    """The recent-workspaces list with ``path`` moved to the front, without duplicates."""
    entry = str(Path(path).expanduser().resolve())
    return [entry, *(p for p in recent if p != entry)][:limit]


@dataclass(frozen=True, slots=True)
class DemoSummary:
    """One demonstration folder as the browser lists it; ``problem`` is set when unreadable."""

    task_id: str
    demo_id: str
    folder: Path
    status: DemoStatus | None
    step_count: int = 0
    finished: bool = False
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Workspace:
    root: Path

    @classmethod
    def open(cls, path: str | Path, *, create: bool = True) -> Workspace:
        """Open (and by default create) a workspace with its default suite."""
        root = Path(path).expanduser().resolve()
        if root.exists() and not root.is_dir():
            raise WorkspaceError(f"{root} is a file, not a folder; choose a folder as workspace")
        if not create and not root.is_dir():
            raise WorkspaceError(f"{root} does not exist; create it or choose another workspace")
        ws = cls(root)
        try:
            for sub in (DEMOS_DIR, SUITES_DIR, RUNS_DIR):
                (root / sub).mkdir(parents=True, exist_ok=True)
            if not (ws.suite_dir(DEFAULT_SUITE) / io.SUITE_FILE).exists():
                io.save_suite(
                    Suite(DEFAULT_SUITE, "Tasks recorded in this workspace"),
                    ws.suite_dir(DEFAULT_SUITE),
                )
        except OSError as exc:
            if not root.is_dir():
                raise WorkspaceError(explain_os_error(exc)) from exc
            # An existing read-only workspace can still be browsed; writes report the problem.
        return ws

    @property
    def demos_dir(self) -> Path:
        return self.root / DEMOS_DIR

    @property
    def suites_dir(self) -> Path:
        return self.root / SUITES_DIR

    @property
    def runs_dir(self) -> Path:
        return self.root / RUNS_DIR

    def write_problem(self) -> str | None:
        """Why nothing can be saved here (read-only, full disk), or None when writing works."""
        try:
            self.demos_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".write-check.", dir=self.demos_dir)
            try:
                os.write(fd, b"ok")
            finally:
                os.close(fd)
                Path(tmp).unlink(missing_ok=True)
        except OSError as exc:
            return explain_os_error(exc)
        return None

    # -- suites and tasks

    def suite_dir(self, suite: str) -> Path:
        return self.suites_dir / validate_id(suite, "suite name")

    def suite_names(self) -> list[str]:
        found = self.suites_dir.glob(f"*/{io.SUITE_FILE}")
        names = sorted(p.parent.name for p in found if not io.is_hidden(p.parent))
        return names or [DEFAULT_SUITE]

    def load_suite(self, suite: str) -> Suite:
        folder = self.suite_dir(suite)
        if not (folder / io.SUITE_FILE).exists():
            return Suite(suite)
        return io.load_suite(folder)

    def create_suite(self, name: str, description: str = "") -> Suite:
        folder = self.suite_dir(name)
        if (folder / io.SUITE_FILE).exists():
            raise WorkspaceError(f"a suite named {name!r} already exists; choose it from the list")
        suite = Suite(name, description)
        self._write(lambda: io.save_suite(suite, folder))
        return suite

    def task_ids(self, suite: str) -> list[str]:
        return [d.name for d in io.suite_task_dirs(self.suite_dir(suite))]

    def load_task(self, suite: str, task_id: str) -> Task:
        return io.load_task(self.suite_dir(suite) / validate_id(task_id, "task id"))

    def save_task(self, suite: str, task: Task, *, overwrite: bool = False) -> Path:
        """Write task.json; an existing task is only replaced when ``overwrite`` says so."""
        folder = self.suite_dir(suite) / task.id
        if not overwrite and (folder / io.TASK_FILE).exists():
            raise WorkspaceError(
                f"task {task.id!r} already exists in suite {suite!r}; "
                "select it from the list to edit it, or choose another id"
            )
        if not (self.suite_dir(suite) / io.SUITE_FILE).exists():
            self._write(lambda: io.save_suite(Suite(suite), self.suite_dir(suite)))
        return self._write(lambda: io.save_task(task, folder))

    def find_task(self, task_id: str) -> tuple[str, Task] | None:
        """(suite, task) of the first suite holding ``task_id``, default suite first."""
        names = self.suite_names()
        ordered = sorted(names, key=lambda n: n != DEFAULT_SUITE)
        for suite in ordered:
            if (self.suite_dir(suite) / task_id / io.TASK_FILE).exists():
                return suite, self.load_task(suite, task_id)
        return None

    # -- demonstrations

    def demo_folder(self, task_id: str, demo_id: str) -> Path:
        return self.demos_dir / validate_id(task_id, "task id") / validate_id(demo_id, "demo id")

    def demo_summaries(self, task_id: str | None = None) -> list[DemoSummary]:
        """Every demonstration, readable or not (an unreadable one carries its problem)."""
        out: list[DemoSummary] = []
        for folder in io.demo_dirs(self.demos_dir, task_id):
            try:
                demo = io.load_demo(folder)
            except GraphBuilderError as exc:
                out.append(
                    DemoSummary(folder.parent.name, folder.name, folder, None, problem=str(exc))
                )
                continue
            out.append(
                DemoSummary(
                    demo.task_id, demo.id, folder, demo.status, len(demo.steps), demo.is_finished
                )
            )
        return out

    def incomplete_demos(self) -> list[DemoSummary]:
        return [d for d in self.demo_summaries() if d.status is DemoStatus.INCOMPLETE]

    def _write[T](self, write: Callable[[], T]) -> T:
        try:
            return write()
        except OSError as exc:
            raise WorkspaceError(explain_os_error(exc)) from exc
