"""Small synthetic screens for graph-builder tests: a Pillow image and matching uiautomator XML.

A ``Sketch`` describes a screen: a title bar, a list of rows and optionally a dialog, under
a status bar whose clock can change. ``render`` draws it (pixels and hierarchy agree, as
on a phone); ``state`` turns it into a ``graph_builder.screen.Screen`` held in memory.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

from PIL import Image, ImageDraw

from graph_builder.hierarchy import parse_hierarchy
from graph_builder.io import DemoWriter
from graph_builder.merge import DemoInput
from graph_builder.model import (
    Action,
    Demonstration,
    DemoStatus,
    MemberRef,
    Observation,
    Step,
    Task,
)
from graph_builder.phash import compute_phash
from graph_builder.screen import Screen

SIZE = (270, 600)
PKG = "com.example.app"


@dataclass(frozen=True)
class Sketch:
    name: str
    rows: tuple[str, ...] = ()
    dialog: str | None = None
    clock: str = "12:00"
    activity: str | None = None
    with_hierarchy: bool = True
    extra: dict[str, str] = field(default_factory=dict)

    def with_clock(self, clock: str) -> Sketch:
        return Sketch(
            self.name, self.rows, self.dialog, clock, self.activity, self.with_hierarchy, self.extra
        )

    @property
    def activity_name(self) -> str:
        return self.activity or f"{PKG}/.Main"

    def row_center(self, label: str, size: tuple[int, int] = SIZE) -> tuple[int, int]:
        i = self.rows.index(label)
        box = _row_box(i, size)
        return (box[0] + box[2]) // 2, (box[1] + box[3]) // 2


def _color(name: str) -> tuple[int, int, int]:
    digest = hashlib.sha256(name.encode()).digest()
    return digest[0], digest[1], digest[2]


def _row_box(i: int, size: tuple[int, int]) -> tuple[int, int, int, int]:
    w, h = size
    top = int(h * 0.16) + i * int(h * 0.09)
    return 0, top, w, top + int(h * 0.08)


def render(screen: Sketch, size: tuple[int, int] = SIZE) -> tuple[Image.Image, str]:
    w, h = size
    image = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(image)
    bar = int(h * 0.03)
    draw.rectangle((0, 0, w, bar), fill=(20, 20, 20))
    draw.text((4, 1), screen.clock, fill=(255, 255, 255))
    title_bottom = int(h * 0.12)
    draw.rectangle((0, bar, w, title_bottom), fill=_color(screen.name))
    draw.text((10, bar + 8), screen.name, fill=(255, 255, 255))
    rows_xml = []
    for i, label in enumerate(screen.rows):
        box = _row_box(i, size)
        shade = _color(label)
        draw.rectangle((box[0] + 4, box[1], box[2] - 4, box[3]), fill=shade, outline=(0, 0, 0))
        draw.text((12, box[1] + 6), label, fill=(0, 0, 0))
        rows_xml.append(
            f'<node index="{i}" class="android.widget.LinearLayout" package="{PKG}" '
            f'resource-id="{PKG}:id/row" clickable="true" text="" content-desc="" '
            f'bounds="[{box[0]},{box[1]}][{box[2]},{box[3]}]">'
            f'<node index="0" class="android.widget.TextView" package="{PKG}" '
            f'resource-id="{PKG}:id/label" text={quoteattr(label)} content-desc="" '
            f'bounds="[{box[0] + 8},{box[1] + 4}][{box[2] - 8},{box[3] - 4}]"/></node>'
        )
    dialog_xml = ""
    if screen.dialog:
        box = (w // 8, h // 3, w - w // 8, h // 3 + h // 4)
        draw.rectangle(box, fill=(255, 255, 255), outline=(0, 0, 0), width=3)
        draw.text((box[0] + 10, box[1] + 10), screen.dialog, fill=(0, 0, 0))
        ok = (box[0] + 10, box[3] - 50, box[2] - 10, box[3] - 10)
        draw.rectangle(ok, fill=(30, 120, 200))
        draw.text((ok[0] + 6, ok[1] + 6), "OK", fill=(255, 255, 255))
        dialog_xml = (
            f'<node class="android.widget.FrameLayout" package="{PKG}" '
            f'resource-id="{PKG}:id/dialog" bounds="[{box[0]},{box[1]}][{box[2]},{box[3]}]">'
            f'<node class="android.widget.TextView" package="{PKG}" '
            f'resource-id="{PKG}:id/message" text={quoteattr(screen.dialog)} '
            f'bounds="[{box[0] + 10},{box[1] + 10}][{box[2] - 10},{box[1] + 40}]"/>'
            f'<node class="android.widget.Button" package="{PKG}" resource-id="{PKG}:id/ok" '
            f'text="OK" clickable="true" bounds="[{ok[0]},{ok[1]}][{ok[2]},{ok[3]}]"/></node>'
        )
    extra = "".join(
        f'<node class="android.widget.TextView" package="{PKG}" resource-id="{PKG}:id/{k}" '
        f'text={quoteattr(v)} bounds="[10,{h - 60}][{w - 10},{h - 30}]"/>'
        for k, v in screen.extra.items()
    )
    xml = (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        f'<node class="android.widget.FrameLayout" package="{PKG}" bounds="[0,0][{w},{h}]">'
        f'<node class="android.widget.TextView" package="{PKG}" resource-id="{PKG}:id/title" '
        f'text={quoteattr(screen.name)} bounds="[0,{bar}][{w},{title_bottom}]"/>'
        f'<node class="android.widget.ListView" package="{PKG}" resource-id="{PKG}:id/list" '
        f'scrollable="true" bounds="[0,{title_bottom}][{w},{h - 70}]">{"".join(rows_xml)}</node>'
        f"{extra}{dialog_xml}</node>"
        f'<node class="android.widget.FrameLayout" package="com.android.systemui" '
        f'resource-id="com.android.systemui:id/status_bar" bounds="[0,0][{w},{bar}]">'
        f'<node class="android.widget.TextView" package="com.android.systemui" '
        f'resource-id="com.android.systemui:id/clock" text="{screen.clock}" '
        f'bounds="[0,0][40,{bar}]"/></node>'
        "</hierarchy>"
    )
    return image, xml


def state(screen: Sketch, member: MemberRef | None = None, *, phash: bool = False) -> Screen:
    """An in-memory captured screen of ``screen``."""
    image, xml = render(screen)
    hierarchy = parse_hierarchy(xml) if screen.with_hierarchy else None
    return Screen(
        SIZE,
        image=image,
        hierarchy=hierarchy,
        activity=screen.activity_name,
        phash=compute_phash(image, hierarchy) if phash else None,
        member=member,
    )


def observation(state: Screen) -> Observation:
    """The step record of an in-memory screen (its file names are never read)."""
    return Observation(
        screenshot="memory.png",
        screen=state.size,
        hierarchy="memory.xml" if state.has_hierarchy else None,
        activity=state.activity,
        phash=state.phash,
    )


Path_ = list[tuple[Sketch, Action]]


def tap_row(screen: Sketch, label: str) -> Action:
    x, y = screen.row_center(label)
    return Action.tap(x, y, screen=SIZE)


def demo(demo_id: str, path: Path_, task_id: str = "task1") -> DemoInput:
    """An in-memory demonstration: (screen, action taken on it) per step; ends with done."""
    steps, states = [], []
    for i, (screen, action) in enumerate(path):
        member = MemberRef(demo_id, i)
        s = state(screen, member)
        states.append(s)
        steps.append(Step(index=i, observation=observation(s), action=action))
    d = Demonstration(
        id=demo_id,
        task_id=task_id,
        instruction="do it",
        steps=tuple(steps),
        status=DemoStatus.COMPLETE,
    )
    return DemoInput(d, tuple(states))


def write_demo(
    demos_root: Path, demo_id: str, path: Path_, task_id: str = "task1", *, phash: bool = True
) -> Path:
    """Write a demonstration to disk with DemoWriter (as the recorder would)."""
    import io

    task = Task(id=task_id, instruction="Do the thing", app=PKG)
    writer = DemoWriter.create(demos_root, task, demo_id=demo_id)
    for i, (screen, action) in enumerate(path):
        image, xml = render(screen)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        hierarchy = parse_hierarchy(xml) if screen.with_hierarchy else None
        writer.add_step(
            buffer.getvalue(),
            xml if screen.with_hierarchy else None,
            action=action,
            activity=screen.activity_name,
            screen=SIZE,
            time=float(i),
            phash=compute_phash(image, hierarchy) if phash else None,
        )
    writer.finish()
    return writer.folder
