"""What a rebuild kept and dropped of the hand edits in the graph it replaced (no Qt).

A rebuild merges the demonstrations afresh. Manual merges and splits are pins and are
re-applied (the build report lists them); everything else edited by hand lives only in
the old graph.json: edge rules (tolerance radius, bounds, accepted texts, thresholds),
edges drawn by hand, DONE marks. ``rebuild_changes`` compares the two graphs by the
demonstration steps behind each edge and node, so the user sees what a rebuild undid.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from graph_builder.model import ActionType, Edge, MatchRule, MemberRef, NodeKind, TaskGraph

DEFAULT_RULE = MatchRule(ActionType.TAP)


@dataclass(frozen=True, slots=True)
class RebuildChanges:
    kept: tuple[str, ...]
    dropped: tuple[str, ...]


def _rule_changes(old: MatchRule, new: MatchRule) -> list[str]:
    out = []
    for field in fields(MatchRule):
        a, b = getattr(old, field.name), getattr(new, field.name)
        if field.name == "points" or a == b:
            continue  # demonstrated points follow the demonstrations, not the user
        out.append(f"{field.name.replace('_', ' ')} {_show(a)} → {_show(b)}")
    return out


def _show(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value.value if hasattr(value, "value") else value)


def _members(edge: Edge) -> set[MemberRef]:
    return {s.member for s in edge.support}


def _name(graph: TaskGraph, edge: Edge) -> str:
    return f"{edge.source} → {edge.target} ({edge.rule.action_type.value})"


def rebuild_changes(old: TaskGraph, new: TaskGraph) -> RebuildChanges:
    """Edge rules and DONE marks of ``old`` that ``new`` kept or lost."""
    kept: list[str] = []
    dropped: list[str] = []
    for edge in old.edges:
        support = _members(edge)
        twins = [e for e in new.edges if support & _members(e)] if support else []
        if not twins:
            dropped.append(
                f"edge {_name(old, edge)}: "
                + ("drawn by hand; not in the rebuilt graph" if not support else "gone")
            )
            continue
        twin = max(twins, key=lambda e: len(support & _members(e)))
        changes = _rule_changes(edge.rule, twin.rule)
        if changes:
            dropped.append(f"edge {_name(old, edge)}: " + "; ".join(changes))
        elif edge.rule.radius != DEFAULT_RULE.radius or (
            edge.rule.text_threshold != DEFAULT_RULE.text_threshold
        ):
            kept.append(f"edge {_name(old, edge)}: its edited rule")
    for node in old.nodes:
        if node.kind is not NodeKind.DONE or not node.members:
            continue
        holders = [n for n in new.nodes if set(node.members) & set(n.members)]
        if holders and all(n.kind is NodeKind.DONE for n in holders):
            kept.append(f"DONE mark of {node.id}")
        else:
            dropped.append(f"DONE mark of {node.id} ({node.members[0]})")
    return RebuildChanges(tuple(kept), tuple(dropped))
