"""Import an AppAgent human demonstration folder as a demonstration.

AppAgent (TencentQQGYLab/AppAgent, ``scripts/step_recorder.py``) records a demonstration
into ``apps/<app>/demos/<demo>/``:

- ``raw_screenshots/<demo>_<k>.png`` and ``xml/<demo>_<k>.xml`` (a uiautomator dump) for
  steps ``k = 1, 2, ...``; ``labeled_screenshots/`` (the same, with numbered tags) is not
  needed;
- ``task_desc.txt``: the instruction;
- ``record.txt``: one line per step: ``tap(N):::UID``, ``long_press(N):::UID``,
  ``text(N:sep:"TEXT"):::UID``, ``swipe(N:sep:DIRECTION):::UID``, and ``stop`` last.

``N`` numbers the screen's interactive elements as AppAgent tagged them: the clickable
elements in document order, then the focusable ones, each kept only when its centre is more
than 30 pixels (AppAgent's ``MIN_DIST``) from every element already listed. ``UID`` is the
element's id as AppAgent makes it (resource id with ``:`` as ``.`` and ``/`` as ``_``, else
``class_width_height``; a short content description appended; the parent's id in front;
the ``index`` attribute last). The element is found by its UID, else by its number.
Taps and long presses hit the element's centre; a swipe starts there and moves a tenth of
the screen width (left, right) or a fifth (up, down), as AppAgent's controller does.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from lxml import etree
from PIL import Image

from graph_builder.errors import FormatError, GraphBuilderError
from graph_builder.importers import ImportResult
from graph_builder.importers.writing import (
    ImportedStep,
    input_file,
    png_bytes,
    write_demonstration,
)
from graph_builder.model import Action, validate_id

MIN_DIST = 30.0
_LINE = re.compile(r"^(?P<kind>tap|long_press|text|swipe)\((?P<args>.*)\):::(?P<uid>.*)$")


@dataclass(frozen=True, slots=True)
class TaggedElement:
    number: int
    uid: str
    box: tuple[int, int, int, int]

    @property
    def center(self) -> tuple[int, int]:
        left, top, right, bottom = self.box
        return (left + right) // 2, (top + bottom) // 2


def _box(node: etree._Element) -> tuple[int, int, int, int]:
    numbers = re.findall(r"-?\d+", node.get("bounds", ""))
    if len(numbers) != 4:
        raise ValueError(f"bounds {node.get('bounds')!r}")
    left, top, right, bottom = (int(v) for v in numbers)
    return left, top, right, bottom


def _element_id(node: etree._Element) -> str:
    left, top, right, bottom = _box(node)
    rid = node.get("resource-id", "")
    uid = (
        rid.replace(":", ".").replace("/", "_")
        if rid
        else (f"{node.get('class', '')}_{right - left}_{bottom - top}")
    )
    desc = node.get("content-desc", "")
    if desc and len(desc) < 20:
        uid += "_" + desc.replace("/", "_").replace(" ", "").replace(":", "_")
    return uid


def tagged_elements(xml: bytes) -> list[TaggedElement]:
    """The screen's elements numbered as AppAgent's recorder tagged them (1-based)."""
    root = etree.fromstring(xml, etree.XMLParser(resolve_entities=False, no_network=True))
    picked: list[tuple[str, tuple[int, int, int, int]]] = []

    def collect(attribute: str) -> list[tuple[str, tuple[int, int, int, int]]]:
        found: list[tuple[str, tuple[int, int, int, int]]] = []
        for node in root.iter("node"):
            if node.get(attribute) != "true":
                continue
            parent = node.getparent()
            uid = _element_id(node)
            if parent is not None and parent.tag == "node":
                uid = f"{_element_id(parent)}_{uid}"
            uid += f"_{node.get('index', '')}"
            box = _box(node)
            center = ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)
            if all(math.dist(center, _center(b)) > MIN_DIST for _, b in found):
                found.append((uid, box))
        return found

    picked = collect("clickable")
    for uid, box in collect("focusable"):
        if all(math.dist(_center(box), _center(b)) > MIN_DIST for _, b in picked):
            picked.append((uid, box))
    return [TaggedElement(i, uid, box) for i, (uid, box) in enumerate(picked, start=1)]


def _center(box: tuple[int, int, int, int]) -> tuple[int, int]:
    return (box[0] + box[2]) // 2, (box[1] + box[3]) // 2


def parse_record_line(line: str) -> tuple[str, int, str, str]:
    """``tap(3):::uid`` -> (kind, number, argument, uid); ValueError when malformed."""
    m = _LINE.match(line.strip())
    if not m:
        raise ValueError('expected tap(N), long_press(N), text(N:sep:"...") or swipe(N:sep:dir)')
    number, _, argument = m.group("args").partition(":sep:")
    if not number.strip().isdigit():
        raise ValueError(f"element number {number!r}")
    if m.group("kind") == "text":
        argument = argument.strip()
        if len(argument) >= 2 and argument[0] == argument[-1] == '"':
            argument = argument[1:-1]
    return m.group("kind"), int(number), argument.strip(), m.group("uid").strip()


def record_action(line: str, elements: list[TaggedElement], screen: tuple[int, int]) -> Action:
    kind, number, argument, uid = parse_record_line(line)
    element = next((e for e in elements if e.uid == uid), None)
    if element is None:
        element = next((e for e in elements if e.number == number), None)
    if element is None:
        raise ValueError(f"no element {uid!r} (number {number}) on the screen")
    x, y = element.center
    if kind == "tap":
        return Action.tap(x, y, screen=screen)
    if kind == "long_press":
        return Action.long_press(x, y, screen=screen, duration_ms=1000)
    if kind == "text":
        return Action.type_text(argument)
    unit = screen[0] // 10
    offsets = {"up": (0, -2 * unit), "down": (0, 2 * unit), "left": (-unit, 0), "right": (unit, 0)}
    if argument not in offsets:
        raise ValueError(f"swipe direction {argument!r}")
    dx, dy = offsets[argument]
    return Action.swipe(x, y, x + dx, y + dy, screen=screen)


def import_appagent(
    source: Path, *, task_id: str, demos_root: Path, demo_id: str | None = None
) -> ImportResult:
    """Write the AppAgent demonstration in ``source`` as a complete demonstration."""
    source = Path(source)
    validate_id(task_id, "task id")
    demo_id = validate_id(demo_id or source.name, "demonstration id")
    if (Path(demos_root) / task_id / demo_id).exists():
        raise GraphBuilderError(
            f"{Path(demos_root) / task_id / demo_id} already exists; choose another --demo-id"
        )
    try:
        lines = input_file(source, "record.txt").read_text(encoding="utf-8").splitlines()
        instruction = input_file(source, "task_desc.txt").read_text(encoding="utf-8").strip()
    except FileNotFoundError as exc:
        raise FormatError(
            f"not an AppAgent demonstration: {Path(exc.filename).name} is missing", source=source
        ) from None
    lines = [ln.strip() for ln in lines if ln.strip()]
    if not lines or lines[-1] != "stop":
        raise FormatError("record.txt must end with 'stop'", source=source / "record.txt")
    if not instruction:
        raise FormatError("task_desc.txt is empty", source=source / "task_desc.txt")
    steps: list[ImportedStep] = []
    for k, line in enumerate(lines, start=1):
        png_path = input_file(source, f"raw_screenshots/{source.name}_{k}.png")
        xml_path = input_file(source, f"xml/{source.name}_{k}.xml")
        if not png_path.is_file() or not xml_path.is_file():
            raise FormatError(
                f"step {k}: raw_screenshots/{png_path.name} or xml/{xml_path.name} is missing",
                source=source,
            )
        png = png_bytes(png_path)
        xml = xml_path.read_bytes()
        if line == "stop":
            action = Action.done()
        else:
            with Image.open(png_path) as image:
                screen = image.size
            try:
                action = record_action(line, tagged_elements(xml), screen)
            except (ValueError, etree.XMLSyntaxError) as exc:
                raise FormatError(f"record.txt line {k}: {exc}: {line!r}", source=source) from exc
        steps.append(ImportedStep(png, xml, action, None, float(k - 1), xml_path))
    return write_demonstration(
        steps,
        demos_root=demos_root,
        task_id=task_id,
        demo_id=demo_id,
        instruction=instruction,
        source_name="appagent",
    )
