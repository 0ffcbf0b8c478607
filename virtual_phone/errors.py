"""The virtual phone's exceptions: one root, and the kinds a phone's own tools report.

The simulator is its own package, so it never raises the client side's errors: a client
learns of a refusal the way it would from a real phone, through the ADB protocol (a FAIL
reply, or a message on the shell's stderr with a non-zero status).
"""

from __future__ import annotations


class VirtualPhoneError(Exception):
    """Root of every error raised by the virtual_phone package."""


class PhoneCommandError(VirtualPhoneError):
    """The phone refused a request (start an app, pick an input method); worded like Android."""


class PhoneInputError(VirtualPhoneError):
    """A touch or key event the phone cannot deliver (unknown action or key code)."""
