"""An exclusive lock on a folder (a run folder, a studio workspace) across processes.

The lock is an advisory ``flock`` on ``<folder>/.lock``, which also records its holder
(pid, host, start time, what for) so that a refusal can say who holds it. The kernel drops
the lock when its holder dies, so a lock file left behind by a killed process is stale by
construction: the next taker simply takes it and rewrites the holder.

>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> with FolderLock(Path(tmp.name), purpose="elderbench eval"):
...     try:
...         FolderLock(Path(tmp.name), purpose="a second run").acquire()
...     except FolderLockedError as exc:
...         print("refused:", "in use by elderbench eval" in str(exc))
refused: True
>>> FolderLock(Path(tmp.name), purpose="a second run").acquire().release()
>>> tmp.cleanup()
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Self

from graph_builder.errors import GraphBuilderError

LOCK_FILE = ".lock"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class FolderLockedError(GraphBuilderError):
    """Another process (or another part of this one) holds the folder's lock."""


class FolderLock:
    """Held from ``acquire()`` (or ``with``) until ``release()``; not reentrant."""

    def __init__(
        self,
        folder: Path,
        *,
        purpose: str,
        name: str = LOCK_FILE,
        details: Mapping[str, str] | None = None,
    ) -> None:
        """``name``: the lock file in ``folder``. One folder may hold the locks of many things
        (devices), or a second, independent lock beside the long one a run holds (a short
        one for a single read-modify-write). ``details`` are recorded beside the holder."""
        self.folder = Path(folder)
        self.purpose = purpose
        self.name = name
        self.details = dict(details or {})
        self._file: IO[str] | None = None

    @property
    def path(self) -> Path:
        return self.folder / self.name

    def acquire(self, *, wait: float = 0.0) -> Self:
        """Take the lock, or raise FolderLockedError naming the holder.

        ``wait`` seconds: how long to keep trying while another holder has it (for locks
        held only for a moment); 0 refuses at once.
        """
        if self._file is not None:
            return self
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held while locked
        try:
            _lock_within(handle, wait)
        except OSError:
            handle.seek(0)
            holder = _describe(handle.read())
            handle.close()
            raise FolderLockedError(
                f"{self.folder} is in use by {holder}. Wait for it to finish or stop it; "
                "a holder that died releases the lock by itself."
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(
            json.dumps(
                {
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "started": time.time(),
                    "purpose": self.purpose,
                    **({"details": self.details} if self.details else {}),
                }
            )
        )
        handle.flush()
        self._file = handle
        return self

    def release(self) -> None:
        # The file stays: unlinking a locked file lets a waiter lock an orphaned inode.
        handle, self._file = self._file, None
        if handle is not None:
            handle.close()  # closing drops the flock

    @property
    def held(self) -> bool:
        return self._file is not None

    def __enter__(self) -> Self:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _lock_within(handle: IO[str], wait: float) -> None:
    deadline = time.monotonic() + wait
    pause = 0.001
    while True:
        try:
            _lock(handle)
            return
        except OSError:
            if time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def lock_holder(path: Path) -> dict[str, Any] | None:
    """What the lock file at ``path`` says about its holder, or None when the lock is free
    (or the file says nothing readable). The answer may be stale by the time it is used."""
    try:
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:
        return None
    with handle:
        try:
            _lock(handle)
        except OSError:
            handle.seek(0)
            try:
                data = json.loads(handle.read())
            except ValueError:
                return {}
            return data if isinstance(data, dict) else {}
        return None  # free (closing the handle drops the lock just taken)


def _lock(handle: IO[str]) -> None:
    if fcntl is not None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    else:  # pragma: no cover - Windows
        import msvcrt

        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)


def _describe(text: str) -> str:
    try:
        data: Any = json.loads(text)
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(data["started"])))
        return (
            f"{data.get('purpose') or 'another process'} (pid {int(data['pid'])} on "
            f"{data.get('host') or 'an unknown host'}, since {when})"
        )
    except (ValueError, TypeError, KeyError):
        return "another process (it has not recorded who it is yet)"
