"""Asking the model for proposals from the Language tab, as ``elderbench label`` /
``normalize`` do, on a pool thread with progress and Cancel.

The job calls the same ``evaluator.language.proposals.propose`` with a client built from
the same endpoint file, so a suite gets the same proposals from the studio as from the
command line. Cancel takes effect between two tasks (a request under way runs to its own
deadline); every proposal received before it is already saved.
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from evaluator.language.cli import endpoint_client
from evaluator.language.proposals import Kind, ProposalEvent, propose
from recorder_app.errors import Cancelled
from recorder_app.qt.workers import run_in_background

ENDPOINT_KEY = "language/endpoint"  # the endpoint file last used, per user


class _Progress(QObject):
    """Carries progress from the pool thread to the GUI (a queued signal)."""

    advanced = Signal(object)  # ProposalEvent


class ProposalRunner(QWidget):
    """Endpoint file, Propose labels / Propose rewrites, a progress bar and Cancel."""

    started = Signal(str)  # kind
    finished = Signal(str, str)  # kind, a summary in plain words
    failed = Signal(str, str)  # kind, why

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("proposalRunner")
        self._settings = settings
        self._suite: Path | None = None
        self._cancel: threading.Event | None = None
        self._errors = 0
        self._kind: Kind | None = None
        self.endpoint_edit = QLineEdit(str(settings.value(ENDPOINT_KEY, "")))
        self.endpoint_edit.setObjectName("endpointFile")
        self.endpoint_edit.setPlaceholderText("Model endpoint file (JSON or TOML)")
        self.endpoint_edit.setToolTip(
            "base_url, model and api_key_env (the name of the variable holding the key); "
            "the same file as the command line's --endpoint"
        )
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self._on_browse_clicked)
        self.force_check = QCheckBox("Ask again where a proposal exists")
        self.labels_button = QPushButton("Propose labels")
        self.labels_button.setObjectName("proposeLabels")
        self.labels_button.setToolTip("What `elderbench label SUITE --endpoint FILE` does")
        self.rewrites_button = QPushButton("Propose rewrites")
        self.rewrites_button.setObjectName("proposeRewrites")
        self.rewrites_button.setToolTip("What `elderbench normalize SUITE --endpoint FILE` does")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelProposals")
        self.cancel_button.setToolTip("Stop after the task being asked about; saved ones stay")
        self.progress = QProgressBar()
        self.progress.setObjectName("proposalProgress")
        self.progress.setFormat("%v / %m tasks")
        self.status = QLabel("")
        self.status.setObjectName("proposalStatus")
        self.status.setWordWrap(True)
        self.status.hide()
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        layout = QHBoxLayout()
        outer.addLayout(layout)
        outer.addWidget(self.status)
        layout.addWidget(QLabel("Model"))
        layout.addWidget(self.endpoint_edit, 2)
        layout.addWidget(self.browse_button)
        layout.addWidget(self.force_check)
        layout.addWidget(self.labels_button)
        layout.addWidget(self.rewrites_button)
        layout.addWidget(self.progress, 1)
        layout.addWidget(self.cancel_button)
        self.labels_button.clicked.connect(lambda: self.start(Kind.LABELS))
        self.rewrites_button.clicked.connect(lambda: self.start(Kind.REWRITES))
        self.cancel_button.clicked.connect(self.cancel)
        self._relay = _Progress(self)
        self._relay.advanced.connect(self._on_advanced)
        self._set_running(False)

    @property
    def running(self) -> bool:
        return self._cancel is not None

    def set_suite(self, folder: Path | None) -> None:
        self._suite = folder
        self._set_running(self.running)

    def start(self, kind: Kind) -> bool:
        """Ask the model for ``kind`` proposals for every task of the suite."""
        suite, text = self._suite, self.endpoint_edit.text().strip()
        if self.running or suite is None:
            return False
        if not text:
            self.failed.emit(kind.value, "Choose the model's endpoint file first.")
            return False
        endpoint = Path(text).expanduser()
        self._settings.setValue(ENDPOINT_KEY, str(endpoint))
        cancel = threading.Event()
        self._cancel, self._kind, self._errors = cancel, kind, 0
        force = self.force_check.isChecked()
        relay = self._relay

        def on_event(event: ProposalEvent) -> None:
            relay.advanced.emit(event)
            if cancel.is_set():
                raise Cancelled(f"cancelled after {event.done} of {event.total} tasks")

        def job() -> str:
            client = endpoint_client(endpoint)
            store = propose(suite, kind, client, force=force, on_event=on_event)
            return str(store.path)

        self.progress.setRange(0, 0)  # until the first task reports the count
        self._say(f"Asking the model for {kind.value}…")
        self._set_running(True)
        self.started.emit(kind.value)
        run_in_background(job, on_done=self._on_done, on_error=self._on_error)
        return True

    @Slot()
    def cancel(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
            self.cancel_button.setEnabled(False)
            self._say("Cancelling after the task being asked about…")

    @Slot(object)
    def _on_advanced(self, event: ProposalEvent) -> None:
        self._errors += event.error is not None
        self.progress.setRange(0, event.total)
        self.progress.setValue(event.done)
        state = "kept" if event.skipped else ("unusable reply" if event.error else "ok")
        self._say(f"{event.task_id}: {state}")

    def _on_done(self, path: str) -> None:
        kind = self._finish()
        unusable = (
            f"; {self._errors} replies unusable (run again to retry them)" if self._errors else ""
        )
        summary = f"{kind.value.capitalize()} proposals saved in {path}{unusable}."
        self._say(summary)
        self.finished.emit(kind.value, summary)

    def _on_error(self, exc: Exception) -> None:
        kind = self._finish()
        if isinstance(exc, Cancelled):
            summary = f"{kind.value.capitalize()}: {exc}; the proposals received are saved."
            self._say(summary)
            self.finished.emit(kind.value, summary)
            return
        self._say(f"Failed: {exc}")
        self.failed.emit(kind.value, str(exc))

    def _finish(self) -> Kind:
        kind = self._kind
        assert kind is not None
        self._cancel = None
        self._set_running(False)
        return kind

    def _set_running(self, running: bool) -> None:
        idle = not running and self._suite is not None
        for button in (self.labels_button, self.rewrites_button):
            button.setEnabled(idle)
        for widget in (self.endpoint_edit, self.browse_button, self.force_check):
            widget.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)
        if not running:
            self.progress.setRange(0, 1)
            self.progress.setValue(0)

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    @Slot()
    def _on_browse_clicked(self) -> None:
        start = self.endpoint_edit.text() or str(Path.home())
        path, _ = QFileDialog.getOpenFileName(
            self, "Model endpoint file", start, "Endpoint (*.json *.toml)"
        )
        if path:
            self.endpoint_edit.setText(path)
