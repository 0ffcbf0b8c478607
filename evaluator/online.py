"""The online protocol (ElderBench section 4): run an agent on a live device.

Reset the app with the task's ResetRecipe, then loop observe -> agent -> perform -> settle
until the agent says done or ``max_steps`` is reached. Every screen is stored in the
trace. Success means the agent terminated AND the judges verified the final state.

When the task also has a graph, every observed screen is mapped onto a graph node with
``graph_builder.similarity.compare`` (the node whose representative is the *same* state
with the highest score), and decisions and CR are scored by ``evaluator.progress`` on what
happened: a step counts only when its action follows an edge and the next observed screen
maps to that edge's target. Steps on screens that map to no node (off-graph) are decisions
too. A reflection is scored against what happened: ``correct`` after an action
that followed an edge, ``no_change`` when the screen stayed the same, ``wrong`` when it
changed without following an edge (unscored when the state is off-graph).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from devices.device import Device
from devices.errors import DeviceDisconnectedError, DeviceError
from evaluator.agents.base import Agent, AgentObservation, AgentStep, ReflectionVerdict
from evaluator.control import Control
from evaluator.errors import DeviceActionError, DeviceLostError, TaskSetupError
from evaluator.judges import Judge, JudgeEvidence, combine
from evaluator.matching import ELDERBENCH, MatchingProfile, match_edges
from evaluator.offline import GraphContext
from evaluator.records import StepRecord, TaskResult, TaskStatus, Verdict
from evaluator.run_store import TraceWriter
from evaluator.task_actions import Episode, action_problem, graph_packages, resolve_app
from graph_builder.errors import FormatError
from graph_builder.model import Action, ActionType, InstructionVariant, ResetRecipe, Task
from graph_builder.screen import Screen
from graph_builder.similarity import SimilaritySettings, compare


@dataclass(frozen=True, slots=True)
class OnlineSettings:
    max_steps: int | None = None  # None: the task's own max_steps
    settle_timeout: float = 3.0
    judge_frames: int = 3
    matching: MatchingProfile = ELDERBENCH
    max_wait: float = 10.0  # seconds: a longer wait action is cut to this

    def __post_init__(self) -> None:
        if not self.max_wait >= 0:
            raise ValueError(f"max_wait must be a number of seconds >= 0, got {self.max_wait}")


def _wait(action: Action, settings: OnlineSettings, control: Control) -> float | None:
    """Sleep for a wait action, at most ``settings.max_wait`` seconds and never past a stop.
    Returns the seconds waited when the agent asked for longer (None otherwise)."""
    asked = (action.duration_ms if action.duration_ms is not None else 1000) / 1000
    seconds = min(asked, settings.max_wait)
    control.stop.wait(seconds)
    return seconds if seconds < asked else None


def _device_call[T](device: Device, what: str, call: Callable[[], T]) -> T:
    try:
        return call()
    except DeviceDisconnectedError as exc:
        raise DeviceLostError(
            f"device {device.serial} was lost while trying to {what}: {exc}"
        ) from exc
    except DeviceError as exc:
        raise DeviceActionError(f"device {device.serial} could not {what}: {exc}") from exc


@dataclass(slots=True)
class _Seen:
    """One observed screen: as captured, as shown to the agent, its trace files, its node.

    ``screen`` is ``capture`` itself, known by its trace files, and without its hierarchy
    when the dump cannot be parsed.
    """

    index: int
    capture: Screen
    screen: Screen
    png_path: str
    xml_path: str | None
    node: str | None = None


class StateMapper:
    """Maps observed screens onto a task graph's nodes."""

    def __init__(self, context: GraphContext, settings: SimilaritySettings) -> None:
        self.context = context
        self.settings = settings
        self._nodes = [(node.id, context.screen(node.id)) for node in context.graph.nodes]

    def node_for(self, state: Screen) -> tuple[str | None, str]:
        """The best node that is the same state as ``state`` (None: off-graph), and why."""
        best: tuple[float, str] | None = None
        for node_id, reference in self._nodes:
            try:
                verdict = compare(state, reference, settings=self.settings)
            except FormatError:
                continue
            if verdict.same and (best is None or verdict.score > best[0]):
                best = (verdict.score, node_id)
        if best is None:
            return None, "off-graph: no node is the same state"
        return best[1], f"node {best[1]} (score {best[0]:.2f})"


def similarity_settings(context: GraphContext | None) -> SimilaritySettings:
    """The settings the graph was built with (stored in its meta), or the defaults."""
    stored = context.graph.meta.get("settings") if context is not None else None
    if isinstance(stored, Mapping):
        try:
            return SimilaritySettings.from_json(stored)
        except FormatError:
            pass
    return SimilaritySettings()


def online_reflection_truth(previous: StepRecord | None) -> frozenset[ReflectionVerdict] | None:
    if previous is None or previous.action is None or previous.screen_changed is None:
        return None
    if previous.matched:
        return frozenset({ReflectionVerdict.CORRECT})
    if previous.screen_changed is False:
        return frozenset({ReflectionVerdict.NO_CHANGE})
    if previous.matched is False:
        return frozenset({ReflectionVerdict.WRONG})
    return None


def run_online(
    task: Task,
    agent: Agent,
    device: Device,
    trace: TraceWriter,
    *,
    variant: InstructionVariant = InstructionVariant.ORIGINAL,
    settings: OnlineSettings | None = None,
    judges: Sequence[Judge] = (),
    graph: GraphContext | None = None,
    control: Control | None = None,
    on_step: Callable[[StepRecord], None] | None = None,
) -> TaskResult:
    """Run one task on ``device``; device, agent and judge errors propagate."""
    settings = settings or OnlineSettings()
    control = control or Control()
    max_steps = settings.max_steps or task.max_steps
    instruction = task.instruction_for(variant)
    recipe = task.reset or (ResetRecipe(task.app) if task.app else None)
    if recipe is None:
        raise TaskSetupError(f"task {task.id} has no reset recipe and no app; add one to task.json")
    sim = similarity_settings(graph)
    mapper = StateMapper(graph, sim) if graph is not None else None
    started = time.time()

    agent.reset(task, variant)
    _device_call(device, "reset the app", lambda: device.reset_app(recipe))
    _device_call(device, "settle", lambda: device.wait_until_settled(settings.settle_timeout))

    def observe(index: int) -> _Seen:
        capture = _device_call(device, "observe the screen", device.observe)
        png_path = trace.save_file(f"{index:04d}.png", capture.png())
        xml = capture.hierarchy_xml()
        xml_path = trace.save_file(f"{index:04d}.xml", xml) if xml else None
        screen = capture
        try:
            capture.hierarchy()
        except FormatError:
            # an unreadable dump is shown as no hierarchy rather than failing the agent
            screen = capture.without_hierarchy()
        screen = screen.saved_at(
            trace.folder / f"{index:04d}.png",
            trace.folder / f"{index:04d}.xml" if screen.has_hierarchy else None,
        )
        seen = _Seen(index, capture, screen, png_path, xml_path)
        if mapper is not None:
            seen.node, _ = mapper.node_for(seen.screen)
        return seen

    records: list[StepRecord] = []
    seen = observe(0)
    progress = graph.progress(seen.node) if graph is not None else None
    frames: list[bytes] = []
    terminated = False
    episode = Episode(task)
    user_reply: str | None = None
    outcome: str | None = None
    stopped: str | None = None
    for index in range(max_steps):
        control.checkpoint()
        observation = AgentObservation(
            task.id,
            instruction,
            index,
            seen.screen,
            node_id=seen.node,
            graph=graph.graph if graph else None,
            user_reply=user_reply,
        )
        user_reply = None
        step = agent.step(observation)
        action = step.action
        after = seen
        matched: bool | None = None
        edge_id: str | None = None
        rule = ""
        decision: bool | None = None
        note = ""
        step_outcome = step.outcome.value if step.outcome else None
        added: dict[str, Any] = {}
        problem = action_problem(action, seen.capture.size) if action is not None else None
        if action is not None and problem is None and action.type is ActionType.LAUNCH:
            action, problem = _launch_target(action, task, recipe, graph, device)
        if action is None:
            rule = "parse failure" if step_outcome == "parse_error" else "invalid action"
            if progress is not None:
                decision, note = False, rule
        elif problem is not None:
            rule, step_outcome = problem, "invalid_action"
            if progress is not None:
                decision, note = False, "invalid action"
        elif action.type in (ActionType.ANSWER, ActionType.ASK_USER, ActionType.GIVE_UP):
            episode.note(action)
            if action.type is ActionType.ANSWER:
                step_outcome, rule = "answered", "answer recorded"
            elif action.type is ActionType.ASK_USER:
                step_outcome, user_reply = "asked_user", episode.ask()
                if user_reply is not None:
                    added["user_reply"] = user_reply
                    rule = "asked the user; the task's scripted reply is given"
                else:
                    question = f" {action.text!r}" if action.text else ""
                    rule = "asked the user; the task scripts no reply"
                    stopped = f"asked the user{question} and the task scripts no reply"
            else:
                step_outcome, rule = "gave_up", "gave up"
                stopped = f"gave up{': ' + action.text if action.text else ''}"
            outcome = step_outcome if stopped else None
        elif action.type is ActionType.DONE:
            episode.note(action)
            terminated = True
            if progress is not None:
                decision = progress.done(seen.node)
                rule = note = "done on DONE node" if decision else "done on non-DONE node"
        else:
            match = None
            if graph is not None and seen.node is not None:
                match = match_edges(
                    graph.out_edges(seen.node),
                    action,
                    screen=seen.capture.size,
                    profile=settings.matching,
                )
                rule = match.reason
            elif graph is not None:
                rule = "off-graph state"
            if action.type is ActionType.WAIT:
                capped = _wait(action, settings, control)
                if capped is not None:
                    added["wait_capped_to_seconds"] = capped
            else:
                what = f"perform {action.describe()}"
                _device_call(device, what, partial(device.perform, action))
            _device_call(
                device, "settle", lambda: device.wait_until_settled(settings.settle_timeout)
            )
            frames.append(seen.capture.png())
            after = observe(index + 1)
            if progress is not None:
                followed = None
                if match is not None and match.edge is not None:
                    # the edge the phone agrees with, among those the action follows
                    agreeing = [e for e in match.accepted if e.target == after.node]
                    chosen = agreeing[0] if agreeing else match.edge
                    edge_id, followed = chosen.id, chosen.target
                    matched = chosen.target == after.node
                elif match is not None:
                    matched = False
                decision, note = progress.step(seen.node, after.node, followed=followed)
        changed: bool | None = None
        if after is not seen:
            try:
                changed = not compare(seen.screen, after.screen, settings=sim).same
            except FormatError:
                changed = None
        record = _record(
            index,
            seen,
            step,
            records[-1] if records else None,
            matched=matched,
            edge=edge_id,
            rule=rule,
            decision=decision,
            note=note,
            next_node=after.node,
            changed=changed,
            outcome=step_outcome,
            action=action,
            added=added,
        )
        records.append(record)
        if on_step is not None:
            on_step(record)
        seen = after
        if terminated or stopped:
            break

    verdicts: tuple[Verdict, ...] = ()
    if terminated and judges:
        evidence = JudgeEvidence(
            task=task,
            instruction=instruction,
            final_png=seen.capture.png(),
            final_hierarchy_xml=seen.capture.hierarchy_xml() or None,
            final_activity=seen.capture.activity,
            frames=tuple(frames),
            actions=tuple(r.action_text for r in records if r.action_text),
        )
        verdicts = tuple(judge.judge(evidence) for judge in judges)
        trace.write_json("verdicts.json", [v.to_json() for v in verdicts])
    verified = combine(verdicts)
    success = terminated and verified is True
    answer_problem = episode.answer_problem() if terminated else None
    if success and answer_problem is not None:
        success, reason = False, answer_problem
    elif success:
        reason = None
    elif stopped is not None:
        reason = stopped
    elif not terminated:
        reason = f"did not say done within max_steps ({max_steps})"
    elif verified is None:
        reason = (
            "unverified: no judge applies; add success criteria or a rubric, or a human verdict"
        )
    else:
        reason = "verification failed: " + "; ".join(
            f"{v.judge}: {v.reason}" for v in verdicts if v.passed is False
        )
    scored = [r for r in records if r.decision_correct is not None]
    mapped = sum(1 for r in records if r.node is not None) if graph is not None else None
    return TaskResult(
        task_id=task.id,
        status=TaskStatus.SUCCESS if success else TaskStatus.FAILURE,
        protocol="online",
        instruction=instruction,
        variant=InstructionVariant(variant).value,
        app=task.app,
        labels=task.labels,
        terminated=terminated,
        steps=len(records),
        reason=reason,
        outcome=outcome,
        answer=episode.answer,
        answer_correct=episode.answer_correct,
        final_node=seen.node,
        matched_steps=progress.completed if progress is not None else None,
        gt_steps=graph.gt_steps if graph else None,
        mapped_steps=mapped,
        decisions=len(scored),
        correct_decisions=sum(1 for r in scored if r.decision_correct),
        reflections=sum(1 for r in records if r.reflection_correct is not None),
        correct_reflections=sum(1 for r in records if r.reflection_correct),
        parse_failures=sum(1 for r in records if r.parse_error is not None),
        inference_seconds=sum(r.inference_seconds + r.parsing_seconds for r in records),
        input_tokens=sum(r.input_tokens for r in records),
        output_tokens=sum(r.output_tokens for r in records),
        model=getattr(agent, "model", None),
        verification=verdicts,
        device=device.serial,
        started=started,
        finished=time.time(),
    )


def _record(
    index: int,
    seen: _Seen,
    step: AgentStep,
    previous: StepRecord | None,
    *,
    matched: bool | None,
    edge: str | None,
    rule: str,
    decision: bool | None,
    note: str,
    next_node: str | None,
    changed: bool | None,
    outcome: str | None = None,
    action: Action | None = None,
    added: dict[str, Any] | None = None,
) -> StepRecord:
    """``action`` is what was carried out (a launch by label becomes one by package)."""
    action = action or step.action
    truth = online_reflection_truth(previous)
    reflection_correct = (
        None if step.reflection is None or truth is None else step.reflection in truth
    )
    extra: dict[str, Any] = {**step.extra, **(added or {})}
    return StepRecord(
        index=index,
        node=seen.node,
        screenshot=seen.png_path,
        hierarchy=seen.xml_path,
        activity=seen.capture.activity,
        action=action.to_json() if action else None,
        action_text=action.describe() if action else "",
        raw_output=step.raw_output,
        reasoning=step.reasoning,
        parse_error=step.parse_error,
        outcome=outcome,
        reflection=step.reflection.value if step.reflection else None,
        reflection_correct=reflection_correct,
        matched=matched,
        edge=edge,
        rule=rule,
        next_node=next_node,
        decision_correct=decision,
        decision_note=note,
        screen_changed=changed,
        input_tokens=step.input_tokens,
        output_tokens=step.output_tokens,
        inference_seconds=step.inference_seconds,
        parsing_seconds=step.parsing_seconds,
        extra=extra,
    )


def _launch_target(
    action: Action, task: Task, recipe: ResetRecipe, graph: GraphContext | None, device: Device
) -> tuple[Action, str | None]:
    """A launch by package (what the phone can start), or why the app is not known."""
    name = action.text or ""
    known = [task.app, recipe.package, *(graph_packages(graph.graph) if graph else [])]
    known += _device_call(device, "list its packages", device.installed_packages)
    package = resolve_app(name, [k for k in known if k])
    if package is None:
        return action, f"launch {name!r}: no installed app by that name"
    return Action.launch(package), None
