"""File and text commands of the virtual phone's shell, worded like Android's toybox."""

from __future__ import annotations

import hashlib
import math
import posixpath
import re
import time

from virtual_phone.filesystem import FileStat, FileSystemError
from virtual_phone.shell import Command, CommandFailed, Invocation, is_builtin


def _flags(args: list[str], allowed: str) -> tuple[set[str], list[str]]:
    """Split leading single-letter flags (`-rf`) from operands; `--` ends the flags."""
    flags: set[str] = set()
    rest = list(args)
    while rest and rest[0].startswith("-") and len(rest[0]) > 1:
        arg = rest.pop(0)
        if arg == "--":
            break
        for letter in arg[1:]:
            if letter not in allowed:
                raise CommandFailed(f"Unknown option '{letter}'")
            flags.add(letter)
    return flags, rest


def echo(inv: Invocation) -> int:
    args = inv.args[1:]
    newline = True
    escapes = False
    while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
        option = args.pop(0)
        newline = newline and "n" not in option
        escapes = "e" in option
    text = " ".join(args)
    if escapes:
        text = text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    inv.write(text + ("\n" if newline else ""))
    return 0


def cat(inv: Invocation) -> int:
    _, paths = _flags(inv.args[1:], "uv")
    if not paths:
        inv.write(inv.stdin)
        return 0
    status = 0
    for path in paths:
        try:
            inv.write(inv.device.fs.read_bytes(inv.path(path)))
        except FileSystemError:
            inv.error(f"cat: {path}: No such file or directory\n")
            status = 1
    return status


def _long_line(name: str, entry: FileStat) -> str:
    kind = "d" if entry.is_dir else "-"
    bits = "".join(
        letter if entry.mode & (1 << (8 - index)) else "-"
        for index, letter in enumerate("rwxrwxrwx")
    )
    stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime(entry.mtime))
    return f"{kind}{bits} 1 root sdcard_rw {entry.size:>8} {stamp} {name}\n"


def _ls_directory(inv: Invocation, path: str, flags: set[str], header: bool) -> None:
    """One directory's entries; with -R, then each subdirectory's under its own header."""
    fs = inv.device.fs
    if header:
        inv.write(f"{path}:\n")
    entries = fs.listdir(inv.path(path))
    if not flags & {"a", "A"}:
        entries = [(n, e) for n, e in entries if not n.startswith(".")]
    for name, entry in entries:
        inv.write(_long_line(name, entry) if "l" in flags else name + "\n")
    if "R" in flags:
        for name, entry in entries:
            if entry.is_dir:
                inv.write("\n")
                _ls_directory(inv, posixpath.join(path, name), flags, header=True)


def ls(inv: Invocation) -> int:
    flags, paths = _flags(inv.args[1:], "laA1dRtrsSh")
    fs = inv.device.fs
    status = 0
    targets = paths or ["."]
    for index, path in enumerate(targets):
        found = fs.stat(inv.path(path))
        if found is None:
            inv.error(f"ls: {path}: No such file or directory\n")
            status = 1
            continue
        if found.is_dir and "d" not in flags:
            if index:
                inv.write("\n")
            _ls_directory(inv, path, flags, header=len(targets) > 1 or "R" in flags)
        else:
            inv.write(_long_line(path, found) if "l" in flags else path + "\n")
    return status


def rm(inv: Invocation) -> int:
    flags, paths = _flags(inv.args[1:], "rRfvi")
    if not paths and "f" not in flags:
        raise CommandFailed("rm: Needs 1 argument")
    fs = inv.device.fs
    status = 0
    for path in paths:
        found = fs.stat(inv.path(path))
        if found is None:
            if "f" not in flags:
                inv.error(f"rm: {path}: No such file or directory\n")
                status = 1
            continue
        if found.is_dir and not flags & {"r", "R"}:
            inv.error(f"rm: {path}: Is a directory\n")
            status = 1
            continue
        fs.remove(inv.path(path), recursive=True)
    return status


def mkdir(inv: Invocation) -> int:
    flags, paths = _flags(inv.args[1:], "pv")
    if not paths:
        raise CommandFailed("mkdir: Needs 1 argument")
    status = 0
    for path in paths:
        try:
            inv.device.fs.mkdir(inv.path(path), parents="p" in flags)
        except FileSystemError as exc:
            inv.error(f"mkdir: {exc}\n")
            status = 1
    return status


def touch(inv: Invocation) -> int:
    _, paths = _flags(inv.args[1:], "acm")
    fs = inv.device.fs
    for path in paths:
        if fs.exists(inv.path(path)):
            fs.set_mtime(inv.path(path), int(time.time()))
        else:
            fs.write_bytes(inv.path(path), b"")
    return 0


def _input_text(inv: Invocation, paths: list[str]) -> str:
    if not paths:
        return inv.stdin.decode("utf-8", errors="replace")
    return "".join(inv.device.fs.read_bytes(inv.path(p)).decode("utf-8", "replace") for p in paths)


def grep(inv: Invocation) -> int:
    flags, rest = _flags(inv.args[1:], "EFivocnqw")
    if not rest:
        raise CommandFailed("grep: Needs 1 argument", 2)
    pattern, paths = rest[0], rest[1:]
    regex = re.escape(pattern) if "F" in flags else pattern
    if "w" in flags:
        regex = rf"\b(?:{regex})\b"
    try:
        compiled = re.compile(regex, re.IGNORECASE if "i" in flags else 0)
    except re.error as exc:
        raise CommandFailed(f"grep: bad regex '{pattern}': {exc}", 2) from exc
    lines = _input_text(inv, paths).splitlines()
    selected = [line for line in lines if bool(compiled.search(line)) != ("v" in flags)]
    if "q" in flags:
        return 0 if selected else 1
    if "c" in flags:
        inv.write(f"{len(selected)}\n")
    elif "o" in flags and "v" not in flags:
        inv.write("".join(m.group() + "\n" for line in selected for m in compiled.finditer(line)))
    else:
        inv.write("".join(line + "\n" for line in selected))
    return 0 if selected else 1


def _line_count(name: str, args: list[str]) -> tuple[int, list[str]]:
    if args and args[0] == "-n" and len(args) > 1:
        if not args[1].isdigit():
            raise CommandFailed(f"{name}: invalid number '{args[1]}'")
        return int(args[1]), args[2:]
    if args and re.fullmatch(r"-n?\d+", args[0]):
        return int(args[0].lstrip("-n")), args[1:]
    return 10, args


def head(inv: Invocation) -> int:
    count, paths = _line_count("head", inv.args[1:])
    lines = _input_text(inv, paths).splitlines(keepends=True)
    inv.write("".join(lines[:count]))
    return 0


def tail(inv: Invocation) -> int:
    count, paths = _line_count("tail", inv.args[1:])
    lines = _input_text(inv, paths).splitlines(keepends=True)
    inv.write("".join(lines[-count:] if count else []))
    return 0


def wc(inv: Invocation) -> int:
    flags, paths = _flags(inv.args[1:], "lwc")
    text = _input_text(inv, paths)
    counts = {"l": text.count("\n"), "w": len(text.split()), "c": len(text.encode())}
    shown = [counts[f] for f in "lwc" if f in flags] or list(counts.values())
    inv.write(" ".join(str(n) for n in shown) + "\n")
    return 0


_SLEEP_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def sleep(inv: Invocation) -> int:
    """`sleep N[smhd]...` (toybox): any length, `inf` included; a closed client ends it."""
    if len(inv.args) < 2:
        raise CommandFailed("sleep: Needs 1 argument")
    total = 0.0
    for arg in inv.args[1:]:
        match = re.fullmatch(r"([0-9.]+(?:e[+-]?[0-9]+)?|inf(?:inity)?)([smhd]?)", arg.lower())
        try:
            value = float(match[1]) if match else math.nan
        except ValueError:
            value = math.nan
        if match is None or math.isnan(value):
            raise CommandFailed(f"sleep: invalid number '{arg}'")
        total += value * _SLEEP_UNITS[match[2]]
    deadline = time.monotonic() + total if math.isfinite(total) else math.inf
    if total > 0:
        inv.streams.flush()  # what came before shows now, as on a phone, not after the sleep
    # Event.wait refuses timeouts past threading.TIMEOUT_MAX; wait in bounded slices.
    while not inv.cancelled.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        inv.cancelled.wait(min(left, 3600.0))
    return 0


def id_(inv: Invocation) -> int:
    inv.write("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log)\n")
    return 0


def whoami(inv: Invocation) -> int:
    inv.write("shell\n")
    return 0


def _ranges(spec: str, name: str) -> list[tuple[int, int | None]]:
    """`1,3-5,7-` as 1-based (start, end) pairs; an open end is None."""
    ranges: list[tuple[int, int | None]] = []
    for item in spec.split(","):
        match = re.fullmatch(r"(\d*)-?(\d*)", item)
        if not item or match is None or (not match[1] and not match[2]):
            raise CommandFailed(f"{name}: bad list '{spec}'")
        start = int(match[1]) if match[1] else 1
        end = None if "-" in item and not match[2] else int(match[2] or match[1])
        if start < 1:
            raise CommandFailed(f"{name}: bad list '{spec}'")
        ranges.append((start, end))
    return ranges


def _pick(items: list[str], ranges: list[tuple[int, int | None]]) -> list[str]:
    return [
        item
        for index, item in enumerate(items, 1)
        if any(start <= index and (end is None or index <= end) for start, end in ranges)
    ]


def cut(inv: Invocation) -> int:
    """`cut -d DELIM -f LIST`, `cut -c LIST` or `-b LIST`, with `-s` (toybox)."""
    args = inv.args[1:]
    delimiter, fields, chars, only_delimited, paths = "\t", None, None, False, []
    index = 0
    while index < len(args):
        arg = args[index]
        option, value = arg[:2], arg[2:]
        if option in ("-d", "-f", "-c", "-b") and not value:
            if index + 1 >= len(args):
                raise CommandFailed(f"cut: Missing argument to '{option}'")
            index += 1
            value = args[index]
        if option == "-d":
            delimiter = value[:1] or "\t"
        elif option == "-f":
            fields = _ranges(value, "cut")
        elif option in ("-c", "-b"):
            chars = _ranges(value, "cut")
        elif arg == "-s":
            only_delimited = True
        else:
            paths.append(arg)
        index += 1
    if (fields is None) == (chars is None):
        raise CommandFailed("cut: Needs -f, -c or -b")
    out = []
    for line in _input_text(inv, paths).splitlines():
        if chars is not None:
            out.append("".join(_pick(list(line), chars)))
        elif delimiter in line:
            out.append(delimiter.join(_pick(line.split(delimiter), fields or [])))
        elif not only_delimited:
            out.append(line)
    inv.write("".join(line + "\n" for line in out))
    return 0


def _digest(algorithm: str) -> Command:
    def command(inv: Invocation) -> int:
        paths = [a for a in inv.args[1:] if a != "-b"]
        status = 0
        for path in paths or ["-"]:
            try:
                data = inv.stdin if path == "-" else inv.device.fs.read_bytes(inv.path(path))
            except FileSystemError:
                inv.error(f"{algorithm}sum: {path}: No such file or directory\n")
                status = 1
                continue
            inv.write(f"{hashlib.new(algorithm, data).hexdigest()}  {path}\n")
        return status

    return command


def which(inv: Invocation) -> int:
    """toybox `which [-a] NAME...`: the file each command runs from (/system/bin)."""
    names = [a for a in inv.args[1:] if not a.startswith("-")]
    status = 0
    for name in names:
        if "/" in name:
            found = inv.device.fs.stat(inv.path(name))
            known = found is not None and not found.is_dir
            path = name
        else:
            known = name in inv.shell.commands and not is_builtin(name)
            path = f"/system/bin/{name}"
        if known:
            inv.write(path + "\n")
        else:
            status = 1
    return status


COMMANDS: dict[str, Command] = {
    "which": which,
    "cut": cut,
    "md5sum": _digest("md5"),
    "sha1sum": _digest("sha1"),
    "sha256sum": _digest("sha256"),
    "echo": echo,
    "cat": cat,
    "ls": ls,
    "rm": rm,
    "mkdir": mkdir,
    "touch": touch,
    "grep": grep,
    "head": head,
    "tail": tail,
    "wc": wc,
    "sleep": sleep,
    "id": id_,
    "whoami": whoami,
}
