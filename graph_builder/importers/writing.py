"""What every demonstration importer does once it has read its format: write the steps.

An importer turns its format into ``ImportedStep``s (screenshot PNG, uiautomator XML,
action, activity, time) and calls ``write_demonstration``, which computes each screen's
perceptual hash, writes the demonstration with DemoWriter (a failure removes the half
written folder) and leaves a task.json beside the demonstrations when the task has none.
Every file an importer reads goes through ``input_file``, which keeps it inside the input.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from PIL import Image

from graph_builder.errors import FormatError, GraphBuilderError
from graph_builder.hierarchy import Hierarchy, parse_hierarchy
from graph_builder.importers import ImportResult
from graph_builder.io import TASK_FILE, DemoWriter, confined, load_task, save_task
from graph_builder.model import Action, DeviceInfo, Task
from graph_builder.phash import compute_phash


@dataclass(frozen=True, slots=True)
class ImportedStep:
    png: bytes
    xml: str | bytes | None
    action: Action
    activity: str | None
    time: float
    source: Path  # the file the screenshot came from, for error messages


def input_file(folder: Path, path: Path | str, *, source: Path | None = None) -> Path:
    """A file an importer reads from its input ``folder``: ``path`` relative to it, or a
    path below it. Refused with a FormatError naming ``source`` (the file that named the
    path, else the folder) when it climbs out with '..', is absolute while not below the
    folder, or leads out through a symbolic link: an import must never copy a file that
    is not part of its input into a suite or a demonstration."""
    folder = Path(folder)
    relative = path
    if isinstance(path, Path) and path.is_relative_to(folder):
        relative = path.relative_to(folder).as_posix()
    return confined(folder, str(relative), source=source or folder)


def png_bytes(path: Path) -> bytes:
    """A screenshot file (PNG, JPEG, ...) as PNG bytes; a PNG is kept byte for byte."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FormatError(
            f"cannot read the screenshot: {exc.strerror or exc}", source=path
        ) from exc
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return data
    try:
        with Image.open(io.BytesIO(data)) as image:
            out = io.BytesIO()
            image.convert("RGB").save(out, format="PNG")
    except (OSError, Image.DecompressionBombError) as exc:
        raise FormatError(f"cannot decode the screenshot: {exc}", source=path) from exc
    return out.getvalue()


def with_element(action: Action, hierarchy: Hierarchy | None) -> Action:
    """A pointed action with the element under its point (screenshot pixels = dump pixels),
    unless the format already named the element."""
    if action.element is not None:
        return action
    if not action.type.is_pointed or hierarchy is None or action.point is None:
        return action
    element = hierarchy.element_at(*action.point)
    return action if element is None else replace(action, element=element.ref())


def ensure_task(demos_root: Path, task_id: str, instruction: str, activity: str | None) -> Task:
    """The task.json beside the demos: kept when present, else made from the instruction."""
    folder = Path(demos_root) / task_id
    if (folder / TASK_FILE).exists():
        return load_task(folder)
    package = activity.partition("/")[0] if activity and "/" in activity else ""
    task = Task(id=task_id, instruction=instruction, app=package)
    try:
        save_task(task, folder)
    except OSError as exc:
        raise GraphBuilderError(f"cannot write {folder / TASK_FILE}: {exc}") from exc
    return task


def write_demonstration(
    steps: Sequence[ImportedStep],
    *,
    demos_root: Path,
    task_id: str,
    demo_id: str,
    instruction: str,
    source_name: str,
    notes: Sequence[str] = (),
) -> ImportResult:
    """Write ``steps`` (the last one's action is ``done``) as a complete demonstration."""
    prepared = []
    for step in steps:
        with Image.open(io.BytesIO(step.png)) as image:
            image.load()
            screen = image.size
            hierarchy = parse_hierarchy(step.xml, source=step.source) if step.xml else None
            phash = compute_phash(image, hierarchy)
        prepared.append((step, with_element(step.action, hierarchy), screen, phash))
    task = ensure_task(demos_root, task_id, instruction, steps[-1].activity)
    width, height = prepared[0][2]
    writer = DemoWriter.create(
        demos_root,
        task,
        demo_id=demo_id,
        device=DeviceInfo(serial=source_name, width=width, height=height),
        source=source_name,
    )
    try:
        for step, action, screen, phash in prepared:
            writer.add_step(
                step.png,
                step.xml,
                action=action,
                activity=step.activity,
                screen=screen,
                time=step.time,
                phash=phash,
            )
        demo = writer.finish()
    except BaseException:
        shutil.rmtree(writer.folder, ignore_errors=True)  # our own, half-written folder
        raise
    out_notes = list(notes)
    if task.instruction != instruction:
        out_notes.append(f"the existing task.json has another instruction: {task.instruction!r}")
    return ImportResult(
        demo, writer.folder, Path(demos_root) / task_id / TASK_FILE, tuple(out_notes)
    )
