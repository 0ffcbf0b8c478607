"""Scripted recording: a demonstration recorded by a program instead of a person.

``record_script`` drives the studio's own ``RecordingSession`` (settle, capture, save,
perform), so a scripted demonstration is stored exactly as a recorded one: screenshot,
hierarchy, activity and perceptual hash before every action. The script sees each
pending screen and answers with the action to take there; ``done`` ends the demo.

>>> import tempfile
>>> from devices.android import AndroidDevice, adb_client
>>> from virtual_phone import running_server
>>> def tap_display(pending):
...     if pending.step_index == 1:
...         return Action.done()
...     element = pending.screen.hierarchy().find(text="Display")[0]
...     return Action.tap(*element.bounds.center, screen=pending.screen.size)
>>> tmp = tempfile.TemporaryDirectory()
>>> task = Task("display", "open the display settings", app="com.android.settings")
>>> with running_server() as server:
...     device = AndroidDevice("virtual-1", client=adb_client(port=server.port))
...     demo = record_script(device, Path(tmp.name), task, tap_display,
...                          reset=ResetRecipe("com.android.settings"))
>>> demo.status.value, [s.observation.activity for s in demo.steps]
('complete', ['com.android.settings/.Settings', 'com.android.settings/.SubSettings'])
>>> tmp.cleanup()
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from devices.device import Device
from devices.device_lock import DeviceLock, lock_address
from graph_builder.model import Action, ActionType, Demonstration, ResetRecipe, Task
from recorder_app.errors import RecordingError
from recorder_app.recording.session import SETTLE_TIMEOUT_S, PendingStep, RecordingSession

# What the script answers for a pending screen.
Script = Callable[[PendingStep], Action]

# A script that never says done would otherwise record forever.
DEFAULT_MAX_STEPS = 100


def record_script(
    device: Device,
    demos_root: Path,
    task: Task,
    script: Script,
    *,
    reset: ResetRecipe | None = None,
    demo_id: str | None = None,
    annotator: str = "",
    source: str = "scripted",
    clock: Callable[[], float] = time.time,
    settle_timeout: float = SETTLE_TIMEOUT_S,
    max_steps: int = DEFAULT_MAX_STEPS,
    after_action: Callable[[Action], None] | None = None,
    owner: str = "a scripted recording",
) -> Demonstration:
    """Record one demonstration of ``task`` on ``device``, choosing every action with
    ``script``; returns the finished demonstration.

    The phone is first reset with ``reset``, or, when it is None, with the task's own
    recipe (``task.reset``), so a scripted demonstration starts where a recorded one does.
    ``after_action`` runs after each action was performed, before the next screen is
    captured (e.g. to move a simulated clock on). An exception from the script or the
    device leaves the demonstration on disk, marked incomplete, as a crash would.

    The phone's device lock (``devices.device_lock``) is held from the reset to the end,
    as the Record tab and an online run hold it; a phone held elsewhere raises
    ``DeviceBusyError`` naming its holder, before anything is reset or written.
    """
    lock = DeviceLock(
        lock_address(device), owner=owner, command=f"scripted demo of {task.id} → {demos_root}"
    )
    with lock:
        return _record(
            device,
            demos_root,
            task,
            script,
            reset=reset,
            demo_id=demo_id,
            annotator=annotator,
            source=source,
            clock=clock,
            settle_timeout=settle_timeout,
            max_steps=max_steps,
            after_action=after_action,
        )


def _record(
    device: Device,
    demos_root: Path,
    task: Task,
    script: Script,
    *,
    reset: ResetRecipe | None,
    demo_id: str | None,
    annotator: str,
    source: str,
    clock: Callable[[], float],
    settle_timeout: float,
    max_steps: int,
    after_action: Callable[[Action], None] | None,
) -> Demonstration:
    session = RecordingSession.start(
        device,
        demos_root,
        task,
        annotator=annotator,
        reset=reset if reset is not None else task.reset,
        settle_timeout=settle_timeout,
        demo_id=demo_id,
        source=source,
        clock=clock,
    )
    for _ in range(max_steps):
        pending = session.capture()
        action = script(pending)
        if action.type is ActionType.DONE:
            return session.complete()
        session.act(action)
        if after_action is not None:
            after_action(action)
    session.interrupt()
    raise RecordingError(
        f"the script for {task.id} did not say done within {max_steps} steps; "
        f"{session.folder} is kept as incomplete"
    )
