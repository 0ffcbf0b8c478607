"""Where the graph editor draws each node of a task graph, so an arrangement outlives the
session. Positions are scene pixels (the top-left of the node's picture); each place keeps
the screens its node held, so a rebuilt graph that gives an id to other screens is laid
out anew rather than put where an unrelated node was.

>>> place = NodePlace("n1", 390.0, -430.5, (MemberRef("d1", 2),))
>>> layout = GraphLayout("font_bigger", (place,))
>>> layout.to_json()["places"]
[{'node': 'n1', 'x': 390, 'y': -430.5, 'members': [['d1', 2]]}]
>>> GraphLayout.from_json(layout.to_json()) == layout
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Self

from graph_builder.errors import RecordError
from graph_builder.model._json import SCHEMA_VERSION, Reader, num
from graph_builder.model.graphs import MemberRef


@dataclass(frozen=True, slots=True)
class NodePlace:
    node_id: str
    x: float
    y: float
    members: tuple[MemberRef, ...] = ()

    def __post_init__(self) -> None:
        if not self.node_id:
            raise RecordError("a node place needs a node id")
        if not (math.isfinite(self.x) and math.isfinite(self.y)):
            raise RecordError(f"the place of {self.node_id} must be finite, got {self.x, self.y}")

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node_id,
            "x": num(self.x),
            "y": num(self.y),
            "members": [m.to_json() for m in self.members],
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "place", source: object = None) -> Self:
        r = Reader(data, where, source)
        members = tuple(
            MemberRef.from_json(m, where=f"{where}.members[{i}]", source=source)
            for i, m in enumerate(r.get("members", list, default=[]))
        )
        return r.build(
            cls,
            node_id=r.get("node", str),
            x=r.get("x", float),
            y=r.get("y", float),
            members=members,
        )


@dataclass(frozen=True, slots=True)
class GraphLayout:
    """The places of one task graph's nodes (``<task>/layout.json``)."""

    task_id: str
    places: tuple[NodePlace, ...] = ()
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        ids = [p.node_id for p in self.places]
        if len(set(ids)) != len(ids):
            raise RecordError(f"the layout of {self.task_id} places a node twice")

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "task_id": self.task_id,
            "places": [p.to_json() for p in self.places],
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "layout", source: object = None) -> Self:
        r = Reader(data, where, source)
        version = r.get("schema_version", int)
        if version > SCHEMA_VERSION:
            raise r.fail(
                "schema_version", f"is {version}; this version reads up to {SCHEMA_VERSION}"
            )
        return r.build(
            cls,
            task_id=r.get("task_id", str),
            places=r.records("places", NodePlace.from_json, default=[]),
            schema_version=version,
        )
