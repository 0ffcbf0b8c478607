"""Task graphs: states merged from demonstrations (nodes), the actions between them
(edges, each with its matching rule as data), and the editor's manual decisions (pins).

>>> start = Node("n0", NodeKind.START, "nodes/n0.png", (1080, 2400))
>>> done = Node("n1", NodeKind.DONE, "nodes/n1.png", (1080, 2400))
>>> rule = MatchRule(ActionType.TAP, bounds=Bounds(100, 200, 400, 260))
>>> graph = TaskGraph("font_size", (start, done), (Edge("e0", "n0", "n1", rule),),
...                   meta={"demos": ["d1"]})
>>> [e.target for e in graph.out_edges(graph.start.id)], graph.meta["demos"]
(['n1'], ('d1',))
>>> TaskGraph.from_json(graph.to_json()) == graph
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Self

from graph_builder.errors import FormatError, RecordError
from graph_builder.model._json import SCHEMA_VERSION, Reader, freeze, num, thaw
from graph_builder.model.actions import Action, ActionType, SwipeDirection
from graph_builder.model.geometry import Bounds, Point, Size
from graph_builder.model.ids import validate_id


class NodeKind(StrEnum):
    START = "start"
    STATE = "state"
    DONE = "done"


@dataclass(frozen=True, slots=True, order=True)
class MemberRef:
    """One demonstration step whose observation belongs to a node."""

    demo_id: str
    step: int

    def to_json(self) -> list[Any]:
        return [self.demo_id, self.step]

    @classmethod
    def from_json(cls, data: object, *, where: str = "member", source: object = None) -> Self:
        if (
            not isinstance(data, list)
            or len(data) != 2
            or not isinstance(data[0], str)
            or not isinstance(data[1], int)
        ):
            raise FormatError(f"{where} must be [demo_id, step], got {data!r}", source=source)
        return cls(data[0], data[1])

    def __str__(self) -> str:
        return f"{self.demo_id}#{self.step}"


@dataclass(frozen=True, slots=True)
class Node:
    """An equivalence class of UI states. Image paths are relative to the task folder."""

    id: str
    kind: NodeKind
    screenshot: str
    screen: Size
    members: tuple[MemberRef, ...] = ()
    hierarchy: str | None = None
    activity: str | None = None
    phash: str | None = None

    def __post_init__(self) -> None:
        validate_id(self.id, "node id")
        object.__setattr__(self, "kind", NodeKind(self.kind))
        object.__setattr__(self, "members", tuple(self.members))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            "screenshot": self.screenshot,
            "hierarchy": self.hierarchy,
            "activity": self.activity,
            "screen": list(self.screen),
            "phash": self.phash,
            "members": [m.to_json() for m in self.members],
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "node", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            id=r.get("id", str),
            kind=r.enum("kind", NodeKind),
            screenshot=r.get("screenshot", str),
            hierarchy=r.get("hierarchy", str, default=None, null=True),
            activity=r.get("activity", str, default=None, null=True),
            screen=r.size("screen"),
            phash=r.get("phash", str, default=None, null=True),
            members=r.records("members", MemberRef.from_json, default=[]),
        )


@dataclass(frozen=True, slots=True)
class MatchRule:
    """How an agent's action is matched against an edge. Geometry is in ``[0,1000]`` space.

    Pointed actions match inside ``bounds`` or within ``radius`` of any of ``points``;
    swipes match by ``direction``; typed text matches any of ``texts`` with a rapidfuzz
    ratio of at least ``text_threshold``; back, home and wait match by type.
    """

    action_type: ActionType
    bounds: Bounds | None = None
    points: tuple[Point, ...] = ()
    radius: float = 50.0
    direction: SwipeDirection | None = None
    texts: tuple[str, ...] = ()
    text_threshold: float = 80.0

    def __post_init__(self) -> None:
        t = ActionType(self.action_type)
        object.__setattr__(self, "action_type", t)
        if self.direction is not None:
            object.__setattr__(self, "direction", SwipeDirection(self.direction))
        object.__setattr__(self, "points", tuple((float(x), float(y)) for x, y in self.points))
        object.__setattr__(self, "texts", tuple(self.texts))
        if self.radius < 0:
            raise RecordError("radius must not be negative")
        if not 0 <= self.text_threshold <= 100:
            raise RecordError("text_threshold must be between 0 and 100")

    def problems(self) -> list[str]:
        """Why this rule cannot match anything of its type (empty when it is usable)."""
        t = self.action_type
        if not t.touches_device:
            return [f"'{t.value}' is a decision about the task, not an edge"]
        if t is ActionType.LAUNCH:
            return ["'launch' matches an edge by the app its target belongs to, not by a rule"]
        if t is ActionType.KEY and not self.texts:
            return ["a key rule needs at least one key name"]
        if t.is_pointed and self.bounds is None and not self.points:
            return [f"a {t.value} rule needs element bounds or at least one point"]
        if t is ActionType.SWIPE and self.direction is None:
            return ["a swipe rule needs a direction"]
        if t is ActionType.TYPE and not self.texts:
            return ["a type rule needs at least one accepted text"]
        return []

    def to_json(self) -> dict[str, Any]:
        return {
            "action_type": self.action_type.value,
            "bounds": self.bounds.as_list() if self.bounds else None,
            "points": [[num(x), num(y)] for x, y in self.points],
            "radius": num(self.radius),
            "direction": self.direction.value if self.direction else None,
            "texts": list(self.texts),
            "text_threshold": num(self.text_threshold),
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "rule", source: object = None) -> Self:
        r = Reader(data, where, source)
        raw_bounds = r.get("bounds", list, default=None, null=True)
        raw_points = r.get("points", list, default=[])
        try:
            bounds = Bounds.from_list(raw_bounds) if raw_bounds is not None else None
        except ValueError as exc:
            raise r.fail("bounds", str(exc)) from exc
        if not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(v, int | float) for v in p)
            for p in raw_points
        ):
            raise r.fail("points", "must be a list of [x, y] pairs")
        direction = r.get("direction", str, default=None, null=True)
        return r.build(
            cls,
            action_type=r.enum("action_type", ActionType),
            bounds=bounds,
            points=tuple((float(x), float(y)) for x, y in raw_points),
            radius=r.get("radius", float, default=50.0),
            direction=direction,
            texts=r.str_list("texts"),
            text_threshold=r.get("text_threshold", float, default=80.0),
        )


@dataclass(frozen=True, slots=True)
class EdgeSupport:
    """A demonstrated action that supports an edge, in the demo's device pixels."""

    member: MemberRef
    action: Action

    def to_json(self) -> dict[str, Any]:
        return {"member": self.member.to_json(), "action": self.action.to_json()}

    @classmethod
    def from_json(cls, data: object, *, where: str = "support", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            member=r.record("member", MemberRef.from_json, kind=list),
            action=r.record("action", Action.from_json),
        )


@dataclass(frozen=True, slots=True)
class Edge:
    id: str
    source: str
    target: str
    rule: MatchRule
    support: tuple[EdgeSupport, ...] = ()

    def __post_init__(self) -> None:
        validate_id(self.id, "edge id")
        object.__setattr__(self, "support", tuple(self.support))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "target": self.target,
            "rule": self.rule.to_json(),
            "support": [s.to_json() for s in self.support],
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "edge", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            id=r.get("id", str),
            source=r.get("source", str),
            target=r.get("target", str),
            rule=r.record("rule", MatchRule.from_json),
            support=r.records("support", EdgeSupport.from_json, default=[]),
        )


class PinKind(StrEnum):
    TOGETHER = "together"  # a manual merge: these members stay in one node
    APART = "apart"  # a manual split: these members never share a node with the others


@dataclass(frozen=True, slots=True)
class Pin:
    """A manual decision from the editor, kept when the graph is rebuilt."""

    kind: PinKind
    members: tuple[MemberRef, ...]
    others: tuple[MemberRef, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", PinKind(self.kind))
        object.__setattr__(self, "members", tuple(self.members))
        object.__setattr__(self, "others", tuple(self.others))

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "members": [m.to_json() for m in self.members],
            "others": [m.to_json() for m in self.others],
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "pin", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            kind=r.enum("kind", PinKind),
            members=r.records("members", MemberRef.from_json, default=[]),
            others=r.records("others", MemberRef.from_json, default=[]),
        )


@dataclass(frozen=True, slots=True)
class TaskGraph:
    """A multi-path task graph. The networkx view (``graph_builder.graph_index``) is an index."""

    task_id: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...] = ()
    pins: tuple[Pin, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        validate_id(self.task_id, "task id")
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "edges", tuple(self.edges))
        object.__setattr__(self, "pins", tuple(self.pins))
        # JSON objects inside become read-only mappings, lists tuples; to_json() thaws them.
        object.__setattr__(self, "meta", freeze(self.meta))
        for what, items in (("node", self.nodes), ("edge", self.edges)):
            ids = [item.id for item in items]
            if len(ids) != len(set(ids)):
                dupes = sorted({i for i in ids if ids.count(i) > 1})
                raise RecordError(f"duplicate {what} ids: {', '.join(dupes)}")

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(f"no node {node_id!r} in the graph of {self.task_id}")

    def edge(self, edge_id: str) -> Edge:
        for e in self.edges:
            if e.id == edge_id:
                return e
        raise KeyError(f"no edge {edge_id!r} in the graph of {self.task_id}")

    @property
    def start(self) -> Node | None:
        return next((n for n in self.nodes if n.kind is NodeKind.START), None)

    @property
    def done_nodes(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.kind is NodeKind.DONE)

    def out_edges(self, node_id: str) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.source == node_id)

    def with_changes(self, **changes: Any) -> Self:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "task_id": self.task_id,
            "nodes": [n.to_json() for n in self.nodes],
            "edges": [e.to_json() for e in self.edges],
            "pins": [p.to_json() for p in self.pins],
            "meta": thaw(self.meta),
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "graph", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            schema_version=r.get("schema_version", int),
            task_id=r.get("task_id", str),
            nodes=r.records("nodes", Node.from_json),
            edges=r.records("edges", Edge.from_json, default=[]),
            pins=r.records("pins", Pin.from_json, default=[]),
            meta=r.get("meta", dict, default={}),
        )
