"""Running the evaluator off the GUI thread: a QThread drives ``evaluator.runner.run_suite``
and forwards its events as signals (queued into the GUI thread).

>>> import tempfile
>>> from importlib.resources import files
>>> from pathlib import Path
>>> from PySide6.QtCore import QEventLoop, QTimer
>>> from PySide6.QtWidgets import QApplication
>>> app = QApplication.instance() or QApplication([])
>>> loop = QEventLoop()
>>> QTimer.singleShot(20_000, loop.quit)  # bounded, whatever happens
>>> tmp = tempfile.TemporaryDirectory()
>>> config = RunConfig(suite=files("task_graphs") / "sample", out=Path(tmp.name) / "run",
...                    agent="replay", tasks=("font_bigger",))
>>> run = EvaluationRun(config)
>>> finished = []
>>> _ = run.task_finished.connect(lambda event: finished.append(event.result.status.value))
>>> _ = run.ended.connect(loop.quit)
>>> run.start()
>>> loop.exec()
0
>>> finished
['success']
>>> tmp.cleanup()
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal, Slot

from evaluator.errors import ConfigError, EvaluatorError
from evaluator.runner import (
    DeviceFactory,
    RunConfig,
    RunFinished,
    RunStarted,
    StepDone,
    TaskFinished,
    TaskStarted,
    WorkerStopped,
    run_suite,
)
from evaluator.trials import trial_dir, write_trials
from graph_builder.errors import GraphBuilderError

log = logging.getLogger(__name__)

EVALUATE_TAB = "the Evaluate tab"  # how a run's device lock names its holder


class RunWorker(QObject):
    """Lives in the run's thread. Every runner event goes out through the signal named for
    its type in ``EVENT_SIGNALS``; ``failed`` carries a configuration or I/O problem."""

    run_started = Signal(object)  # RunStarted
    task_started = Signal(object)  # TaskStarted
    step_done = Signal(object)  # StepDone
    task_finished = Signal(object)  # TaskFinished
    worker_stopped = Signal(object)  # WorkerStopped
    run_finished = Signal(object)  # RunFinished
    failed = Signal(str)
    done = Signal()

    EVENT_SIGNALS: dict[type, str] = {
        RunStarted: "run_started",
        TaskStarted: "task_started",
        StepDone: "step_done",
        TaskFinished: "task_finished",
        WorkerStopped: "worker_stopped",
        RunFinished: "run_finished",
    }

    def __init__(
        self, config: RunConfig, device_factory: DeviceFactory | None = None, trials: int = 1
    ) -> None:
        super().__init__()
        self.config = config
        self.device_factory = device_factory
        self.trials = trials
        self.stop_event = threading.Event()
        self.pause_event = threading.Event()

    @Slot()
    def run(self) -> None:
        try:
            if self.trials == 1:
                self._run(self.config)
            else:  # as ``elderbench eval --trials K``: OUT/trial-01.. and OUT/trials.*
                for index in range(1, self.trials + 1):
                    self._run(replace(self.config, out=trial_dir(self.config.out, index)))
                    if self.stop_event.is_set():
                        break
                else:
                    write_trials(self.config.out)
        except (EvaluatorError, GraphBuilderError) as exc:
            self.failed.emit(str(exc))
        except OSError as exc:
            self.failed.emit(f"{exc.strerror or exc} ({exc.filename or 'run folder'})")
        except Exception as exc:  # noqa: BLE001 - reported in the panel; the studio keeps running
            log.exception("evaluation run failed")
            self.failed.emit(f"unexpected {type(exc).__name__}: {exc}")
        finally:
            self.done.emit()

    def _run(self, config: RunConfig) -> None:
        run_suite(
            config,
            progress=self._forward,
            stop_event=self.stop_event,
            pause_event=self.pause_event,
            device_factory=self.device_factory,
            owner=EVALUATE_TAB,
        )

    def _forward(self, event: Any) -> None:
        name = self.EVENT_SIGNALS.get(type(event))
        if name is not None:
            getattr(self, name).emit(event)


class EvaluationRun(QObject):
    """One run in its own QThread. Connect to the signals before ``start()``."""

    run_started = Signal(object)
    task_started = Signal(object)
    step_done = Signal(object)
    task_finished = Signal(object)
    worker_stopped = Signal(object)
    run_finished = Signal(object)
    failed = Signal(str)
    ended = Signal()  # the thread is over, whatever happened

    def __init__(
        self,
        config: RunConfig,
        *,
        device_factory: DeviceFactory | None = None,
        trials: int = 1,
        parent: QObject | None = None,
    ) -> None:
        """``trials`` above 1 runs every task that many times, as ``--trials`` does."""
        super().__init__(parent)
        if trials < 1:
            raise ConfigError("--trials must be at least 1")
        self.config = config
        self._thread = QThread(self)
        self._thread.setObjectName("evaluation-run")
        self._worker = RunWorker(config, device_factory, trials)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.run)
        for name in (*RunWorker.EVENT_SIGNALS.values(), "failed"):
            getattr(self._worker, name).connect(getattr(self, name))
        self._worker.done.connect(self._thread.quit)
        self._thread.finished.connect(self._on_thread_finished)
        self._running = False

    @property
    def running(self) -> bool:
        return self._running

    @property
    def paused(self) -> bool:
        return self._worker.pause_event.is_set()

    def start(self) -> None:
        self._running = True
        self._thread.start()

    def stop(self) -> None:
        """Ask the run to stop after the current step (that task reruns on resume)."""
        self._worker.stop_event.set()

    def set_paused(self, paused: bool) -> None:
        if paused:
            self._worker.pause_event.set()
        else:
            self._worker.pause_event.clear()

    def wait(self, ms: int = 30_000) -> bool:
        """Stop and wait for the thread (closing the studio)."""
        self.stop()
        return self._thread.wait(ms)

    @Slot()
    def _on_thread_finished(self) -> None:
        self._running = False
        self.ended.emit()
