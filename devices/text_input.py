"""Typing text on a device: `input text` for plain ASCII, the ADB Keyboard for the rest.

`input text` only types printable ASCII, and its argument passes through the device's
shell first. Two layers of escaping therefore apply:

- `input` turns every ``%s`` into a space (that is how a space is typed), so spaces are
  sent as ``%s`` and a literal ``%`` followed by ``s`` is split across two calls;
- the whole argument is single-quoted for the shell, so ``$(...)``, ``;``, quotes and
  backslashes reach `input` as text and never run.

Anything else (emoji, Chinese, newlines) goes through the ADB Keyboard input method as a
base64 broadcast, which the device decodes itself, so no character needs escaping.

>>> input_text_commands("a b")
['input text a%sb']
>>> input_text_commands("$(reboot) now")
["input text '$(reboot)%snow'"]
"""

from __future__ import annotations

import base64
import shlex
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from devices.errors import InputError

ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
ADB_KEYBOARD_ACTION = "ADB_INPUT_B64"
ADB_KEYBOARD_HELP = (
    "Install the ADB Keyboard input method (ADBKeyboard.apk from github.com/senzhk/ADBKeyBoard) "
    "with `adb install ADBKeyboard.apk`; the studio switches to it only while typing and "
    "restores your keyboard afterwards."
)
# Long `input text` arguments are slow to inject and some builds cap the command line.
INPUT_TEXT_CHUNK = 100


class ShellRunner(Protocol):
    """Runs one shell command on the device and returns its output (raises DeviceError)."""

    def __call__(self, command: str, /) -> str: ...


def is_input_text_safe(text: str) -> bool:
    """True when `input text` can type ``text``: printable ASCII only."""
    return all(" " <= ch <= "~" for ch in text)


def _pieces(text: str, size: int) -> Iterator[str]:
    """Cut ``text`` so that no piece holds a literal ``%s`` and none is longer than ``size``."""
    start = 0
    for i in range(len(text)):
        at_escape = text[i] == "s" and i > start and text[i - 1] == "%"
        if at_escape or i - start >= size:
            yield text[start:i]
            start = i
    if start < len(text):
        yield text[start:]


def input_text_commands(text: str, *, chunk: int = INPUT_TEXT_CHUNK) -> list[str]:
    """The `input text` commands that type ``text`` (printable ASCII) literally."""
    if not is_input_text_safe(text):
        raise InputError(f"`input text` cannot type {text!r}: it is not printable ASCII")
    return [f"input text {shlex.quote(piece.replace(' ', '%s'))}" for piece in _pieces(text, chunk)]


def adb_keyboard_command(text: str) -> str:
    """The broadcast that makes the ADB Keyboard type ``text`` (any Unicode)."""
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"am broadcast -a {ADB_KEYBOARD_ACTION} --es msg {encoded}"


def _lines(output: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if line.strip()]


@contextmanager
def adb_keyboard(
    run: ShellRunner, *, switch_delay: float = 0.3, sleep: Callable[[float], None] = time.sleep
) -> Iterator[None]:
    """Make the ADB Keyboard the current input method for the block, then restore.

    ``switch_delay`` gives a real phone time to bind the new keyboard to the focused field;
    a broadcast sent before that is silently dropped.
    """
    previous = run("settings get secure default_input_method").strip()
    if previous == ADB_KEYBOARD_IME:
        yield
        return
    if ADB_KEYBOARD_IME not in _lines(run("ime list -a -s")):
        raise InputError(
            f"typing non-ASCII text needs the ADB Keyboard ({ADB_KEYBOARD_IME}), which is not "
            f"installed on the device. {ADB_KEYBOARD_HELP}"
        )
    was_enabled = ADB_KEYBOARD_IME in _lines(run("ime list -s"))
    if not was_enabled:
        run(f"ime enable {ADB_KEYBOARD_IME}")
    answer = run(f"ime set {ADB_KEYBOARD_IME}")
    if "selected" not in answer:
        raise InputError(
            f"the device refused to select the ADB Keyboard ({answer.strip() or 'no answer'}). "
            "Check that it is allowed as an input method in the phone's keyboard settings."
        )
    try:
        if switch_delay > 0:
            sleep(switch_delay)
        yield
    finally:
        if previous and previous != "null":
            run(f"ime set {shlex.quote(previous)}")
        if not was_enabled:
            run(f"ime disable {ADB_KEYBOARD_IME}")


def type_text(
    run: ShellRunner,
    text: str,
    *,
    switch_delay: float = 0.3,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Type ``text`` into the focused field, literally, whatever characters it holds."""
    if is_input_text_safe(text):
        for command in input_text_commands(text):
            run(command)
        return
    with adb_keyboard(run, switch_delay=switch_delay, sleep=sleep):
        answer = run(adb_keyboard_command(text))
    if "Broadcast completed" not in answer:
        raise InputError(
            f"the ADB Keyboard broadcast was not delivered ({answer.strip() or 'no answer'}); "
            "is the phone unlocked with a text field focused?"
        )
