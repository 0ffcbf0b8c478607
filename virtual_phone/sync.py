"""The `sync:` service: file transfer between the client and the device's files.

Requests are a 4-byte id, a little-endian u32 length and that many bytes. Implemented:
STAT, LIST, RECV, SEND, QUIT and the v2 forms STA2, LST2 and LIS2 (features `stat_v2`
and `ls_v2`). Each reply, however many records it holds, goes out in one `sendall`.
"""

from __future__ import annotations

import errno
import stat
import struct

from virtual_phone.filesystem import FileStat, FileSystemError, MemoryFileSystem, normalize
from virtual_phone.wire import Channel, ProtocolError

SYNC_DATA_MAX = 64 * 1024
MAX_PATH_LENGTH = 1024
# id, error, dev, ino, mode, nlink, uid, gid, size, atime, mtime, ctime
_STAT_V2 = struct.Struct("<4sIQQIIIIQqqq")
_DENT_V2_TAIL = struct.Struct("<I")  # name length after the stat fields


def _fail(message: str) -> bytes:
    data = message.encode()
    return b"FAIL" + struct.pack("<I", len(data)) + data


def _stat_v1(found: FileStat | None) -> tuple[int, int, int]:
    return (found.mode, found.size, found.mtime) if found else (0, 0, 0)


def _stat_v2(record_id: bytes, found: FileStat | None) -> bytes:
    if found is None:
        return _STAT_V2.pack(record_id, errno.ENOENT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    uid_gid = 1000 if found.is_dir else 2000
    return _STAT_V2.pack(
        record_id, 0, 1, 1, found.mode, 1, uid_gid, uid_gid, found.size,
        found.mtime, found.mtime, found.mtime,
    )  # fmt: skip


def _listing(fs: MemoryFileSystem, path: str, v2: bool) -> bytes:
    try:
        entries = [(".", fs.stat(path)), ("..", fs.stat(normalize(path + "/..")))]
        entries += fs.listdir(path)
    except FileSystemError:
        entries = []  # adbd lists a missing or non-directory path as empty
    out = bytearray()
    for name, entry in entries:
        encoded = name.encode()
        if v2:
            out += _stat_v2(b"DNT2", entry) + _DENT_V2_TAIL.pack(len(encoded)) + encoded
        else:
            out += b"DENT" + struct.pack("<IIII", *_stat_v1(entry), len(encoded)) + encoded
    if v2:
        out += b"DONE" + bytes(_STAT_V2.size - 4 + _DENT_V2_TAIL.size)
    else:
        out += b"DONE" + bytes(16)
    return bytes(out)


def _receive(fs: MemoryFileSystem, path: str) -> bytes:
    try:
        data = fs.read_bytes(path)
    except FileSystemError as exc:
        reason = str(exc).rpartition(": ")[2]
        return _fail(f"open failed: {reason}")
    out = bytearray()
    for start in range(0, len(data), SYNC_DATA_MAX):
        chunk = data[start : start + SYNC_DATA_MAX]
        out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
    return bytes(out + b"DONE" + bytes(4))


def _send(channel: Channel, fs: MemoryFileSystem, spec: str) -> bytes:
    """Read the DATA chunks of a push; write the file only once DONE arrives."""
    path, _, mode_text = spec.rpartition(",")
    if not path:
        path, mode_text = spec, str(stat.S_IFREG | 0o644)
    data = bytearray()
    room = fs.free  # past it the rest is read and dropped, so the reply stays in step
    while True:
        record_id, size = struct.unpack("<4sI", channel.read_exact(8))
        if record_id == b"DONE":
            mtime = size
            break
        if record_id != b"DATA":
            raise ProtocolError(f"unexpected {record_id!r} while receiving a file")
        if size > SYNC_DATA_MAX:
            raise ProtocolError(f"data chunk of {size} bytes is larger than {SYNC_DATA_MAX}")
        chunk = channel.read_exact(size)
        if len(data) + size <= room:
            data += chunk
        else:
            room, data = -1, bytearray()
    if room < 0:
        return _fail("couldn't create file: No space left on device")
    path = normalize(path)
    try:
        fs.mkdir(normalize(path + "/.."), parents=True)
        fs.write_bytes(path, bytes(data), mode=int(mode_text) if mode_text.isdigit() else None)
        fs.set_mtime(path, mtime)
    except FileSystemError as exc:
        return _fail(f"couldn't create file: {str(exc).rpartition(': ')[2]}")
    return b"OKAY" + bytes(4)


def serve_sync(channel: Channel, fs: MemoryFileSystem) -> None:
    """Answer sync requests until the client sends QUIT or closes the connection."""
    while True:
        head = channel.read_head(8)  # an idle sync connection ends after the idle timeout
        if not head:
            return
        record_id, length = struct.unpack("<4sI", head)
        if length > MAX_PATH_LENGTH:
            channel.send(_fail(f"path too long: {length} bytes"))
            return
        path_text = channel.read_exact(length).decode("utf-8", errors="replace")
        path = normalize(path_text)
        if record_id == b"STAT":
            channel.send(b"STAT" + struct.pack("<III", *_stat_v1(fs.stat(path))))
        elif record_id in (b"STA2", b"LST2"):
            channel.send(_stat_v2(record_id, fs.stat(path)))
        elif record_id in (b"LIST", b"LIS2"):
            channel.send(_listing(fs, path, v2=record_id == b"LIS2"))
        elif record_id == b"RECV":
            channel.send(_receive(fs, path))
        elif record_id == b"SEND":
            channel.send(_send(channel, fs, path_text))
        elif record_id == b"QUIT":
            return
        else:
            channel.send(_fail(f"unknown sync command {record_id!r}"))
            return
