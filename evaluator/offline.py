"""The offline protocol (ElderBench H.2): walk a task graph with an agent.

The agent starts at START and sees the node's representative screenshot (and hierarchy).
Each action is matched against the node's outgoing edges (``evaluator.matching``, under
the run's matching profile). A match moves to the edge's target. An unmatched action fails
the task in strict mode, and leaves the agent on the same node in tolerant mode; a
``wait`` with no wait edge stays on the node in both. Success means saying ``done`` on a
DONE node.

Decisions and CR are scored by ``evaluator.progress`` (loops, detours and no-ops earn
nothing). A reflection on the previous step is correct when it says ``correct`` after a
matched action, or ``wrong`` / ``no_change`` after an unmatched one (offline the agent is
shown the same screen again, so either reading is right).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from evaluator.agents.base import (
    Agent,
    AgentObservation,
    AgentStep,
    ReflectionVerdict,
    SendsScreenshots,
    timed_step,
)
from evaluator.control import Control
from evaluator.errors import AgentError, TaskSetupError
from evaluator.matching import (
    ELDERBENCH,
    MatchingProfile,
    ScreenElements,
    match_edges,
    profile_named,
)
from evaluator.progress import EpisodeScorer, GraphDistances
from evaluator.records import StepRecord, TaskResult, agent_error_result, episode_result
from evaluator.request_image import prepare_ahead
from evaluator.task_actions import (
    Episode,
    action_problem,
    graph_packages,
    match_launch,
    user_error_result,
)
from evaluator.users import User, UserSimulatorError
from graph_builder.errors import GraphBuilderError
from graph_builder.io import GRAPH_FILE, load_graph
from graph_builder.model import (
    Action,
    ActionType,
    Edge,
    InstructionVariant,
    NodeKind,
    Task,
    TaskGraph,
)
from graph_builder.screen import Screen
from graph_builder.validate import Severity, validate_graph


class Mode(StrEnum):
    STRICT = "strict"
    TOLERANT = "tolerant"


@dataclass(frozen=True, slots=True)
class OfflineSettings:
    mode: Mode = Mode.STRICT
    max_steps: int | None = None  # None: the task's own max_steps
    matching: MatchingProfile = ELDERBENCH

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", Mode(self.mode))
        if isinstance(self.matching, str):
            object.__setattr__(self, "matching", profile_named(self.matching))
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError("max_steps must be at least 1")


def graph_problems(graph: TaskGraph) -> list[str]:
    """Why the offline protocol cannot use ``graph`` (empty when it can): the validator's
    errors, and a START from which no DONE node can be reached."""
    problems = [str(p) for p in validate_graph(graph) if p.severity is Severity.ERROR]
    start = graph.start
    if not problems and start is not None and start.id not in GraphDistances(graph).distance:
        problems.append("no DONE node can be reached from START")
    return problems


class GraphContext:
    """A task graph prepared for walking: edges by source, one lazily loaded Screen per node,
    and the ground-truth step count (shortest START->DONE path plus the final ``done``)."""

    __slots__ = ("graph", "task_dir", "_out", "_screens", "gt_steps", "distances")

    def __init__(self, graph: TaskGraph, task_dir: Path) -> None:
        problems = graph_problems(graph)
        if problems:
            raise TaskSetupError(
                f"the graph of {graph.task_id} is not usable: {'; '.join(problems)}. "
                "Fix it in the graph editor or rebuild it."
            )
        self.graph = graph
        self.task_dir = Path(task_dir)
        self._out: dict[str, tuple[Edge, ...]] = {n.id: () for n in graph.nodes}
        for e in graph.edges:
            self._out[e.source] = (*self._out[e.source], e)
        self._screens: dict[str, Screen] = {}
        self.distances = GraphDistances(graph)
        start = graph.start
        assert start is not None
        self.gt_steps = self.distances.distance[start.id] + 1

    def progress(self, first: str | None) -> EpisodeScorer:
        """A fresh scorer for one episode that starts on ``first``."""
        return EpisodeScorer(self.distances, first)

    @classmethod
    def load(cls, task_dir: Path) -> GraphContext:
        """Load ``<task_dir>/graph.json``; a missing or invalid graph is a TaskSetupError."""
        task_dir = Path(task_dir)
        if not (task_dir / GRAPH_FILE).is_file():
            raise TaskSetupError(
                f"task {task_dir.name} has no {GRAPH_FILE}: build its graph from demonstrations "
                "(elderbench build) or run it online"
            )
        try:
            graph = load_graph(task_dir)
        except GraphBuilderError as exc:
            raise TaskSetupError(f"cannot load the graph of {task_dir.name}: {exc}") from exc
        return cls(graph, task_dir)

    def out_edges(self, node_id: str) -> tuple[Edge, ...]:
        return self._out.get(node_id, ())

    def next_screens(self, node_id: str) -> list[Screen]:
        """The screens a step from ``node_id`` can lead to along the graph's edges."""
        targets = dict.fromkeys(e.target for e in self.out_edges(node_id) if e.target != node_id)
        return [self.screen(target) for target in targets]

    def screen(self, node_id: str) -> Screen:
        screen = self._screens.get(node_id)
        if screen is None:
            node = self.graph.node(node_id)
            screen = Screen(
                node.screen,
                screenshot_path=self.task_dir / node.screenshot,
                hierarchy_path=self.task_dir / node.hierarchy if node.hierarchy else None,
                activity=node.activity,
                phash=node.phash,
            )
            self._screens[node_id] = screen
        return screen


def reflection_truth(previous: StepRecord | None) -> frozenset[ReflectionVerdict] | None:
    """The verdicts that are right about ``previous`` (None: nothing to judge)."""
    if previous is None or previous.action is None or previous.matched is None:
        return None
    if previous.matched:
        return frozenset({ReflectionVerdict.CORRECT})
    if previous.screen_changed:
        return frozenset({ReflectionVerdict.WRONG})
    if previous.screen_changed is False:
        return frozenset({ReflectionVerdict.NO_CHANGE, ReflectionVerdict.WRONG})
    return None


def score_reflection(step: AgentStep, previous: StepRecord | None) -> bool | None:
    truth = reflection_truth(previous)
    if step.reflection is None or truth is None:
        return None
    return step.reflection in truth


StepCallback = Callable[[StepRecord], None]


def run_offline(
    task: Task,
    context: GraphContext,
    agent: Agent,
    *,
    variant: InstructionVariant = InstructionVariant.ORIGINAL,
    settings: OfflineSettings | None = None,
    control: Control | None = None,
    on_step: StepCallback | None = None,
    clock: Callable[[], float] | None = None,
    user: User | None = None,
) -> TaskResult:
    """Run one task offline. An agent that cannot answer makes the task an error (with
    what it spent), and so does a simulated ``user`` that cannot (kind
    ``user_simulator``); setup errors propagate (the runner records them). Without a
    ``user``, the task's scripted clarifications answer."""
    now = clock or time.time
    settings = settings or OfflineSettings()
    control = control or Control()
    graph = context.graph
    start = graph.start
    assert start is not None
    max_steps = settings.max_steps or task.max_steps
    instruction = task.instruction_for(variant)
    started = now()
    agent.reset(task, variant)

    node = start.id
    progress = context.progress(node)
    records: list[StepRecord] = []
    terminated = False
    reason: str | None = None
    episode = Episode(task, user) if user is not None else Episode(task)
    packages = [*graph_packages(graph), task.app]
    user_reply: str | None = None
    outcome: str | None = None
    # The next screens' request images are prepared while the model thinks about this one.
    ahead = agent.image_request() if isinstance(agent, SendsScreenshots) else None
    for index in range(max_steps):
        control.checkpoint()
        screen = context.screen(node)
        if ahead is not None:
            prepare_ahead(context.next_screens(node), max_side=ahead[0], fmt=ahead[1])
        observation = AgentObservation(
            task.id, instruction, index, screen, node_id=node, graph=graph, user_reply=user_reply
        )
        user_reply = None
        try:
            step = timed_step(agent, observation)
        except AgentError as exc:  # the task errors, with what the failed step spent
            return agent_error_result(
                task,
                records,
                exc,
                protocol="offline",
                variant=variant,
                model=getattr(agent, "model", None),
                started=started,
                finished=now(),
                user_usage=episode.user_usage,
            )
        previous = records[-1] if records else None
        common = _step_fields(
            index, node, f"{task.id}/{graph.node(node).screenshot}", screen, step, previous
        )
        action = step.action
        stop_reason: str | None = None
        problem = action_problem(action, graph.node(node).screen) if action else None
        if action is None or problem is not None:
            record, stop_reason = _invalid_step(common, action, problem, step, node)
        elif action.type in (ActionType.ANSWER, ActionType.ASK_USER, ActionType.GIVE_UP):
            episode.note(action)
            record, user_reply, outcome, stop, failed = _task_decision(
                common, action, node, episode, instruction, screen
            )
            if failed is not None:  # the simulated user gave no reply: a harness error
                records.append(record)
                if on_step is not None:
                    on_step(record)
                return user_error_result(
                    task, records, failed, episode, "offline", variant, agent, started, now()
                )
            records.append(record)
            if on_step is not None:
                on_step(record)
            if stop is not None:
                reason = stop
                break
            continue
        elif action.type is ActionType.DONE:
            episode.note(action)
            at_done = progress.done(node)
            record = StepRecord(
                **common,
                action=action.to_json(),
                action_text="done",
                decision_correct=at_done,
                decision_note="done on DONE node" if at_done else "done on non-DONE node",
                next_node=node,
                rule="done on DONE node" if at_done else "done on non-DONE node",
            )
        else:
            record, stop_reason = _graph_step(
                common, action, node, screen, context, packages, settings, progress
            )
        records.append(record)
        if on_step is not None:
            on_step(record)
        if action is not None and action.type is ActionType.DONE:
            terminated = True
            if record.decision_correct is not True:
                reason = f"said done on {node}, which is not a DONE node"
            break
        if stop_reason is not None and settings.mode is Mode.STRICT:
            reason = stop_reason
            break
        node = record.next_node or node
    else:
        reason = f"reached max_steps ({max_steps}) at node {node} without saying done"

    success = terminated and graph.node(node).kind is NodeKind.DONE
    if success and episode.answer_problem() is not None:
        success, reason = False, episode.answer_problem()
    return episode_result(
        task,
        records,
        protocol="offline",
        variant=variant,
        success=success,
        terminated=terminated,
        reason=reason,
        outcome=outcome,
        answer=episode.answer,
        answer_correct=episode.answer_correct,
        user_usage=episode.user_usage,
        final_node=node,
        matched_steps=progress.completed,
        gt_steps=context.gt_steps,
        model=getattr(agent, "model", None),
        started=started,
        finished=now(),
    )


def _step_fields(
    index: int,
    node: str,
    screenshot: str,
    screen: Screen,
    step: AgentStep,
    previous: StepRecord | None,
) -> dict[str, Any]:
    """What every offline step record holds, whatever the action."""
    return dict(
        index=index,
        node=node,
        screenshot=screenshot,
        activity=screen.activity,
        raw_output=step.raw_output,
        reasoning=step.reasoning,
        parse_error=step.parse_error,
        reflection=step.reflection.value if step.reflection else None,
        reflection_correct=score_reflection(step, previous),
        input_tokens=step.input_tokens,
        output_tokens=step.output_tokens,
        inference_seconds=step.inference_seconds,
        parsing_seconds=step.parsing_seconds,
        retry_seconds=step.retry_seconds,
        extra=step.extra,
    )


def _invalid_step(
    common: dict[str, Any], action: Action | None, problem: str | None, step: AgentStep, node: str
) -> tuple[StepRecord, str]:
    """The record of a reply that is no action (parse failure) or an action that cannot
    be carried out, and why it stops the episode in strict mode."""
    index = common["index"]
    if action is None:
        kind = step.outcome.value if step.outcome else "parse_error"
        why = "parse failure" if kind == "parse_error" else "invalid action"
        record = StepRecord(
            **common,
            outcome=kind,
            decision_correct=False,
            decision_note=why,
            next_node=node,
            rule=why,
        )
        return record, f"{why} at step {index + 1}: {step.parse_error}"
    record = StepRecord(
        **common,
        action=action.to_json(),
        action_text=action.describe(),
        outcome="invalid_action",
        decision_correct=False,
        decision_note="invalid action",
        next_node=node,
        rule=problem or "invalid action",
    )
    return record, f"invalid action at step {index + 1}: {problem}"


def _graph_step(
    common: dict[str, Any],
    action: Action,
    node: str,
    screen: Screen,
    context: GraphContext,
    packages: list[str],
    settings: OfflineSettings,
    progress: EpisodeScorer,
) -> tuple[StepRecord, str | None]:
    """The record of an action that may move along an edge, and why it stops the episode
    in strict mode (None: it matched, or stays on the node)."""
    graph = context.graph
    if action.type is ActionType.LAUNCH:
        match = match_launch(context.out_edges(node), graph, node, action.text or "", packages)
    else:
        profile = settings.matching
        match = match_edges(
            context.out_edges(node),
            action,
            screen=graph.node(node).screen,
            profile=profile,
            elements=ScreenElements.of_screen(screen) if profile.needs_elements else None,
        )
    target = match.edge.target if match.edge else node
    correct, note = progress.step(node, target, followed=match.edge.target if match.edge else None)
    record = StepRecord(
        **common,
        action=action.to_json(),
        action_text=screen.describe(action),
        matched=match.matched,
        edge=match.edge.id if match.edge else None,
        rule=match.reason,
        next_node=target,
        decision_correct=correct,
        decision_note=note,
        screen_changed=target != node,
    )
    stop = None
    if not match.matched and not match.stays:
        # Step numbers people read count from 1, as the studio's trace and live view do.
        stop = f"unmatched action at step {common['index'] + 1}: {match.reason}"
    return record, stop


def _task_decision(
    common: dict[str, Any],
    action: Action,
    node: str,
    episode: Episode,
    instruction: str,
    screen: Screen,
) -> tuple[StepRecord, str | None, str | None, str | None, UserSimulatorError | None]:
    """The record of an answer, a question to the user or giving up (all stay on ``node``),
    the user's reply for the next step, the episode's outcome, why it stops (None: it goes
    on), and the simulated user's failure to answer (None: it answered, or was not asked)."""
    t = action.type
    reply: str | None = None
    failed: UserSimulatorError | None = None
    extra = dict(common.get("extra") or {})
    if t is ActionType.ANSWER:
        kind, rule, stop = "answered", "answer recorded", None
    elif t is ActionType.ASK_USER:
        kind = "asked_user"
        try:
            exchange = episode.ask(
                action.text, step=common["index"], instruction=instruction, screenshot=screen.image
            )
        except UserSimulatorError as exc:
            failed, rule, stop = (
                exc,
                "asked the user; the simulated user gave no usable reply",
                None,
            )
        else:
            reply = exchange.reply
            extra["user"] = exchange.to_json()
            if reply is not None:
                extra["user_reply"] = reply
                rule, stop = f"asked the user; the {exchange.source} user replied", None
            else:
                rule = "asked the user; the task scripts no reply"
                question = f" {action.text!r}" if action.text else ""
                stop = f"asked the user{question} and the task scripts no reply"
    else:
        kind, rule = "gave_up", "gave up"
        stop = f"gave up{': ' + action.text if action.text else ''}"
    record = StepRecord(
        **{**common, "extra": extra},
        action=action.to_json(),
        action_text=action.describe(),
        outcome=kind,
        rule=rule,
        next_node=node,
    )
    ended = kind if stop is not None else None
    return record, reply, ended, stop, failed
