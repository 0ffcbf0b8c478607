"""Escaping for `input text` and the ADB Keyboard switch, against a scripted shell."""

from __future__ import annotations

import base64
import shlex

import pytest

from devices.errors import InputError
from devices.text_input import (
    ADB_KEYBOARD_IME,
    adb_keyboard_command,
    input_text_commands,
    is_input_text_safe,
    type_text,
)

LATIN_IME = "com.android.inputmethod.latin/.LatinIME"


def android_input_text(argument: str) -> str:
    """What Android's `input text` types for one argument (its left-to-right `%s` scan)."""
    chars = list(argument)
    escape = False
    i = 0
    while i < len(chars):
        if escape:
            escape = False
            if chars[i] == "s":
                chars[i] = " "
                del chars[i - 1]
                i -= 1
        if chars[i] == "%":
            escape = True
        i += 1
    return "".join(chars)


def typed(text: str) -> str:
    """Run the commands through a POSIX shell parse and Android's %s rule."""
    result = []
    for command in input_text_commands(text):
        words = shlex.split(command)
        assert words[:2] == ["input", "text"] and len(words) == 3, command
        result.append(android_input_text(words[2]))
    return "".join(result)


@pytest.mark.parametrize(
    "text",
    [
        "hello world",
        "'; rm -rf /sdcard; echo '",
        "$(reboot)",
        "`reboot`",
        'say "hi" \\ there',
        "100%sure",
        "%%s and % s and %",
        "  leading and trailing  ",
        "a|b&c>d<e*f?g~h#i!j{k}l[m]n",
        "x" * 250,
    ],
)
def test_ascii_text_survives_shell_and_input_parsing(text):
    assert typed(text) == text


def test_spaces_are_sent_as_percent_s_and_arguments_are_quoted():
    assert input_text_commands("a b") == ["input text a%sb"]
    assert input_text_commands("$(reboot)") == ["input text '$(reboot)'"]


def test_literal_percent_s_is_split_across_commands():
    commands = input_text_commands("100%sure")
    assert commands == ["input text 100%", "input text sure"]


def test_long_text_is_chunked():
    commands = input_text_commands("y" * 250, chunk=100)
    assert [len(shlex.split(c)[2]) for c in commands] == [100, 100, 50]


def test_non_ascii_is_not_input_text_safe():
    assert is_input_text_safe("plain ASCII ~!")
    for text in ("你好", "emoji 😀", "tab\there", "new\nline", "é"):
        assert not is_input_text_safe(text)
        with pytest.raises(InputError):
            input_text_commands(text)


def test_adb_keyboard_command_carries_base64_utf8():
    command = adb_keyboard_command("你好 😀")
    words = shlex.split(command)
    assert words[:5] == ["am", "broadcast", "-a", "ADB_INPUT_B64", "--es"]
    assert words[5] == "msg"
    assert base64.b64decode(words[6]).decode("utf-8") == "你好 😀"


class ScriptedPhone:
    """Answers the IME commands like a device, and records what ran."""

    def __init__(
        self, *, installed: bool = True, enabled: bool = True, current: str = LATIN_IME
    ) -> None:
        self.installed = {LATIN_IME} | ({ADB_KEYBOARD_IME} if installed else set())
        self.enabled = {LATIN_IME} | ({ADB_KEYBOARD_IME} if installed and enabled else set())
        self.current = current
        self.commands: list[str] = []
        self.typed: list[str] = []

    def __call__(self, command: str) -> str:
        self.commands.append(command)
        words = shlex.split(command)
        if words == ["settings", "get", "secure", "default_input_method"]:
            return self.current + "\n"
        if words == ["ime", "list", "-a", "-s"]:
            return "".join(f"{i}\n" for i in sorted(self.installed))
        if words == ["ime", "list", "-s"]:
            return "".join(f"{i}\n" for i in sorted(self.enabled))
        if words[:2] == ["ime", "enable"]:
            self.enabled.add(words[2])
            return f"Input method {words[2]}: now enabled for user #0\n"
        if words[:2] == ["ime", "disable"]:
            self.enabled.discard(words[2])
            return f"Input method {words[2]}: now disabled for user #0\n"
        if words[:2] == ["ime", "set"]:
            assert words[2] in self.enabled
            self.current = words[2]
            return f"Input method {words[2]} selected for user #0\n"
        if words[:2] == ["am", "broadcast"]:
            if self.current == ADB_KEYBOARD_IME:
                self.typed.append(base64.b64decode(words[-1]).decode("utf-8"))
            return "Broadcasting: Intent { act=ADB_INPUT_B64 }\nBroadcast completed: result=0\n"
        if words[:2] == ["input", "text"]:
            self.typed.append(android_input_text(words[2]))
            return ""
        raise AssertionError(f"unexpected command {command!r}")


def test_unicode_switches_to_adb_keyboard_and_restores_the_previous_one():
    phone = ScriptedPhone()
    type_text(phone, "你好 😀", switch_delay=0)
    assert phone.typed == ["你好 😀"]
    assert phone.current == LATIN_IME


def test_a_disabled_adb_keyboard_is_enabled_for_typing_then_disabled_again():
    phone = ScriptedPhone(enabled=False)
    type_text(phone, "привет", switch_delay=0)
    assert phone.typed == ["привет"]
    assert phone.current == LATIN_IME
    assert ADB_KEYBOARD_IME not in phone.enabled


def test_an_already_current_adb_keyboard_is_left_alone():
    phone = ScriptedPhone(current=ADB_KEYBOARD_IME)
    type_text(phone, "ü", switch_delay=0)
    assert phone.typed == ["ü"]
    assert not any(c.startswith("ime ") for c in phone.commands)


def test_missing_adb_keyboard_raises_input_error_with_install_hint():
    phone = ScriptedPhone(installed=False)
    with pytest.raises(InputError, match="adb install ADBKeyboard.apk"):
        type_text(phone, "你好", switch_delay=0)
    assert phone.typed == []
    assert phone.current == LATIN_IME


def test_ascii_text_never_touches_the_input_method():
    phone = ScriptedPhone()
    type_text(phone, "it's $(fine)", switch_delay=0)
    assert "".join(phone.typed) == "it's $(fine)"
    assert all(c.startswith("input text ") for c in phone.commands)
