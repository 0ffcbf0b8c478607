"""Stop and pause for long runs driven from a GUI worker thread or the CLI."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from evaluator.errors import RunStopped


@dataclass(frozen=True, slots=True)
class Control:
    """Checked between steps: ``stop`` ends the run (the current task is left unfinished
    and reruns on resume); while ``pause`` is set the run waits before its next step."""

    stop: threading.Event = field(default_factory=threading.Event)
    pause: threading.Event = field(default_factory=threading.Event)

    def checkpoint(self) -> None:
        while self.pause.is_set() and not self.stop.is_set():
            self.stop.wait(0.05)
        if self.stop.is_set():
            raise RunStopped("the run was stopped; rerun with --resume to continue")
