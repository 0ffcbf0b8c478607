"""Import a LlamaTouch-style trajectory folder as a demonstration.

The folder holds ``N.png`` (screenshot before action N), ``N.xml`` (uiautomator dump),
``N.activity`` (``pkg/.Activity``, empty or ``null`` when unknown), ``instruction.txt``
(the instruction; a line holding only a number, the trace id, is ignored) and
``eventStructs.txt`` with one action per line:

- ``[Click] Screen Resolution (320, 720), Click Position (204, 170)``: a tap; the
  position is in the given resolution and is scaled to the screenshot's size;
- ``[LongClick] ...`` likewise, a long press; ``[Swipe] Screen Resolution (w, h), ...
  (x1, y1) ... (x2, y2)``: a swipe;
- ``[Type] text`` (or ``[Input] text``): typing;
- ``[Home]``, ``[Back]``: the keys.

There is one action fewer than screenshots: the last screenshot gets ``done``. Tap and
long-press actions carry the element under the point in the screenshot's hierarchy.
"""

from __future__ import annotations

import math
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from PIL import Image

from graph_builder.errors import FormatError, GraphBuilderError
from graph_builder.hierarchy import parse_hierarchy
from graph_builder.importers import ImportResult
from graph_builder.importers.writing import ensure_task, input_file, with_element
from graph_builder.io import TASK_FILE, DemoWriter, check_png_file, read_png
from graph_builder.model import Action, DeviceInfo, validate_id
from graph_builder.phash import compute_phash

_TAG = re.compile(r"^\[(?P<tag>[A-Za-z ]+)\]\s*(?P<rest>.*)$")
_PAIR = re.compile(r"\(\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\)")
_RESOLUTION = re.compile(r"Resolution\s*" + _PAIR.pattern, re.IGNORECASE)

Size = tuple[int, int]


def _points(rest: str, screen: Size) -> list[tuple[float, float]]:
    """Coordinate pairs after the resolution, scaled from it to ``screen``."""
    m = _RESOLUTION.search(rest)
    if not m:
        raise ValueError("no 'Screen Resolution (w, h)'")
    src = (float(m.group(1)), float(m.group(2)))
    if src[0] <= 0 or src[1] <= 0:
        raise ValueError(f"screen resolution {src} must be positive")
    return [
        (float(x) * screen[0] / src[0], float(y) * screen[1] / src[1])
        for x, y in _PAIR.findall(rest[m.end() :])
    ]


def _pointed(kind: Callable[..., Action]) -> Callable[[str, Size], Action]:
    def parse(rest: str, screen: Size) -> Action:
        points = _points(rest, screen)
        if len(points) != 1:
            raise ValueError("expected one 'Position (x, y)'")
        return kind(*points[0], screen=screen)

    return parse


def _swipe(rest: str, screen: Size) -> Action:
    points = _points(rest, screen)
    if len(points) != 2:
        raise ValueError("expected a start and an end position")
    (x1, y1), (x2, y2) = points
    return Action.swipe(x1, y1, x2, y2, screen=screen)


def _type(rest: str, screen: Size) -> Action:
    return Action.type_text(rest)


_EVENTS: dict[str, Callable[[str, Size], Action]] = {
    "click": _pointed(Action.tap),
    "longclick": _pointed(Action.long_press),
    "swipe": _swipe,
    "type": _type,
    "input": _type,
    "home": lambda rest, screen: Action.home(),
    "back": lambda rest, screen: Action.back(),
}


def parse_event(line: str, screen: Size) -> Action:
    """One line of eventStructs.txt as an Action in ``screen`` pixels (ValueError if bad)."""
    m = _TAG.match(line.strip())
    if not m:
        raise ValueError("expected '[Kind] ...'")
    tag = m.group("tag").replace(" ", "").lower()
    if tag not in _EVENTS:
        raise ValueError(f"unknown event [{m.group('tag')}]; known: {', '.join(_EVENTS)}")
    return _EVENTS[tag](m.group("rest").strip(), screen)


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"cannot read: {exc}", source=path) from exc


def import_llamatouch(
    source: Path, *, task_id: str, demos_root: Path, demo_id: str | None = None
) -> ImportResult:
    """Write the trajectory in ``source`` as a complete demonstration of ``task_id``."""
    source = Path(source)
    validate_id(task_id, "task id")
    demo_id = validate_id(demo_id or source.name, "demonstration id")
    if (Path(demos_root) / task_id / demo_id).exists():  # fail before the slow part
        raise GraphBuilderError(
            f"{Path(demos_root) / task_id / demo_id} already exists; choose another --demo-id"
        )
    indices = sorted(int(p.stem) for p in source.glob("*.png") if p.stem.isdigit())
    if not indices or indices != list(range(len(indices))):
        raise FormatError("expected screenshots 0.png, 1.png, ... without gaps", source=source)
    events_text = _read_text(input_file(source, "eventStructs.txt"))
    if events_text is None:
        raise FormatError("eventStructs.txt is missing", source=source)
    events = [line for line in events_text.splitlines() if line.strip()]
    if len(events) != len(indices) - 1:
        raise FormatError(
            f"{len(indices)} screenshots need {len(indices) - 1} events (the last screen "
            f"gets 'done'), but eventStructs.txt has {len(events)}",
            source=source,
        )
    # The file may start with the trace number on a line of its own ("18\r\nPractice ...").
    lines = (_read_text(input_file(source, "instruction.txt")) or "").splitlines()
    instruction = " ".join(t for line in lines if (t := line.strip()) and not t.isdigit())
    if not instruction:
        raise FormatError("instruction.txt is missing or empty", source=source)

    steps = []
    for i in indices:
        png_path, xml_path = input_file(source, f"{i}.png"), input_file(source, f"{i}.xml")
        check_png_file(png_path)  # truncated files and decompression bombs, before decoding
        png = read_png(png_path)
        try:
            with Image.open(png_path) as image:
                image.load()
                screen = image.size
                xml = xml_path.read_bytes() if xml_path.exists() else None
                if xml is not None and not xml.strip():
                    raise FormatError("the hierarchy file is empty", source=xml_path)
                hierarchy = parse_hierarchy(xml, source=xml_path) if xml else None
                phash = compute_phash(image, hierarchy)
        except (OSError, Image.DecompressionBombError) as exc:
            raise FormatError(f"cannot decode the screenshot: {exc}", source=png_path) from exc
        if i < len(events):
            try:
                action = with_element(parse_event(events[i], screen), hierarchy)
                _check_on_screen(action, screen)
            except ValueError as exc:
                raise FormatError(
                    f"eventStructs.txt line {i + 1}: {exc}: {events[i]!r}", source=source
                ) from exc
        else:
            action = Action.done()
        activity = _read_text(input_file(source, f"{i}.activity"))
        activity = None if not activity or activity == "null" else activity
        steps.append((png, xml, action, activity, screen, phash))

    task = ensure_task(demos_root, task_id, instruction, steps[-1][3])
    width, height = steps[0][4]
    writer = DemoWriter.create(
        demos_root,
        task,
        demo_id=demo_id,
        device=DeviceInfo(serial="llamatouch", width=width, height=height),
        source="llamatouch",
    )
    try:
        for index, (png, xml, action, activity, screen, phash) in enumerate(steps):
            writer.add_step(
                png,
                xml,
                action=action,
                activity=activity,
                screen=screen,
                time=float(index),
                phash=phash,
            )
        demo = writer.finish()
    except BaseException:
        shutil.rmtree(writer.folder, ignore_errors=True)  # our own, half-written folder
        raise
    notes: tuple[str, ...] = ()
    if task.instruction != instruction:
        notes = (f"the existing task.json has another instruction: {task.instruction!r}",)
    return ImportResult(demo, writer.folder, Path(demos_root) / task_id / TASK_FILE, notes)


def _check_on_screen(action: Action, screen: tuple[int, int]) -> None:
    """A point off the screen it was recorded on is damage, not a gesture (ValueError)."""
    width, height = screen
    for x, y in ((action.x, action.y), (action.x2, action.y2)):
        if x is None or y is None:
            continue
        if not (math.isfinite(x) and math.isfinite(y)) or not (
            -1 <= x <= width + 1 and -1 <= y <= height + 1
        ):
            raise ValueError(f"the point ({x:g}, {y:g}) is outside the {width}x{height} screen")
