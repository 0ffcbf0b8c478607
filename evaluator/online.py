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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from devices.device import Device
from devices.errors import DeviceDisconnectedError, DeviceError
from evaluator.agents.base import Agent, AgentObservation, AgentStep, ReflectionVerdict, timed_step
from evaluator.clean_start import restore_clean_state
from evaluator.control import Control
from evaluator.errors import AgentError, DeviceActionError, DeviceLostError, TaskSetupError
from evaluator.judges import Judge, JudgeEvidence, Outcome, run_judges, task_verdict, usage
from evaluator.matching import (
    ELDERBENCH,
    EdgeMatch,
    MatchingProfile,
    ScreenElements,
    match_edges,
)
from evaluator.offline import GraphContext
from evaluator.progress import EpisodeScorer
from evaluator.records import (
    ErrorKind,
    StepRecord,
    TaskResult,
    TaskStatus,
    Verdict,
    agent_error_result,
    episode_result,
)
from evaluator.run_store import Trace
from evaluator.task_actions import (
    Episode,
    action_problem,
    graph_packages,
    resolve_app,
    user_error_result,
)
from evaluator.users import User, UserSimulatorError
from graph_builder.errors import FormatError
from graph_builder.model import Action, ActionType, InstructionVariant, ResetRecipe, Task
from graph_builder.screen import Screen
from graph_builder.settings import comparison_settings
from graph_builder.similarity import SimilaritySettings, compare


@dataclass(frozen=True, slots=True)
class OnlineSettings:
    max_steps: int | None = None  # None: the task's own max_steps
    settle_timeout: float = 3.0
    judge_frames: int = 3
    matching: MatchingProfile = ELDERBENCH
    clean_snapshot: str | None = None  # a whole-phone snapshot loaded before every task
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
    """The settings the graph's screens were compared with when it was built (its stored
    settings and the typed texts and ambient slots the build derived), or the defaults."""
    return comparison_settings(context.graph if context is not None else None)


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


class _DeviceEpisode:
    """The device side of one task: reset, observe (into the trace, onto the graph), act."""

    def __init__(
        self,
        device: Device,
        trace: Trace,
        settings: OnlineSettings,
        mapper: StateMapper | None,
    ) -> None:
        self.device = device
        self.trace = trace
        self.settings = settings
        self.mapper = mapper

    def settle(self) -> None:
        timeout = self.settings.settle_timeout
        _device_call(self.device, "settle", lambda: self.device.wait_until_settled(timeout))

    def reset(self, recipe: ResetRecipe, snapshot: str | None) -> None:
        """Load the whole-phone ``snapshot`` (None: none), then reset the app."""
        device = self.device
        if snapshot is not None:
            restore = lambda: restore_clean_state(device, snapshot)  # noqa: E731
            _device_call(device, "restore its clean-start snapshot", restore)
        _device_call(device, "reset the app", lambda: device.reset_app(recipe))
        self.settle()

    def observe(self, index: int) -> _Seen:
        trace = self.trace
        capture = _device_call(self.device, "observe the screen", self.device.observe)
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
        if self.mapper is not None:
            seen.node, _ = self.mapper.node_for(seen.screen)
        return seen

    def act(self, action: Action, index: int, control: Control) -> tuple[_Seen, float | None]:
        """Perform ``action`` (a wait sleeps, at most ``max_wait``), let the screen settle
        and observe it as step ``index``; also the seconds a too-long wait was cut to."""
        capped = None
        if action.type is ActionType.WAIT:
            capped = _wait(action, self.settings, control)
        else:
            what = f"perform {action.describe()}"
            _device_call(self.device, what, partial(self.device.perform, action))
        self.settle()
        return self.observe(index), capped


@dataclass(frozen=True, slots=True)
class _Score:
    """How one step went: its rule, its edge, its decision (scored only with a graph) and
    its named outcome."""

    rule: str = ""
    matched: bool | None = None
    edge: str | None = None
    decision: bool | None = None
    note: str = ""
    outcome: str | None = None


_CONVERSATION = (ActionType.ANSWER, ActionType.ASK_USER, ActionType.GIVE_UP)


def _score_invalid(
    action: Action | None, problem: str | None, outcome: str | None, progress: EpisodeScorer | None
) -> _Score:
    """A reply that is no action (parse failure) or an action that cannot be carried out."""
    if action is None:
        rule = note = "parse failure" if outcome == "parse_error" else "invalid action"
    else:
        rule, outcome, note = problem or "invalid action", "invalid_action", "invalid action"
    if progress is None:
        return _Score(rule, outcome=outcome)
    return _Score(rule, decision=False, note=note, outcome=outcome)


def _converse(
    action: Action, episode: Episode, index: int, instruction: str, seen: _Seen
) -> tuple[_Score, str | None, str | None, dict[str, Any], UserSimulatorError | None]:
    """An answer, a question to the user or giving up: its score, the user's reply for
    the next step, why the episode stops (None: it goes on), what the trace adds, and the
    simulated user's failure to answer (None: it answered, or was not asked)."""
    episode.note(action)
    if action.type is ActionType.ANSWER:
        return _Score("answer recorded", outcome="answered"), None, None, {}, None
    if action.type is ActionType.ASK_USER:
        try:
            exchange = episode.ask(
                action.text, step=index, instruction=instruction, screenshot=seen.screen.image
            )
        except UserSimulatorError as exc:
            rule = "asked the user; the simulated user gave no usable reply"
            return _Score(rule, outcome="asked_user"), None, None, {}, exc
        reply = exchange.reply
        if reply is not None:
            rule = f"asked the user; the {exchange.source} user replied"
            added = {"user_reply": reply, "user": exchange.to_json()}
            return _Score(rule, outcome="asked_user"), reply, None, added, None
        question = f" {action.text!r}" if action.text else ""
        stopped = f"asked the user{question} and the task scripts no reply"
        score = _Score("asked the user; the task scripts no reply", outcome="asked_user")
        return score, None, stopped, {"user": exchange.to_json()}, None
    stopped = f"gave up{': ' + action.text if action.text else ''}"
    return _Score("gave up", outcome="gave_up"), None, stopped, {}, None


def _score_done(progress: EpisodeScorer | None, seen: _Seen, outcome: str | None) -> _Score:
    if progress is None:
        return _Score(outcome=outcome)
    at_done = progress.done(seen.node)
    note = "done on DONE node" if at_done else "done on non-DONE node"
    return _Score(note, decision=at_done, note=note, outcome=outcome)


def _match(
    graph: GraphContext | None, seen: _Seen, action: Action, profile: MatchingProfile
) -> tuple[EdgeMatch | None, str]:
    """The edges of the observed node that ``action`` follows, and the rule's reason."""
    if graph is None:
        return None, ""
    if seen.node is None:
        return None, "off-graph state"
    # the shown screen: without its hierarchy when the dump could not be parsed
    elements = ScreenElements.of_screen(seen.screen) if profile.needs_elements else None
    match = match_edges(
        graph.out_edges(seen.node),
        action,
        screen=seen.capture.size,
        profile=profile,
        elements=elements,
    )
    return match, match.reason


def _score_move(
    progress: EpisodeScorer | None,
    seen: _Seen,
    after: _Seen,
    match: EdgeMatch | None,
    rule: str,
    outcome: str | None,
) -> _Score:
    """Score a performed action on what happened: the screen observed after it."""
    if progress is None:
        return _Score(rule, outcome=outcome)
    matched: bool | None = None
    edge_id: str | None = None
    followed: str | None = None
    if match is not None and match.edge is not None:
        # the edge the phone agrees with, among those the action follows
        agreeing = [e for e in match.accepted if e.target == after.node]
        chosen = agreeing[0] if agreeing else match.edge
        edge_id, followed = chosen.id, chosen.target
        matched = chosen.target == after.node
    elif match is not None:
        matched = False
    decision, note = progress.step(seen.node, after.node, followed=followed)
    return _Score(
        rule, matched=matched, edge=edge_id, decision=decision, note=note, outcome=outcome
    )


def _changed(seen: _Seen, after: _Seen, settings: SimilaritySettings) -> bool | None:
    """Whether the step changed the screen (None: nothing was performed, or unknown)."""
    if after is seen:
        return None
    try:
        return not compare(seen.screen, after.screen, settings=settings).same
    except FormatError:
        return None


def _verify(
    task: Task,
    instruction: str,
    final: _Seen,
    frames: Sequence[bytes],
    records: Sequence[StepRecord],
    judges: Sequence[Judge],
    trace: Trace,
) -> tuple[Verdict, ...]:
    """Every judge's verdict on the final screen, also written to the trace."""
    evidence = JudgeEvidence(
        task=task,
        instruction=instruction,
        final_png=final.capture.png(),
        final_hierarchy_xml=final.capture.hierarchy_xml() or None,
        final_activity=final.capture.activity,
        frames=tuple(frames),
        actions=tuple(r.action_text for r in records if r.action_text),
    )
    verdicts = run_judges(judges, evidence)
    trace.write_json("verdicts.json", [v.to_json() for v in verdicts])
    return verdicts


def run_online(
    task: Task,
    agent: Agent,
    device: Device,
    trace: Trace,
    *,
    variant: InstructionVariant = InstructionVariant.ORIGINAL,
    settings: OnlineSettings | None = None,
    judges: Sequence[Judge] = (),
    graph: GraphContext | None = None,
    control: Control | None = None,
    on_step: Callable[[StepRecord], None] | None = None,
    user: User | None = None,
) -> TaskResult:
    """Run one task on ``device``. An agent that cannot answer makes the task an error
    (with what it spent), and so does a simulated ``user`` that cannot (kind
    ``user_simulator``); device and setup errors propagate. Without a ``user``, the
    task's scripted clarifications answer."""
    settings = settings or OnlineSettings()
    control = control or Control()
    max_steps = settings.max_steps or task.max_steps
    instruction = task.instruction_for(variant)
    recipe = task.reset or (ResetRecipe(task.app) if task.app else None)
    if recipe is None:
        raise TaskSetupError(f"task {task.id} has no reset recipe and no app; add one to task.json")
    sim = similarity_settings(graph)
    mapper = StateMapper(graph, sim) if graph is not None else None
    on_device = _DeviceEpisode(device, trace, settings, mapper)
    started = time.time()

    agent.reset(task, variant)
    on_device.reset(recipe, settings.clean_snapshot)
    records: list[StepRecord] = []
    seen = on_device.observe(0)
    start = graph.graph.start if graph is not None else None
    if start is not None and seen.node != start.id:
        return _dirty_start(task, variant, seen.node, start.id, agent, device, started)
    progress = graph.progress(seen.node) if graph is not None else None
    frames: list[bytes] = []
    terminated = False
    episode = Episode(task, user) if user is not None else Episode(task)
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
        try:
            step = timed_step(agent, observation)
        except AgentError as exc:  # the task errors, with what the failed step spent
            return agent_error_result(
                task,
                records,
                exc,
                protocol="online",
                variant=variant,
                model=getattr(agent, "model", None),
                started=started,
                finished=time.time(),
                device=device.serial,
                user_usage=episode.user_usage,
            )
        action = step.action
        after = seen
        step_outcome = step.outcome.value if step.outcome else None
        added: dict[str, Any] = {}
        failed: UserSimulatorError | None = None
        problem = action_problem(action, seen.capture.size) if action is not None else None
        if action is not None and problem is None and action.type is ActionType.LAUNCH:
            action, problem = _launch_target(action, task, recipe, graph, device)
        if action is None or problem is not None:
            score = _score_invalid(action, problem, step_outcome, progress)
        elif action.type in _CONVERSATION:
            score, user_reply, stopped, added, failed = _converse(
                action, episode, index, instruction, seen
            )
            outcome = score.outcome if stopped else None
        elif action.type is ActionType.DONE:
            episode.note(action)
            terminated = True
            score = _score_done(progress, seen, step_outcome)
        else:
            match, rule = _match(graph, seen, action, settings.matching)
            frames.append(seen.capture.png())
            after, capped = on_device.act(action, index + 1, control)
            if capped is not None:
                added["wait_capped_to_seconds"] = capped
            score = _score_move(progress, seen, after, match, rule, step_outcome)
        record = _record(
            index,
            seen,
            step,
            records[-1] if records else None,
            score,
            next_node=after.node,
            changed=_changed(seen, after, sim),
            action=action,
            added=added,
        )
        records.append(record)
        if on_step is not None:
            on_step(record)
        if failed is not None:  # the simulated user gave no reply: a harness error
            finished = time.time()
            return user_error_result(
                task, records, failed, episode, "online", variant, agent, started, finished,
                device.serial,
            )  # fmt: skip
        seen = after
        if terminated or stopped:
            break

    verdicts: tuple[Verdict, ...] = ()
    if terminated and judges:
        verdicts = _verify(task, instruction, seen, frames, records, judges, trace)
    reason, error_kind = _why(task_verdict(terminated, verdicts, max_steps), episode, stopped)
    return episode_result(
        task,
        records,
        protocol="online",
        variant=variant,
        success=reason is None,
        terminated=terminated,
        reason=reason,
        error_kind=error_kind,
        outcome=outcome,
        answer=episode.answer,
        answer_correct=episode.answer_correct,
        final_node=seen.node,
        matched_steps=progress.completed if progress is not None else None,
        gt_steps=graph.gt_steps if graph else None,
        mapped_steps=sum(1 for r in records if r.node is not None) if graph is not None else None,
        model=getattr(agent, "model", None),
        verification=verdicts,
        judge_usage=usage(verdicts),
        user_usage=episode.user_usage,
        device=device.serial,
        started=started,
        finished=time.time(),
    )


def _why(decided: Outcome, episode: Episode, stopped: str | None) -> tuple[str | None, str | None]:
    """Why the episode is not a success (None: it is one), and its error kind: a verified
    episode fails on a wrong answer; one the agent stopped says how it stopped."""
    if decided.status is TaskStatus.SUCCESS:
        return episode.answer_problem(), decided.error_kind
    return (stopped if stopped is not None else decided.reason), decided.error_kind


def _dirty_start(
    task: Task,
    variant: InstructionVariant,
    first: str | None,
    start: str,
    agent: Agent,
    device: Device,
    started: float,
) -> TaskResult:
    """The error result of a task whose first screen is not the graph's START (``first``:
    the node it maps to, None: none)."""
    where = f"maps to node {first}" if first else "matches no node of the graph"
    return TaskResult(
        task_id=task.id,
        status=TaskStatus.ERROR,
        protocol="online",
        instruction=task.instruction_for(variant),
        variant=InstructionVariant(variant).value,
        app=task.app,
        labels=task.labels,
        reason=f"dirty start: the first screen {where}, not START ({start}); the "
        "phone was not reset to the task's start (check the reset recipe)",
        error_kind=ErrorKind.DIRTY_START,
        final_node=first,
        model=getattr(agent, "model", None),
        device=device.serial,
        started=started,
        finished=time.time(),
    )


def _record(
    index: int,
    seen: _Seen,
    step: AgentStep,
    previous: StepRecord | None,
    score: _Score,
    *,
    next_node: str | None,
    changed: bool | None,
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
        action_text=seen.screen.describe(action) if action else "",
        raw_output=step.raw_output,
        reasoning=step.reasoning,
        parse_error=step.parse_error,
        outcome=score.outcome,
        reflection=step.reflection.value if step.reflection else None,
        reflection_correct=reflection_correct,
        matched=score.matched,
        edge=score.edge,
        rule=score.rule,
        next_node=next_node,
        decision_correct=score.decision,
        decision_note=score.note,
        screen_changed=changed,
        input_tokens=step.input_tokens,
        output_tokens=step.output_tokens,
        inference_seconds=step.inference_seconds,
        parsing_seconds=step.parsing_seconds,
        retry_seconds=step.retry_seconds,
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
