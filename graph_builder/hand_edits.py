"""What people edited in a task graph, carried into its rebuild and reported in words.

A rebuild makes every edge again from its supporting demonstration steps, so rule edits
made in the editor (a wider tap radius, another accepted text, a hand-drawn bounds box),
edges drawn by hand and DONE marks set by hand would silently go back to what the builder
makes. ``carry_hand_edits`` finds each part of the previous graph again in the new one
(edges by their supporting steps, nodes by their members) and carries over what the
builder would not have made:

- a tap radius or text threshold other than the previous build's settings gave;
- accepted texts and points that no supporting step demonstrated;
- bounds or a swipe direction that differ while the supports are the same steps;
- an edge without supports (drawn by hand), when both its nodes are found again;
- a DONE mark on a screen the builder leaves a plain state.

Both graphs are compared in the form graph.json stores (numbers rounded as written), so
what the builder made is never mistaken for an edit, and two rebuilds give the same
bytes. The one ``HandEdits`` result, what was kept and what was dropped, is what the
command line prints and the studio shows.

>>> from graph_builder.model import (Action, ActionType, Edge, EdgeSupport, MatchRule,
...     MemberRef, Node, NodeKind, TaskGraph)
>>> tap = EdgeSupport(MemberRef("d1", 0), Action.tap(540, 1200, screen=(1080, 2400)))
>>> nodes = (Node("n1", NodeKind.START, "nodes/n1.png", (1080, 2400), (MemberRef("d1", 0),)),
...          Node("n2", NodeKind.DONE, "nodes/n2.png", (1080, 2400), (MemberRef("d1", 1),)))
>>> built = TaskGraph("t", nodes, (Edge("e1", "n1", "n2",
...     MatchRule(ActionType.TAP, points=((500.0, 500.0),)), (tap,)),))
>>> wider = replace(built.edges[0].rule, radius=120.0)  # an edit in the editor
>>> back = Edge("e2", "n2", "n1", MatchRule(ActionType.BACK))  # drawn by hand
>>> edited = built.with_changes(edges=(replace(built.edges[0], rule=wider), back))
>>> graph, edits = carry_hand_edits(edited, built)
>>> edits.kept
('the edited rule of edge e1 (now e1): radius 120', 'edge e2, drawn by hand, as e2 (n2 -> n1)')
>>> carry_hand_edits(graph, built)[0] == graph  # a second rebuild changes nothing
True
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

from graph_builder.model import Edge, MatchRule, MemberRef, NodeKind, Point, TaskGraph
from graph_builder.settings import SimilaritySettings, graph_settings

# Points closer than this (in the [0,1000] space) are one point: JSON keeps 3 decimals.
SAME_POINT = 0.01


@dataclass(frozen=True, slots=True)
class HandEdits:
    """What a rebuild kept and dropped of the previous graph's hand edits, in words."""

    kept: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.kept or self.dropped)


def stored_form(graph: TaskGraph) -> TaskGraph:
    """``graph`` as reading back its graph.json gives it (numbers rounded as written)."""
    return TaskGraph.from_json(graph.to_json())


def _near(point: Point, points: Iterable[Point | None]) -> bool:
    return any(p is not None and math.dist(point, p) <= SAME_POINT for p in points)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _rule_edits(
    old: Edge, rule: MatchRule, settings: SimilaritySettings
) -> tuple[MatchRule, list[str]]:
    """``rule`` (the rebuilt edge's) with the old edge's hand edits applied, and what they were."""
    a = old.rule
    what: list[str] = []
    if a.action_type is not rule.action_type:
        return rule, []
    if a.action_type.is_pointed:
        if a.radius != settings.tap_radius and a.radius != rule.radius:
            rule, what = replace(rule, radius=a.radius), [*what, f"radius {a.radius:g}"]
        shown = [s.action.normalized().point for s in old.support]
        extra = tuple(p for p in a.points if not _near(p, shown) and not _near(p, rule.points))
        if extra:
            rule = replace(rule, points=(*rule.points, *extra))
            what.append(_plural(len(extra), "added point"))
    if a.text_threshold != settings.text_threshold and a.text_threshold != rule.text_threshold:
        rule = replace(rule, text_threshold=a.text_threshold)
        what.append(f"text threshold {a.text_threshold:g}")
    extra_texts = tuple(t for t in a.texts if t not in rule.texts)
    if extra_texts:
        rule = replace(rule, texts=(*rule.texts, *extra_texts))
        what.append("texts " + ", ".join(repr(t) for t in extra_texts))
    return rule, what


def _same_step_edits(old: Edge, new: Edge, rule: MatchRule) -> tuple[MatchRule, list[str]]:
    """Bounds and direction are the builder's only while the supporting steps stay the same."""
    a = old.rule
    what: list[str] = []
    if {s.member for s in old.support} != {s.member for s in new.support}:
        return rule, what
    if a.action_type is not rule.action_type:
        return rule, what
    if a.action_type.is_pointed and a.bounds != rule.bounds:
        rule = replace(rule, bounds=a.bounds)
        what.append(f"bounds {a.bounds.as_list() if a.bounds else 'removed'}")
    if a.direction is not None and a.direction != rule.direction:
        rule, what = replace(rule, direction=a.direction), [*what, f"direction {a.direction}"]
    return rule, what


def _node_of(graph: TaskGraph) -> dict[MemberRef, str]:
    return {m: n.id for n in graph.nodes for m in n.members}


def _find_node(old: TaskGraph, node_id: str, new_nodes: dict[MemberRef, str]) -> str | None:
    """The new node holding most of the old node's members."""
    members = old.node(node_id).members if any(n.id == node_id for n in old.nodes) else ()
    votes = Counter(new_nodes[m] for m in members if m in new_nodes)
    return votes.most_common(1)[0][0] if votes else None


class _Carrier:
    """One pass over the previous graph, collecting the new edges, kinds and notes."""

    def __init__(self, previous: TaskGraph, rebuilt: TaskGraph) -> None:
        self.previous, self.rebuilt = previous, rebuilt
        self.settings = graph_settings(previous).settings
        self.edges = list(rebuilt.edges)
        self.by_member = {s.member: i for i, e in enumerate(self.edges) for s in e.support}
        self.new_nodes = _node_of(rebuilt)
        self.taken = {e.id for e in self.edges}
        self.kept: list[str] = []
        self.dropped: list[str] = []

    def supported(self, old: Edge) -> None:
        hits = Counter(self.by_member[s.member] for s in old.support if s.member in self.by_member)
        if not hits:
            typed = (s.action.text for s in old.support if s.action.text)
            bare = MatchRule(
                old.rule.action_type,
                radius=self.settings.tap_radius,
                texts=tuple(dict.fromkeys(typed)),
                text_threshold=self.settings.text_threshold,
            )
            _, lost = _rule_edits(old, bare, self.settings)
            if lost:
                self.dropped.append(
                    f"the edited rule of edge {old.id} ({', '.join(lost)}): the "
                    "demonstrations behind it are no longer used"
                )
            return
        index = hits.most_common(1)[0][0]
        new = self.edges[index]
        rule, what = _rule_edits(old, new.rule, self.settings)
        rule, more = _same_step_edits(old, new, rule)
        if what or more:
            self.edges[index] = replace(new, rule=rule)
            self.kept.append(
                f"the edited rule of edge {old.id} (now {new.id}): " + ", ".join(what + more)
            )

    def drawn(self, old: Edge) -> None:
        source = _find_node(self.previous, old.source, self.new_nodes)
        target = _find_node(self.previous, old.target, self.new_nodes)
        if source is None or target is None:
            self.dropped.append(
                f"edge {old.id}, drawn by hand from {old.source} to {old.target}: its "
                "screens are no longer in the graph; draw it again in the editor"
            )
            return
        if any(
            e.source == source and e.target == target and e.rule == old.rule for e in self.edges
        ):
            return  # the demonstrations now show it
        edge_id = old.id if old.id not in self.taken else _fresh_id(self.taken)
        self.taken.add(edge_id)
        self.edges.append(replace(old, id=edge_id, source=source, target=target))
        self.kept.append(f"edge {old.id}, drawn by hand, as {edge_id} ({source} -> {target})")

    def done_marks(self) -> dict[str, NodeKind]:
        """New nodes to mark DONE because the person marked their screens DONE."""
        marks: dict[str, NodeKind] = {}
        kinds = {n.id: n.kind for n in self.rebuilt.nodes}
        for node in self.previous.nodes:
            if node.kind is not NodeKind.DONE or not node.members:
                continue
            holders = sorted({self.new_nodes[m] for m in node.members if m in self.new_nodes})
            if holders and all(kinds[h] is NodeKind.DONE for h in holders):
                continue  # the builder makes it DONE itself
            if len(holders) == 1 and kinds[holders[0]] is NodeKind.STATE:
                marks[holders[0]] = NodeKind.DONE
                self.kept.append(f"the DONE mark of {node.id} (now {holders[0]})")
            else:
                where = f"now in {', '.join(holders)}" if holders else "no longer in the graph"
                self.dropped.append(f"the DONE mark of {node.id}: its screens are {where}")
        return marks


def carry_hand_edits(previous: TaskGraph, rebuilt: TaskGraph) -> tuple[TaskGraph, HandEdits]:
    """``rebuilt`` with the hand edits of ``previous`` carried over, and what was kept/dropped.

    The result is in stored form (see ``stored_form``), ready to be written.
    """
    previous, rebuilt = stored_form(previous), stored_form(rebuilt)
    carrier = _Carrier(previous, rebuilt)
    for old in previous.edges:
        if old.support:
            carrier.supported(old)
        else:
            carrier.drawn(old)
    marks = carrier.done_marks()
    nodes = tuple(replace(n, kind=marks.get(n.id, n.kind)) for n in rebuilt.nodes)
    graph = rebuilt.with_changes(nodes=nodes, edges=tuple(carrier.edges))
    return graph, HandEdits(tuple(carrier.kept), tuple(carrier.dropped))


def _fresh_id(taken: set[str]) -> str:
    n = len(taken) + 1
    while f"e{n}" in taken:
        n += 1
    return f"e{n}"
