"""Re-run only the judges of a finished run, from its traces, with no agent calls.

``elderbench judge RUN [--judge rule|vlm]`` rebuilds each terminated online episode's
evidence (final screenshot, hierarchy and activity, the earlier screens, the actions)
from ``traces/<task>/``, judges it again and appends the new result line (the latest line
wins). Tasks that did not terminate, and offline tasks, have nothing to judge and keep
their result. The tokens of the earlier judge calls stay counted. It holds the run
folder's lock while it writes, so it is refused (naming the holder) while the run is being
evaluated or resumed.

An offline task has nothing to judge again:

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     info = {"agent": {"name": "replay"}, "suite": {"path": tmp}}
...     store = RunStore.create(Path(tmp) / "run", info)
...     store.append_result(TaskResult("t1", TaskStatus.SUCCESS, "offline", terminated=True))
...     store.close()  # the run has ended: its lock is free for the judge
...     rejudge(store.run_dir, ["rule"])
[]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evaluator.errors import ConfigError, JudgeError, RunStoreError
from evaluator.judges import JudgeEvidence, create_judge, run_judges, task_verdict, usage
from evaluator.records import StepRecord, TaskResult, TaskStatus
from evaluator.run_store import RunStore
from graph_builder.errors import GraphBuilderError
from graph_builder.io import atomic_write_json, load_task
from graph_builder.model import Task


@dataclass(frozen=True, slots=True)
class Rejudged:
    task_id: str
    before: TaskResult
    after: TaskResult
    problem: str | None = None  # why the task could not be judged again (it is unchanged)


def evidence_from_trace(
    store: RunStore, task: Task, result: TaskResult, steps: Sequence[StepRecord]
) -> JudgeEvidence:
    """The evidence the judges saw when the episode ended, read back from its trace."""
    final = steps[-1] if steps else None
    if final is None or final.screenshot is None:
        raise JudgeError(f"the trace of {task.id} has no final screen to judge")
    try:
        final_png = (store.run_dir / final.screenshot).read_bytes()
        xml = (store.run_dir / final.hierarchy).read_text("utf-8") if final.hierarchy else None
        frames = tuple(
            (store.run_dir / s.screenshot).read_bytes() for s in steps[:-1] if s.screenshot
        )
    except OSError as exc:
        raise JudgeError(f"cannot read the trace of {task.id}: {exc}") from exc
    return JudgeEvidence(
        task=task,
        instruction=result.instruction,
        final_png=final_png,
        final_hierarchy_xml=xml,
        final_activity=final.activity,
        frames=frames,
        actions=tuple(s.action_text for s in steps if s.action_text),
    )


def rejudge(
    run_dir: Path,
    judges: Sequence[str] | None = None,
    judge_config: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    progress: Callable[[Rejudged], None] | None = None,
) -> list[Rejudged]:
    """Judge every terminated online task of ``run_dir`` again. ``judges`` and
    ``judge_config`` default to the run's own (run.json). RunStoreError: the run folder
    is in use (an ``eval`` or a resume holds its lock)."""
    store = RunStore.open_locked(run_dir, purpose="elderbench judge")
    try:
        return _rejudge(store, judges, judge_config, progress)
    finally:
        store.close()


def _rejudge(
    store: RunStore,
    judges: Sequence[str] | None,
    judge_config: Mapping[str, Mapping[str, Any]] | None,
    progress: Callable[[Rejudged], None] | None,
) -> list[Rejudged]:
    run_dir = store.run_dir
    config = store.info().get("config") or {}
    names = list(judges or config.get("judges") or ("rule",))
    settings = dict(config.get("judge_config") or {})
    settings.update(judge_config or {})
    created = [create_judge(n, settings.get(n)) for n in names]
    suite = store.info().get("suite", {}).get("path") or config.get("suite")
    if not suite:
        raise ConfigError(f"{run_dir}/run.json does not say which suite was run")
    done = []
    for result in store.results():
        if result.protocol != "online" or not result.terminated:
            continue
        try:
            task = load_task(Path(suite) / result.task_id)
        except GraphBuilderError as exc:
            raise RunStoreError(f"cannot load task {result.task_id} from {suite}: {exc}") from exc
        steps = store.read_steps(result.task_id)
        try:
            evidence = evidence_from_trace(store, task, result, steps)
        except JudgeError as exc:
            done.append(Rejudged(result.task_id, result, result, str(exc)))
            if progress is not None:
                progress(done[-1])
            continue
        verdicts = run_judges(created, evidence)
        decided = task_verdict(True, verdicts, task.max_steps)
        status, reason = decided.status, decided.reason
        if status is TaskStatus.SUCCESS and result.answer_correct is False:
            status, reason = (
                TaskStatus.FAILURE,
                f"answered {result.answer!r}, not an accepted answer",
            )
        after = replace(
            result,
            status=status,
            reason=reason,
            error_kind=decided.error_kind,
            verification=verdicts,
            judge_usage=(*result.judge_usage, *usage(verdicts)),
        )
        store.append_result(after)
        atomic_write_json(
            store.trace_dir(result.task_id) / "verdicts.json",
            [v.to_json() for v in verdicts],
        )
        item = Rejudged(result.task_id, result, after)
        done.append(item)
        if progress is not None:
            progress(item)
    return done
