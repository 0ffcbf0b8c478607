"""Long work with progress and a stop button, off the GUI thread.

``ProgressJob(work)`` runs ``work(report, stop)`` on a pool thread: ``report(item)`` sends
anything (a line, a result) to the GUI thread as ``progressed``, and ``stop`` is a
``threading.Event`` the work checks between its steps once ``cancel()`` was asked for.
``finished`` carries the work's return value, ``failed`` its exception; ``ended`` follows
either. Signals reach the GUI thread through this object's own queued slots, as in
``workers.BackgroundJob``: a plain function connected to a cross-thread signal would run
in the pool thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal, Slot

log = logging.getLogger(__name__)

Report = Callable[[object], None]
Work = Callable[[Report, threading.Event], Any]


class ProgressJob(QObject):
    progressed = Signal(object)
    finished = Signal(object)
    failed = Signal(object)  # the exception
    ended = Signal()
    _item_sent = Signal(object)
    _result_sent = Signal(object)
    _error_sent = Signal(object)

    def __init__(self, work: Work, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._work = work
        self.stop = threading.Event()
        self._done = threading.Event()
        self._started = False
        self._item_sent.connect(self._on_item_sent, Qt.ConnectionType.QueuedConnection)
        self._result_sent.connect(self._on_result_sent, Qt.ConnectionType.QueuedConnection)
        self._error_sent.connect(self._on_error_sent, Qt.ConnectionType.QueuedConnection)

    @property
    def running(self) -> bool:
        return self._started and not self._done.is_set()

    def start(self, pool: QThreadPool | None = None) -> None:
        if self._started:
            raise RuntimeError("a ProgressJob runs once")
        self._started = True
        (pool or QThreadPool.globalInstance()).start(_Runner(self))

    def cancel(self) -> None:
        """Ask the work to stop at its next check; it ends through ``finished`` with what
        it had done, or ``failed``."""
        self.stop.set()

    def wait(self, timeout: float) -> bool:
        """Block until the work has returned (for closing the studio); False on timeout."""
        return not self._started or self._done.wait(timeout)

    def run_work(self) -> None:
        """Called on the pool thread."""
        try:
            result = self._work(self._item_sent.emit, self.stop)
        except Exception as exc:  # delivered to the GUI, which says it in plain words
            log.debug("progress job failed", exc_info=True)
            self._done.set()
            self._error_sent.emit(exc)
        else:
            self._done.set()
            self._result_sent.emit(result)

    @Slot(object)
    def _on_item_sent(self, item: object) -> None:
        self.progressed.emit(item)

    @Slot(object)
    def _on_result_sent(self, result: object) -> None:
        self.finished.emit(result)
        self.ended.emit()

    @Slot(object)
    def _on_error_sent(self, exc: object) -> None:
        self.failed.emit(exc)
        self.ended.emit()


class _Runner(QRunnable):
    def __init__(self, job: ProgressJob) -> None:
        super().__init__()
        self._job = job
        self.setAutoDelete(True)

    def run(self) -> None:
        self._job.run_work()
