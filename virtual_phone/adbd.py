"""The device side of one virtual transport: what adbd does for a VirtualPhone.

`VirtualDevice.serve` answers the device services a client asks for after selecting the
transport: `shell:`, `shell,v2,...:`, `exec:`, `sync:`, `localabstract:NAME`, `tcp:PORT`,
`reverse:...`, `framebuffer:` and `root:`.
"""

from __future__ import annotations

import functools
import socket
import struct
import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from virtual_phone import (
    android_tools,
    app_process,
    network_tools,
    screenrecord,
    snapshots,
    toolbox,
)
from virtual_phone.filesystem import MemoryFileSystem
from virtual_phone.jobs import JobTable
from virtual_phone.shell import Command, Shell, Streams
from virtual_phone.sync import serve_sync
from virtual_phone.wire import Channel, SocketSet, encode_block

if TYPE_CHECKING:
    from virtual_phone.phone import VirtualPhone

# Advertise only what is implemented: the adb binary trusts this list blindly.
FEATURES: tuple[str, ...] = ("shell_v2", "stat_v2", "ls_v2", "fixed_push_mkdir")
SHELL_ENV: dict[str, str] = {
    "PATH": "/product/bin:/apex/com.android.runtime/bin:/system/bin:/system/xbin:/vendor/bin",
    "HOME": "/",
    "SHELL": "/system/bin/sh",
    "USER": "shell",
    "HOSTNAME": "localhost",
    "ANDROID_DATA": "/data",
    "ANDROID_ROOT": "/system",
    "EXTERNAL_STORAGE": "/sdcard",
    "TMPDIR": "/data/local/tmp",
}
INTERACTIVE_UNSUPPORTED = (
    "/system/bin/sh: the virtual phone has no interactive shell; run `adb shell COMMAND`\n"
)
_SHELL_PACKET = struct.Struct("<BI")
_STDIN, _STDOUT, _STDERR, _EXIT = 0, 1, 2, 3

Acceptor = Callable[[socket.socket], None]


class LocalSockets:
    """The device's listening sockets, by address (`localabstract:NAME`, `tcp:PORT`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[str, Acceptor] = {}

    def listen(self, address: str, accept: Acceptor) -> Callable[[], None]:
        """Start accepting on `address`; returns the function that stops listening."""
        with self._lock:
            if address in self._listeners:
                raise OSError(f"{address}: Address already in use")
            self._listeners[address] = accept

        def unlisten() -> None:
            with self._lock:
                if self._listeners.get(address) is accept:
                    del self._listeners[address]

        return unlisten

    def acceptor(self, address: str) -> Acceptor | None:
        with self._lock:
            return self._listeners.get(address)


# A command's output waiting for its next flush; past this it is sent at once.
MAX_PENDING_OUTPUT = 256 * 1024


class _ShellOutput:
    """Buffers a shell command's output; each flush is one `sendall` (v1 raw or v2 packets)."""

    def __init__(self, channel: Channel, v2: bool) -> None:
        self._channel = channel
        self._v2 = v2
        self._lock = threading.Lock()
        self._pending = bytearray()
        self.streams = Streams(self._stdout, self._stderr, self.flush)

    def _append(self, packet_id: int, data: bytes) -> None:
        if not data:
            return
        with self._lock:
            if self._v2:
                self._pending += _SHELL_PACKET.pack(packet_id, len(data))
            self._pending += data
            full = len(self._pending) >= MAX_PENDING_OUTPUT
        if full:
            self.flush()  # a command that prints without end streams, as on a phone

    def _stdout(self, data: bytes) -> None:
        self._append(_STDOUT, data)

    def _stderr(self, data: bytes) -> None:
        self._append(_STDERR, data)

    def flush(self) -> None:
        with self._lock:
            data, self._pending = bytes(self._pending), bytearray()
        if data:
            self._channel.send(data)

    def finish(self, status: int) -> None:
        if self._v2:
            with self._lock:
                self._pending += _SHELL_PACKET.pack(_EXIT, 1) + bytes([status & 0xFF])
        self.flush()


MAX_STDIN = 16 * 1024 * 1024  # a shell command's stdin past this is read and dropped
_CLOSE_STDIN = 4  # shell protocol v2, client to device (5 is a window size change)


class _PacketReader:
    """Shell protocol v2 packets from the client, taken apart as their bytes arrive.

    A payload is passed on piece by piece and never gathered whole, so a header claiming
    4 GB costs no memory: what this holds at once is at most one 5-byte header.
    """

    def __init__(self, stdin: Callable[[bytes], None], close_stdin: Callable[[], None]) -> None:
        self._stdin = stdin
        self._close_stdin = close_stdin
        self._header = bytearray()
        self._packet_id: int | None = None
        self._left = 0

    def feed(self, chunk: bytes) -> None:
        data = memoryview(chunk)
        while data:
            if self._packet_id is None:
                need = _SHELL_PACKET.size - len(self._header)
                self._header += data[:need]
                data = data[need:]
                if len(self._header) < _SHELL_PACKET.size:
                    return
                self._packet_id, self._left = _SHELL_PACKET.unpack(self._header)
                self._header.clear()
            else:
                piece, data = data[: self._left], data[self._left :]
                self._left -= len(piece)
                if self._packet_id == _STDIN:
                    self._stdin(bytes(piece))
            if self._left == 0:
                if self._packet_id == _CLOSE_STDIN:
                    self._close_stdin()
                self._packet_id = None


class _ClientInput:
    """What the client sends a shell command: its stdin, then its going away.

    Shell protocol v2 frames stdin in packets and ends it with a close-stdin packet; v1
    sends raw bytes and ends them by closing. A reader thread takes them as they come,
    so a command that never reads stdin never waits for it, and `gone` is set the moment
    the client disconnects (a running `sleep` or `logcat` then stops).
    """

    def __init__(self, sock: socket.socket, v2: bool) -> None:
        self._sock = sock
        self._v2 = v2
        self._changed = threading.Condition()
        self._data = bytearray()
        self._ended = False
        self._taken = False
        self._read = 0  # bytes already taken a line at a time
        self.gone = threading.Event()

    def run(self) -> None:
        packets = _PacketReader(self._add, self._end)
        try:
            while chunk := self._sock.recv(65536):
                if self._v2:
                    packets.feed(chunk)
                else:
                    self._add(chunk)
        except OSError:
            pass
        self._end()
        self.gone.set()

    def _add(self, data: bytes) -> None:
        with self._changed:
            room = MAX_STDIN - len(self._data)  # the command sees a prefix, never a gap
            if room > 0:
                self._data += data[:room]
                self._changed.notify_all()

    def _end(self) -> None:
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def __call__(self) -> bytes:
        """The rest of stdin, once it ended (or the client left); empty for a second reader."""
        with self._changed:
            self._changed.wait_for(lambda: self._ended)
            if self._taken:
                return b""
            self._taken = True
            return bytes(self._data[self._read :])

    def line(self) -> bytes | None:
        """The next line as soon as it arrived (`read` in a script the client talks to)."""
        with self._changed:
            self._changed.wait_for(lambda: self._ended or self._data.find(b"\n", self._read) >= 0)
            if self._taken or self._read >= len(self._data):
                return None
            end = self._data.find(b"\n", self._read)
            end = len(self._data) if end < 0 else end + 1
            line, self._read = bytes(self._data[self._read : end]), end
            return line


class VirtualDevice:
    """One phone as adbd presents it: services, files, local sockets, reverse forwards."""

    def __init__(self, phone: VirtualPhone, *, transport_id: int) -> None:
        self.phone = phone
        self.transport_id = transport_id
        # A phone with a frozen clock gives its files frozen times too: same listings each run.
        self.fs = MemoryFileSystem(
            clock=lambda: (phone.frozen_clock or datetime.now()).timestamp(),
            capacity=phone.storage_bytes,
        )
        self.snapshots = snapshots.SnapshotStore(self)
        self.jobs = JobTable()
        self.local_sockets = LocalSockets()
        self.connections = SocketSet()
        self._reverse_lock = threading.Lock()
        self.reverses: dict[str, str] = {}
        self.commands: dict[str, Command] = {
            **toolbox.COMMANDS,
            **android_tools.COMMANDS,
            **network_tools.COMMANDS,
            "screenrecord": screenrecord.screenrecord,
            "app_process": functools.partial(app_process.app_process, host=self),
            snapshots.COMMAND: snapshots.virtualphone,
        }
        self._services: dict[str, Callable[[Channel, str], bool]] = {
            "shell": self._serve_shell,
            "exec": self._serve_shell,
            "sync": self._serve_sync,
            "localabstract": self._serve_local_socket,
            "tcp": self._serve_local_socket,
            "reverse": self._serve_reverse,
            "framebuffer": self._serve_framebuffer,
            "root": self._serve_root,
        }

    @property
    def serial(self) -> str:
        return self.phone.serial

    def describe(self) -> str:
        """The `devices -l` tags of this transport."""
        product = self.phone.props.get("ro.product.name", "elderphone")
        device = self.phone.props.get("ro.product.device", "virtual")
        model = self.phone.model.replace(" ", "_")
        return f"product:{product} model:{model} device:{device} transport_id:{self.transport_id}"

    def serve(self, channel: Channel, service: str) -> bool:
        """Answer one device service; True when the socket now belongs to a listener."""
        head = service.partition(":")[0]
        handler = self._services.get(head.split(",")[0])
        if handler is None:
            channel.fail(f"unknown service: {service}")
            return False
        return handler(channel, service)

    def close(self) -> None:
        """Unplug: every connection to this device ends, and every background job."""
        self.connections.close_all()
        self.jobs.close()

    # ------------------------------------------------------------ services

    def _serve_shell(self, channel: Channel, service: str) -> bool:
        head, _, command = service.partition(":")
        options = head.split(",")[1:]
        v2 = head.startswith("shell") and "v2" in options
        env = dict(SHELL_ENV)
        for option in options:
            name, sep, value = option.partition("=")
            if sep:
                env[name] = value
        channel.okay()
        client = _ClientInput(channel.sock, v2)
        threading.Thread(target=client.run, daemon=True, name=f"shell-input-{self.serial}").start()
        output = _ShellOutput(channel, v2)
        if command.strip():
            status = Shell(self, self.commands, env=env).run(
                command, output.streams, cancelled=client.gone, stdin=client
            )
        else:
            output.streams.err(INTERACTIVE_UNSUPPORTED)
            status = 1
        output.finish(status)
        return False

    def _serve_sync(self, channel: Channel, service: str) -> bool:
        channel.okay()
        serve_sync(channel, self.fs)
        return False

    def listen(self, address: str, accept: Acceptor) -> Callable[[], None]:
        """Listen on a device-side address; returns the function that stops listening."""
        return self.local_sockets.listen(address, accept)

    def connect_local(self, address: str, sock: socket.socket) -> bool:
        """Hand `sock` to whatever listens on the device's `address`; False if nothing does."""
        accept = self.local_sockets.acceptor(address)
        if accept is None:
            return False
        accept(sock)
        return True

    def _serve_local_socket(self, channel: Channel, service: str) -> bool:
        accept = self.local_sockets.acceptor(service)
        if accept is None:
            channel.fail("closed")
            return False
        channel.okay()
        accept(channel.sock)
        return True

    def _serve_reverse(self, channel: Channel, service: str) -> bool:
        request = service.removeprefix("reverse:")
        with self._reverse_lock:
            if request == "list-forward":
                listing = "".join(f"(reverse) {r} {loc}\n" for r, loc in self.reverses.items())
                channel.okay(encode_block(listing))
                return False
            if request == "killforward-all":
                self.reverses.clear()
                channel.okay(b"OKAY")
                return False
            if request.startswith("killforward:"):
                remote = request.removeprefix("killforward:")
                if self.reverses.pop(remote, None) is None:
                    channel.fail(f"listener '{remote}' not found")
                else:
                    channel.okay(b"OKAY")
                return False
            if request.startswith("forward:"):
                spec = request.removeprefix("forward:")
                norebind = spec.startswith("norebind:")
                remote, sep, local = spec.removeprefix("norebind:").partition(";")
                if not sep or not remote or not local:
                    channel.fail(f"bad reverse spec: {spec}")
                elif norebind and remote in self.reverses:
                    channel.fail("cannot rebind existing socket")
                else:
                    self.reverses[remote] = local
                    channel.okay(b"OKAY")
                return False
        channel.fail(f"unknown reverse request: {request}")
        return False

    def reverse_target(self, remote: str) -> str | None:
        """The host address a device-side `remote` is reverse-forwarded to, if any."""
        with self._reverse_lock:
            return self.reverses.get(remote)

    def _serve_framebuffer(self, channel: Channel, service: str) -> bool:
        image = self.phone.render().convert("RGBA")
        pixels = image.tobytes()
        # version 1, 32 bpp, size, width, height, then offset/length of red, blue, green, alpha
        header = struct.pack(
            "<13I", 1, 32, len(pixels), image.width, image.height, 0, 8, 16, 8, 8, 8, 24, 8
        )
        channel.okay(header + pixels)
        return False

    def _serve_root(self, channel: Channel, service: str) -> bool:
        channel.okay(b"adbd cannot run as root in production builds\n")
        return False
