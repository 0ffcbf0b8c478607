"""The virtual phone's shell: a small POSIX-ish language over a table of commands.

It understands what ADB clients send to `/system/bin/sh -c`: single and double quotes,
backslashes, `;`, `&&`, `||`, `|`, `VAR=value` prefixes, `$VAR`, `${VAR}`, `$?`,
`$(...)` and backticks (never inside single quotes), `$((...))` arithmetic, unquoted
`*`/`?` globs, the redirections `>`, `>>`, `<`, `2>&1`, and the compound commands
`if/elif/else/fi`, `while`/`until ... do ... done`, `for NAME in ...; do ... done`,
`{ ...; }` and `( ... )`, with the builtins `test`/`[`, `read`, `break` and `continue`.
`cmd &` runs in the background (`$!`, `wait`, `kill`); `sh FILE ARGS` runs a script
with `$1`..., `$#` and `$@`.
Commands are plain functions in a registry dict; `toolbox` and `android_tools` provide them.

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

import contextlib
import fnmatch
import posixpath
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from virtual_phone.arith import ArithmeticFailure, evaluate
from virtual_phone.errors import PhoneCommandError, PhoneInputError, VirtualPhoneError
from virtual_phone.filesystem import FileSystemError, MemoryFileSystem, normalize
from virtual_phone.jobs import SIGNALS, Job, JobLimitError, JobTable

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

    @property
    def jobs(self) -> JobTable: ...


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


class _LoopControl(Exception):
    def __init__(self, kind: str, levels: int) -> None:
        self.kind = kind  # "break" or "continue"
        self.levels = levels


class LineInput(Protocol):
    """Standard input that arrives over time (the client's): whole, or a line at a time."""

    def __call__(self) -> bytes:
        """The rest of it, once it ended."""

    def line(self) -> bytes | None:
        """The next line as soon as it arrived; None once it ended."""


class _Reader:
    """Standard input shared by the commands of a loop: `read` takes a line, `cat` the rest."""

    def __init__(self, source: bytes | Callable[[], bytes]) -> None:
        self._source = source
        self._data: bytes | None = None
        self._pos = 0
        self._lines = source if hasattr(source, "line") else None

    def _load(self) -> bytes:
        if self._data is None:
            self._data = self._source() if callable(self._source) else self._source
        return self._data

    def __call__(self) -> bytes:
        data = self._load()
        rest, self._pos = data[self._pos :], len(data)
        return rest

    def line(self) -> bytes | None:
        if self._lines is not None and self._data is None:
            return self._lines.line()  # as soon as the client sent it, not once stdin ended
        data = self._load()
        if self._pos >= len(data):
            return None
        end = data.find(b"\n", self._pos)
        end = len(data) if end < 0 else end + 1
        line, self._pos = data[self._pos : end], end
        return line


# ---------------------------------------------------------------- syntax tree


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a word: literal text, a parameter, or a command substitution."""

    kind: Literal["text", "param", "command", "arith"]
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


@dataclass(frozen=True, slots=True)
class AndOrList:
    first: Pipeline
    rest: tuple[tuple[str, Pipeline], ...]  # ("&&" | "||", pipeline)
    background: bool = False  # ended by `&`


Script = tuple[AndOrList, ...]


@dataclass(frozen=True, slots=True)
class IfCommand:
    branches: tuple[tuple[Script, Script], ...]  # (condition, body): if, then each elif
    otherwise: Script


@dataclass(frozen=True, slots=True)
class LoopCommand:
    until: bool  # `until` runs while the condition fails
    condition: Script
    body: Script


@dataclass(frozen=True, slots=True)
class ForCommand:
    name: str
    words: tuple[Word, ...]
    body: Script


@dataclass(frozen=True, slots=True)
class GroupCommand:
    body: Script
    subshell: bool  # `( ... )` keeps its variables and directory to itself; `{ ...; }` not


@dataclass(frozen=True, slots=True)
class CompoundCommand:
    command: IfCommand | LoopCommand | ForCommand | GroupCommand
    redirects: tuple[Redirect, ...]


Pipeline = tuple["SimpleCommand | CompoundCommand", ...]
_RESERVED = frozenset(["if", "then", "elif", "else", "fi", "while", "until", "for", "do", "done",
                       "in", "{", "}"])  # fmt: skip


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
            elif c in "&|" or c in "()":
                tokens.append(_Token("op", op=c))
                self.pos += 1
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
            if src.startswith("$((", self.pos) and src[end - 1] == ")" and end - 1 > self.pos + 2:
                parts.append(Part("arith", src[self.pos + 3 : end - 1], quoted))
            else:
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

    def expandable(self) -> Word:
        """The whole source as the inside of double quotes (for `$((...))`)."""
        parts: list[Part] = []
        src = self.src
        while self.pos < len(src):
            c = src[self.pos]
            if c == "$":
                self._dollar(parts, quoted=True)
            elif c == "`":
                parts.append(Part("command", self._backquoted(), quoted=True))
            else:
                _add_text(parts, c, quoted=True)
                self.pos += 1
        return tuple(parts)

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
    """Parse a command line into and-or lists of pipelines of commands."""
    return _Parser(_Lexer(source).tokens()).script()


def _reserved(token: _Token) -> str:
    """The reserved word a token is (unquoted, alone), or ""."""
    word = token.word
    if token.kind == "word" and len(word) == 1 and word[0].kind == "text" and not word[0].quoted:
        return word[0].value if word[0].value in _RESERVED else ""
    return ""


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.depth = 0

    def _peek(self) -> _Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _unexpected(self) -> ShellSyntaxError:
        token = self._peek()
        if token is None:
            return ShellSyntaxError("syntax error: unexpected end of file")
        shown = token.op or _reserved(token) or "word"
        return ShellSyntaxError(f"syntax error: '{shown}' unexpected")

    def _skip_separators(self) -> None:
        while (token := self._peek()) is not None and token.kind == "op" and token.op == ";":
            self.pos += 1

    def _expect(self, word: str) -> None:
        token = self._peek()
        if token is None or _reserved(token) != word:
            raise self._unexpected()
        self.pos += 1

    def script(self) -> Script:
        body = self._list(())
        if self.pos < len(self.tokens):
            raise self._unexpected()
        return body

    def _list(self, stops: tuple[str, ...]) -> Script:
        items: list[AndOrList] = []
        while True:
            self._skip_separators()
            token = self._peek()
            if token is None or (token.kind == "op" and token.op == ")"):
                break
            if _reserved(token) in stops:
                break
            items.append(self._and_or())
            token = self._peek()
            if token is not None and token.kind == "op" and token.op == "&":
                first, rest = items[-1].first, items[-1].rest
                items[-1] = AndOrList(first, rest, background=True)
                self.pos += 1
                continue
            if token is not None and not (token.kind == "op" and token.op in (";", ")")):
                raise self._unexpected()
        return tuple(items)

    def _and_or(self) -> AndOrList:
        first = self._pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while (token := self._peek()) is not None and token.op in ("&&", "||"):
            self.pos += 1
            self._skip_separators()  # a newline may follow && and ||
            rest.append((token.op, self._pipeline()))
        return AndOrList(first, tuple(rest))

    def _pipeline(self) -> Pipeline:
        commands = [self._command()]
        while (token := self._peek()) is not None and token.op == "|":
            self.pos += 1
            commands.append(self._command())
        return tuple(commands)

    def _command(self) -> SimpleCommand | CompoundCommand:
        token = self._peek()
        if token is None:
            raise self._unexpected()
        word = _reserved(token)
        is_group = token.kind == "op" and token.op == "("
        if not word and not is_group:
            return self._simple()
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ShellSyntaxError("syntax error: commands nested too deeply")
        try:
            parsers: dict[str, Callable[[], IfCommand | LoopCommand | ForCommand | GroupCommand]]
            parsers = {"if": self._if, "while": self._loop, "until": self._loop,
                       "for": self._for, "{": self._brace}  # fmt: skip
            if is_group:
                command: IfCommand | LoopCommand | ForCommand | GroupCommand = self._subshell()
            elif word in parsers:
                command = parsers[word]()
            else:
                raise self._unexpected()
            return CompoundCommand(command, self._redirects())
        finally:
            self.depth -= 1

    def _if(self) -> IfCommand:
        branches: list[tuple[Script, Script]] = []
        otherwise: Script = ()
        keyword = "if"
        while keyword in ("if", "elif"):
            self.pos += 1
            condition = self._list(("then",))
            self._expect("then")
            branches.append((condition, self._list(("elif", "else", "fi"))))
            token = self._peek()
            keyword = _reserved(token) if token is not None else ""
        if keyword == "else":
            self.pos += 1
            otherwise = self._list(("fi",))
        self._expect("fi")
        return IfCommand(tuple(branches), otherwise)

    def _loop(self) -> LoopCommand:
        until = _reserved(self.tokens[self.pos]) == "until"
        self.pos += 1
        condition = self._list(("do",))
        self._expect("do")
        body = self._list(("done",))
        self._expect("done")
        return LoopCommand(until, condition, body)

    def _for(self) -> ForCommand:
        self.pos += 1
        token = self._peek()
        if token is None or token.kind != "word" or _reserved(token):
            raise self._unexpected()
        name = "".join(part.value for part in token.word)
        if not _NAME_RE.fullmatch(name):
            raise ShellSyntaxError(f"{name}: bad identifier")
        self.pos += 1
        words: list[Word] = []
        token = self._peek()
        if token is not None and _reserved(token) == "in":
            self.pos += 1
            while (token := self._peek()) is not None and token.kind == "word":
                words.append(token.word)
                self.pos += 1
        self._skip_separators()
        self._expect("do")
        body = self._list(("done",))
        self._expect("done")
        return ForCommand(name, tuple(words), body)

    def _brace(self) -> GroupCommand:
        self.pos += 1
        body = self._list(("}",))
        self._expect("}")
        return GroupCommand(body, subshell=False)

    def _subshell(self) -> GroupCommand:
        self.pos += 1
        body = self._list(())
        token = self._peek()
        if token is None or token.op != ")":
            raise self._unexpected()
        self.pos += 1
        return GroupCommand(body, subshell=True)

    def _redirects(self) -> tuple[Redirect, ...]:
        redirects: list[Redirect] = []
        while (token := self._peek()) is not None and token.kind == "redirect":
            following = self.tokens[self.pos + 1] if self.pos + 1 < len(self.tokens) else None
            if following is None or following.kind != "word":
                raise ShellSyntaxError(f"syntax error: '{token.op}' unexpected")
            redirects.append(Redirect(token.fd, token.op, following.word))
            self.pos += 2
        return tuple(redirects)

    def _simple(self) -> SimpleCommand:
        assignments: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        tokens = self.tokens
        while self.pos < len(tokens) and tokens[self.pos].kind != "op":
            token = tokens[self.pos]
            if token.kind == "redirect":
                redirects.extend(self._redirects())
                continue
            assignment = _as_assignment(token.word) if not words else None
            if assignment is not None:
                assignments.append(assignment)
            else:
                words.append(token.word)
            self.pos += 1
        if not (assignments or words or redirects):
            raise self._unexpected()
        return SimpleCommand(tuple(assignments), tuple(words), tuple(redirects))


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
        self._stdin: Input = _Reader(b"")
        self.positional: list[str] = []  # $1, $2, ... of a script run with `sh FILE ARGS`
        self.started: dict[int, Job] = {}  # background jobs this shell started, for `wait`
        self.last_job: int | None = None  # `$!`

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
        self._stdin = _Reader(stdin)
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
        except _LoopControl:
            pass  # `break` outside a loop
        return self.status

    def _run_script(self, script: Script, streams: Streams, cancelled: threading.Event) -> None:
        for and_or in script:
            if cancelled.is_set():
                return
            if and_or.background:
                self._spawn(and_or, streams)
                continue
            self._run_pipeline(and_or.first, streams, cancelled)
            for op, pipeline in and_or.rest:
                if (op == "&&") == (self.status == 0):
                    self._run_pipeline(pipeline, streams, cancelled)

    def _spawn(self, and_or: AndOrList, streams: Streams) -> None:
        """`... &`: run in a subshell on its own thread, with stdin from /dev/null."""
        child = Shell(self.device, self.commands, env=self.env, depth=self._depth + 1)
        child.cwd, child.status, child.positional = self.cwd, self.status, self.positional
        quiet = Streams(_dropping(streams.out), _dropping(streams.err), _dropping(streams.flush))
        foreground = AndOrList(and_or.first, and_or.rest)

        def run(stop: threading.Event) -> int:
            try:
                child._run_script((foreground,), quiet, stop)
            except _ExitShell as done:
                child.status = done.status
            except _LoopControl:
                pass
            quiet.flush()
            return child.status

        try:
            job = self.device.jobs.start(_job_name(and_or), run)
        except JobLimitError as exc:
            streams.err(f"{SHELL_NAME}: {exc}\n")
            self.status = 1
            return
        self.started[job.pid] = job
        self.last_job = job.pid
        self.status = 0

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
                stdin = _Reader(bytes(captured))

    def _run_command(
        self,
        command: SimpleCommand | CompoundCommand,
        streams: Streams,
        stdin: Input,
        cancelled: threading.Event,
    ) -> int:
        if isinstance(command, CompoundCommand):
            return self._run_compound(command, streams, stdin, cancelled)
        return self._run_simple(command, streams, stdin, cancelled)

    def _run_compound(
        self, command: CompoundCommand, streams: Streams, stdin: Input, cancelled: threading.Event
    ) -> int:
        try:
            streams, stdin, finish = self._apply_redirects(
                command.redirects, streams, stdin, cancelled
            )
        except CommandFailed as exc:
            streams.err(f"{SHELL_NAME}: {exc.message}\n")
            return exc.status
        outer = self._stdin
        self._stdin = stdin if isinstance(stdin, _Reader) else _Reader(stdin)
        try:
            body = command.command
            if isinstance(body, IfCommand):
                return self._run_if(body, streams, cancelled)
            if isinstance(body, LoopCommand):
                return self._run_loop(body, streams, cancelled)
            if isinstance(body, ForCommand):
                return self._run_for(body, streams, cancelled)
            if body.subshell:
                child = Shell(self.device, self.commands, env=self.env, depth=self._depth + 1)
                child.cwd = self.cwd
                child.status = self.status
                child._stdin = self._stdin
                try:
                    child._run_script(body.body, streams, cancelled)
                except _ExitShell as done:
                    child.status = done.status
                return child.status
            self._run_script(body.body, streams, cancelled)
            return self.status
        finally:
            self._stdin = outer
            finish()

    def _run_if(self, command: IfCommand, streams: Streams, cancelled: threading.Event) -> int:
        for condition, body in command.branches:
            self._run_script(condition, streams, cancelled)
            if self.status == 0:
                self._run_script(body, streams, cancelled)
                return self.status
        self.status = 0
        self._run_script(command.otherwise, streams, cancelled)
        return self.status

    def _loop_body(self, body: Script, streams: Streams, cancelled: threading.Event) -> bool:
        """Run one pass; False when a `break` ends the loop."""
        try:
            self._run_script(body, streams, cancelled)
        except _LoopControl as control:
            if control.levels > 1:
                control.levels -= 1
                raise
            return control.kind == "continue"
        return True

    def _run_loop(self, command: LoopCommand, streams: Streams, cancelled: threading.Event) -> int:
        status = 0
        while not cancelled.is_set():
            self._run_script(command.condition, streams, cancelled)
            if (self.status == 0) == command.until:
                break
            self.status = 0
            keep_going = self._loop_body(command.body, streams, cancelled)
            status = self.status
            if not keep_going:
                break
        self.status = status
        return status

    def _run_for(self, command: ForCommand, streams: Streams, cancelled: threading.Event) -> int:
        values = [v for word in command.words for v in self._expand(word, streams, cancelled)]
        self.status = 0
        for value in values:
            if cancelled.is_set():
                break
            self.env[command.name] = value
            if not self._loop_body(command.body, streams, cancelled):
                break
        return self.status

    def _run_simple(
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
        if part.kind == "arith":
            return self._arithmetic(part.value, streams, cancelled)
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

    def _arithmetic(self, text: str, streams: Streams, cancelled: threading.Event) -> str:
        """`$((...))`: parameters and substitutions inside first, then the arithmetic."""
        try:
            word = _Lexer(text).expandable()
            expression = self._expand_plain(word, streams, cancelled)
            return str(evaluate(expression, self.env))
        except (ArithmeticFailure, ShellSyntaxError) as exc:
            streams.err(f"{SHELL_NAME}: {text.strip()}: {exc}\n")
            self.status = self._substitution_status = 1
            return ""

    def _parameter(self, name: str) -> str:
        if name == "?":
            return str(self.status)
        if name == "$":
            return "4242"
        if name == "0":
            return SHELL_NAME
        if name == "#":
            return str(len(self.positional))
        if name in ("@", "*"):
            return " ".join(self.positional)
        if name == "!":
            return "" if self.last_job is None else str(self.last_job)
        if name.isdigit():
            index = int(name)
            return self.positional[index - 1] if 0 < index <= len(self.positional) else ""
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


def _dropping(write: Callable[..., object]) -> Callable[..., None]:
    """A background job's output: lost once the client that started it has gone."""

    def call(*data: bytes | str) -> None:
        with contextlib.suppress(OSError):
            write(*data)

    return call


def _job_name(and_or: AndOrList) -> str:
    """What `ps` calls a background job: its first command's name, or `sh`."""
    first = and_or.first[0]
    if and_or.rest or len(and_or.first) > 1 or not isinstance(first, SimpleCommand):
        return "sh"
    if not first.words or any(part.kind != "text" for part in first.words[0]):
        return "sh"
    return posixpath.basename("".join(part.value for part in first.words[0]))


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
    """`sh -c 'script' [NAME ARGS...]` or `sh FILE [ARGS...]`: a child shell sharing the
    device but not the variables."""
    if len(inv.args) < 2 or (inv.args[1] == "-c" and len(inv.args) < 3):
        raise CommandFailed(f"{SHELL_NAME}: no interactive shell here: use 'sh -c SCRIPT'", 2)
    if inv.shell._depth >= MAX_NESTING:
        raise CommandFailed(f"{SHELL_NAME}: shells nested too deeply", 2)
    if inv.args[1] == "-c":
        source, positional = inv.args[2], inv.args[4:]
    else:
        try:
            data = inv.device.fs.read_bytes(inv.path(inv.args[1]))
        except FileSystemError as exc:
            reason = str(exc).rpartition(": ")[2]
            raise CommandFailed(f"{SHELL_NAME}: {inv.args[1]}: {reason}", NOT_FOUND_STATUS) from exc
        source, positional = data.decode("utf-8", "replace"), inv.args[2:]
    child = Shell(inv.shell.device, inv.shell.commands, env=inv.env, depth=inv.shell._depth + 1)
    child.cwd = inv.shell.cwd
    child.positional = list(positional)
    source_input = inv.input
    stdin: Input = source_input if isinstance(source_input, _Reader) else (lambda: inv.stdin)
    return child.run(source, inv.streams, cancelled=inv.cancelled, stdin=stdin)


def signal_number(text: str) -> int | None:
    """`INT`, `SIGINT` or `2` as a signal number (0: none, only "does it exist?"); None
    for a name no phone knows."""
    name = text.upper().removeprefix("SIG")
    if name.isdigit():
        return int(name) if 0 <= int(name) < 65 else None
    return SIGNALS.get(name)


def _builtin_kill(inv: Invocation) -> int:
    """`kill [-SIGNAL | -s SIGNAL] PID...`: signal the device's background jobs."""
    args, signal = inv.args[1:], SIGNALS["TERM"]
    if args[:1] == ["-s"] and len(args) > 1:
        args = ["-" + args[1], *args[2:]]
    if args and args[0].startswith("-") and args[0] != "--":
        found = signal_number(args[0][1:])
        if found is None:
            raise CommandFailed(f"kill: unknown signal '{args[0][1:]}'", 1)
        signal, args = found, args[1:]
    if not args:
        raise CommandFailed("usage: kill [-s SIGNAL | -SIGNAL] PID...", 1)
    status = 0
    for pid_text in args:
        job = inv.device.jobs.get(int(pid_text)) if pid_text.isdigit() else None
        if job is None:
            inv.error(f"kill: {pid_text}: No such process\n")
            status = 1
        elif signal:
            inv.device.jobs.send(job, signal)
    return status


def _builtin_wait(inv: Invocation) -> int:
    """`wait [PID...]`: until this shell's background jobs end; the last one's status."""
    shell = inv.shell
    chosen = [int(a) for a in inv.args[1:] if a.isdigit()] or list(shell.started)
    status = 0
    inv.streams.flush()  # what came before shows while the shell waits
    for pid in chosen:
        job = shell.started.get(pid)
        if job is None:
            status = NOT_FOUND_STATUS
            continue
        while not job.done.wait(0.1):
            if inv.cancelled.is_set():
                return 1
        del shell.started[pid]
        status = job.status if job.status is not None else 1
    return status


def is_builtin(name: str) -> bool:
    """Whether the shell itself runs `name` (then it is no file on the phone's PATH)."""
    return name in _BUILTINS


def _builtin_loop_control(inv: Invocation) -> int:
    levels = inv.args[1] if len(inv.args) > 1 else "1"
    if not levels.isdigit() or int(levels) < 1:
        raise CommandFailed(f"{SHELL_NAME}: {inv.args[0]}: {levels}: bad number", 1)
    raise _LoopControl(inv.args[0], int(levels))


def _builtin_read(inv: Invocation) -> int:
    """`read [-r] NAME...`: one line of stdin split into the names (the last takes the rest)."""
    names = [a for a in inv.args[1:] if a != "-r"] or ["REPLY"]
    source = inv.input
    inv.streams.flush()  # a prompt printed before `read` reaches the client first
    line = source.line() if isinstance(source, _Reader) else None
    if not isinstance(source, _Reader):
        data = inv.stdin
        line = data.split(b"\n", 1)[0] + b"\n" if data else None
    text = (line or b"").decode("utf-8", "replace").rstrip("\n")
    fields = text.split(None, len(names) - 1) if len(names) > 1 else [text.strip()]
    for index, name in enumerate(names):
        inv.shell.env[name] = fields[index] if index < len(fields) else ""
    return 0 if line is not None else 1


def _test(args: list[str]) -> bool:
    """`test` expressions: ! -a -o, string and integer comparisons, file tests (toybox)."""
    if "-o" in args:
        at = args.index("-o")
        return _test(args[:at]) or _test(args[at + 1 :])
    if "-a" in args:
        at = args.index("-a")
        return _test(args[:at]) and _test(args[at + 1 :])
    if args[:1] == ["!"]:
        return not _test(args[1:])
    if len(args) == 0:
        return False
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        op, value = args
        if op == "-z":
            return value == ""
        if op == "-n":
            return value != ""
        raise CommandFailed(f"test: {op}: unknown operand", 2)
    if len(args) == 3:
        left, op, right = args
        strings = {"=": left == right, "==": left == right, "!=": left != right}
        if op in strings:
            return strings[op]
        numbers = {"-eq": "==", "-ne": "!=", "-lt": "<", "-le": "<=", "-gt": ">", "-ge": ">="}
        if op in numbers:
            try:
                a, b = int(left), int(right)
            except ValueError:
                raise CommandFailed(f"test: integer expected: {left} {op} {right}", 2) from None
            return bool(evaluate(f"{a} {numbers[op]} {b}", {}))
    raise CommandFailed(f"test: {' '.join(args)}: bad expression", 2)


def _builtin_test(inv: Invocation) -> int:
    args = inv.args[1:]
    if inv.args[0] == "[":
        if args[-1:] != ["]"]:
            raise CommandFailed("[: missing ]", 2)
        args = args[:-1]
    fs = inv.device.fs
    if len(args) == 2 and args[0] in ("-e", "-f", "-d", "-s", "-r", "-w", "-x"):
        found = fs.stat(inv.path(args[1]))
        checks = {
            "-e": found is not None,
            "-f": found is not None and not found.is_dir,
            "-d": found is not None and found.is_dir,
            "-s": found is not None and found.size > 0,
        }
        return 0 if checks.get(args[0], found is not None) else 1
    return 0 if _test(args) else 1


_BUILTINS: dict[str, Command] = {
    "break": _builtin_loop_control,
    "continue": _builtin_loop_control,
    "read": _builtin_read,
    "test": _builtin_test,
    "[": _builtin_test,
    "true": _builtin_true,
    ":": _builtin_true,
    "false": _builtin_false,
    "exit": _builtin_exit,
    "cd": _builtin_cd,
    "pwd": _builtin_pwd,
    "export": _builtin_export,
    "sh": _builtin_sh,
    "kill": _builtin_kill,
    "wait": _builtin_wait,
}
