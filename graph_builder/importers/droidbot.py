"""Import a DroidBot (or Humanoid, which writes the same output) run as a demonstration.

The output folder holds (format as DroidBot writes it, see its ``device_state.py`` and
``input_event.py``):

- ``states/state_<tag>.json``: one screen: ``state_str`` (its id), ``foreground_activity``,
  ``width``/``height`` and ``views``, a flat list of elements with ``temp_id``, ``parent``
  (-1 for a root), ``children``, ``bounds`` ``[[x1, y1], [x2, y2]]``, ``class``,
  ``resource_id``, ``text``, ``content_description`` and the usual flags;
- ``states/screen_<tag>.jpg`` (or ``.png``): its screenshot;
- ``events/event_<tag>.json``: one input: ``start_state`` and ``stop_state`` (state ids)
  and ``event`` with ``event_type``: ``touch`` / ``long_touch`` (at ``x, y``, else the
  centre of ``view``), ``swipe`` (``start_x``... or views), ``scroll`` (``direction``
  UP/DOWN/LEFT/RIGHT inside ``view``, as DroidBot drags: UP moves the finger down), ``set_text``
  (``text``), ``key`` (``name`` BACK or HOME), and the app-level ``kill_app`` and
  ``intent``;
- ``utg.js``: the transition graph DroidBot drew; not needed here.

Events are taken in time order. App-level events before the first screen input (DroidBot
starts by killing and launching the app) are skipped; one after it ends the demonstration
there, since a demonstration step needs a screen action. Each step's screen is the latest
state file with the event's ``start_state`` written before the event; the last screen is
the last event's ``stop_state``, with ``done``. The views become a uiautomator XML dump
(the same elements and bounds), so the builder compares hierarchies as for a recording.
``instruction.txt`` in the folder gives the task's instruction (DroidBot has none).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from graph_builder.errors import FormatError, GraphBuilderError
from graph_builder.importers import ImportResult
from graph_builder.importers.writing import (
    ImportedStep,
    input_file,
    png_bytes,
    write_demonstration,
)
from graph_builder.io import read_json
from graph_builder.model import Action, Bounds, ElementRef, validate_id

_APP_EVENTS = ("kill_app", "intent", "manual", "spawn", "exit")


@dataclass(frozen=True, slots=True)
class _State:
    tag: str
    json_path: Path
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.data.get("state_str", ""))

    def screenshot(self) -> Path:
        for suffix in (".jpg", ".png", ".jpeg"):
            path = self.json_path.with_name(f"screen_{self.tag}{suffix}")
            if path.is_file():
                return path
        raise FormatError(f"no screenshot screen_{self.tag}.jpg beside it", source=self.json_path)


def _read_json(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise FormatError("expected a JSON object", source=path)
    return data


def _tag(path: Path, prefix: str) -> str:
    return path.stem.removeprefix(prefix)


def views_to_xml(views: list[dict[str, Any]], source: Path) -> str:
    """DroidBot's flat view list as a uiautomator dump with the same elements."""
    by_id: dict[int, dict[str, Any]] = {}
    for view in views:
        if not isinstance(view, dict) or not isinstance(view.get("temp_id"), int):
            raise FormatError("a view without an integer temp_id", source=source)
        by_id[view["temp_id"]] = view

    def flag(view: dict[str, Any], key: str) -> str:
        return "true" if view.get(key) else "false"

    def node(view: dict[str, Any], index: int, depth: int) -> str:
        if depth > 200:
            raise FormatError("the views nest deeper than 200 levels (a cycle?)", source=source)
        bounds = view.get("bounds") or [[0, 0], [0, 0]]
        try:
            (x1, y1), (x2, y2) = ((int(a), int(b)) for a, b in bounds)
        except (TypeError, ValueError) as exc:
            raise FormatError(f"view {view['temp_id']}: bounds {bounds!r}", source=source) from exc
        attrs = {
            "index": str(index),
            "text": view.get("text") or "",
            "resource-id": view.get("resource_id") or "",
            "class": view.get("class") or "",
            "package": view.get("package") or "",
            "content-desc": view.get("content_description") or "",
            "checkable": flag(view, "checkable"),
            "checked": flag(view, "checked"),
            "clickable": flag(view, "clickable"),
            "enabled": flag(view, "enabled"),
            "focusable": flag(view, "focusable"),
            "focused": flag(view, "focused"),
            "scrollable": flag(view, "scrollable"),
            "long-clickable": flag(view, "long_clickable"),
            "password": flag(view, "is_password"),
            "selected": flag(view, "selected"),
            "visible-to-user": "true" if view.get("visible", True) else "false",
            "bounds": f"[{x1},{y1}][{x2},{y2}]",
        }
        children = [by_id[c] for c in view.get("children") or () if c in by_id]
        inner = "".join(node(c, i, depth + 1) for i, c in enumerate(children))
        text = " ".join(f"{k}={quoteattr(str(v))}" for k, v in attrs.items())
        return f"<node {text}>{inner}</node>" if inner else f"<node {text}/>"

    roots = [v for v in by_id.values() if v.get("parent", -1) not in by_id]
    body = "".join(node(v, i, 0) for i, v in enumerate(roots))
    head = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
    return f'{head}<hierarchy rotation="0">{body}</hierarchy>'


def _view_center(view: object) -> tuple[float, float] | None:
    if not isinstance(view, dict):
        return None
    try:
        (x1, y1), (x2, y2) = view["bounds"]
        return (float(x1) + float(x2)) / 2, (float(y1) + float(y2)) / 2
    except (KeyError, TypeError, ValueError):
        return None


def _element(view: object) -> ElementRef | None:
    """The view DroidBot aimed at, as the element stored on the action."""
    if not isinstance(view, dict) or _view_center(view) is None:
        return None
    (x1, y1), (x2, y2) = view["bounds"]
    return ElementRef(
        bounds=Bounds(float(x1), float(y1), max(float(x2), float(x1)), max(float(y2), float(y1))),
        resource_id=view.get("resource_id") or "",
        text=view.get("text") or "",
        content_desc=view.get("content_description") or "",
        class_name=view.get("class") or "",
    )


def _point(event: dict[str, Any], x: str, y: str, view: str) -> tuple[float, float]:
    if isinstance(event.get(x), int | float) and isinstance(event.get(y), int | float):
        return float(event[x]), float(event[y])
    center = _view_center(event.get(view))
    if center is None:
        raise ValueError(f"no {x}/{y} and no {view} with bounds")
    return center


def parse_event(event: dict[str, Any], screen: tuple[int, int]) -> Action:
    """One DroidBot input event as an Action in screen pixels (ValueError if not a screen input)."""
    kind = event.get("event_type")
    if kind in ("touch", "long_touch"):
        x, y = _point(event, "x", "y", "view")
        make = Action.tap if kind == "touch" else Action.long_press
        return make(x, y, screen=screen, element=_element(event.get("view")))
    if kind == "swipe":
        x1, y1 = _point(event, "start_x", "start_y", "start_view")
        x2, y2 = _point(event, "end_x", "end_y", "end_view")
        return Action.swipe(x1, y1, x2, y2, screen=screen)
    if kind == "scroll":
        view = event.get("view")
        x, y = _view_center(view) or (screen[0] / 2, screen[1] / 2)
        if isinstance(view, dict) and _view_center(view) is not None:
            (vx1, vy1), (vx2, vy2) = view["bounds"]
            width, height = float(vx2) - float(vx1), float(vy2) - float(vy1)
        else:
            width, height = float(screen[0]), float(screen[1])
        dx, dy = width * 2 / 5, height * 2 / 5
        moves = {"UP": (0, -dy, 0, dy), "DOWN": (0, dy, 0, -dy), "LEFT": (-dx, 0, dx, 0)}
        moves["RIGHT"] = (dx, 0, -dx, 0)
        direction = str(event.get("direction", "DOWN")).upper()
        if direction not in moves:
            raise ValueError(f"unknown scroll direction {direction!r}")
        a, b, c, d = moves[direction]
        return Action.swipe(x + a, y + b, x + c, y + d, screen=screen)
    if kind == "set_text":
        return Action.type_text(str(event.get("text") or ""))
    if kind == "key":
        name = str(event.get("name", "")).upper()
        if name == "BACK":
            return Action.back()
        if name == "HOME":
            return Action.home()
        raise ValueError(f"key {name!r} is not a demonstration action (BACK or HOME)")
    raise ValueError(f"event type {kind!r} is not a screen input")


def import_droidbot(
    source: Path, *, task_id: str, demos_root: Path, demo_id: str | None = None
) -> ImportResult:
    """Write the DroidBot run in ``source`` as a complete demonstration of ``task_id``."""
    source = Path(source)
    validate_id(task_id, "task id")
    demo_id = validate_id(demo_id or source.name, "demonstration id")
    if (Path(demos_root) / task_id / demo_id).exists():
        raise GraphBuilderError(
            f"{Path(demos_root) / task_id / demo_id} already exists; choose another --demo-id"
        )
    state_files = [input_file(source, p) for p in sorted((source / "states").glob("state_*.json"))]
    event_files = [input_file(source, p) for p in sorted((source / "events").glob("event_*.json"))]
    if not state_files or not event_files:
        raise FormatError(
            "not a DroidBot output folder: expected states/state_*.json and events/event_*.json",
            source=source,
        )
    states = [_State(_tag(p, "state_"), p, _read_json(p)) for p in state_files]
    notes: list[str] = []

    def state_before(state_id: str, tag: str, *, after: bool = False) -> _State:
        same = [s for s in states if s.id == state_id]
        if not same:
            raise FormatError(f"no state file has state_str {state_id!r}", source=source)
        if after:
            later = [s for s in same if s.tag >= tag]
            return later[0] if later else same[-1]
        earlier = [s for s in same if s.tag <= tag]
        return earlier[-1] if earlier else same[0]

    pairs: list[tuple[_State, dict[str, Any], Path]] = []
    last_stop: tuple[str, str] | None = None
    for path in event_files:
        record = _read_json(path)
        event = record.get("event")
        kind = event.get("event_type") if isinstance(event, dict) else None
        if not isinstance(event, dict) or kind in _APP_EVENTS:
            if pairs:
                notes.append(f"stopped before {path.name} ({kind}): not a screen action")
                break
            notes.append(f"skipped {path.name} ({kind}) before the first screen action")
            continue
        tag = _tag(path, "event_")
        start = state_before(str(record.get("start_state", "")), tag)
        pairs.append((start, event, path))
        last_stop = (str(record.get("stop_state", "")), tag)
    if not pairs or last_stop is None:
        raise FormatError("the run has no screen action (touch, scroll, text, key)", source=source)

    steps: list[ImportedStep] = []
    for index, (state, event, path) in enumerate(pairs):
        screen = _screen(state)
        try:
            action = parse_event(event, screen)
        except ValueError as exc:
            raise FormatError(f"{exc}", source=path) from exc
        steps.append(_step(source, state, action, float(index)))
    final = state_before(*last_stop, after=True)
    steps.append(_step(source, final, Action.done(), float(len(pairs))))

    instruction = ""
    if (source / "instruction.txt").is_file():
        instruction = input_file(source, "instruction.txt").read_text(encoding="utf-8").strip()
    if not instruction:
        package = (steps[-1].activity or "").partition("/")[0] or "the app"
        instruction = f"(DroidBot run of {package}; write the task's instruction here)"
        notes.append("the run has no instruction.txt; edit the instruction in task.json")
    return write_demonstration(
        steps,
        demos_root=demos_root,
        task_id=task_id,
        demo_id=demo_id,
        instruction=instruction,
        source_name="droidbot",
        notes=notes,
    )


def _screen(state: _State) -> tuple[int, int]:
    width, height = state.data.get("width"), state.data.get("height")
    if isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0:
        return width, height
    raise FormatError("the state has no positive width and height", source=state.json_path)


def _step(source: Path, state: _State, action: Action, time: float) -> ImportedStep:
    views = state.data.get("views")
    if not isinstance(views, list):
        raise FormatError("the state has no views list", source=state.json_path)
    activity = state.data.get("foreground_activity")
    return ImportedStep(
        png=png_bytes(input_file(source, state.screenshot())),
        xml=views_to_xml(views, state.json_path),
        action=action,
        activity=str(activity) if activity else None,
        time=time,
        source=state.json_path,
    )
