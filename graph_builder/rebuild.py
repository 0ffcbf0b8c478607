"""Keep what people edited when a task graph is rebuilt from its demonstrations.

A rebuild makes every edge again from its supporting demonstration steps, so rule edits
made in the editor (a wider tap radius, another accepted text, a hand-drawn bounds box)
and edges added by hand would silently go back to what the builder makes. Here each edge
of the previous graph is found again in the new one by its supporting steps, and every
part of its rule that the builder would not have made is carried over:

- a tap radius or text threshold other than the previous build's settings gave;
- accepted texts and points that no supporting step demonstrated;
- bounds or a swipe direction that differ while the supports are the same steps.

An edge without supports (added by hand) is kept when both its nodes can be found again
by their members. Every carried edit, and every one that could not be carried, is
reported in words naming the edge.

>>> from importlib.resources import files
>>> from graph_builder.io import load_graph
>>> rebuilt = load_graph(files("task_graphs") / "sample" / "font_bigger")
>>> wider = replace(rebuilt.edge("e3").rule, radius=120.0)  # an edit in the editor
>>> previous = rebuilt.with_changes(
...     edges=tuple(replace(e, rule=wider) if e.id == "e3" else e for e in rebuilt.edges))
>>> graph, notes = carry_edge_edits(previous, rebuilt)
>>> notes, graph.edge("e3").rule.radius
(('kept the edited rule of edge e3 (now e3): radius 120',), 120.0)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from graph_builder.errors import GraphBuilderError
from graph_builder.model import Edge, MatchRule, MemberRef, TaskGraph
from graph_builder.settings import SimilaritySettings


def _previous_settings(graph: TaskGraph) -> SimilaritySettings:
    try:
        return SimilaritySettings.from_json(graph.meta.get("settings", {}))
    except GraphBuilderError:
        return SimilaritySettings()


def _carried(old: Edge, new: Edge, settings: SimilaritySettings) -> tuple[MatchRule, list[str]]:
    """The new edge's rule with the old edge's hand edits applied, and what they were."""
    a, rule = old.rule, new.rule
    what: list[str] = []
    if a.action_type is not rule.action_type:
        return rule, []
    same_steps = {s.member for s in old.support} == {s.member for s in new.support}
    if a.action_type.is_pointed:
        if a.radius != settings.tap_radius and a.radius != rule.radius:
            rule, what = replace(rule, radius=a.radius), [*what, f"radius {a.radius:g}"]
        shown = {s.action.normalized().point for s in old.support}
        extra = tuple(p for p in a.points if p not in shown and p not in rule.points)
        if extra:
            rule = replace(rule, points=(*rule.points, *extra))
            what.append(f"{len(extra)} added point{'s' if len(extra) > 1 else ''}")
        if same_steps and a.bounds != rule.bounds:
            rule = replace(rule, bounds=a.bounds)
            what.append(f"bounds {a.bounds.as_list() if a.bounds else 'removed'}")
    if a.text_threshold != settings.text_threshold and a.text_threshold != rule.text_threshold:
        rule = replace(rule, text_threshold=a.text_threshold)
        what.append(f"text threshold {a.text_threshold:g}")
    extra_texts = tuple(t for t in a.texts if t not in rule.texts)
    if extra_texts:
        rule = replace(rule, texts=(*rule.texts, *extra_texts))
        what.append("texts " + ", ".join(repr(t) for t in extra_texts))
    if same_steps and a.direction is not None and a.direction != rule.direction:
        rule, what = replace(rule, direction=a.direction), [*what, f"direction {a.direction}"]
    return rule, what


def _node_of(graph: TaskGraph) -> dict[MemberRef, str]:
    return {m: n.id for n in graph.nodes for m in n.members}


def _find_node(old: TaskGraph, node_id: str, new_nodes: dict[MemberRef, str]) -> str | None:
    """The new node holding most of the old node's members."""
    members = old.node(node_id).members if any(n.id == node_id for n in old.nodes) else ()
    votes = Counter(new_nodes[m] for m in members if m in new_nodes)
    return votes.most_common(1)[0][0] if votes else None


def carry_edge_edits(previous: TaskGraph, rebuilt: TaskGraph) -> tuple[TaskGraph, tuple[str, ...]]:
    """``rebuilt`` with the edge edits of ``previous`` carried over, and a note for each."""
    settings = _previous_settings(previous)
    notes: list[str] = []
    edges = list(rebuilt.edges)
    by_member: dict[MemberRef, int] = {s.member: i for i, e in enumerate(edges) for s in e.support}
    new_nodes = _node_of(rebuilt)
    taken = {e.id for e in edges}
    for old in previous.edges:
        if old.support:
            hits = Counter(by_member[s.member] for s in old.support if s.member in by_member)
            if not hits:
                continue  # its demonstrations are gone: nothing to carry
            index = hits.most_common(1)[0][0]
            rule, what = _carried(old, edges[index], settings)
            if what:
                edges[index] = replace(edges[index], rule=rule)
                notes.append(
                    f"kept the edited rule of edge {old.id} (now {edges[index].id}): "
                    + ", ".join(what)
                )
            continue
        source = _find_node(previous, old.source, new_nodes)
        target = _find_node(previous, old.target, new_nodes)
        if source is None or target is None:
            notes.append(
                f"dropped edge {old.id}, added by hand from {old.source} to {old.target}: "
                "its nodes are no longer in the graph; add it again in the editor"
            )
            continue
        if any(e.source == source and e.target == target and e.rule == old.rule for e in edges):
            continue
        edge_id = old.id if old.id not in taken else _fresh_id(taken)
        taken.add(edge_id)
        edges.append(replace(old, id=edge_id, source=source, target=target))
        notes.append(f"kept edge {old.id}, added by hand, as {edge_id} ({source} -> {target})")
    return rebuilt.with_changes(edges=tuple(edges)), tuple(notes)


def _fresh_id(taken: set[str]) -> str:
    n = len(taken) + 1
    while f"e{n}" in taken:
        n += 1
    return f"e{n}"
