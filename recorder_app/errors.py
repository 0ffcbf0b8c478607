"""The recorder_app package's exceptions: one root, and specific kinds below it."""

from __future__ import annotations

import errno


class StudioError(Exception):
    """Root of every error raised by recorder_app."""


class WorkspaceError(StudioError):
    """A workspace folder that cannot be opened, created or written."""


class RecordingError(StudioError):
    """A recording step that could not be taken; the message says what to do next."""


class SettingsError(StudioError):
    """A setting typed into the studio that cannot make a run; the message says which and
    how to fix it."""


_OS_ERROR_WORDS: dict[int, str] = {
    errno.ENOSPC: "the disk is full; free some space, then try again",
    errno.EDQUOT: "the disk quota is used up; free some space, then try again",
    errno.EROFS: "the folder is on a read-only file system; choose a writable workspace",
    errno.EACCES: "you have no permission to write there; choose a writable workspace",
    errno.EPERM: "you have no permission to write there; choose a writable workspace",
    errno.ENOENT: "the folder no longer exists (was a drive unplugged?)",
}


def explain_os_error(exc: OSError) -> str:
    """Plain words for a failed file operation, naming the file when known."""
    words = _OS_ERROR_WORDS.get(exc.errno or 0, exc.strerror or str(exc))
    where = f" ({exc.filename})" if exc.filename else ""
    return f"Cannot write{where}: {words}."


class PhoneControlError(StudioError):
    """An input sent to the phone outside a recording (free drive) did not reach it, or the
    phone could not be restarted or reconnected; the message says why."""


class Cancelled(StudioError):
    """The user cancelled a long job; what it saved before stays."""
