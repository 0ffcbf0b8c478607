"""A person's verdicts on audit groups, kept in the suite beside the graph.

``<suite>/<task>/audit_marks.json`` holds one signed mark per group: ``valid`` (the action
was a sensible way on that nobody demonstrated), ``wrong`` or ``unsure``. A mark names the
node by its members (demonstration steps, which a rebuild keeps) and the target by what
the action aimed at, so it still applies after the graph is rebuilt with new node ids.
Writes are atomic and hold the suite's lock (the same one a build takes).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from evaluator.errors import EvaluatorError
from graph_builder.build import suite_lock
from graph_builder.errors import GraphBuilderError
from graph_builder.io import atomic_write_json, read_json

MARKS_FILE = "audit_marks.json"
SCHEMA_VERSION = 1


class MarksError(EvaluatorError):
    """An audit marks file cannot be read, or a mark is not acceptable."""


class Verdict(StrEnum):
    VALID = "valid"  # a sensible way on the graph does not have yet
    WRONG = "wrong"  # the graph is right to refuse it
    UNSURE = "unsure"


@dataclass(frozen=True, slots=True)
class Target:
    """What an unmatched action aimed at. Points are in ``[0,1000]``; ``radius`` is the
    tolerance a point group was formed with."""

    action_type: str
    element: tuple[str, str, str] | None = None  # resource-id, text, content description
    point: tuple[float, float] | None = None
    value: str = ""  # swipe direction, normalized typed text, key or app name
    radius: float | None = None

    def identity(self) -> str:
        if self.element is not None:
            return f"{self.action_type}|element|{'|'.join(self.element)}"
        if self.value:
            return f"{self.action_type}|{self.value}"
        if self.point is not None:
            return f"{self.action_type}|point|{self.point[0]:.1f},{self.point[1]:.1f}"
        return self.action_type

    def anchor(self) -> Target:
        """The target as a group holds it: the point only for plain point targets."""
        if self.element is not None or self.value:
            return replace(self, point=None)
        return self

    def with_radius(self, radius: float) -> Target:
        return self if self.radius is not None else replace(self, radius=radius)

    def same_as(self, other: Target) -> bool:
        if self.action_type != other.action_type:
            return False
        if self.element is not None or other.element is not None:
            return self.element == other.element
        if self.value or other.value:
            return self.value == other.value
        if self.point is None or other.point is None:
            return self.point == other.point
        return math.dist(self.point, other.point) <= (self.radius or other.radius or 0.0)

    def describe(self) -> str:
        t = self.action_type.replace("_", " ")
        if self.element is not None:
            rid, text, desc = self.element
            said = text or desc or rid.rpartition("/")[2]
            return f"{t} on {said!r}" + (f" ({rid})" if rid and said != rid else "")
        if self.value:
            return f"{t} {self.value!r}" if self.action_type != "swipe" else f"swipe {self.value}"
        if self.point is not None:
            within = f" (within {self.radius:g})" if self.radius is not None else ""
            return f"{t} near ({self.point[0]:g}, {self.point[1]:g}){within}"
        return t

    def to_json(self) -> dict[str, Any]:
        return {
            "action_type": self.action_type,
            "element": (
                dict(zip(("resource_id", "text", "content_desc"), self.element, strict=True))
                if self.element is not None
                else None
            ),
            "point": list(self.point) if self.point is not None else None,
            "value": self.value,
            "radius": self.radius,
        }

    @classmethod
    def from_json(cls, data: Any) -> Target:
        element = data.get("element")
        point = data.get("point")
        return cls(
            action_type=str(data["action_type"]),
            element=(
                (
                    str(element.get("resource_id", "")),
                    str(element.get("text", "")),
                    str(element.get("content_desc", "")),
                )
                if element
                else None
            ),
            point=(float(point[0]), float(point[1])) if point else None,
            value=str(data.get("value") or ""),
            radius=float(data["radius"]) if data.get("radius") is not None else None,
        )


@dataclass(frozen=True, slots=True)
class Mark:
    """One signed verdict on one group; ``history`` keeps the verdicts it replaced."""

    group: str
    verdict: Verdict
    annotator: str
    time: float
    node_members: tuple[tuple[str, int], ...]
    target: Target
    note: str = ""
    history: tuple[dict[str, Any], ...] = ()

    def covers_node(self, members: set[tuple[str, int]]) -> bool:
        """Whether the mark's node is this one: they share a demonstration step."""
        return bool(members.intersection(self.node_members))

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "verdict": self.verdict.value,
            "annotator": self.annotator,
            "time": self.time,
            "note": self.note,
            "node_members": [list(m) for m in self.node_members],
            "target": self.target.to_json(),
            "history": list(self.history),
        }

    @classmethod
    def from_json(cls, data: Any) -> Mark:
        return cls(
            group=str(data["group"]),
            verdict=Verdict(data["verdict"]),
            annotator=str(data["annotator"]),
            time=float(data["time"]),
            note=str(data.get("note") or ""),
            node_members=tuple((str(d), int(s)) for d, s in data["node_members"]),
            target=Target.from_json(data["target"]),
            history=tuple(data.get("history") or ()),
        )


def load_marks(task_dir: Path) -> list[Mark]:
    """The marks of one task (none when the file does not exist)."""
    path = Path(task_dir) / MARKS_FILE
    if not path.exists():
        return []
    try:
        data = read_json(path)
        if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
            raise MarksError(f"{path}: not an audit marks file of schema_version 1")
        return [Mark.from_json(m) for m in data.get("marks") or ()]
    except GraphBuilderError as exc:
        raise MarksError(str(exc)) from exc
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise MarksError(f"{path}: a mark is damaged ({exc!r}); fix or remove it") from exc


def set_mark(
    suite: Path,
    task_id: str,
    *,
    group: str,
    verdict: str,
    annotator: str,
    node_members: tuple[tuple[str, int], ...],
    target: Target,
    note: str = "",
    now: float | None = None,
) -> Mark:
    """Record ``verdict`` on ``group`` (replacing an earlier verdict, which goes into the
    mark's history), atomically and under the suite's lock."""
    if not annotator.strip():
        raise MarksError("a mark must be signed: give --annotator NAME")
    try:
        chosen = Verdict(verdict)
    except ValueError:
        raise MarksError(
            f"verdict {verdict!r} is not one of {', '.join(v.value for v in Verdict)}"
        ) from None
    task_dir = Path(suite) / task_id
    mark = Mark(
        group,
        chosen,
        annotator.strip(),
        time.time() if now is None else now,
        node_members,
        target,
        note,
    )
    with suite_lock(suite, purpose=f"elderbench audit --mark ({annotator.strip()})"):
        marks = load_marks(task_dir)
        previous = next((m for m in marks if m.group == group), None)
        if previous is not None:
            old = {k: v for k, v in previous.to_json().items() if k != "history"}
            mark = replace(
                mark,
                history=(
                    *previous.history,
                    {k: old[k] for k in ("verdict", "annotator", "time", "note")},
                ),
            )
        _write_marks(task_dir, task_id, [*(m for m in marks if m.group != group), mark])
    return mark


def put_back(suite: Path, task_id: str, group: str, previous: Mark | None) -> None:
    """Undo a mark: the group's mark becomes ``previous`` again (its signature, time and
    history as they were), or none when it had none, atomically and under the suite's
    lock. The studio's undo of the last keyboard mark."""
    task_dir = Path(suite) / task_id
    with suite_lock(suite, purpose="the studio's Audit view (undo a mark)"):
        kept = [m for m in load_marks(task_dir) if m.group != group]
        _write_marks(task_dir, task_id, kept if previous is None else [*kept, previous])


def _write_marks(task_dir: Path, task_id: str, marks: list[Mark]) -> None:
    atomic_write_json(
        task_dir / MARKS_FILE,
        {
            "schema_version": SCHEMA_VERSION,
            "task_id": task_id,
            "marks": [m.to_json() for m in sorted(marks, key=lambda m: m.group)],
        },
    )
