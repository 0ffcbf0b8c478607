"""The devices package's exceptions: one root, and specific kinds below it.

Messages say what went wrong and what to do about it, because they reach researchers in
the studio's status bar and in CLI output.
"""

from __future__ import annotations


class DeviceError(Exception):
    """Root of every error raised by the devices package."""


class DeviceDisconnectedError(DeviceError):
    """The device (or the adb server in front of it) went away or stopped answering."""


class AdbUnavailableError(DeviceDisconnectedError):
    """No adb server listens on the expected host and port."""


class DeviceTimeoutError(DeviceDisconnectedError):
    """A call to the device did not finish within its timeout."""


class DeviceCommandError(DeviceError):
    """A shell command on the device failed (non-zero exit status or an error message)."""


class HierarchyDumpError(DeviceError):
    """``uiautomator dump`` kept failing (typically on a screen that never stops animating)."""


class InputError(DeviceError):
    """Text or an action could not be delivered to the device as asked."""


class MirrorError(DeviceError):
    """The screen mirror could not start or stopped; the message says why."""


class HierarchyBackendError(HierarchyDumpError):
    """The uiautomator2 server (the ``u2`` hierarchy backend) could not start or answer."""
