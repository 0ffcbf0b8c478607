"""The virtual ADB server: the smart-socket host protocol on a TCP port, over VirtualPhones.

Real, unmodified clients talk to it: adbutils, the `adb` binary (`adb -P PORT ...`) and
scrcpy clients. Each connection sends `LLLLrequest` lines; `host:...` requests are answered
by the server itself, and after a transport is selected (`host:transport:S`,
`host:tport:serial:S`, ...) the next request is a device service, answered by that
phone's `VirtualDevice`.

    server = AdbServer([VirtualPhone("virtual-1")], port=0).start()
    adbutils.AdbClient(host="127.0.0.1", port=server.port).device_list()
    server.close()
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Self

from virtual_phone.adbd import FEATURES, VirtualDevice
from virtual_phone.errors import VirtualPhoneError
from virtual_phone.transports import (
    TransportSpecError,
    is_network_serial,
    network_serial,
    parse_wait,
    split_host_serial,
    transport_kind,
    wait_is_over,
)
from virtual_phone.wire import (
    Channel,
    PeerClosed,
    ProtocolError,
    SocketSet,
    close_socket,
    encode_block,
)

if TYPE_CHECKING:
    from virtual_phone.phone import VirtualPhone

ADB_SERVER_VERSION = 41
DEVICE_STATE = "device"
# Each client connection is a thread. Past this many connections being served at once, a
# new request is refused; as many more may wait for their first request, and past that the
# one that has waited longest is closed: idle connections never lock a client out.
MAX_CONNECTIONS = 256
# A connection must send each whole request within this many seconds (real clients send
# theirs at once); a client that sends nothing, or trickles, is closed.
IDLE_TIMEOUT_S = 30.0
_POLL_S = 0.2


class AdbServerError(VirtualPhoneError):
    """A host request that cannot be served; the message goes back to the client as FAIL."""


class _AmbiguousDevice(AdbServerError):
    """No serial was given and more than one device is plugged in."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What a host request leaves behind: another request on a transport, or the end."""

    keep_reading: bool
    device: VirtualDevice | None = None


_DONE = _Outcome(keep_reading=False)


@dataclass(slots=True)
class _Forward:
    serial: str
    local: str
    remote: str
    listener: socket.socket


@dataclass(frozen=True, slots=True)
class _Request:
    """A host request split into the transport it names and the service after it."""

    service: str
    argument: str
    serial: str | None  # host-serial:S:
    transport_id: str | None  # host-transport-id:N:
    selected: VirtualDevice | None  # chosen earlier on this connection
    scoped: bool  # host-serial:/host-transport-id:/host-usb:/host-local: rather than host:
    kind: str = "any"  # host-usb: and host-local: pick among that kind of transport only


class AdbServer:
    """A threaded ADB server presenting VirtualPhones as devices.

    The listening socket is bound in the constructor, so `port` is known at once (pass
    `port=0` for a free one); `start()` serves in a background thread, `serve_forever()`
    in the calling one. Phones can be plugged in and out while it runs.

    A connection takes one of `max_connections` slots once its first request arrives
    (a request past the cap gets a FAIL and is closed). Until then it is idle: it holds no
    slot, at most `max_connections` idle ones are kept (a newcomer closes the one that
    waited longest) and each must send every whole request within `idle_timeout` seconds.
    """

    def __init__(
        self,
        phones: Iterable[VirtualPhone] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        max_connections: int = MAX_CONNECTIONS,
        idle_timeout: float = IDLE_TIMEOUT_S,
    ) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, not {max_connections}")
        if not idle_timeout > 0:
            raise ValueError(
                f"idle_timeout must be a positive number of seconds, not {idle_timeout}"
            )
        self._lock = threading.RLock()
        self._slots = threading.BoundedSemaphore(max_connections)
        self.max_connections = max_connections
        self.idle_timeout = idle_timeout
        # Connections waiting for their first request, oldest first (they hold no slot).
        self._waiting: dict[socket.socket, None] = {}
        self._changed = threading.Condition(self._lock)
        self._devices: dict[str, VirtualDevice] = {}
        self._forwards: dict[str, _Forward] = {}
        self._next_transport_id = 1
        self._device_list_version = 0
        self._connections = SocketSet()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._listener = socket.create_server((host, port))
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        self._host_services: dict[str, Callable[[Channel, _Request], _Outcome]] = {
            "version": self._version,
            "kill": self._kill,
            "devices": self._devices_list,
            "devices-l": self._devices_list,
            "track-devices": self._track_devices,
            "track-devices-l": self._track_devices,
            "transport": self._transport,
            "transport-any": self._transport,
            "transport-usb": self._transport,
            "transport-local": self._transport,
            "transport-id": self._transport,
            "tport": self._transport,
            "features": self._features,
            "host-features": self._host_features,
            "get-serialno": self._get_serialno,
            "get-state": self._get_state,
            "get-devpath": self._get_devpath,
            "forward": self._forward,
            "list-forward": self._list_forward,
            "killforward": self._killforward,
            "killforward-all": self._killforward_all,
            "wait-for": self._wait_for,
            "connect": self._connect,
            "disconnect": self._disconnect,
        }
        for phone in phones:
            self.add_phone(phone)

    # ------------------------------------------------------------ lifecycle

    def start(self) -> Self:
        """Serve in a daemon thread and return at once."""
        self._thread = threading.Thread(
            target=self.serve_forever, name=f"adb-server-{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Accept clients until `close()` (or a client's `host:kill`)."""
        while not self._closed.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:
                break
            if not self._connections.add(sock):
                break
            with self._lock:
                evicted = (
                    next(iter(self._waiting))
                    if len(self._waiting) >= self.max_connections
                    else None
                )
                if evicted is not None:
                    del self._waiting[evicted]
                self._waiting[sock] = None
            if evicted is not None:
                close_socket(evicted)  # its thread sees the close and ends
            threading.Thread(
                target=self._handle, args=(sock,), name=f"adb-connection-{self.port}", daemon=True
            ).start()

    def _activate(self, sock: socket.socket) -> bool:
        """The first request arrived: take a slot (False: evicted meanwhile, or refused)."""
        with self._lock:
            if sock not in self._waiting:
                return False  # closed as the longest-waiting idle connection
            del self._waiting[sock]
        if not self._slots.acquire(blocking=False):
            self._refuse(sock)
            return False
        return True

    def _refuse(self, sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.settimeout(1.0)
            Channel(sock).fail(f"too many connections: this server serves {self.max_connections}")
        close_socket(sock)

    def close(self) -> None:
        """Stop serving and close every socket, so clients see the disconnect at once."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
            forwards, self._forwards = list(self._forwards.values()), {}
            devices = list(self._devices.values())
            self._changed.notify_all()
        close_socket(self._listener)
        for forward in forwards:
            close_socket(forward.listener)
        self._connections.close_all()
        for device in devices:
            device.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------ devices

    @property
    def phones(self) -> list[VirtualPhone]:
        with self._lock:
            return [device.phone for device in self._devices.values()]

    def device(self, serial: str) -> VirtualDevice:
        """The device side of a plugged-in phone (its files, local sockets, ...)."""
        with self._lock:
            try:
                return self._devices[serial]
            except KeyError:
                raise KeyError(f"no phone with serial {serial!r} is plugged in") from None

    def add_phone(self, phone: VirtualPhone) -> VirtualDevice:
        """Plug a phone in; track-devices clients see it appear."""
        with self._lock:
            if phone.serial in self._devices:
                raise ValueError(f"a phone with serial {phone.serial!r} is already plugged in")
            device = VirtualDevice(phone, transport_id=self._next_transport_id)
            self._next_transport_id += 1
            self._devices[phone.serial] = device
            self._device_list_version += 1
            self._changed.notify_all()
            return device

    def remove_phone(self, serial: str) -> None:
        """Unplug a phone: its connections and forwards close; trackers see it go."""
        with self._lock:
            device = self._devices.pop(serial, None)
            if device is None:
                raise KeyError(f"no phone with serial {serial!r} is plugged in")
            forwards = [f for f in self._forwards.values() if f.serial == serial]
            for forward in forwards:
                del self._forwards[forward.local]
            self._device_list_version += 1
            self._changed.notify_all()
        for forward in forwards:
            close_socket(forward.listener)
        device.close()

    def _device_listing(self, long: bool) -> str:
        with self._lock:
            devices = list(self._devices.values())
        if long:
            return "".join(f"{d.serial:<22} {DEVICE_STATE} {d.describe()}\n" for d in devices)
        return "".join(f"{d.serial}\t{DEVICE_STATE}\n" for d in devices)

    def _any_device(self, kind: str = "any") -> VirtualDevice:
        with self._lock:
            devices = [
                d for d in self._devices.values() if kind in ("any", transport_kind(d.serial))
            ]
        if not devices:
            raise AdbServerError(
                {"usb": "no devices found", "local": "no emulators found"}.get(
                    kind, "no devices/emulators found"
                )
            )
        if len(devices) > 1:
            raise _AmbiguousDevice(
                {"usb": "more than one device", "local": "more than one emulator"}.get(
                    kind, "more than one device/emulator"
                )
            )
        return devices[0]

    def _by_serial(self, serial: str) -> VirtualDevice:
        with self._lock:
            device = self._devices.get(serial)
        if device is None:
            raise AdbServerError(f"device '{serial}' not found")
        return device

    def _by_transport_id(self, text: str) -> VirtualDevice:
        with self._lock:
            for device in self._devices.values():
                if str(device.transport_id) == text:
                    return device
        raise AdbServerError(f"no device with transport id '{text}'")

    # ------------------------------------------------------------ connections

    def _handle(self, sock: socket.socket) -> None:
        channel = Channel(sock, idle_timeout=self.idle_timeout)
        handed_over = active = False
        device: VirtualDevice | None = None
        try:
            while True:
                request = channel.read_request()
                if request is None:
                    return
                if not active:
                    active = self._activate(sock)
                    if not active:
                        return
                if device is None or request.startswith("host"):
                    outcome = self._host_request(channel, request, device)
                    if not outcome.keep_reading:
                        return
                    device = outcome.device
                    continue
                if not device.connections.add(sock):
                    return
                handed_over = device.serve(channel, request)
                if not handed_over:
                    device.connections.discard(sock)
                return
        except ProtocolError as exc:
            with contextlib.suppress(OSError):
                channel.fail(str(exc))
        except (OSError, PeerClosed):
            pass  # the client went away, or sent no whole request in time (IdleTimeout)
        finally:
            if active:
                self._slots.release()
            else:
                with self._lock:
                    self._waiting.pop(sock, None)
            if not handed_over:
                self._connections.discard(sock)
                channel.close()

    def _host_request(
        self, channel: Channel, request: str, selected: VirtualDevice | None
    ) -> _Outcome:
        try:
            parsed = self._parse_host_request(request, selected)
            name = "wait-for" if parsed.service.startswith("wait-for-") else parsed.service
            handler = self._host_services.get(name)
            if handler is None:
                raise AdbServerError(f"unknown host service: {request}")
            return handler(channel, parsed)
        except AdbServerError as exc:
            channel.fail(str(exc))
            return _DONE

    def _parse_host_request(self, request: str, selected: VirtualDevice | None) -> _Request:
        prefix, _, rest = request.partition(":")
        serial = transport_id = None
        if prefix == "host-serial":
            # A serial may hold colons (`host:port`): prefer the plugged-in serial that fits.
            with self._lock:
                known = sorted(self._devices, key=len, reverse=True)
            serial = next((s for s in known if rest.startswith(s + ":")), None)
            if serial is None:
                serial, rest = split_host_serial(rest)
            else:
                rest = rest[len(serial) + 1 :]
        elif prefix == "host-transport-id":
            transport_id, _, rest = rest.partition(":")
        elif prefix not in ("host", "host-usb", "host-local"):
            raise AdbServerError(f"unknown host service: {request}")
        service, _, argument = rest.partition(":")
        kind = {"host-usb": "usb", "host-local": "local"}.get(prefix, "any")
        return _Request(service, argument, serial, transport_id, selected, prefix != "host", kind)

    def _target(self, request: _Request) -> VirtualDevice:
        """The device a request is about: named, selected earlier, or the only one."""
        if request.serial is not None:
            return self._by_serial(request.serial)
        if request.transport_id is not None:
            return self._by_transport_id(request.transport_id)
        if request.selected is not None:
            return request.selected
        return self._any_device(request.kind)

    # ------------------------------------------------------------ host services

    def _version(self, channel: Channel, request: _Request) -> _Outcome:
        channel.okay(f"0004{ADB_SERVER_VERSION:04x}".encode())
        return _DONE

    def _kill(self, channel: Channel, request: _Request) -> _Outcome:
        channel.okay()
        threading.Thread(target=self.close, name="adb-server-kill", daemon=True).start()
        return _DONE

    def _devices_list(self, channel: Channel, request: _Request) -> _Outcome:
        listing = self._device_listing(long=request.service.endswith("-l"))
        channel.okay(encode_block(listing))
        return _DONE

    def _track_devices(self, channel: Channel, request: _Request) -> _Outcome:
        long = request.service.endswith("-l")
        channel.okay()
        sent_version = -1
        while not self._closed.is_set():
            with self._lock:
                version = self._device_list_version
            if version != sent_version:
                channel.send(encode_block(self._device_listing(long)))
                sent_version = version
            if _peer_closed(channel.sock):
                break
            with self._changed:
                self._changed.wait_for(
                    lambda seen=sent_version: (  # type: ignore[misc]
                        self._device_list_version != seen or self._closed.is_set()
                    ),
                    timeout=_POLL_S,
                )
        return _DONE

    def _transport(self, channel: Channel, request: _Request) -> _Outcome:
        service, argument = request.service, request.argument
        if service == "tport":
            kind, _, value = argument.partition(":")
            device = {
                "serial": lambda: self._by_serial(value),
                "transport-id": lambda: self._by_transport_id(value),
            }.get(kind, self._any_device)()
            channel.okay(struct.pack("<Q", device.transport_id))
            return _Outcome(keep_reading=True, device=device)
        if service == "transport":
            device = self._by_serial(argument)
        elif service == "transport-id":
            device = self._by_transport_id(argument)
        else:
            device = self._any_device(service.removeprefix("transport-"))
        channel.okay()
        return _Outcome(keep_reading=True, device=device)

    def _features(self, channel: Channel, request: _Request) -> _Outcome:
        self._target(request)
        channel.okay(encode_block(",".join(FEATURES)))
        return _DONE

    def _host_features(self, channel: Channel, request: _Request) -> _Outcome:
        channel.okay(encode_block(",".join(FEATURES)))
        return _DONE

    def _get_serialno(self, channel: Channel, request: _Request) -> _Outcome:
        channel.okay(encode_block(self._target(request).serial))
        return _DONE

    def _get_state(self, channel: Channel, request: _Request) -> _Outcome:
        self._target(request)
        channel.okay(encode_block(DEVICE_STATE))
        return _DONE

    def _get_devpath(self, channel: Channel, request: _Request) -> _Outcome:
        channel.okay(encode_block(f"virtual:{self._target(request).serial}"))
        return _DONE

    def _forward(self, channel: Channel, request: _Request) -> _Outcome:
        device = self._target(request)
        spec = request.argument
        norebind = spec.startswith("norebind:")
        local, sep, remote = spec.removeprefix("norebind:").partition(";")
        if not sep or not remote:
            raise AdbServerError(f"malformed forward spec '{spec}'")
        kind, _, port_text = local.partition(":")
        if kind != "tcp" or not port_text.isdigit():
            raise AdbServerError(f"cannot bind listener: only tcp:PORT is supported, not '{local}'")
        with self._lock:
            existing = self._forwards.get(local)
            if existing is not None:
                if norebind:
                    raise AdbServerError("cannot rebind existing socket")
                existing.serial, existing.remote = device.serial, remote
                channel.okay(b"OKAY")
                return _DONE
        try:
            listener = socket.create_server((self.host, int(port_text)))
        except OSError as exc:
            raise AdbServerError(f"cannot bind listener: {exc.strerror}") from exc
        port = listener.getsockname()[1]
        local = f"tcp:{port}"
        forward = _Forward(device.serial, local, remote, listener)
        with self._lock:
            if self._closed.is_set():
                close_socket(listener)
                raise AdbServerError("the server is shutting down")
            self._forwards[local] = forward
        threading.Thread(
            target=self._serve_forward, args=(forward,), name=f"adb-forward-{port}", daemon=True
        ).start()
        channel.okay(b"OKAY" + (encode_block(str(port)) if port_text == "0" else b""))
        return _DONE

    def _serve_forward(self, forward: _Forward) -> None:
        while True:
            try:
                sock, _ = forward.listener.accept()
            except OSError:
                return
            with self._lock:
                device = self._devices.get(forward.serial)
                remote = forward.remote
            if device is None or not self._connections.add(sock):
                close_socket(sock)
                continue
            if not device.connections.add(sock) or not device.connect_local(remote, sock):
                self._connections.discard(sock)
                close_socket(sock)

    def _list_forward(self, channel: Channel, request: _Request) -> _Outcome:
        serial = self._target(request).serial if request.scoped else None
        with self._lock:
            forwards = [f for f in self._forwards.values() if serial in (None, f.serial)]
        channel.okay(encode_block("".join(f"{f.serial} {f.local} {f.remote}\n" for f in forwards)))
        return _DONE

    def _killforward(self, channel: Channel, request: _Request) -> _Outcome:
        self._target(request)
        with self._lock:
            forward = self._forwards.pop(request.argument, None)
        if forward is None:
            raise AdbServerError(f"listener '{request.argument}' not found")
        close_socket(forward.listener)
        channel.okay(b"OKAY")
        return _DONE

    def _killforward_all(self, channel: Channel, request: _Request) -> _Outcome:
        serial = self._target(request).serial if request.scoped else None
        with self._lock:
            doomed = [f for f in self._forwards.values() if serial in (None, f.serial)]
            for forward in doomed:
                del self._forwards[forward.local]
        for forward in doomed:
            close_socket(forward.listener)
        channel.okay(b"OKAY")
        return _DONE

    def _wait_for(self, channel: Channel, request: _Request) -> _Outcome:
        """`wait-for-TRANSPORT-STATE`: OKAY at once, and OKAY again when the wait is over.

        The phones are always in the `device` state, so a wait for `recovery`,
        `bootloader`, `rescue` or `sideload` lasts until the client gives up.
        """
        try:
            spec = parse_wait(request.service)
        except TransportSpecError as exc:
            raise AdbServerError(str(exc)) from exc
        channel.okay()
        scoped = _Request(
            request.service, "", request.serial, request.transport_id, request.selected,
            request.scoped, spec.kind if request.kind == "any" else request.kind,
        )  # fmt: skip
        while not self._closed.is_set() and not _peer_closed(channel.sock):
            found = ambiguous = False
            try:
                self._target(scoped)
                found = True
            except _AmbiguousDevice as exc:
                if spec.state != "disconnect":
                    channel.fail(str(exc))
                    return _DONE
                ambiguous = True
            except AdbServerError:
                pass
            if wait_is_over(spec, found, ambiguous, DEVICE_STATE):
                channel.okay()
                return _DONE
            with self._changed:
                self._changed.wait(timeout=_POLL_S)
        return _DONE

    def _connect(self, channel: Channel, request: _Request) -> _Outcome:
        channel.okay(encode_block(f"failed to connect to '{request.argument}': virtual server"))
        return _DONE

    def _disconnect(self, channel: Channel, request: _Request) -> _Outcome:
        """Unplug a phone reached over the network, as `adb disconnect HOST[:PORT]` does."""
        if not request.argument:
            with self._lock:
                doomed = [s for s in self._devices if is_network_serial(s)]
            for serial in doomed:
                with contextlib.suppress(KeyError):
                    self.remove_phone(serial)
            channel.okay(encode_block("disconnected everything"))
            return _DONE
        try:
            serial = network_serial(request.argument)
        except TransportSpecError as exc:
            raise AdbServerError(str(exc)) from exc
        try:
            self.remove_phone(serial)
        except KeyError:
            raise AdbServerError(f"no such device '{serial}'") from None
        channel.okay(encode_block(f"disconnected {request.argument}"))
        return _DONE


def _peer_closed(sock: socket.socket) -> bool:
    """True when the client closed a connection it never writes to again."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1024, socket.MSG_PEEK) == b""
    except OSError:
        return True
