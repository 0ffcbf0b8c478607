"""Demo data for the studio's tests."""

from __future__ import annotations

import io

from PIL import Image

from graph_builder.io import DemoWriter
from graph_builder.model import Action, Bounds, ElementRef, Task
from recorder_app.recording.workspace import Workspace

HIERARCHY = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
  <node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="p"
        clickable="false" bounds="[0,0][1080,2400]">
    <node index="0" text="Wi-Fi" resource-id="p:id/wifi" class="android.widget.TextView"
          package="p" clickable="true" bounds="[0,300][1080,500]" />
  </node>
</hierarchy>
"""


def png_bytes(color: tuple[int, int, int], size: tuple[int, int] = (108, 240)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format="PNG")
    return out.getvalue()


def write_demo(
    workspace: Workspace, task_id: str = "wifi", demo_id: str = "d1", *, finish: bool = True
) -> DemoWriter:
    """A three-step demo (tap, swipe, done) on a 1080x2400 phone with small screenshots."""
    task = Task(task_id, "turn on the wifi")
    writer = DemoWriter.create(workspace.demos_dir, task, demo_id=demo_id, annotator="ann")
    screen = (1080, 2400)
    element = ElementRef(Bounds(0, 300, 1080, 500), "p:id/wifi", "Wi-Fi")
    steps = [
        Action.tap(540, 400, screen=screen, element=element),
        Action.swipe(540, 1800, 540, 600, screen=screen),
        Action.done(),
    ]
    colors = [(200, 30, 30), (30, 200, 30), (30, 30, 200)]
    for action, color in zip(steps if finish else steps[:2], colors, strict=False):
        writer.add_step(
            png_bytes(color), HIERARCHY, action=action, activity="p/.Main", screen=screen, time=1.0
        )
    if finish:
        writer.finish()
    return writer


def on_server(port: int, serial: str = "virtual-1") -> str:
    """The address the studio locks a phone under: its serial on the connection's adb
    server (the tests' ANDROID_ADB_SERVER_PORT names another, unused, port)."""
    return f"{serial}@127.0.0.1:{port}"
