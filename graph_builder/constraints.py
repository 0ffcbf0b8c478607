"""What people decided about merging screens: signed must-link and cannot-link constraints.

A constraint joins two demonstration steps (``MemberRef``): **must-link** says their
screens are one state, **cannot-link** that they are two. Each is signed with the
annotator's id and the time of the decision, and lives in ``<task>/constraints.json``
beside the graph, so a rebuild (which replaces graph.json and nodes/) keeps it. Deciding a
pair again replaces the earlier decision on that pair.

Every build honours them (``MergeRules`` is what the merge consults):

- a screen never joins a node holding a screen it is cannot-linked to, directly or through
  a must-link;
- after placing every screen, the nodes of two must-linked screens become one node, unless
  that would put two cannot-linked screens together or a first screen (START) with an end
  screen (DONE);
- when decisions contradict (a cannot-link between two steps that must-links would join),
  the cannot-link wins and the must-links that would break it are not honoured;
- ``outcomes`` says, per constraint, whether the graph honours it and if not why; the
  constraints whose steps are no longer in the demonstrations are reported as stale and
  kept in the file, as nothing people decided is thrown away.

The manual merges and splits of the editor are pins in graph.json (``Pin``); the merge
consults both through ``MergeRules``.

>>> a, b = MemberRef("d1", 2), MemberRef("d2", 3)
>>> signed = Constraint(LinkKind.MUST_LINK, b, a, "ann", "2026-12-01T15:00:00Z")
>>> decided = ConstraintSet("t").decide(signed)
>>> decided.constraints[0].a, decided.constraints[0].describe()
(MemberRef(demo_id='d1', step=2), 'must-link d1#2 ~ d2#3 (ann, 2026-12-01T15:00:00Z)')
>>> ConstraintSet.from_json(decided.to_json()) == decided
True
>>> rules = MergeRules((), decided.constraints, {a, b, MemberRef("d3", 1)})
>>> rules.must_links[0].describe(), rules.stale
('must-link d1#2 ~ d2#3 (ann, 2026-12-01T15:00:00Z)', ())
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from graph_builder.errors import GraphBuilderError
from graph_builder.folder_lock import FolderLock
from graph_builder.io import atomic_write_json, read_json
from graph_builder.model import (
    Constraint,
    ConstraintSet,
    LinkKind,
    MemberRef,
    Pin,
    PinKind,
    now_utc,
)

__all__ = [
    "CONSTRAINTS_FILE",
    "Constraint",
    "ConstraintOutcome",
    "ConstraintSet",
    "LinkKind",
    "MergeRules",
    "load_constraints",
    "now_utc",
    "outcomes",
    "set_decision",
]

CONSTRAINTS_FILE = "constraints.json"


# --------------------------------------------------------------------------- the file


def load_constraints(task_dir: Path, task_id: str | None = None) -> ConstraintSet:
    """``<task_dir>/constraints.json``; an empty set when there is none (FormatError when
    it is unreadable, so a broken file is never silently replaced)."""
    path = Path(task_dir) / CONSTRAINTS_FILE
    if not path.exists():
        return ConstraintSet(task_id or Path(task_dir).name)
    return ConstraintSet.from_json(read_json(path), source=path)


def set_decision(
    task_dir: Path, a: MemberRef, b: MemberRef, constraint: Constraint | None
) -> Constraint | None:
    """Record (or, with None, withdraw) the decision on a pair, atomically, under the
    suite's lock; returns the decision it replaced, so an undo can put it back."""
    task_dir = Path(task_dir)
    if not task_dir.is_dir():
        raise GraphBuilderError(f"{task_dir} is not a task folder")
    with FolderLock(task_dir.parent, purpose="a merge decision"):
        current = load_constraints(task_dir)
        before = current.get(a, b)
        after = current.decide(constraint) if constraint is not None else current.withdraw(a, b)
        if after != current:
            atomic_write_json(task_dir / CONSTRAINTS_FILE, after.to_json())
    return before


# --------------------------------------------------------------------------- applying


class _Groups:
    """Union-find over steps."""

    def __init__(self) -> None:
        self.parent: dict[MemberRef, MemberRef] = {}

    def find(self, m: MemberRef) -> MemberRef:
        while self.parent.setdefault(m, m) != m:
            self.parent[m] = self.parent[self.parent[m]]
            m = self.parent[m]
        return m

    def join(self, a: MemberRef, b: MemberRef) -> None:
        self.parent[self.find(b)] = self.find(a)


class MergeRules:
    """Pins and constraints that apply to the present steps, as the merge asks them.

    ``group``: steps a TOGETHER pin puts in one node while screens are placed.
    ``allows(step, node_members)``: False when the step, or a step must-linked to it,
    must stay apart (APART pin, cannot-link) from a member of the node or one of theirs.
    ``must_links``: applied after placing, by joining nodes.
    """

    def __init__(
        self, pins: Iterable[Pin], constraints: Iterable[Constraint], present: Collection[MemberRef]
    ) -> None:
        self.group: dict[MemberRef, int] = {}
        self.stale_pins: list[Pin] = []
        together, linked = _Groups(), _Groups()
        apart: list[tuple[MemberRef, MemberRef]] = []
        for pin in pins:
            if any(m not in present for m in (*pin.members, *pin.others)):
                self.stale_pins.append(pin)
            members = [m for m in pin.members if m in present]
            if pin.kind is PinKind.TOGETHER:
                for m in members[1:]:
                    together.join(members[0], m)
                    linked.join(members[0], m)
            else:
                others = [m for m in pin.others if m in present]
                apart += [(x, y) for x in members for y in others]
        live = [c for c in constraints if c.a in present and c.b in present]
        self.stale: tuple[Constraint, ...] = tuple(
            c for c in constraints if c.a not in present or c.b not in present
        )
        self.must_links = tuple(c for c in live if c.kind is LinkKind.MUST_LINK)
        self.cannot_links = tuple(c for c in live if c.kind is LinkKind.CANNOT_LINK)
        for link in self.must_links:
            linked.join(link.a, link.b)
        apart += [c.pair for c in self.cannot_links]
        self._linked = linked
        # Apart by component (a must-link carries a cannot-link to its partner), except
        # for pairs the must-links join anyway: those contradict, and only the two steps
        # themselves are kept apart.
        self._apart: set[frozenset[MemberRef]] = set()
        self._direct: set[frozenset[MemberRef]] = set()
        for x, y in apart:
            rx, ry = linked.find(x), linked.find(y)
            if rx == ry:
                self._direct.add(frozenset((x, y)))
            else:
                self._apart.add(frozenset((rx, ry)))
        roots: dict[MemberRef, int] = {}
        for m in list(together.parent):
            self.group[m] = roots.setdefault(together.find(m), len(roots))

    def _keeps_apart(self, x: MemberRef, y: MemberRef) -> bool:
        roots = frozenset((self._linked.find(x), self._linked.find(y)))
        return roots in self._apart or frozenset((x, y)) in self._direct

    def allows(self, member: MemberRef | None, members: Iterable[MemberRef]) -> bool:
        if member is None or not (self._apart or self._direct):
            return True
        return not any(self._keeps_apart(member, m) for m in members)

    def apart(self, left: Iterable[MemberRef], right: Iterable[MemberRef]) -> bool:
        """True when two nodes hold steps that must stay apart (so they cannot join)."""
        if not (self._apart or self._direct):
            return False
        others = list(right)
        return any(self._keeps_apart(x, y) for x in left for y in others)


@dataclass(frozen=True, slots=True)
class ConstraintOutcome:
    """What a build made of one constraint."""

    constraint: Constraint
    honoured: bool
    detail: str  # the node(s), or why not

    def describe(self) -> str:
        state = "honoured" if self.honoured else "NOT honoured"
        return f"{self.constraint.describe()}: {state}, {self.detail}"


def outcomes(
    constraints: Sequence[Constraint],
    node_of: dict[MemberRef, str],
    refused: dict[tuple[MemberRef, MemberRef], str],
) -> tuple[ConstraintOutcome, ...]:
    """Per constraint, whether the built graph honours it (``node_of``: each step's node;
    ``refused``: why a must-link's join was refused)."""
    out = []
    for c in constraints:
        if c.a not in node_of or c.b not in node_of:
            gone = ", ".join(str(m) for m in c.pair if m not in node_of)
            out.append(
                ConstraintOutcome(c, False, f"stale: {gone} no longer in the demonstrations")
            )
            continue
        na, nb = node_of[c.a], node_of[c.b]
        if c.kind is LinkKind.MUST_LINK:
            if na == nb:
                out.append(ConstraintOutcome(c, True, f"both in {na}"))
            else:
                why = refused.get(c.pair, "they were not joined")
                out.append(ConstraintOutcome(c, False, f"{na} and {nb} stay apart: {why}"))
        elif na != nb:
            out.append(ConstraintOutcome(c, True, f"{na} and {nb}"))
        else:
            why = (
                "both are first screens, and START holds every first screen"
                if c.a.step == 0 and c.b.step == 0
                else "a merge pin of the editor holds them together"
            )
            out.append(ConstraintOutcome(c, False, f"both in {na}: {why}"))
    return tuple(out)
