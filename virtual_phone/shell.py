"""The virtual phone's shell: a small POSIX-ish language over a table of commands.

It understands what ADB clients send to `/system/bin/sh -c`: single and double quotes,
backslashes, `;`, `&&`, `||`, `|`, `VAR=value` prefixes, `$VAR`, `${VAR}`, `$?`,
`$(...)` and backticks (never inside single quotes), unquoted `*`/`?` globs, and the
redirections `>`, `>>`, `<`, `2>&1`. Commands are plain functions in a registry dict;
`toolbox` and `android_tools` provide them.

>>> def echo(inv):
...     inv.write(" ".join(inv.args[1:]) + "\\n")
...     return 0
>>> out = bytearray()
>>> shell = Shell(device=None, commands={"echo": echo})
>>> shell.run("X=1; echo $X 'a  b'", Streams(out.extend, out.extend))
0
>>> bytes(out)
b'1 a  b\\n'
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from virtual_phone.errors import PhoneCommandError, PhoneInputError, VirtualPhoneError
from virtual_phone.filesystem import FileSystemError, MemoryFileSystem, normalize

if TYPE_CHECKING:
    from virtual_phone.phone import VirtualPhone
    from virtual_phone.snapshots import SnapshotStore

SHELL_NAME = "/system/bin/sh"
NOT_FOUND_STATUS = 127
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_REDIRECT_RE = re.compile(r"(\d)?(>>|>&|>|<)")
_SPECIAL_PARAMS = "?$#!*@-0123456789"
_WORD_BREAK = " \t\n;&|<>()"
# Substitutions and `sh -c` inside each other: deeper than this is refused, not recursed
# into until the interpreter's stack runs out in a connection thread.
MAX_NESTING = 48


class ShellDevice(Protocol):
    """What commands may touch: the phone and its files."""

    @property
    def phone(self) -> VirtualPhone: ...

    @property
    def fs(self) -> MemoryFileSystem: ...

    @property
    def snapshots(self) -> SnapshotStore: ...


class ShellSyntaxError(VirtualPhoneError, ValueError):
    """The command line cannot be parsed; the message reads like mksh's."""


class CommandFailed(VirtualPhoneError):
    """Raised by a command to stop with a message on stderr and an exit status."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class _ExitShell(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


# ---------------------------------------------------------------- syntax tree


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a word: literal text, a parameter, or a command substitution."""

    kind: Literal["text", "param", "command"]
    value: str
    quoted: bool


Word = tuple[Part, ...]


@dataclass(frozen=True, slots=True)
class Redirect:
    fd: int
    op: str  # ">", ">>", "<" or ">&"
    target: Word


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    assignments: tuple[tuple[str, Word], ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]


Pipeline = tuple[SimpleCommand, ...]


@dataclass(frozen=True, slots=True)
class AndOrList:
    first: Pipeline
    rest: tuple[tuple[str, Pipeline], ...]  # ("&&" | "||", pipeline)


Script = tuple[AndOrList, ...]


# ---------------------------------------------------------------- lexer


@dataclass(frozen=True, slots=True)
class _Token:
    kind: Literal["word", "op", "redirect"]
    word: Word = ()
    op: str = ""
    fd: int = -1


class _Lexer:
    def __init__(self, source: str) -> None:
        self.src = source
        self.pos = 0

    def tokens(self) -> list[_Token]:
        tokens: list[_Token] = []
        src = self.src
        while self.pos < len(src):
            c = src[self.pos]
            if c in " \t":
                self.pos += 1
            elif c == "#":
                end = src.find("\n", self.pos)
                self.pos = len(src) if end < 0 else end
            elif c == "\\" and src.startswith("\\\n", self.pos):
                self.pos += 2
            elif c in "\n;":
                tokens.append(_Token("op", op=";"))
                self.pos += 1
            elif src.startswith(("&&", "||"), self.pos):
                tokens.append(_Token("op", op=src[self.pos : self.pos + 2]))
                self.pos += 2
            elif c in "&|":
                # A trailing `&` would background the job; run it in the foreground instead.
                tokens.append(_Token("op", op=";" if c == "&" else "|"))
                self.pos += 1
            elif c in "()":
                raise ShellSyntaxError(f"syntax error: '{c}' unexpected")
            elif match := _REDIRECT_RE.match(src, self.pos):
                op = match.group(2)
                default_fd = 0 if op == "<" else 1
                fd = int(match.group(1)) if match.group(1) else default_fd
                tokens.append(_Token("redirect", op=op, fd=fd))
                self.pos = match.end()
            else:
                tokens.append(_Token("word", word=self._word()))
        return tokens

    def _word(self) -> Word:
        parts: list[Part] = []
        src = self.src
        while self.pos < len(src):
            c = src[self.pos]
            if c in _WORD_BREAK:
                break
            if c == "\\":
                if self.pos + 1 >= len(src):
                    _add_text(parts, "\\", quoted=False)
                    self.pos += 1
                elif src[self.pos + 1] == "\n":
                    self.pos += 2
                else:
                    _add_text(parts, src[self.pos + 1], quoted=True)
                    self.pos += 2
            elif c == "'":
                end = src.find("'", self.pos + 1)
                if end < 0:
                    raise ShellSyntaxError("syntax error: unterminated quoted string")
                _add_text(parts, src[self.pos + 1 : end], quoted=True)
                self.pos = end + 1
            elif c == '"':
                self._double_quoted(parts)
            elif c == "$":
                self._dollar(parts, quoted=False)
            elif c == "`":
                parts.append(Part("command", self._backquoted(), quoted=False))
            else:
                _add_text(parts, c, quoted=False)
                self.pos += 1
        return tuple(parts)

    def _double_quoted(self, parts: list[Part]) -> None:
        src = self.src
        self.pos += 1
        _add_text(parts, "", quoted=True)  # `""` is still an (empty) argument
        while True:
            if self.pos >= len(src):
                raise ShellSyntaxError("syntax error: unterminated quoted string")
            c = src[self.pos]
            if c == '"':
                self.pos += 1
                return
            if c == "\\" and self.pos + 1 < len(src) and src[self.pos + 1] in '$`"\\\n':
                if src[self.pos + 1] != "\n":
                    _add_text(parts, src[self.pos + 1], quoted=True)
                self.pos += 2
            elif c == "$":
                self._dollar(parts, quoted=True)
            elif c == "`":
                parts.append(Part("command", self._backquoted(), quoted=True))
            else:
                _add_text(parts, c, quoted=True)
                self.pos += 1

    def _dollar(self, parts: list[Part], *, quoted: bool) -> None:
        src = self.src
        nxt = src[self.pos + 1] if self.pos + 1 < len(src) else ""
        if nxt == "(":
            end = _matching_paren(src, self.pos + 1)
            parts.append(Part("command", src[self.pos + 2 : end], quoted))
            self.pos = end + 1
        elif nxt == "{":
            end = src.find("}", self.pos)
            if end < 0:
                raise ShellSyntaxError("syntax error: missing '}'")
            name = src[self.pos + 2 : end]
            if not (_NAME_RE.fullmatch(name) or (len(name) == 1 and name in _SPECIAL_PARAMS)):
                raise ShellSyntaxError(f"{src[self.pos : end + 1]}: bad substitution")
            parts.append(Part("param", name, quoted))
            self.pos = end + 1
        elif nxt and nxt in _SPECIAL_PARAMS:
            parts.append(Part("param", nxt, quoted))
            self.pos += 2
        elif match := _NAME_RE.match(src, self.pos + 1):
            parts.append(Part("param", match.group(), quoted))
            self.pos = match.end()
        else:
            _add_text(parts, "$", quoted)
            self.pos += 1

    def _backquoted(self) -> str:
        end = self.src.find("`", self.pos + 1)
        if end < 0:
            raise ShellSyntaxError("syntax error: unterminated command substitution")
        inner = self.src[self.pos + 1 : end]
        self.pos = end + 1
        return inner


def _add_text(parts: list[Part], text: str, quoted: bool) -> None:
    last = parts[-1] if parts else None
    if last is not None and last.kind == "text" and last.quoted == quoted:
        parts[-1] = Part("text", last.value + text, quoted)
    else:
        parts.append(Part("text", text, quoted))


def _matching_paren(src: str, open_pos: int) -> int:
    """Index of the `)` closing the `(` at open_pos, skipping quoted text."""
    depth = 0
    pos = open_pos
    while pos < len(src):
        c = src[pos]
        if c == "\\":
            pos += 2
            continue
        if c == "'":
            end = src.find("'", pos + 1)
            pos = len(src) if end < 0 else end + 1
            continue
        if c == '"':
            pos += 1
            while pos < len(src) and src[pos] != '"':
                pos += 2 if src[pos] == "\\" else 1
            pos += 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return pos
        pos += 1
    raise ShellSyntaxError("syntax error: unterminated command substitution")


# ---------------------------------------------------------------- parser


def parse(source: str) -> Script:
    """Parse a command line into and-or lists of pipelines of simple commands."""
    tokens = _Lexer(source).tokens()
    script: list[AndOrList] = []
    pos = 0
    while pos < len(tokens):
        if tokens[pos].kind == "op" and tokens[pos].op == ";":
            pos += 1
            continue
        first, pos = _parse_pipeline(tokens, pos)
        rest: list[tuple[str, Pipeline]] = []
        while pos < len(tokens) and tokens[pos].op in ("&&", "||"):
            op = tokens[pos].op
            pipeline, pos = _parse_pipeline(tokens, pos + 1)
            rest.append((op, pipeline))
        script.append(AndOrList(first, tuple(rest)))
        if pos < len(tokens):
            if tokens[pos].op != ";":
                raise ShellSyntaxError(f"syntax error: '{tokens[pos].op}' unexpected")
            pos += 1
    return tuple(script)


def _parse_pipeline(tokens: list[_Token], pos: int) -> tuple[Pipeline, int]:
    commands: list[SimpleCommand] = []
    while True:
        command, pos = _parse_command(tokens, pos)
        commands.append(command)
        if pos < len(tokens) and tokens[pos].op == "|":
            pos += 1
            continue
        return tuple(commands), pos


def _parse_command(tokens: list[_Token], pos: int) -> tuple[SimpleCommand, int]:
    assignments: list[tuple[str, Word]] = []
    words: list[Word] = []
    redirects: list[Redirect] = []
    while pos < len(tokens) and tokens[pos].kind != "op":
        token = tokens[pos]
        if token.kind == "redirect":
            if pos + 1 >= len(tokens) or tokens[pos + 1].kind != "word":
                raise ShellSyntaxError(f"syntax error: '{token.op}' unexpected")
            redirects.append(Redirect(token.fd, token.op, tokens[pos + 1].word))
            pos += 2
            continue
        assignment = _as_assignment(token.word) if not words else None
        if assignment is not None:
            assignments.append(assignment)
        else:
            words.append(token.word)
        pos += 1
    if not (assignments or words or redirects):
        unexpected = tokens[pos].op if pos < len(tokens) else "newline"
        raise ShellSyntaxError(f"syntax error: '{unexpected}' unexpected")
    return SimpleCommand(tuple(assignments), tuple(words), tuple(redirects)), pos


def _as_assignment(word: Word) -> tuple[str, Word] | None:
    if not word or word[0].kind != "text" or word[0].quoted:
        return None
    match = _ASSIGNMENT_RE.match(word[0].value)
    if match is None:
        return None
    remainder = word[0].value[match.end() :]
    value = ((Part("text", remainder, False),) if remainder else ()) + word[1:]
    return match.group(1), value


# ---------------------------------------------------------------- execution


class Streams:
    """Where a command's stdout and stderr go; `flush` pushes buffered output to the client."""

    def __init__(
        self,
        out: Callable[[bytes], object],
        err: Callable[[bytes], object],
        flush: Callable[[], object] = lambda: None,
    ) -> None:
        self._out = out
        self._err = err
        self._flush = flush

    def out(self, data: bytes | str) -> None:
        self._out(data.encode() if isinstance(data, str) else data)

    def err(self, data: bytes | str) -> None:
        self._err(data.encode() if isinstance(data, str) else data)

    def flush(self) -> None:
        self._flush()


# A command's standard input: bytes, or a function that waits for them (the client's).
Input = bytes | Callable[[], bytes]


@dataclass(slots=True)
class Invocation:
    """One run of a command: its arguments, environment, input and output."""

    args: list[str]
    env: dict[str, str]
    input: Input
    streams: Streams
    shell: Shell
    cancelled: threading.Event = field(default_factory=threading.Event)

    @property
    def stdin(self) -> bytes:
        """All of standard input; only commands that read it wait for the client's."""
        if callable(self.input):
            self.input = self.input()
        return self.input

    @property
    def device(self) -> ShellDevice:
        return self.shell.device

    def write(self, data: bytes | str) -> None:
        self.streams.out(data)

    def error(self, data: bytes | str) -> None:
        self.streams.err(data)

    def path(self, path: str) -> str:
        return normalize(path, self.shell.cwd)


Command = Callable[[Invocation], int]


class Shell:
    """Runs command lines against one device; keeps variables, `$?` and the working dir."""

    def __init__(
        self,
        device: ShellDevice,
        commands: Mapping[str, Command],
        *,
        env: Mapping[str, str] | None = None,
        depth: int = 0,
    ) -> None:
        self.device = device
        self.commands = {**_BUILTINS, **commands}
        self.env: dict[str, str] = dict(env or {})
        self.cwd = "/"
        self.status = 0
        self._substitution_status = 0
        self._depth = depth
        self._stdin: Input = b""

    def run(
        self,
        source: str,
        streams: Streams,
        *,
        cancelled: threading.Event | None = None,
        stdin: Input = b"",
    ) -> int:
        """Run a command line and return its exit status (syntax errors give 1)."""
        cancelled = cancelled or threading.Event()
        self._stdin = stdin
        try:
            script = parse(source)
        except ShellSyntaxError as exc:
            streams.err(f"{SHELL_NAME}: {exc}\n")
            self.status = 1
            return 1
        try:
            self._run_script(script, streams, cancelled)
        except _ExitShell as done:
            self.status = done.status
        return self.status

    def _run_script(self, script: Script, streams: Streams, cancelled: threading.Event) -> None:
        for and_or in script:
            if cancelled.is_set():
                return
            self._run_pipeline(and_or.first, streams, cancelled)
            for op, pipeline in and_or.rest:
                if (op == "&&") == (self.status == 0):
                    self._run_pipeline(pipeline, streams, cancelled)

    def _run_pipeline(
        self, pipeline: Pipeline, streams: Streams, cancelled: threading.Event
    ) -> None:
        stdin = self._stdin
        for index, command in enumerate(pipeline):
            if index == len(pipeline) - 1:
                self.status = self._run_command(command, streams, stdin, cancelled)
            else:
                captured = bytearray()
                piped = Streams(captured.extend, streams.err)
                self._run_command(command, piped, stdin, cancelled)
                stdin = bytes(captured)

    def _run_command(
        self, command: SimpleCommand, streams: Streams, stdin: Input, cancelled: threading.Event
    ) -> int:
        self._substitution_status = 0  # an assignment-only command returns this
        args = [arg for word in command.words for arg in self._expand(word, streams, cancelled)]
        values = {
            name: self._expand_plain(value, streams, cancelled)
            for name, value in command.assignments
        }
        try:
            streams, stdin, finish = self._apply_redirects(
                command.redirects, streams, stdin, cancelled
            )
        except CommandFailed as exc:
            streams.err(f"{SHELL_NAME}: {exc.message}\n")
            return exc.status
        try:
            if not args:
                self.env.update(values)
                return self._substitution_status
            invocation = Invocation(args, {**self.env, **values}, stdin, streams, self, cancelled)
            return self._call(invocation)
        finally:
            finish()

    def _call(self, inv: Invocation) -> int:
        name = inv.args[0]
        command = self.commands.get(posixpath.basename(name) if "/" in name else name)
        if command is None:
            inv.error(f"{SHELL_NAME}: {name}: inaccessible or not found\n")
            return NOT_FOUND_STATUS
        try:
            return command(inv)
        except CommandFailed as exc:
            inv.error(exc.message if exc.message.endswith("\n") else exc.message + "\n")
            return exc.status
        except FileSystemError as exc:
            inv.error(f"{posixpath.basename(name)}: {exc}\n")
            return 1
        except (
            PhoneCommandError,
            PhoneInputError,
        ) as exc:  # the phone refused, with a message worded like Android's
            inv.error(f"{exc}\n")
            return 1

    def _apply_redirects(
        self,
        redirects: tuple[Redirect, ...],
        streams: Streams,
        stdin: Input,
        cancelled: threading.Event,
    ) -> tuple[Streams, Input, Callable[[], None]]:
        if not redirects:
            return streams, stdin, lambda: None
        targets: dict[int, Callable[[bytes], object]] = {1: streams.out, 2: streams.err}
        pending: list[tuple[str, bytearray]] = []
        fs = self.device.fs
        for redirect in redirects:
            target = self._expand_plain(redirect.target, streams, cancelled)
            if redirect.op == ">&":
                if not target.isdigit() or int(target) not in targets:
                    raise CommandFailed(f"{target}: illegal file descriptor name")
                targets[redirect.fd] = targets[int(target)]
            elif redirect.op == "<":
                try:
                    stdin = b"" if target == "/dev/null" else fs.read_bytes(self._path(target))
                except FileSystemError as exc:
                    raise CommandFailed(f"can't open {target}: No such file or directory") from exc
            elif target == "/dev/null":
                targets[redirect.fd] = lambda data: None
            else:
                path = self._path(target)
                if fs.is_dir(path):
                    raise CommandFailed(f"can't create {target}: Is a directory")
                try:
                    fs.write_bytes(path, b"", append=redirect.op == ">>")
                except FileSystemError as exc:
                    reason = str(exc).rpartition(": ")[2]
                    raise CommandFailed(f"can't create {target}: {reason}") from exc
                buffer = bytearray()
                pending.append((path, buffer))
                targets[redirect.fd] = buffer.extend

        def finish() -> None:
            for path, buffer in pending:
                fs.write_bytes(path, bytes(buffer), append=True)

        return Streams(targets[1], targets[2], streams.flush), stdin, finish

    def _path(self, path: str) -> str:
        return normalize(path, self.cwd)

    # ------------------------------------------------------------ expansion

    def _substitute(self, part: Part, streams: Streams, cancelled: threading.Event) -> str:
        if part.kind == "param":
            return self._parameter(part.value)
        captured = bytearray()
        if self._depth >= MAX_NESTING:
            streams.err(f"{SHELL_NAME}: command substitutions nested too deeply\n")
            self.status = self._substitution_status = 1
            return ""
        self._depth += 1
        try:
            self._run_script(parse(part.value), Streams(captured.extend, streams.err), cancelled)
        except ShellSyntaxError as exc:
            streams.err(f"{SHELL_NAME}: {exc}\n")
            self.status = 1
        except _ExitShell as done:
            self.status = done.status
        finally:
            self._depth -= 1
        self._substitution_status = self.status
        return captured.decode("utf-8", errors="replace").rstrip("\n")

    def _parameter(self, name: str) -> str:
        if name == "?":
            return str(self.status)
        if name == "$":
            return "4242"
        if name == "0":
            return SHELL_NAME
        if name == "#":
            return "0"
        return self.env.get(name, "")

    def _expand_plain(self, word: Word, streams: Streams, cancelled: threading.Event) -> str:
        """Expand a word to one string: no field splitting, no globbing (assignments)."""
        return "".join(
            part.value if part.kind == "text" else self._substitute(part, streams, cancelled)
            for part in word
        )

    def _expand(self, word: Word, streams: Streams, cancelled: threading.Event) -> list[str]:
        """Expand a word to fields: substitutions, splitting of unquoted results, globs."""
        fields: list[list[tuple[str, bool]]] = []
        current: list[tuple[str, bool]] | None = None
        for part in word:
            if part.kind == "text":
                value, quoted = part.value, part.quoted
                if current is None:
                    current = []
                    fields.append(current)
                current.append((value, quoted))
                continue
            value = self._substitute(part, streams, cancelled)
            if part.quoted:
                if current is None:
                    current = []
                    fields.append(current)
                current.append((value, True))
                continue
            pieces = value.split()
            if not pieces:
                if value and current is not None:
                    current = None
                continue
            if value[0].isspace():
                current = None
            for index, piece in enumerate(pieces):
                if index > 0 or current is None:
                    current = []
                    fields.append(current)
                current.append((piece, True))
            if value[-1].isspace():
                current = None
        return [arg for segments in fields for arg in self._glob(segments)]

    def _glob(self, segments: list[tuple[str, bool]]) -> list[str]:
        text = "".join(value for value, _ in segments)
        magic = any(not quoted and any(c in value for c in "*?[") for value, quoted in segments)
        if not magic:
            return [text]
        pattern = "".join(
            value if not quoted else re.sub(r"([*?\[])", r"[\1]", value)
            for value, quoted in segments
        )
        matches = glob_paths(self.device.fs, pattern, self.cwd)
        return matches or [text]


def glob_paths(fs: MemoryFileSystem, pattern: str, cwd: str = "/") -> list[str]:
    """Paths matching a shell glob, spelled relative or absolute like the pattern."""
    results = ["/" if pattern.startswith("/") else ""]
    for component in (c for c in pattern.split("/") if c):
        matched: list[str] = []
        for base in results:
            directory = normalize(base, cwd) if base else cwd
            if not any(c in component for c in "*?["):
                candidate = posixpath.join(base, component)
                if fs.exists(normalize(candidate, cwd)):
                    matched.append(candidate)
                continue
            try:
                entries = fs.listdir(directory)
            except FileSystemError:
                continue
            matched.extend(
                posixpath.join(base, name)
                for name, _ in entries
                if not name.startswith(".") and fnmatch.fnmatchcase(name, component)
            )
        results = matched
    return sorted(results)


# ---------------------------------------------------------------- builtins


def _builtin_true(inv: Invocation) -> int:
    return 0


def _builtin_false(inv: Invocation) -> int:
    return 1


def _builtin_exit(inv: Invocation) -> int:
    if len(inv.args) > 1 and not inv.args[1].lstrip("-").isdigit():
        raise CommandFailed(f"{SHELL_NAME}: exit: {inv.args[1]}: bad number", 2)
    raise _ExitShell(int(inv.args[1]) & 0xFF if len(inv.args) > 1 else inv.shell.status)


def _builtin_cd(inv: Invocation) -> int:
    target = inv.path(inv.args[1] if len(inv.args) > 1 else "/")
    if not inv.device.fs.is_dir(target):
        raise CommandFailed(f"{SHELL_NAME}: cd: {inv.args[1]}: No such file or directory", 2)
    inv.shell.cwd = target
    return 0


def _builtin_pwd(inv: Invocation) -> int:
    inv.write(inv.shell.cwd + "\n")
    return 0


def _builtin_export(inv: Invocation) -> int:
    for arg in inv.args[1:]:
        name, sep, value = arg.partition("=")
        if sep:
            inv.shell.env[name] = value
    return 0


def _builtin_sh(inv: Invocation) -> int:
    """`sh -c 'script'`: a child shell sharing the device but not the variables."""
    if len(inv.args) < 3 or inv.args[1] != "-c":
        raise CommandFailed(f"{SHELL_NAME}: only 'sh -c SCRIPT' is supported", 2)
    if inv.shell._depth >= MAX_NESTING:
        raise CommandFailed(f"{SHELL_NAME}: shells nested too deeply", 2)
    child = Shell(inv.shell.device, inv.shell.commands, env=inv.env, depth=inv.shell._depth + 1)
    child.cwd = inv.shell.cwd
    return child.run(inv.args[2], inv.streams, cancelled=inv.cancelled, stdin=lambda: inv.stdin)


_BUILTINS: dict[str, Command] = {
    "true": _builtin_true,
    ":": _builtin_true,
    "false": _builtin_false,
    "exit": _builtin_exit,
    "cd": _builtin_cd,
    "pwd": _builtin_pwd,
    "export": _builtin_export,
    "sh": _builtin_sh,
}
