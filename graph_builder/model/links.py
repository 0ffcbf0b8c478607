"""Merge constraints: what a person decided about two demonstration steps, signed.

A **must-link** says the two steps' screens are one state, a **cannot-link** that they are
two. ``graph_builder.constraints`` keeps them in ``<task>/constraints.json`` and applies
them in every build.

>>> c = Constraint(LinkKind.CANNOT_LINK, MemberRef("d2", 1), MemberRef("d1", 4), "ann",
...                "2026-12-01T15:00:00Z")
>>> [str(m) for m in c.pair], c.describe()
(['d1#4', 'd2#1'], 'cannot-link d1#4 ~ d2#1 (ann, 2026-12-01T15:00:00Z)')
>>> ConstraintSet.from_json(ConstraintSet("t", (c,)).to_json()).constraints == (c,)
True
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Self

from graph_builder.errors import FormatError, RecordError
from graph_builder.model._json import SCHEMA_VERSION, Reader
from graph_builder.model.graphs import MemberRef


class LinkKind(StrEnum):
    MUST_LINK = "must_link"  # the two screens are one state
    CANNOT_LINK = "cannot_link"  # the two screens are two states

    @property
    def words(self) -> str:
        return self.value.replace("_", "-")


def now_utc() -> str:
    """The time a decision is signed with: ISO 8601, UTC, to the second."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Constraint:
    """One signed decision about two demonstration steps (stored with ``a < b``)."""

    kind: LinkKind
    a: MemberRef
    b: MemberRef
    annotator: str
    decided_at: str
    note: str = ""  # what the person saw, e.g. the comparison's reason

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", LinkKind(self.kind))
        if self.a == self.b:
            raise RecordError(f"a constraint needs two different steps, got {self.a} twice")
        if self.b < self.a:
            a, b = self.b, self.a
            object.__setattr__(self, "a", a)
            object.__setattr__(self, "b", b)
        if not self.annotator.strip():
            raise RecordError("a constraint must be signed with the annotator's id")
        try:
            dt.datetime.fromisoformat(self.decided_at)
        except ValueError:
            raise RecordError(
                f"decided_at must be an ISO 8601 time, got {self.decided_at!r}"
            ) from None

    @property
    def pair(self) -> tuple[MemberRef, MemberRef]:
        return self.a, self.b

    def describe(self) -> str:
        return f"{self.kind.words} {self.a} ~ {self.b} ({self.annotator}, {self.decided_at})"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "annotator": self.annotator,
            "decided_at": self.decided_at,
        }
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_json(cls, data: object, *, where: str = "constraint", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            kind=r.enum("kind", LinkKind),
            a=r.record("a", MemberRef.from_json, kind=list),
            b=r.record("b", MemberRef.from_json, kind=list),
            annotator=r.get("annotator", str),
            decided_at=r.get("decided_at", str),
            note=r.get("note", str, default=""),
        )


def ordered_pair(a: MemberRef, b: MemberRef) -> tuple[MemberRef, MemberRef]:
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True, slots=True)
class ConstraintSet:
    """The constraints of one task, in the order they were decided."""

    task_id: str
    constraints: tuple[Constraint, ...] = ()
    schema_version: int = SCHEMA_VERSION

    def get(self, a: MemberRef, b: MemberRef) -> Constraint | None:
        pair = ordered_pair(a, b)
        return next((c for c in self.constraints if c.pair == pair), None)

    def decide(self, constraint: Constraint) -> ConstraintSet:
        """Add a decision; it replaces an earlier one on the same pair."""
        kept = tuple(c for c in self.constraints if c.pair != constraint.pair)
        return ConstraintSet(self.task_id, (*kept, constraint), self.schema_version)

    def withdraw(self, a: MemberRef, b: MemberRef) -> ConstraintSet:
        pair = ordered_pair(a, b)
        kept = tuple(c for c in self.constraints if c.pair != pair)
        return ConstraintSet(self.task_id, kept, self.schema_version)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "task_id": self.task_id,
            "constraints": [c.to_json() for c in self.constraints],
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "constraints", source: object = None) -> Self:
        r = Reader(data, where, source)
        version = r.get("schema_version", int)
        if version > SCHEMA_VERSION:
            raise r.fail(
                "schema_version", f"is {version}; this version reads up to {SCHEMA_VERSION}"
            )
        found = cls(
            task_id=r.get("task_id", str),
            constraints=r.records("constraints", Constraint.from_json, default=[]),
            schema_version=version,
        )
        pairs = [c.pair for c in found.constraints]
        if len(set(pairs)) != len(pairs):
            raise FormatError(f"{where}: a pair of steps is decided twice", source=source)
        return found
