"""Free drive: the phone driven from the studio outside a recording; nothing is saved.

A person brings the phone to a task's start, recovers after "Stop (resume later)", or
explores. ``FreeDrive`` opens the device on first use and performs each input as it comes;
it keeps no screen, writes no file and knows nothing of demonstrations. Who may drive the
phone at all (one owner per device) is decided above it, by the device lock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from devices.device import Device
from devices.errors import DeviceDisconnectedError, DeviceError
from graph_builder.model import Action, ActionType
from recorder_app.errors import PhoneControlError

log = logging.getLogger(__name__)

# Inputs that mean something on a phone outside a recording; Wait and Task complete only
# mean something inside a demonstration.
DRIVABLE = frozenset(
    {
        ActionType.TAP,
        ActionType.LONG_PRESS,
        ActionType.DOUBLE_TAP,
        ActionType.SWIPE,
        ActionType.TYPE,
        ActionType.BACK,
        ActionType.HOME,
        ActionType.KEY,
        ActionType.LAUNCH,
    }
)


class FreeDrive:
    """Performs inputs on one phone; not thread-safe (one caller thread at a time)."""

    def __init__(self, serial: str, open_device: Callable[[str], Device]) -> None:
        self.serial = serial
        self._open_device = open_device
        self._device: Device | None = None

    def perform(self, action: Action) -> None:
        """Send ``action`` to the phone; raises PhoneControlError in plain words."""
        if action.type not in DRIVABLE:
            raise PhoneControlError(
                f"{action.describe()} only means something in a demonstration; "
                "free drive sends taps, swipes, keys and text."
            )
        try:
            if self._device is None:
                self._device = self._open_device(self.serial)
            self._device.perform(action)
        except DeviceDisconnectedError as exc:
            self.close()
            raise PhoneControlError(
                f"The phone {self.serial} disconnected ({exc}); {action.describe()} did not "
                "reach it. Plug it in again or use Restart phone / Reconnect."
            ) from exc
        except DeviceError as exc:
            raise PhoneControlError(
                f"{action.describe()} did not reach the phone {self.serial}: {exc}"
            ) from exc

    def close(self) -> None:
        device, self._device = self._device, None
        if device is not None:
            try:
                device.close()
            except DeviceError:
                log.debug("closing the free-drive device failed", exc_info=True)
