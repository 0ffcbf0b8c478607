"""Merge demonstrations of one task into a multi-path task graph (ElderBench H.2, offline).

Every observed screen is placed in a node of equivalent screens; every demonstrated action
between two screens becomes (or supports) an edge between their nodes.

- The first screens of all demonstrations form START (a warning says when they do not
  look alike). A node holding a screen where a demonstration ended with ``done`` is a
  DONE node; such end screens never join START. Every screen joins the node of its
  equivalent screens, within a demonstration (loops, going back) and across them.
- A screen joins a node only if it is the same as every member of the node (complete
  linkage over up to ``linkage_sample`` members), so chains A~B~C with A!~C do not drift.
  Among the nodes it fits, it joins the one whose weakest match is strongest.
- What the task's recordings teach is used first: the texts they typed stay state
  wherever they show again, and slots whose text alone changes over visits from several
  demonstrations are ambient (``graph_builder.roles.learn_ambient_slots``).
- Pins from the editor win: TOGETHER members share one node, APART members never share a
  node with their ``others``. Pins whose members are gone are reported and kept.
- Merge constraints (``graph_builder.constraints``) too: a screen never joins a node it is
  cannot-linked to, and the nodes of must-linked screens are joined once every screen is
  placed. ``BuildResult.constraints`` says which were honoured, and why not.
- Parallel actions with the same meaning (same element or points within
  ``point_tolerance``, same swipe direction, same text, same key) become one edge with
  every supporting point; other actions between the same nodes stay separate edges.

The function is pure: states load their files lazily and nothing is written.

>>> import tempfile
>>> from io import BytesIO
>>> from PIL import Image, ImageDraw
>>> from graph_builder.io import DemoWriter
>>> from graph_builder.model import Action, Task
>>> def shot(title, shade):  # a screen with one coloured title bar, and its hierarchy
...     image = Image.new("RGB", (270, 600), "white")
...     ImageDraw.Draw(image).rectangle((0, 21, 270, 100 + 3 * shade), fill=(shade, 90, 160))
...     png = BytesIO()
...     image.save(png, "PNG")
...     xml = (f'<hierarchy><node class="android.widget.TextView" package="app" '
...            f'text="{title}" bounds="[0,21][270,100]"/></hierarchy>')
...     return png.getvalue(), xml
>>> def record(demos, demo_id):  # Home -> Settings -> Display, then done
...     task = Task("display", "Open the display settings", app="app")
...     writer = DemoWriter.create(demos, task, demo_id=demo_id)
...     tap = Action.tap(135, 60, screen=(270, 600))
...     for title, shade, action in (("Home", 0, tap), ("Settings", 80, tap),
...                                  ("Display", 160, Action.done())):
...         _ = writer.add_step(*shot(title, shade), action=action, activity="app/.Main",
...                             screen=(270, 600), time=0.0)
...     return writer.finish()
>>> tmp = tempfile.TemporaryDirectory()
>>> demos = Path(tmp.name) / "demos"
>>> _, _ = record(demos, "d1"), record(demos, "d2")
>>> from graph_builder.io import demo_dirs
>>> folders = demo_dirs(demos, "display")
>>> result = merge_demonstrations([DemoInput.from_folder(d) for d in folders],
...                               settings=SimilaritySettings())
>>> [(n.id, len(n.members)) for n in result.graph.nodes], len(result.graph.edges)
([('start', 2), ('n1', 2), ('done', 2)], 2)
>>> tmp.cleanup()
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from graph_builder.constraints import Constraint, ConstraintOutcome, MergeRules, outcomes
from graph_builder.errors import FormatError, GraphBuilderError
from graph_builder.io import load_demo
from graph_builder.model import (
    NORMALIZED_SCREEN,
    Action,
    ActionType,
    Bounds,
    Demonstration,
    Edge,
    EdgeSupport,
    ElementRef,
    MatchRule,
    MemberRef,
    Node,
    NodeKind,
    Pin,
    TaskGraph,
)
from graph_builder.phash import hash_prefix
from graph_builder.roles import learn_ambient_slots
from graph_builder.screen import Screen
from graph_builder.similarity import (
    Features,
    SimilaritySettings,
    Verdict,
    clearly_different,
    compare_features,
    normalize_text,
    screen_features,
    visual_similarity,
)

NODES_DIR = "nodes"


@dataclass(frozen=True, slots=True)
class DemoInput:
    """A demonstration and one screen state per step (lazy from disk, or in memory)."""

    demo: Demonstration
    states: tuple[Screen, ...]

    def __post_init__(self) -> None:
        if len(self.states) != len(self.demo.steps):
            raise GraphBuilderError(
                f"demonstration {self.demo.id} has {len(self.demo.steps)} steps but "
                f"{len(self.states)} states were given"
            )

    @classmethod
    def from_folder(cls, folder: Path, demo: Demonstration | None = None) -> DemoInput:
        demo = demo if demo is not None else load_demo(folder)
        return cls(
            demo,
            tuple(
                Screen.from_observation(step.observation, folder, MemberRef(demo.id, step.index))
                for step in demo.steps
            ),
        )


@dataclass(frozen=True, slots=True)
class MergeDecision:
    """Where one screen went, and why (the decisive comparison, when there was one)."""

    member: MemberRef
    node_id: str
    joined: bool
    reason: str
    compared_with: MemberRef | None = None
    verdict: Verdict | None = None

    def describe(self) -> str:
        line = f"{self.member} -> {self.node_id}: {self.reason}"
        if self.verdict is not None and self.compared_with is not None:
            line += f" [vs {self.compared_with}: {self.verdict.describe()}]"
        return line


@dataclass(frozen=True, slots=True)
class SkippedDemo:
    demo_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class BuildResult:
    """The graph and everything a person needs to trust it."""

    graph: TaskGraph
    warnings: tuple[str, ...] = ()
    decisions: tuple[MergeDecision, ...] = ()
    skipped: tuple[SkippedDemo, ...] = ()
    stale_pins: tuple[Pin, ...] = ()
    constraints: tuple[ConstraintOutcome, ...] = ()  # each merge constraint, honoured or why not
    representatives: Mapping[str, Screen] = field(default_factory=dict)
    repairs: tuple[str, ...] = ()  # "d1#3: <what the hierarchy parser repaired>"
    learned_ambient: tuple[str, ...] = ()  # slots learned from these demonstrations

    @property
    def merges(self) -> int:
        """How many screens joined a node that already existed."""
        return sum(d.joined for d in self.decisions)


# --------------------------------------------------------------------------- clustering


@dataclass(slots=True)
class _Cluster:
    kind: NodeKind
    states: list[Screen]
    features: list[Features]
    node_id: str = ""

    @property
    def members(self) -> list[MemberRef]:
        return [s.member for s in self.states if s.member is not None]


def _sample(n: int, k: int) -> list[int]:
    """Up to k indices spread over range(n), always including 0."""
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)}) if k > 1 else [0]


def _linkage(
    features: Features, cluster: _Cluster, settings: SimilaritySettings
) -> tuple[bool, float, int, Verdict | None]:
    """Complete linkage: (fits, weakest score, index of the weakest member, its verdict).

    A member that is clearly different by activity or hash ends the check early with the
    visual similarity as score and no verdict.
    """
    worst: tuple[float, int, Verdict] | None = None
    for i in _sample(len(cluster.features), settings.linkage_sample):
        other = cluster.features[i]
        if clearly_different(features, other, settings):
            return False, visual_similarity(features, other), i, None
        verdict = compare_features(features, other, settings)
        if worst is None or verdict.score < worst[0]:
            worst = (verdict.score, i, verdict)
        if not verdict.same:
            return False, verdict.score, i, verdict
    assert worst is not None
    return True, worst[0], worst[1], worst[2]


def _category(step_index: int, n_steps: int) -> NodeKind:
    if step_index == 0:
        return NodeKind.START
    return NodeKind.DONE if step_index == n_steps - 1 else NodeKind.STATE


def _usable(item: DemoInput, settings: SimilaritySettings, seen: set[str]) -> str | None:
    """Why this demonstration cannot be used, or None. Loads its features."""
    demo = item.demo
    if demo.id in seen:
        return "another demonstration has the same id"
    if len(demo.steps) < 2:
        return "it has no action before 'done'"
    if not demo.is_finished:
        return "it does not end with 'done'"
    if any(s.action.type is ActionType.DONE for s in demo.steps[:-1]):
        return "'done' appears before the last step"
    for state in item.states:
        try:
            state.check_screenshot()
            screen_features(state, settings)
        except FormatError as exc:
            return f"step {state.member.step if state.member else '?'}: {exc}"
    return None


def merge_demonstrations(
    demos: Sequence[DemoInput],
    *,
    settings: SimilaritySettings,
    task_id: str | None = None,
    pins: Iterable[Pin] = (),
    constraints: Sequence[Constraint] = (),
) -> BuildResult:
    """Merge demonstrations of one task into a task graph. See the module docstring."""
    warnings: list[str] = []
    skipped: list[SkippedDemo] = []
    usable: list[DemoInput] = []
    seen: set[str] = set()
    for item in demos:
        problem = _usable(item, settings, seen)
        if problem is None:
            usable.append(item)
            seen.add(item.demo.id)
        else:
            skipped.append(SkippedDemo(item.demo.id, problem))
            warnings.append(f"demonstration {item.demo.id} skipped: {problem}")
    if not usable:
        raise GraphBuilderError(
            "no usable demonstration: "
            + ("; ".join(f"{s.demo_id}: {s.reason}" for s in skipped) or "none was given")
        )
    given = settings
    typed = tuple(
        sorted({s.action.text for item in usable for s in item.demo.steps if s.action.text})
    )
    if typed:
        settings = dataclasses.replace(settings, user_texts=settings.user_texts + typed)
    learned = _learned_slots(usable, settings)
    if learned:
        settings = dataclasses.replace(settings, ambient_slots=settings.ambient_slots + learned)
    repairs = [
        f"{state.member or item.demo.id}: hierarchy repaired: {repair}"
        for item in usable
        for state in item.states
        for repair in _repairs(state)
    ]
    warnings += repairs
    task = task_id or usable[0].demo.task_id
    present = {s.member for item in usable for s in item.states if s.member is not None}
    pin_list = tuple(pins)
    lookup = MergeRules(pin_list, constraints, present)
    warnings += [
        f"pin no longer applies in full (members missing): {_pin_text(p)}"
        for p in lookup.stale_pins
    ]

    clusters: list[_Cluster] = []
    group_cluster: dict[int, _Cluster] = {}
    placed: dict[tuple[str, int], _Cluster] = {}
    decisions: list[MergeDecision] = []
    start = _Cluster(NodeKind.START, [], [])
    clusters.append(start)

    for item in usable:
        n = len(item.states)
        for index, state in enumerate(item.states):
            features = screen_features(state, settings)
            category = _category(index, n)
            member = state.member or MemberRef(item.demo.id, index)
            group = lookup.group.get(member)
            decision: MergeDecision
            target: _Cluster | None
            if group is not None and group in group_cluster:
                target = group_cluster[group]
                decision = MergeDecision(member, "", True, "pinned together by an edit")
            elif category is NodeKind.START:
                target = start
                decision = MergeDecision(
                    member, "", bool(start.states), "first screen of a demonstration"
                )
                if start.states:
                    fits, _, weakest, quick = _linkage(features, start, settings)
                    verdict = quick or compare_features(features, start.features[weakest], settings)
                    decision = MergeDecision(
                        member, "", True, decision.reason, start.states[weakest].member, verdict
                    )
                    if not fits:
                        warnings.append(
                            f"demonstration {item.demo.id} starts on a screen that does not look "
                            f"like the other start screens ({verdict.describe()})"
                        )
            else:
                target, decision = _place(state, features, category, clusters, lookup, settings)
            if target is None:
                target = _Cluster(category, [], [])
                clusters.append(target)
            target.states.append(state)
            target.features.append(features)
            if category is NodeKind.DONE and target.kind is NodeKind.STATE:
                target.kind = NodeKind.DONE  # it now holds an end screen
            if group is not None:
                group_cluster.setdefault(group, target)
            placed[(item.demo.id, index)] = target
            decisions.append(decision)

    refused = _join_must_links(clusters, placed, lookup)
    _name_clusters(clusters)
    node_of = {MemberRef(*key): cluster.node_id for key, cluster in placed.items()}
    decided = outcomes(constraints, node_of, refused)
    warnings += [o.describe() for o in decided if not o.honoured]
    decisions = [
        MergeDecision(
            d.member,
            placed[(d.member.demo_id, d.member.step)].node_id,
            d.joined,
            d.reason,
            d.compared_with,
            d.verdict,
        )
        for d in decisions
    ]
    nodes, representatives = _nodes(clusters, settings)
    edges = _edges(usable, placed, settings)
    graph = TaskGraph(
        task_id=task,
        nodes=nodes,
        edges=edges,
        pins=pin_list,
        meta={
            "demos": [item.demo.id for item in usable],
            "settings": given.to_json(),  # the typed texts stay in the demonstrations
            **({"learned_ambient": list(learned)} if learned else {}),
        },
    )
    return BuildResult(
        graph=graph,
        warnings=tuple(warnings),
        decisions=tuple(decisions),
        skipped=tuple(skipped),
        stale_pins=tuple(lookup.stale_pins),
        constraints=decided,
        representatives=representatives,
        repairs=tuple(repairs),
        learned_ambient=learned,
    )


def _learned_slots(usable: Sequence[DemoInput], settings: SimilaritySettings) -> tuple[str, ...]:
    """Ambient slots the task's own screens reveal, not yet in the settings."""
    if not settings.learn_ambient:
        return ()
    screens = [
        (item.demo.id, tokens)
        for item in usable
        for state in item.states
        if (tokens := screen_features(state, settings).tokens) is not None
    ]
    known = set(settings.ambient_slots)
    return tuple(s for s in learn_ambient_slots(screens, settings) if s not in known)


def _repairs(state: Screen) -> tuple[str, ...]:
    hierarchy = state.hierarchy()  # already parsed by _usable
    return hierarchy.repairs if hierarchy is not None else ()


def _place(
    state: Screen,
    features: Features,
    category: NodeKind,
    clusters: list[_Cluster],
    rules: MergeRules,
    settings: SimilaritySettings,
) -> tuple[_Cluster | None, MergeDecision]:
    """The best node a screen fits (complete linkage), or None with the closest miss."""
    member = state.member or MemberRef("?", 0)
    # An end screen may join a state node (which then becomes DONE) but never START, so
    # a task whose end looks like its start keeps a DONE node.
    allowed = (
        (NodeKind.STATE, NodeKind.DONE)
        if category is NodeKind.DONE
        else (NodeKind.START, NodeKind.STATE, NodeKind.DONE)
    )
    best: tuple[float, _Cluster, int, Verdict | None] | None = None
    closest: tuple[float, _Cluster, int, Verdict | None] | None = None
    for cluster in clusters:
        if cluster.kind not in allowed or not cluster.states:
            continue
        if not rules.allows(member, (s.member for s in cluster.states if s.member)):
            continue
        fits, score, weakest, verdict = _linkage(features, cluster, settings)
        if fits and (best is None or score > best[0]):
            best = (score, cluster, weakest, verdict)
        if not fits and (closest is None or score > closest[0]):
            closest = (score, cluster, weakest, verdict)
    if best is not None:
        _, cluster, weakest, verdict = best
        return cluster, MergeDecision(
            member,
            "",
            True,
            "same screen as every member checked",
            cluster.states[weakest].member,
            verdict,
        )
    if closest is not None:
        _, cluster, weakest, verdict = closest
        verdict = verdict or compare_features(features, cluster.features[weakest], settings)
        return None, MergeDecision(
            member, "", False, "new node; no node fits", cluster.states[weakest].member, verdict
        )
    return None, MergeDecision(member, "", False, "new node; nothing to compare with")


def _join_must_links(
    clusters: list[_Cluster], placed: dict[tuple[str, int], _Cluster], rules: MergeRules
) -> dict[tuple[MemberRef, MemberRef], str]:
    """Join the nodes of must-linked steps (in the order they were decided); returns
    why each join that was refused was refused."""
    refused: dict[tuple[MemberRef, MemberRef], str] = {}
    for link in rules.must_links:
        keep, other = placed[(link.a.demo_id, link.a.step)], placed[(link.b.demo_id, link.b.step)]
        if keep is other:
            continue
        kinds = {keep.kind, other.kind}
        if {NodeKind.START, NodeKind.DONE} <= kinds:
            refused[link.pair] = "one holds the first screens (START), the other an end screen"
            continue
        if rules.apart(keep.members, other.members):
            refused[link.pair] = "they hold screens that must stay apart (cannot-link or split)"
            continue
        if other.kind is NodeKind.START or (
            other.kind is NodeKind.DONE and keep.kind is NodeKind.STATE
        ):
            keep, other = other, keep  # the joined node keeps the stronger kind
        keep.states += other.states
        keep.features += other.features
        for key, cluster in placed.items():
            if cluster is other:
                placed[key] = keep
        clusters.remove(other)
    return refused


def _name_clusters(clusters: list[_Cluster]) -> None:
    """Readable, stable ids: start, n1, n2, ..., done, done2, ..."""
    counters = {NodeKind.STATE: 0, NodeKind.DONE: 0}
    for cluster in clusters:
        if cluster.kind is NodeKind.START:
            cluster.node_id = "start"
            continue
        counters[cluster.kind] += 1
        k = counters[cluster.kind]
        cluster.node_id = (
            f"n{k}" if cluster.kind is NodeKind.STATE else ("done" if k == 1 else f"done{k}")
        )


def _medoid(cluster: _Cluster, settings: SimilaritySettings) -> int:
    """The member most similar to the others (over a sample for large nodes)."""
    if len(cluster.features) <= 2:
        return 0
    sample = _sample(len(cluster.features), max(settings.linkage_sample, 3))
    best, best_total = 0, -math.inf
    for i in sample:
        total = sum(
            compare_features(cluster.features[i], cluster.features[j], settings).score
            for j in sample
            if j != i
        )
        if total > best_total:
            best, best_total = i, total
    return best


def _nodes(
    clusters: list[_Cluster], settings: SimilaritySettings
) -> tuple[tuple[Node, ...], dict[str, Screen]]:
    nodes: list[Node] = []
    representatives: dict[str, Screen] = {}
    for cluster in clusters:
        if not cluster.states:
            continue
        rep = _medoid(cluster, settings)
        state, features = cluster.states[rep], cluster.features[rep]
        members = cluster.members
        if state.member is not None:  # the representative comes first
            members.remove(state.member)
            members.insert(0, state.member)
        digits = (features.bits + 3) // 4
        nodes.append(
            Node(
                id=cluster.node_id,
                kind=cluster.kind,
                screenshot=f"{NODES_DIR}/{cluster.node_id}.png",
                hierarchy=f"{NODES_DIR}/{cluster.node_id}.xml" if state.has_hierarchy else None,
                activity=state.activity,
                screen=state.size,
                phash=f"{hash_prefix(settings)}:{features.hash:0{digits}x}",
                members=tuple(members),
            )
        )
        representatives[cluster.node_id] = state
    order = {NodeKind.START: 0, NodeKind.STATE: 1, NodeKind.DONE: 2}
    nodes.sort(key=lambda n: order[n.kind])  # stable: creation order within a kind
    return tuple(nodes), representatives


# --------------------------------------------------------------------------- edges


@dataclass(slots=True)
class _EdgeGroup:
    source: str
    target: str
    type: ActionType
    supports: list[EdgeSupport]
    points: list[tuple[float, float]]  # normalized
    elements: list[ElementRef | None]  # normalized
    texts: list[str]


def target_element(action: Action, state: Screen) -> ElementRef | None:
    """The element a pointed action targeted, in ``[0,1000]`` space.

    From the action itself when the recorder stored it, else looked up in the pre-action
    hierarchy. None when neither is available.
    """
    if action.element is not None:
        return action.normalized().element
    hierarchy = state.hierarchy()
    if hierarchy is None or action.point is None:
        return None
    screen = state.size
    device = action.rescaled(screen)
    assert device.x is not None and device.y is not None
    element = hierarchy.element_at(device.x, device.y)
    return element.ref().rescaled(screen, NORMALIZED_SCREEN) if element is not None else None


def _same_element(a: ElementRef | None, b: ElementRef | None) -> bool:
    if a is None or b is None:
        return False
    same_id = (a.resource_id, a.class_name, a.text, a.content_desc) == (
        b.resource_id,
        b.class_name,
        b.text,
        b.content_desc,
    )
    return same_id and _iou(a.bounds, b.bounds) >= 0.5


def _iou(a: Bounds, b: Bounds) -> float:
    w = min(a.right, b.right) - max(a.left, b.left)
    h = min(a.bottom, b.bottom) - max(a.top, b.top)
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / (a.area + b.area - inter)


def _same_meaning(
    group: _EdgeGroup,
    action: Action,
    point: tuple[float, float] | None,
    element: ElementRef | None,
    settings: SimilaritySettings,
) -> bool:
    if group.type is not action.type:
        return False
    if action.type.is_pointed:
        assert point is not None
        return any(_same_element(element, e) for e in group.elements) or any(
            math.dist(point, p) <= settings.point_tolerance for p in group.points
        )
    if action.type is ActionType.SWIPE:
        return group.supports[0].action.direction == action.direction
    if action.type is ActionType.TYPE:
        return normalize_text(group.texts[0]) == normalize_text(action.text or "")
    return True


def _edges(
    demos: list[DemoInput],
    placed: Mapping[tuple[str, int], _Cluster],
    settings: SimilaritySettings,
) -> tuple[Edge, ...]:
    groups: list[_EdgeGroup] = []
    by_pair: dict[tuple[str, str], list[_EdgeGroup]] = {}
    for item in demos:
        for index, step in enumerate(item.demo.steps[:-1]):
            if item.demo.steps[index + 1].jumped:
                continue  # the person jumped there; no action of theirs leads across
            source = placed[(item.demo.id, index)].node_id
            target = placed[(item.demo.id, index + 1)].node_id
            action, state = step.action, item.states[index]
            point = element = None
            if action.type.is_pointed:
                point = action.normalized().point
                element = target_element(action, state)
            support = EdgeSupport(MemberRef(item.demo.id, index), action)
            pair = by_pair.setdefault((source, target), [])
            group = next(
                (g for g in pair if _same_meaning(g, action, point, element, settings)), None
            )
            if group is None:
                group = _EdgeGroup(source, target, action.type, [], [], [], [])
                pair.append(group)
                groups.append(group)
            group.supports.append(support)
            group.elements.append(element)
            if point is not None:
                group.points.append(point)
            if action.text and action.text not in group.texts:
                group.texts.append(action.text)
    return tuple(
        Edge(
            id=f"e{i}",
            source=g.source,
            target=g.target,
            rule=_rule(g, settings),
            support=tuple(g.supports),
        )
        for i, g in enumerate(groups, start=1)
    )


def _rule(group: _EdgeGroup, settings: SimilaritySettings) -> MatchRule:
    t = group.type
    if t.is_pointed:
        return MatchRule(
            action_type=t,
            bounds=_common_bounds(group.elements, settings),
            points=tuple(group.points),
            radius=settings.tap_radius,
        )
    if t is ActionType.SWIPE:
        return MatchRule(action_type=t, direction=group.supports[0].action.direction)
    if t is ActionType.TYPE:
        return MatchRule(
            action_type=t, texts=tuple(group.texts), text_threshold=settings.text_threshold
        )
    return MatchRule(action_type=t)


def _common_bounds(
    elements: list[ElementRef | None], settings: SimilaritySettings
) -> Bounds | None:
    """The target's bounds when every support hit the same, not too large, element."""
    first = elements[0]
    if first is None or not all(_same_element(first, e) for e in elements[1:]):
        return None
    screen_area = NORMALIZED_SCREEN[0] * NORMALIZED_SCREEN[1]
    if first.bounds.area > settings.max_element_area * screen_area:
        return None  # a container as large as the screen would accept any tap
    return first.bounds


def _pin_text(pin: Pin) -> str:
    members = ", ".join(str(m) for m in pin.members)
    others = ", ".join(str(m) for m in pin.others)
    return f"{pin.kind.value} [{members}]" + (f" apart from [{others}]" if others else "")
