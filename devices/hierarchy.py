"""Which tool dumps a phone's view hierarchy; the choice the studio and ``elderbench eval`` offer.

- ``uiautomator``: the phone's own `uiautomator dump` (1-3 s a dump on real phones, and it
  fails on screens that keep animating).
- ``u2``: the uiautomator2 test server (``devices.u2``): pushed and started once, then a
  dump is one call to it; far faster, and it does not wait for the screen to be idle.
- ``auto``: ``u2``, and ``uiautomator`` for the rest of the session when the server cannot
  start or answer (the reason is logged and kept in ``AndroidDevice.hierarchy_note``).

Both give the same uiautomator XML. No adb here, so command-line parsers can import it.

>>> check_hierarchy("U2")
'u2'
>>> check_hierarchy("fast")
Traceback (most recent call last):
...
devices.errors.DeviceError: unknown hierarchy backend 'fast'; choose uiautomator, u2 or auto
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from devices.errors import DeviceError

UIAUTOMATOR = "uiautomator"
U2 = "u2"
AUTO = "auto"
HIERARCHY_CHOICES: tuple[str, ...] = (UIAUTOMATOR, U2, AUTO)
DEFAULT_HIERARCHY = UIAUTOMATOR
HIERARCHY_HELP = (
    "how the phone's view hierarchy is dumped: uiautomator (the phone's `uiautomator dump`), "
    "u2 (the uiautomator2 server: faster, tolerates animation) or auto (u2, falling back to "
    "uiautomator with the reason logged)"
)


def add_hierarchy_argument(parser: Any, *, when: str = "") -> None:
    """``--hierarchy uiautomator|u2|auto`` on an argparse parser (``when`` starts its help,
    e.g. ``"online: "``), the same for every command that reads a phone's screens."""
    parser.add_argument(
        "--hierarchy",
        choices=HIERARCHY_CHOICES,
        default=DEFAULT_HIERARCHY,
        help=f"{when}{HIERARCHY_HELP} (default {DEFAULT_HIERARCHY})",
    )


def check_hierarchy(name: str) -> str:
    """``name`` as one of HIERARCHY_CHOICES; DeviceError naming the choices otherwise."""
    choice = str(name).strip().lower()
    if choice not in HIERARCHY_CHOICES:
        raise DeviceError(
            f"unknown hierarchy backend {name!r}; choose {', '.join(HIERARCHY_CHOICES[:-1])} "
            f"or {HIERARCHY_CHOICES[-1]}"
        )
    return choice


@dataclass(frozen=True, slots=True)
class HierarchyUse:
    """Which tool read a device's screens: the one ``chosen``, those whose dumps became
    observations (``used``, in the order first used) and why ``auto`` fell back to
    ``uiautomator`` (empty when it did not). A device without the tools (screens held in
    memory) has ``chosen`` empty.

    >>> HierarchyUse(AUTO, (U2, UIAUTOMATOR), "the server died").describe()
    'auto: u2, then uiautomator (the server died)'
    """

    chosen: str
    used: tuple[str, ...] = ()
    fallback: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"chosen": self.chosen, "used": list(self.used), "fallback": self.fallback}

    def describe(self) -> str:
        used = ", then ".join(self.used) or "no dump yet"
        return f"{self.chosen}: {used}" + (f" ({self.fallback})" if self.fallback else "")
