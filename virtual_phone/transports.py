"""How the ADB server names and picks transports: serials inside requests, network
addresses, the kind of each transport and the `wait-for-TRANSPORT-STATE` conditions.

Pure functions over strings, so the server's request handlers stay small.

>>> split_host_serial("127.0.0.1:5555:wait-for-any-device")
('127.0.0.1:5555', 'wait-for-any-device')
>>> network_serial("10.0.0.7")
'10.0.0.7:5555'
>>> transport_kind("emulator-5554"), transport_kind("virtual-1")
('local', 'usb')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from virtual_phone.errors import VirtualPhoneError

DEFAULT_TCP_PORT = 5555  # what `adb connect HOST` and `adb disconnect HOST` assume
TRANSPORT_KINDS = ("any", "usb", "local")
# States a wait can name; "disconnect" waits for the transport to go away.
WAIT_STATES = ("device", "recovery", "rescue", "sideload", "bootloader", "any", "disconnect")
# Serials of transports over the network: `host:port` and `[v6]:port`.
_NETWORK_SERIAL = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[^:\[\]]+):(\d+)$")
_EMULATOR_SERIAL = re.compile(r"^emulator-\d+$")
_PORT_FIELD = re.compile(r":(\d+)(?=:)")


class TransportSpecError(VirtualPhoneError, ValueError):
    """A serial, address or wait spec the server cannot read; the text goes back as FAIL."""


@dataclass(frozen=True, slots=True)
class WaitSpec:
    """`wait-for-TRANSPORT-STATE`, taken apart."""

    kind: str  # any | usb | local
    state: str  # one of WAIT_STATES


def split_host_serial(rest: str) -> tuple[str, str]:
    """Split `SERIAL:SERVICE...` where the serial may itself hold `host:port`.

    As the real server does: a `usb:`/`product:`/`model:`/`device:` qualifier runs to the
    next colon; a `tcp:` or `udp:` prefix and an `[IPv6]` address are stepped over; then a
    field of digits followed by another colon is the serial's port, not the service.
    """
    for qualifier in ("usb:", "product:", "model:", "device:"):
        if rest.startswith(qualifier):
            end = rest.find(":", len(qualifier))
            return (rest, "") if end < 0 else (rest[:end], rest[end + 1 :])
    start = 4 if rest.startswith(("tcp:", "udp:")) else 0
    if rest.startswith("[", start) and "]" in rest[start:]:
        start = rest.index("]", start)
    colon = rest.find(":", start)
    if colon < 0:
        return rest, ""
    port = _PORT_FIELD.match(rest, colon)
    end = port.end() if port else colon
    return rest[:end], rest[end + 1 :]


def network_serial(address: str) -> str:
    """The serial `adb connect`/`disconnect` give an address: `host:port`, 5555 by default."""
    text = address.removeprefix("tcp:")
    if text.startswith("["):
        host, bracket, tail = text.partition("]")
        if not bracket or (tail and not tail.startswith(":")):
            raise TransportSpecError(f"couldn't parse '{address}': invalid IPv6 address")
        host, port_text = host + "]", tail[1:]
    elif text.count(":") > 1:
        host, port_text = f"[{text}]", ""  # a bare IPv6 address
    else:
        host, _, port_text = text.partition(":")
    if not host:
        raise TransportSpecError(f"couldn't parse '{address}': no host")
    if port_text and (not port_text.isdigit() or not 0 < int(port_text) < 65536):
        raise TransportSpecError(f"couldn't parse '{address}': bad port number '{port_text}'")
    return f"{host}:{port_text or DEFAULT_TCP_PORT}"


def is_network_serial(serial: str) -> bool:
    return _NETWORK_SERIAL.match(serial) is not None


def transport_kind(serial: str) -> str:
    """`local` for emulators and phones reached over the network, `usb` for the rest."""
    if is_network_serial(serial) or _EMULATOR_SERIAL.match(serial):
        return "local"
    return "usb"


def parse_wait(service: str) -> WaitSpec:
    """`wait-for-usb-device` -> WaitSpec("usb", "device"); anything else is refused."""
    kind, _, state = service.removeprefix("wait-for-").partition("-")
    if kind not in TRANSPORT_KINDS or state not in WAIT_STATES:
        raise TransportSpecError(f"unknown host service: {service}")
    return WaitSpec(kind, state)


def wait_is_over(spec: WaitSpec, found: bool, ambiguous: bool, state: str) -> bool:
    """Whether the wait ends now, for a transport found (or not) in `state`.

    Like the real server, several matching transports count as none for `disconnect`.
    """
    if spec.state == "disconnect":
        return not found
    return found and not ambiguous and spec.state in ("any", state)
