"""Background processes of one device: what `cmd &` starts, `kill` signals and `ps` lists.

Each job is a thread with a `stop` event: a signal (INT, TERM, HUP, KILL) sets it, and a
command that runs for a while (`screenrecord`, `sleep`, `logcat`) ends when it is set,
as such a process ends on a signal, finishing its work first where the real one does
(a recording is closed into a playable file). Jobs outlive the shell that started them,
as a process started with `&` outlives `adb shell`; unplugging the phone stops them all.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from virtual_phone.errors import VirtualPhoneError

MAX_JOBS = 64  # per device; past it `&` fails as fork does when a process limit is hit
FIRST_PID = 23000  # above the pids of the system and app processes `ps` shows
# Commands that catch INT and HUP to finish their work and exit 0; others die of them.
CATCHES_SIGNALS = frozenset({"screenrecord"})
SIGNALS = {"HUP": 1, "INT": 2, "QUIT": 3, "KILL": 9, "USR1": 10, "USR2": 12, "TERM": 15}


class JobLimitError(VirtualPhoneError):
    """Too many background jobs are running on the device."""


@dataclass(slots=True)
class Job:
    pid: int
    name: str  # the command's name, as `ps`, `pidof` and `pkill` see it
    stop: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    status: int | None = None  # the exit status, once done
    signal: int | None = None  # the signal that stopped it, if any


class JobTable:
    """The device's running background jobs, by pid."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[int, Job] = {}
        self._pids = itertools.count(FIRST_PID)

    def start(self, name: str, run: Callable[[threading.Event], int]) -> Job:
        """Run `run(stop)` in a thread; its return value becomes the job's status."""
        with self._lock:
            if sum(not job.done.is_set() for job in self._jobs.values()) >= MAX_JOBS:
                raise JobLimitError("can't fork: Resource temporarily unavailable")
            job = Job(next(self._pids), name)
            self._jobs[job.pid] = job

        def body() -> None:
            try:
                job.status = run(job.stop)
            except Exception:  # a job's crash is its exit status, never the server's
                job.status = 1
            finally:
                if job.signal is not None and (job.status is None or name not in CATCHES_SIGNALS):
                    job.status = 128 + job.signal
                job.done.set()
                with self._lock:
                    self._jobs.pop(job.pid, None)

        threading.Thread(target=body, name=f"job-{job.pid}-{name}", daemon=True).start()
        return job

    def get(self, pid: int) -> Job | None:
        with self._lock:
            return self._jobs.get(pid)

    def running(self) -> list[Job]:
        with self._lock:
            return [job for job in self._jobs.values() if not job.done.is_set()]

    def send(self, job: Job, signal: int) -> None:
        """Deliver a signal: the job is asked to stop."""
        if job.signal is None:
            job.signal = signal
        job.stop.set()

    def close(self, timeout: float = 5.0) -> None:
        """Stop every job and give them until `timeout` to finish their work."""
        jobs = self.running()
        for job in jobs:
            self.send(job, SIGNALS["HUP"])
        deadline = time.monotonic() + timeout
        for job in jobs:
            job.done.wait(max(0.0, deadline - time.monotonic()))
