"""The phone's network as its shell shows it: `ip addr|route`, `ifconfig` and `svc wifi`.

The phone has a loopback interface and a Wi-Fi interface, wlan0. While Wi-Fi is on and
airplane mode off, wlan0 is up with one 192.168.x.x address on a /24 behind a gateway at
.1; the address comes from the serial, so each phone keeps its own across runs. With
Wi-Fi off wlan0 is down and has no address, as on a phone.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from virtual_phone.shell import Command, CommandFailed, Invocation


@dataclass(frozen=True, slots=True)
class Interface:
    name: str
    index: int
    mac: str
    up: bool
    address: str | None  # IPv4, with a /24
    link_local: str | None  # IPv6

    @property
    def subnet(self) -> str:
        return ".".join((self.address or "0.0.0.0").split(".")[:3])


def wlan_address(serial: str) -> str:
    """The 192.168.x.x address a phone with this serial gets on Wi-Fi."""
    digest = zlib.crc32(serial.encode())
    return f"192.168.{digest % 200 + 1}.{(digest >> 8) % 200 + 20}"


def _interfaces(inv: Invocation) -> dict[str, Interface]:
    phone = inv.device.phone
    table = phone.settings.get("global", {})
    on = table.get("wifi_on") == "1" and table.get("airplane_mode_on") != "1"
    digest = zlib.crc32(phone.serial.encode(), 7)
    octets = [0x02, 0x00] + [(digest >> shift) & 0xFF for shift in (24, 16, 8, 0)]
    mac = ":".join(f"{octet:02x}" for octet in octets)
    # The IPv6 link-local address from the MAC (EUI-64), as the kernel forms it.
    eui = (
        f"{(octets[0] ^ 2) << 8 | octets[1]:x}:{octets[2]:x}ff:fe{octets[3]:02x}:"
        f"{octets[4] << 8 | octets[5]:x}"
    )
    return {
        "lo": Interface("lo", 1, "00:00:00:00:00:00", True, "127.0.0.1", "::1"),
        "wlan0": Interface(
            "wlan0", 47, mac, on,
            wlan_address(phone.serial) if on else None, f"fe80::{eui}" if on else None,
        ),
    }  # fmt: skip


def _ip_addr_lines(interface: Interface, families: set[str]) -> list[str]:
    loopback = interface.name == "lo"
    flags = "LOOPBACK,UP,LOWER_UP" if loopback else (
        "BROADCAST,MULTICAST,UP,LOWER_UP" if interface.up else "BROADCAST,MULTICAST"
    )  # fmt: skip
    mtu, qdisc = (65536, "noqueue") if loopback else (1500, "mq")
    state = "UNKNOWN" if loopback else ("UP" if interface.up else "DOWN")
    lines = [
        f"{interface.index}: {interface.name}: <{flags}> mtu {mtu} qdisc {qdisc} state {state}"
        f" group default qlen {1000 if loopback else 3000}",
    ]
    if "link" in families:
        kind = "loopback" if loopback else "ether"
        broadcast = "00:00:00:00:00:00" if loopback else "ff:ff:ff:ff:ff:ff"
        lines.append(f"    link/{kind} {interface.mac} brd {broadcast}")
    if interface.address and "inet" in families:
        if loopback:
            lines.append("    inet 127.0.0.1/8 scope host lo")
        else:
            lines.append(
                f"    inet {interface.address}/24 brd {interface.subnet}.255 scope global"
                f" {interface.name}"
            )
        lines.append("       valid_lft forever preferred_lft forever")
    if interface.link_local and "inet6" in families:
        scope = "host" if loopback else "link"
        prefix = 128 if loopback else 64
        lines.append(f"    inet6 {interface.link_local}/{prefix} scope {scope}")
        lines.append("       valid_lft forever preferred_lft forever")
    return lines


def _ip_addr(inv: Invocation, words: list[str], families: set[str]) -> int:
    if words[:1] in (["show"], ["list"], ["ls"]):
        words = words[1:]
    if words[:1] == ["dev"]:
        words = words[1:]
    interfaces = _interfaces(inv)
    if words:
        found = interfaces.get(words[0])
        if found is None:
            raise CommandFailed(f'Device "{words[0]}" does not exist.')
        chosen = [found]
    else:
        chosen = list(interfaces.values())
    inv.write("".join(line + "\n" for i in chosen for line in _ip_addr_lines(i, families)))
    return 0


def _ip_route(inv: Invocation, words: list[str]) -> int:
    wlan = _interfaces(inv)["wlan0"]
    if words[:1] == ["get"]:
        if len(words) < 2:
            raise CommandFailed('Command line is not complete. Try option "help"', 255)
        if wlan.address is None:
            raise CommandFailed("RTNETLINK answers: Network is unreachable", 2)
        target = words[1]
        via = "" if target.startswith(wlan.subnet + ".") else f" via {wlan.subnet}.1"
        inv.write(f"{target}{via} dev wlan0 table 1021 src {wlan.address} uid 2000 \n    cache \n")
        return 0
    if wlan.address is not None:
        inv.write(f"{wlan.subnet}.0/24 dev wlan0 proto kernel scope link src {wlan.address} \n")
    return 0


def ip(inv: Invocation) -> int:
    """toybox-like `ip [-4|-6|-f FAMILY] addr|route ...`."""
    args = inv.args[1:]
    families = {"link", "inet", "inet6"}
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option in ("-4", "-6"):
            families = {"inet" if option == "-4" else "inet6"}
        elif option in ("-f", "-family") and args:
            family = args.pop(0)
            if family not in ("inet", "inet6", "link"):
                raise CommandFailed(f'Error: argument "{family}" is wrong: invalid address family')
            families = {family}
        else:
            raise CommandFailed(f'Option "{option}" is unknown, try "ip -help".', 255)
    if not args:
        raise CommandFailed("Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }", 255)
    obj, words = args[0], args[1:]
    if "address".startswith(obj) and obj:
        return _ip_addr(inv, words, families)
    if "route".startswith(obj) and obj:
        return _ip_route(inv, words[1:] if words[:1] in (["show"], ["list"]) else words)
    raise CommandFailed(f'Object "{obj}" is unknown, try "ip help".', 255)


def _ifconfig_lines(interface: Interface) -> list[str]:
    if interface.name == "lo":
        head = "lo        Link encap:Local Loopback "
    else:
        head = f"{interface.name:<10}Link encap:Ethernet  HWaddr {interface.mac}  Driver cnss_pci"
    lines = [head]
    if interface.address:
        mask = "255.0.0.0" if interface.name == "lo" else "255.255.255.0"
        broadcast = "" if interface.name == "lo" else f"  Bcast:{interface.subnet}.255"
        lines.append(f"          inet addr:{interface.address}{broadcast}  Mask:{mask} ")
    if interface.link_local:
        scope = "Host" if interface.name == "lo" else "Link"
        prefix = 128 if interface.name == "lo" else 64
        lines.append(f"          inet6 addr: {interface.link_local}/{prefix} Scope: {scope}")
    state = "UP LOOPBACK RUNNING" if interface.name == "lo" else (
        "UP BROADCAST RUNNING MULTICAST" if interface.up else "BROADCAST MULTICAST"
    )  # fmt: skip
    mtu = 65536 if interface.name == "lo" else 1500
    lines += [
        f"          {state}  MTU:{mtu}  Metric:1",
        "          RX packets:0 errors:0 dropped:0 overruns:0 frame:0 ",
        "          TX packets:0 errors:0 dropped:0 overruns:0 carrier:0 ",
        f"          collisions:0 txqueuelen:{1000 if interface.name == 'lo' else 3000} ",
        "          RX bytes:0 TX bytes:0 ",
        "",
    ]
    return lines


def ifconfig(inv: Invocation) -> int:
    """toybox `ifconfig [-a] [INTERFACE]`: the interfaces that are up, or the one named."""
    names = [a for a in inv.args[1:] if not a.startswith("-")]
    interfaces = _interfaces(inv)
    if names:
        found = interfaces.get(names[0])
        if found is None:
            raise CommandFailed("ifconfig: ioctl 8913: No such device")
        chosen = [found]
    else:
        every = "-a" in inv.args
        chosen = [i for i in interfaces.values() if i.up or every]
    inv.write("".join(line + "\n" for i in chosen for line in _ifconfig_lines(i)))
    return 0


def svc(inv: Invocation) -> int:
    """`svc wifi enable|disable`: turns Wi-Fi on or off (the status bar and wlan0 follow)."""
    args = inv.args[1:]
    if args[:1] == ["wifi"] and args[1:2] in (["enable"], ["disable"]):
        inv.device.phone.settings["global"]["wifi_on"] = "1" if args[1] == "enable" else "0"
        return 0
    raise CommandFailed("usage: svc wifi enable|disable", 1)


COMMANDS: dict[str, Command] = {"ip": ip, "ifconfig": ifconfig, "svc": svc}
