"""A small in-memory filesystem for one virtual device.

It holds what clients push and pull (`/sdcard`, `/data/local/tmp`, ...) and what shell
commands write (`uiautomator dump FILE`, `screencap -p FILE`, redirections). Paths are
POSIX and absolute; relative paths resolve against `/`, the shell's working directory.
"""

from __future__ import annotations

import copy
import posixpath
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from virtual_phone.errors import VirtualPhoneError

DEFAULT_DIRECTORIES: tuple[str, ...] = (
    "/data/local/tmp",
    "/sdcard/DCIM",
    "/sdcard/Download",
    "/sdcard/Pictures",
    "/system/bin",
)
# Mounted read-only on a phone: writing there fails as it does for `adb push` to /system.
READ_ONLY_MOUNTS: tuple[str, ...] = ("/system", "/vendor", "/product", "/apex", "/odm")
DEFAULT_CAPACITY = 256 * 1024 * 1024  # bytes of file data the phone's storage holds
DIR_MODE = stat.S_IFDIR | 0o771
FILE_MODE = stat.S_IFREG | 0o660


class FileSystemError(VirtualPhoneError, OSError):
    """A filesystem call on a path that does not allow it; the message reads like toybox's."""


@dataclass(slots=True)
class _Node:
    mode: int
    mtime: int
    data: bytearray = field(default_factory=bytearray)
    children: dict[str, _Node] = field(default_factory=dict)

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)


@dataclass(frozen=True, slots=True)
class FileSystemState:
    root: _Node
    used: int


@dataclass(frozen=True, slots=True)
class FileStat:
    mode: int
    size: int
    mtime: int

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)


def _size(node: _Node) -> int:
    return len(node.data) + sum(_size(child) for child in node.children.values())


def normalize(path: str, cwd: str = "/") -> str:
    """Absolute, normalized form of `path` (no trailing slash, no `..`)."""
    joined = posixpath.join(cwd, path) if path else cwd
    normalized = posixpath.normpath(joined)
    return "/" if normalized in ("", "//") else normalized


class MemoryFileSystem:
    """Thread-safe tree of directories and byte files.

    >>> fs = MemoryFileSystem()
    >>> fs.write_bytes("/sdcard/a.txt", b"hi")
    >>> fs.read_bytes("/sdcard/a.txt")
    b'hi'
    """

    def __init__(
        self, *, clock: Callable[[], float] = time.time, capacity: int = DEFAULT_CAPACITY
    ) -> None:
        self._clock = clock
        self._lock = threading.RLock()
        self._root = _Node(DIR_MODE, self._now())
        self.capacity = capacity
        self._used = 0
        self._read_only: tuple[str, ...] = ()
        for directory in DEFAULT_DIRECTORIES:
            self.mkdir(directory, parents=True)
        self._read_only = READ_ONLY_MOUNTS

    def snapshot(self) -> FileSystemState:
        """A copy of every file and directory, for ``restore``."""
        with self._lock:
            return FileSystemState(copy.deepcopy(self._root), self._used)

    def restore(self, state: FileSystemState) -> None:
        with self._lock:
            self._root = copy.deepcopy(state.root)
            self._used = state.used

    @property
    def free(self) -> int:
        """Bytes of file data that still fit."""
        with self._lock:
            return self.capacity - self._used

    def _writable(self, path: str) -> None:
        normalized = normalize(path)
        for mount in self._read_only:
            if normalized == mount or normalized.startswith(mount + "/"):
                raise FileSystemError(f"{path}: Read-only file system")

    def _now(self) -> int:
        return int(self._clock())

    def _find(self, path: str) -> _Node | None:
        node = self._root
        for part in normalize(path).strip("/").split("/"):
            if not part:
                continue
            if not node.is_dir or part not in node.children:
                return None
            node = node.children[part]
        return node

    def _parent_dir(self, path: str) -> tuple[_Node, str]:
        parent_path, name = posixpath.split(normalize(path))
        parent = self._find(parent_path)
        if parent is None or not name:
            raise FileSystemError(f"{path}: No such file or directory")
        if not parent.is_dir:
            raise FileSystemError(f"{path}: Not a directory")
        return parent, name

    def stat(self, path: str) -> FileStat | None:
        with self._lock:
            node = self._find(path)
            if node is None:
                return None
            return FileStat(node.mode, len(node.data), node.mtime)

    def exists(self, path: str) -> bool:
        return self.stat(path) is not None

    def is_dir(self, path: str) -> bool:
        found = self.stat(path)
        return found is not None and found.is_dir

    def listdir(self, path: str) -> list[tuple[str, FileStat]]:
        """Entries of a directory, sorted by name."""
        with self._lock:
            node = self._find(path)
            if node is None:
                raise FileSystemError(f"{path}: No such file or directory")
            if not node.is_dir:
                raise FileSystemError(f"{path}: Not a directory")
            return [
                (name, FileStat(child.mode, len(child.data), child.mtime))
                for name, child in sorted(node.children.items())
            ]

    def read_bytes(self, path: str) -> bytes:
        with self._lock:
            node = self._find(path)
            if node is None:
                raise FileSystemError(f"{path}: No such file or directory")
            if node.is_dir:
                raise FileSystemError(f"{path}: Is a directory")
            return bytes(node.data)

    def write_bytes(
        self, path: str, data: bytes, *, append: bool = False, mode: int | None = None
    ) -> None:
        with self._lock:
            self._writable(path)
            parent, name = self._parent_dir(path)
            node = parent.children.get(name)
            if node is not None and node.is_dir:
                raise FileSystemError(f"{path}: Is a directory")
            kept = len(node.data) if node is not None and append else 0
            freed = len(node.data) if node is not None else 0
            if self._used - freed + kept + len(data) > self.capacity:
                raise FileSystemError(f"{path}: No space left on device")
            if node is None:
                node = parent.children[name] = _Node(FILE_MODE, self._now())
            if not append:
                node.data.clear()
            node.data.extend(data)
            self._used += len(node.data) - freed
            node.mtime = self._now()
            if mode is not None:
                node.mode = stat.S_IFREG | (mode & 0o7777)

    def set_mtime(self, path: str, mtime: int) -> None:
        with self._lock:
            node = self._find(path)
            if node is None:
                raise FileSystemError(f"{path}: No such file or directory")
            node.mtime = mtime

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        with self._lock:
            if parents:
                current = "/"
                for part in normalize(path).strip("/").split("/"):
                    current = posixpath.join(current, part)
                    node = self._find(current)
                    if node is None:
                        self.mkdir(current)
                    elif not node.is_dir:
                        raise FileSystemError(f"{current}: Not a directory")
                return
            parent, name = self._parent_dir(path)
            if name in parent.children:
                raise FileSystemError(f"{path}: File exists")
            self._writable(path)
            parent.children[name] = _Node(DIR_MODE, self._now())

    def remove(self, path: str, *, recursive: bool = False) -> None:
        with self._lock:
            parent, name = self._parent_dir(path)
            node = parent.children.get(name)
            if node is None:
                raise FileSystemError(f"{path}: No such file or directory")
            if node.is_dir and not recursive:
                raise FileSystemError(f"{path}: Is a directory")
            self._writable(path)
            del parent.children[name]
            self._used -= _size(node)
