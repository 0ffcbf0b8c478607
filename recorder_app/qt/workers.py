"""Running blocking calls off the GUI thread and getting the result back as a signal.

>>> from PySide6.QtCore import QEventLoop, QTimer
>>> from PySide6.QtWidgets import QApplication
>>> app = QApplication.instance() or QApplication([])
>>> loop = QEventLoop()
>>> QTimer.singleShot(20_000, loop.quit)  # bounded, whatever happens
>>> results = []
>>> def on_done(value):
...     results.append(value)
...     loop.quit()
>>> job = run_in_background(lambda: sum(range(10)), on_done=on_done, on_error=print)
>>> loop.exec()
0
>>> results  # on_done ran in the GUI thread, in the loop
[45]
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal, Slot

log = logging.getLogger(__name__)


class BackgroundJob(QObject):
    """Created in the GUI thread; the pool thread reports through its queued signals.

    The callbacks run from this object's slots, so they always run in the GUI thread
    (a plain function connected to a cross-thread signal would run in the pool thread).
    """

    finished = Signal(object)
    failed = Signal(object)  # the exception
    _result_ready = Signal(object)
    _error_raised = Signal(object)

    def __init__(
        self,
        on_done: Callable[[Any], None] | None,
        on_error: Callable[[Exception], None] | None,
    ) -> None:
        super().__init__()
        self._on_done_callback = on_done
        self._on_error_callback = on_error
        self._result_ready.connect(self._on_result_ready, Qt.ConnectionType.QueuedConnection)
        self._error_raised.connect(self._on_error_raised, Qt.ConnectionType.QueuedConnection)

    @Slot(object)
    def _on_result_ready(self, result: object) -> None:
        _running.discard(self)
        if self._on_done_callback is not None:
            self._on_done_callback(result)
        self.finished.emit(result)

    @Slot(object)
    def _on_error_raised(self, exc: Exception) -> None:
        _running.discard(self)
        if self._on_error_callback is not None:
            self._on_error_callback(exc)
        self.failed.emit(exc)


class _FunctionJob(QRunnable):
    def __init__(self, fn: Callable[[], Any], job: BackgroundJob) -> None:
        super().__init__()
        self._fn = fn
        self._job = job
        self.setAutoDelete(True)

    def run(self) -> None:
        try:
            result = self._fn()
        except Exception as exc:  # delivered to the GUI, which shows it in plain words
            log.debug("background job failed", exc_info=True)
            self._job._error_raised.emit(exc)
        else:
            self._job._result_ready.emit(result)


_running: set[BackgroundJob] = set()  # keeps jobs alive until they report


def run_in_background(
    fn: Callable[[], Any],
    *,
    on_done: Callable[[Any], None] | None = None,
    on_error: Callable[[Exception], None] | None = None,
    pool: QThreadPool | None = None,
) -> BackgroundJob:
    """Run ``fn()`` on a pool thread; ``on_done``/``on_error`` are called in the GUI thread."""
    job = BackgroundJob(on_done, on_error)
    _running.add(job)
    (pool or QThreadPool.globalInstance()).start(_FunctionJob(fn, job))
    return job
