"""How much a finished run's verdicts depend on the matching profile.

Every recorded step taken on a graph node is matched again under each other matching
profile (``evaluator.matching.PROFILES``). A step is judged differently when another edge,
or no edge instead of one (or one instead of none), would have been followed. The first
such step of a task is where its episode would have gone another way; later steps are
counted as they were recorded.

A replayed demonstration taps well inside its targets, so no profile judges it otherwise:

>>> import tempfile
>>> from importlib.resources import files
>>> from evaluator.runner import RunConfig, run_suite
>>> tmp = tempfile.TemporaryDirectory()
>>> suite = files("task_graphs") / "sample"
>>> _ = run_suite(RunConfig(suite=suite, out=Path(tmp.name) / "run", agent="replay",
...                         tasks=("font_bigger",)))
>>> found = profile_sensitivity(RunStore.open(Path(tmp.name) / "run"), suite, "elderbench")
>>> {profile: (d.scored_steps, d.steps, d.tasks) for profile, d in found.items()}
{'aitw': (3, 0, 0), 'gui_odyssey': (3, 0, 0), 'androidcontrol': (3, 0, 0), 'colorbench': (3, 0, 0)}
>>> tmp.cleanup()
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.errors import EvaluatorError
from evaluator.matching import PROFILES, ScreenElements, match_edges
from evaluator.offline import GraphContext
from evaluator.records import StepRecord, TaskResult
from evaluator.run_store import RunStore
from graph_builder.errors import GraphBuilderError
from graph_builder.model import Action, ActionType


@dataclass(frozen=True, slots=True)
class Divergence:
    """Under one profile: the steps judged differently, and per task its first such step."""

    profile: str
    steps: int
    scored_steps: int
    first: dict[str, int] = field(default_factory=dict)

    @property
    def tasks(self) -> int:
        return len(self.first)


def _edge_under(context: GraphContext, step: StepRecord, profile: str) -> str | None:
    assert step.node is not None and step.action is not None
    action = Action.from_json(step.action)
    node = context.graph.node(step.node)
    chosen = PROFILES[profile]
    elements = (
        ScreenElements.of_screen(context.screen(step.node)) if chosen.needs_elements else None
    )
    match = match_edges(
        context.out_edges(step.node), action, screen=node.screen, profile=chosen, elements=elements
    )
    return match.edge.id if match.edge else None


def _matchable(step: StepRecord) -> bool:
    return (
        step.node is not None
        and step.action is not None
        and step.action.get("type") not in (ActionType.DONE.value, None)
    )


def _task_differences(
    steps: Sequence[StepRecord], context: GraphContext, used: str, others: list[str]
) -> list[tuple[int, list[str]]]:
    """Each scored step of a task: its index and the profiles that judge it otherwise."""
    out = []
    for step in steps:
        if not _matchable(step) or step.node not in context.distances.out:
            continue
        recorded = _edge_under(context, step, used)
        out.append((step.index, [p for p in others if _edge_under(context, step, p) != recorded]))
    return out


def profile_sensitivity(
    store: RunStore, suite: Path, used: str, results: Sequence[TaskResult] | None = None
) -> dict[str, Divergence]:
    """For every profile other than ``used``: how many steps and tasks it judges otherwise.
    Tasks whose graph no longer loads, or one of whose node hierarchies (which some
    profiles read) no longer parses, are left out."""
    results = store.results() if results is None else results
    others = [p for p in PROFILES if p != used]
    counts = {p: 0 for p in others}
    firsts: dict[str, dict[str, int]] = {p: {} for p in others}
    scored = 0
    for result in results:
        if result.gt_steps is None:
            continue
        steps = store.read_steps(result.task_id)
        try:
            context = GraphContext.load(Path(suite) / result.task_id)
            differing = _task_differences(steps, context, used, others)
        except (EvaluatorError, GraphBuilderError):
            continue
        for index, profiles in differing:
            scored += 1
            for p in profiles:
                counts[p] += 1
                firsts[p].setdefault(result.task_id, index)
    return {p: Divergence(p, counts[p], scored, firsts[p]) for p in others}
