"""CR and DA on multi-path task graphs (docs/evaluation.md has a worked example of each).

``d(v)`` is the fewest edges from node ``v`` to a DONE node; the ground truth of a task is
``G = d(START) + 1`` steps (a shortest path plus the final ``done``).

- **CR** of an episode: ``(d(START) - min d(v) over the visited nodes + [done said on a
  DONE node]) / G``. It measures how much of the remaining work the agent's best state
  removed, so loops, detours and no-ops add nothing, and CR is 1 only when the agent said
  ``done`` on a DONE node.
- A **decision** is correct when it moves the agent to a node it has not visited yet, from
  which a DONE node can still be reached without passing a visited node (the step can be
  part of a loop-free path to DONE), along an edge whose rule accepted the action (online:
  the next observed screen maps to that edge's target); or when it says ``done`` on a
  DONE node. Returning to a visited node, staying put, heading into a dead end, and every
  step on or off the graph that does none of this, are wrong.

On a graph that is one path these are Mobile-Agent-v2's CR (correct steps over
ground-truth steps) and DA (correct decisions over decisions).

>>> from graph_builder.model import Edge, MatchRule, Node, NodeKind, TaskGraph
>>> def node(i, kind): return Node(i, kind, f"nodes/{i}.png", (1080, 2400))
>>> g = TaskGraph("t", (node("s", NodeKind.START), node("a", NodeKind.STATE),
...     node("d", NodeKind.DONE)), (Edge("1", "s", "a", MatchRule("back")),
...     Edge("2", "a", "s", MatchRule("home")), Edge("3", "a", "d", MatchRule("back"))))
>>> p = EpisodeScorer(GraphDistances(g), "s")
>>> p.step("s", "a", followed="a"), p.step("a", "s", followed="s")
((True, 'progress'), (False, 'back to visited node s'))
>>> p.completed, p.gt_steps
(1, 3)
"""

from __future__ import annotations

from collections import deque

from graph_builder.model import NodeKind, TaskGraph


class GraphDistances:
    """Edges by node and each node's distance ``d(v)`` to the nearest DONE node."""

    __slots__ = ("out", "done", "distance", "start")

    def __init__(self, graph: TaskGraph) -> None:
        self.out: dict[str, set[str]] = {n.id: set() for n in graph.nodes}
        incoming: dict[str, set[str]] = {n.id: set() for n in graph.nodes}
        for e in graph.edges:
            self.out.setdefault(e.source, set()).add(e.target)
            incoming.setdefault(e.target, set()).add(e.source)
        self.done = frozenset(n.id for n in graph.nodes if n.kind is NodeKind.DONE)
        self.distance: dict[str, int] = {d: 0 for d in self.done}
        queue = deque(self.done)
        while queue:
            node = queue.popleft()
            for source in incoming.get(node, ()):
                if source not in self.distance:
                    self.distance[source] = self.distance[node] + 1
                    queue.append(source)
        start = graph.start
        self.start = start.id if start is not None else None

    def reaches_done(self, node: str, avoiding: set[str]) -> bool:
        """Whether a DONE node is reachable from ``node`` through nodes not in ``avoiding``."""
        seen, queue = {node}, deque([node])
        while queue:
            current = queue.popleft()
            if current in self.done:
                return True
            for nxt in self.out.get(current, ()):
                if nxt not in seen and nxt not in avoiding:
                    seen.add(nxt)
                    queue.append(nxt)
        return False


class EpisodeScorer:
    """One episode's walk over a graph: which decisions were correct, and its CR."""

    def __init__(self, distances: GraphDistances, first: str | None) -> None:
        self.g = distances
        assert distances.start is not None
        self.reference = distances.distance[distances.start]
        self.gt_steps = self.reference + 1
        self.visited: set[str] = set()
        self.best = self.reference
        self.said_done = False
        if first is not None:
            self._visit(first)

    def _visit(self, node: str) -> None:
        self.visited.add(node)
        self.best = min(self.best, self.g.distance.get(node, self.best))

    def step(
        self, source: str | None, observed: str | None, *, followed: str | None
    ) -> tuple[bool, str]:
        """Score one non-done decision taken on ``source`` (None: off-graph) that led to
        ``observed`` (None: off-graph). ``followed`` is the target of the edge whose rule
        accepted the action and that the observation agrees with (None: no such edge)."""
        verdict = self._judge(source, observed, followed)
        if observed is not None:
            self._visit(observed)
        return verdict

    def _judge(
        self, source: str | None, observed: str | None, followed: str | None
    ) -> tuple[bool, str]:
        if observed is None:
            return False, "off the graph after this step"
        if source is not None and followed is None:
            return False, "follows no edge"
        if followed is not None and followed != observed:
            return False, f"the screen maps to {observed}, not the edge's target {followed}"
        if observed == source:
            return False, "no change"
        if observed in self.visited:
            return False, f"back to visited node {observed}"
        if not self.g.reaches_done(observed, self.visited):
            return False, f"no DONE node reachable from {observed} without revisiting"
        return True, "progress"

    def done(self, node: str | None) -> bool:
        """Score a ``done`` said on ``node``: correct only on a DONE node."""
        correct = node is not None and node in self.g.done
        self.said_done = self.said_done or correct
        return correct

    @property
    def completed(self) -> int:
        """Ground-truth steps the episode covered (the numerator of CR)."""
        return self.reference - self.best + (1 if self.said_done else 0)
