"""What a person should look at in a built graph: possible merges and graph-level checks.

**Possible merges** are the pairs of screens the builder decided about with the least
margin, on both sides of its decision:

- *kept apart*: two nodes whose closest screens are within ``margin`` of being called the
  same (``flip_distance``: the calibrated probability below one half, or a rule's measure
  past its limit such as the allowed text changes), or that ``compare()`` calls the same;
- *merged*: a screen whose weakest match inside its node is within ``margin`` of being
  split, or that ``compare()`` now calls different.

They are listed best first: the closer a pair is to flipping the decision, the earlier.
Pairs people already decided (a constraint, a pin) are left out, and so is START for
splits, because START holds every first screen by definition. A person accepts a pair
(must-link) or rejects it (cannot-link); ``graph_builder.constraints`` keeps the answer.

**Graph checks** name, per task, the *mixed* nodes (members that are not all the same
state by ``compare()``, START included, with how many states were found among the
members checked) and the *split* ones (two nodes holding screens ``compare()`` calls the
same state).

Large nodes are checked on a spread sample of ``sample`` members (``cross_sample`` per
node between nodes), so a review stays quick on big tasks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from graph_builder.constraints import LinkKind, load_constraints
from graph_builder.errors import GraphBuilderError
from graph_builder.io import load_demo, load_graph
from graph_builder.model import (
    Constraint,
    Demonstration,
    MemberRef,
    Node,
    NodeKind,
    PinKind,
    TaskGraph,
)
from graph_builder.screen import Screen
from graph_builder.settings import SimilaritySettings, comparison_settings
from graph_builder.similarity import (
    Features,
    Verdict,
    clearly_different,
    compare_features,
    screen_features,
)

DEFAULT_MARGIN = 0.2  # score units: a calibrated probability within 0.2 of one half is unsure
DEFAULT_SAMPLE = 8
DEFAULT_CROSS_SAMPLE = 4
MIXED_EXAMPLES = 3

ScreenLookup = Callable[[MemberRef], Screen | None]


class PairKind(StrEnum):
    KEPT_APART = "kept apart"  # the builder put them in two nodes
    MERGED = "merged"  # the builder put them in one node


TEXT_CHANGE_UNIT = 10.0  # one changed text past the allowance is this far in score units
DECISION_LINE = 0.5  # the score is a calibrated probability of "one state"


def flip_distance(verdict: Verdict, settings: SimilaritySettings) -> float:
    """How far a decision is from going the other way, in score units.

    A merge flips when any one measure crosses its limit, so its distance is the smallest
    slack: the probability above one half, and the structure and content above their
    floors. A split flips only when every measure that said "different" changes, so its
    distance is the largest of: the probability below one half, how far each measure is
    past its floor, the changed content texts past the allowance (``TEXT_CHANGE_UNIT`` per
    text) and each state text found on one side only (a typed word, a flipped switch: one
    unit each). One new list row is close; a typed e-mail address that differs is not.
    Different activities never flip.
    """
    floors: list[tuple[float | None, float]] = [
        (verdict.structure, settings.structure_floor),
        (verdict.content, settings.content_floor),
    ]
    if verdict.same:
        slack = [verdict.score - DECISION_LINE]
        slack += [value - floor for value, floor in floors if value is not None]
        return max(0.0, min(slack))
    if verdict.activity == "different" and settings.activity_must_match:
        return math.inf
    past = [DECISION_LINE - verdict.score] if verdict.score < DECISION_LINE else []
    floors.append((verdict.visual, settings.visual_floor))
    past += [floor - value for value, floor in floors if value is not None and value < floor]
    if verdict.changes is not None and verdict.changes > settings.max_text_changes:
        past.append((verdict.changes - settings.max_text_changes) / TEXT_CHANGE_UNIT)
    if verdict.state_changes:
        past.append(float(verdict.state_changes))
    return max(past, default=0.0)


@dataclass(frozen=True, slots=True)
class PossibleMerge:
    """Two screens the builder decided about with little margin, and why."""

    kind: PairKind
    a: MemberRef
    b: MemberRef
    node_a: str
    node_b: str
    verdict: Verdict
    distance: float  # how far the score is from flipping the decision (0: it already did)
    screenshots: tuple[Path | None, Path | None] = (None, None)

    @property
    def pair(self) -> tuple[MemberRef, MemberRef]:
        return self.a, self.b

    @property
    def title(self) -> str:
        where = (
            f"{self.node_a} and {self.node_b}" if self.kind is PairKind.KEPT_APART else self.node_a
        )
        return f"{self.kind.value}: {where}, {self.a} vs {self.b}, score {self.verdict.score:.2f}"

    def describe(self) -> str:
        return f"{self.title}: {self.verdict.describe()}"


@dataclass(frozen=True, slots=True)
class MixedNode:
    """A node whose members are not all one state by compare()."""

    node_id: str
    checked: int  # members compared
    states: int  # states found among them
    examples: tuple[tuple[MemberRef, MemberRef, Verdict], ...]

    def describe(self) -> str:
        line = f"mixed node {self.node_id}: {self.states} states among {self.checked} screens"
        shown = "; ".join(f"{a} vs {b}: {v.reason}" for a, b, v in self.examples)
        return f"{line} ({shown})" if shown else line


@dataclass(frozen=True, slots=True)
class SplitNodes:
    """Two nodes holding screens compare() calls one state."""

    node_a: str
    node_b: str
    a: MemberRef
    b: MemberRef
    verdict: Verdict

    def describe(self) -> str:
        return (
            f"split state: {self.node_a} and {self.node_b} ({self.a} vs {self.b}: "
            f"{self.verdict.reason})"
        )


@dataclass(frozen=True, slots=True)
class GraphReview:
    task_id: str
    possible_merges: tuple[PossibleMerge, ...] = ()
    mixed: tuple[MixedNode, ...] = ()
    split: tuple[SplitNodes, ...] = ()
    unreadable: tuple[str, ...] = ()  # steps whose screen could not be compared

    def lines(self) -> list[str]:
        """The review in words, as ``elderbench build --explain`` prints it."""
        out = [
            f"possible merges: {len(self.possible_merges)} "
            f"(mixed nodes: {len(self.mixed)}, split states: {len(self.split)})"
        ]
        if self.possible_merges:
            out.append(
                "  decide each with `elderbench constrain SUITE_DIR --task ID --must-link A B` "
                "(one state) or `--cannot-link A B` (two states)"
            )
        for pair in self.possible_merges:
            out.append(f"  {pair.describe()}")
            out += [f"    screenshot {p}" for p in pair.screenshots if p is not None]
        out += [f"  {m.describe()}" for m in self.mixed]
        out += [f"  {s.describe()}" for s in self.split]
        out += [f"  not compared: {u}" for u in self.unreadable]
        return out


def _spread(items: Sequence[MemberRef], k: int) -> list[MemberRef]:
    """Up to k items spread over the sequence, the first always in."""
    if len(items) <= k:
        return list(items)
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)] if k > 1 else [items[0]]


class _Decided:
    """The pairs people already decided, by constraint or editor pin."""

    def __init__(self, graph: TaskGraph, constraints: Sequence[Constraint]) -> None:
        self.pairs = {frozenset(c.pair) for c in constraints}
        self.linked = {frozenset(c.pair) for c in constraints if c.kind is LinkKind.MUST_LINK}
        self.apart = {frozenset(c.pair) for c in constraints if c.kind is LinkKind.CANNOT_LINK}
        self.together: list[set[MemberRef]] = []
        for pin in graph.pins:
            if pin.kind is PinKind.TOGETHER:
                self.together.append(set(pin.members))
            else:
                self.apart |= {frozenset((a, b)) for a in pin.members for b in pin.others}

    def pair(self, a: MemberRef, b: MemberRef) -> bool:
        return frozenset((a, b)) in self.pairs or any({a, b} <= g for g in self.together)

    def same(self, a: MemberRef, b: MemberRef) -> bool:
        """People said these two are one state (must-link, or a merge in the editor)."""
        return frozenset((a, b)) in self.linked or any({a, b} <= g for g in self.together)

    def nodes_apart(self, x: Node, y: Node) -> bool:
        return any(frozenset((a, b)) in self.apart for a in x.members for b in y.members)


class _Reviewer:
    def __init__(
        self, screens: ScreenLookup, settings: SimilaritySettings, margin: float, sample: int
    ) -> None:
        self.screens, self.settings, self.margin, self.sample = screens, settings, margin, sample
        self.features: dict[MemberRef, Features | None] = {}
        self.unreadable: list[str] = []

    def feature(self, member: MemberRef) -> Features | None:
        if member not in self.features:
            screen = self.screens(member)
            found = None
            if screen is None:
                self.unreadable.append(f"{member}: its demonstration step is not at hand")
            else:
                try:
                    found = screen_features(screen, self.settings)
                except GraphBuilderError as exc:
                    self.unreadable.append(f"{member}: {exc}")
            self.features[member] = found
        return self.features[member]

    def compare(self, a: MemberRef, b: MemberRef) -> Verdict | None:
        fa, fb = self.feature(a), self.feature(b)
        if fa is None or fb is None:
            return None
        return compare_features(fa, fb, self.settings)

    def screenshots(self, a: MemberRef, b: MemberRef) -> tuple[Path | None, Path | None]:
        found = [self.screens(m) for m in (a, b)]
        paths = [s.screenshot_path if s is not None else None for s in found]
        return paths[0], paths[1]

    def inside(self, node: Node, decided: _Decided) -> tuple[MixedNode | None, list[PossibleMerge]]:
        """The node's mixed-ness, and its members that nearly split."""
        members = [m for m in _spread(node.members, self.sample) if self.feature(m) is not None]
        verdicts = {
            (a, b): v
            for a, b in itertools.combinations(members, 2)
            if (v := self.compare(a, b)) is not None
        }
        same = {frozenset(k) for k, v in verdicts.items() if v.same or decided.same(*k)}
        different = [(a, b, v) for (a, b), v in verdicts.items() if frozenset((a, b)) not in same]
        mixed = None
        if different:
            states: list[MemberRef] = []  # the first screen of each state found
            for m in members:
                if not any(frozenset((m, s)) in same for s in states):
                    states.append(m)
            mixed = MixedNode(node.id, len(members), len(states), tuple(different[:MIXED_EXAMPLES]))
        if node.kind is NodeKind.START:
            return mixed, []
        weakest: dict[MemberRef, tuple[MemberRef, Verdict]] = {}
        for (a, b), v in verdicts.items():
            for m, other in ((a, b), (b, a)):
                if m not in weakest or v.score < weakest[m][1].score:
                    weakest[m] = (other, v)
        out: dict[frozenset[MemberRef], PossibleMerge] = {}
        for m, (other, v) in weakest.items():
            distance = flip_distance(v, self.settings) if v.same else 0.0
            if distance > self.margin or decided.pair(m, other):
                continue
            a, b = sorted((m, other))
            out[frozenset((a, b))] = PossibleMerge(
                PairKind.MERGED, a, b, node.id, node.id, v, distance, self.screenshots(a, b)
            )
        return mixed, list(out.values())

    def between(
        self, x: Node, y: Node, decided: _Decided
    ) -> tuple[SplitNodes | None, PossibleMerge | None]:
        """The closest screens of two nodes, when they are (nearly) the same state."""
        if {x.kind, y.kind} == {NodeKind.START, NodeKind.DONE} or decided.nodes_apart(x, y):
            return None, None
        best: tuple[float, float, MemberRef, MemberRef, Verdict] | None = None
        cross = DEFAULT_CROSS_SAMPLE
        for a in _spread(x.members, cross):
            for b in _spread(y.members, cross):
                fa, fb = self.feature(a), self.feature(b)
                if fa is None or fb is None or clearly_different(fa, fb, self.settings):
                    continue
                v = compare_features(fa, fb, self.settings)
                d = 0.0 if v.same else flip_distance(v, self.settings)
                if best is None or (d, -v.score) < best[:2]:
                    best = (d, -v.score, a, b, v)
        if best is None:
            return None, None
        distance, _, a, b, v = best
        split = SplitNodes(x.id, y.id, a, b, v) if v.same else None
        if distance > self.margin or decided.pair(a, b):
            return split, None
        pair = PossibleMerge(
            PairKind.KEPT_APART, a, b, x.id, y.id, v, distance, self.screenshots(a, b)
        )
        return split, pair


def review_graph(
    graph: TaskGraph,
    screens: ScreenLookup,
    settings: SimilaritySettings,
    *,
    constraints: Sequence[Constraint] = (),
    margin: float = DEFAULT_MARGIN,
    sample: int = DEFAULT_SAMPLE,
    progress: Callable[[int, int], None] | None = None,
) -> GraphReview:
    """Possible merges, mixed and split nodes of a built graph; ``screens`` gives each
    member's recorded screen (None when it is not at hand). ``progress(done, total)`` is
    called after each node and each pair of nodes is looked at."""
    if margin < 0 or sample < 2:
        raise ValueError("the margin must not be negative and the sample at least 2")
    reviewer = _Reviewer(screens, settings, margin, sample)
    decided = _Decided(graph, constraints)
    pairs: list[PossibleMerge] = []
    mixed: list[MixedNode] = []
    split: list[SplitNodes] = []
    n = len(graph.nodes)
    total, done = n + n * (n - 1) // 2, 0
    for node in graph.nodes:
        node_mixed, nearly_split = reviewer.inside(node, decided)
        mixed += [node_mixed] if node_mixed is not None else []
        pairs += nearly_split
        done += 1
        if progress is not None:
            progress(done, total)
    for x, y in itertools.combinations(graph.nodes, 2):
        same, pair = reviewer.between(x, y, decided)
        split += [same] if same is not None else []
        pairs += [pair] if pair is not None else []
        done += 1
        if progress is not None:
            progress(done, total)
    pairs.sort(key=lambda p: (p.distance, p.kind != PairKind.KEPT_APART, -p.verdict.score))
    return GraphReview(
        graph.task_id, tuple(pairs), tuple(mixed), tuple(split), tuple(reviewer.unreadable)
    )


class DemoScreens:
    """Recorded screens of a task's demonstration steps, read from the demos folder once."""

    def __init__(self, demos_root: Path, task_id: str) -> None:
        self.folder = Path(demos_root) / task_id
        self._demos: dict[str, Demonstration | None] = {}
        self._screens: dict[MemberRef, Screen | None] = {}

    def __call__(self, member: MemberRef) -> Screen | None:
        if member not in self._screens:
            demo = self._demo(member.demo_id)
            found = None
            if demo is not None and 0 <= member.step < len(demo.steps):
                observation = demo.steps[member.step].observation
                found = Screen.from_observation(observation, self.folder / demo.id, member)
            self._screens[member] = found
        return self._screens[member]

    def _demo(self, demo_id: str) -> Demonstration | None:
        if demo_id not in self._demos:
            try:
                self._demos[demo_id] = load_demo(self.folder / demo_id)
            except GraphBuilderError:
                self._demos[demo_id] = None
        return self._demos[demo_id]


def review_task(
    task_dir: Path,
    demos_root: Path,
    *,
    settings: SimilaritySettings | None = None,
    margin: float = DEFAULT_MARGIN,
) -> GraphReview:
    """Review the graph in ``task_dir`` against the demonstrations it was built from,
    with the settings it was built with unless ``settings`` are given."""
    graph = load_graph(task_dir)
    return review_graph(
        graph,
        DemoScreens(demos_root, graph.task_id),
        settings or comparison_settings(graph),
        constraints=load_constraints(task_dir, graph.task_id).constraints,
        margin=margin,
    )
