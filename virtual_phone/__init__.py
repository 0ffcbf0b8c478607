"""The virtual phone: a simulated Android phone behind a Python ADB server.

Clients reach it only over the ADB protocol, exactly as they reach a real phone; it
imports nothing of the client side. The public entry points:

- ``running_server(phones=None, *, port=0, realtime=False)``: a context manager serving
  phones on a free port in a background thread (tests, benchmarks, the studio's
  ``--virtual-phone``); read the port from ``server.port``.
- ``fast_phone(serial, **options)``: a deterministic phone (no settle delays, the
  ``FROZEN_CLOCK``) and ``VirtualPhone`` itself; ``AdbServer`` for a server you run yourself.
- ``VirtualPhoneError``: the root of every exception raised here.

Names are loaded on first use, so ``elderbench --help`` does not pay for the simulator.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from virtual_phone.errors import PhoneCommandError, PhoneInputError, VirtualPhoneError

if TYPE_CHECKING:
    from virtual_phone.adb_server import AdbServer
    from virtual_phone.launch import FROZEN_CLOCK, fast_phone, running_server
    from virtual_phone.phone import VirtualPhone

_LAZY = {
    "AdbServer": "virtual_phone.adb_server",
    "FROZEN_CLOCK": "virtual_phone.launch",
    "fast_phone": "virtual_phone.launch",
    "running_server": "virtual_phone.launch",
    "VirtualPhone": "virtual_phone.phone",
}

__all__ = [
    "FROZEN_CLOCK",
    "AdbServer",
    "PhoneCommandError",
    "PhoneInputError",
    "VirtualPhone",
    "VirtualPhoneError",
    "fast_phone",
    "running_server",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'virtual_phone' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
