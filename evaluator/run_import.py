"""A run becomes a demonstration: a verified successful online episode, imported.

An online trace keeps, per step, the screenshot and hierarchy the agent saw, the
foreground activity and the action carried out (``traces/<task>/steps.jsonl``). A
verified success (the human verdict wins over the judges) is therefore a demonstration
of its task: ``import_run`` writes it in the ordinary demo format through the importers'
``write_demonstration``, so the next ``elderbench build`` merges it with the task's other
demonstrations. Steps that did not touch the phone (an unparsable reply, an answer, a
question to the user) are left out: the screen did not change across them.

Refused, naming the run and the task: an offline episode (its screens are the graph's
own), an episode that is not a verified success, a step whose files are missing, and any
file path that leaves the run folder (``..``, absolute, a symbolic link out).
"""

from __future__ import annotations

from pathlib import Path

from evaluator.audit_groups import run_suite_dir
from evaluator.errors import EvaluatorError
from evaluator.metrics import effective_status
from evaluator.records import StepRecord, TaskStatus
from evaluator.run_store import RunStore
from graph_builder.errors import GraphBuilderError
from graph_builder.importers import ImportResult
from graph_builder.importers.writing import ImportedStep, input_file, write_demonstration
from graph_builder.io import TASK_FILE, check_png_file, load_task, read_png, save_task
from graph_builder.model import Action, ActionType, validate_id

SOURCE = "run"
# Decisions about the task that the phone never saw: nothing to demonstrate.
_NOT_ON_PHONE = frozenset({ActionType.ANSWER, ActionType.ASK_USER, ActionType.GIVE_UP})


class RunImportError(EvaluatorError):
    """An episode of a run cannot become a demonstration (says which run and task)."""


def import_run(
    run_dir: Path, *, task_id: str, demos_root: Path, demo_id: str | None = None
) -> ImportResult:
    """Write the online episode of ``task_id`` in ``run_dir`` as a complete demonstration
    under ``demos_root/<task_id>/`` (default id: ``run-<run folder name>``)."""
    run_dir = Path(run_dir)
    validate_id(task_id, "task id")
    store = RunStore.open(run_dir)
    where = f"run {run_dir}, task {task_id}"
    result = next((r for r in store.results() if r.task_id == task_id), None)
    if result is None:
        raise RunImportError(f"{where}: the run has no result for this task")
    if result.protocol != "online":
        raise RunImportError(
            f"{where}: the episode is {result.protocol}; only an online episode (screens "
            "seen on a phone) can become a demonstration"
        )
    status = effective_status(result, store.overrides())
    if status is not TaskStatus.SUCCESS:
        why = result.reason or status.value
        verdict = store.overrides().get(task_id)
        if verdict is not None and result.terminated:
            why = f"a person judged it a failure ({verdict.annotator or 'no name'})"
        raise RunImportError(f"{where}: not a verified success ({why}); nothing imported")
    demo_id = validate_id(demo_id or f"run-{run_dir.name}", "demonstration id")
    if (Path(demos_root) / task_id / demo_id).exists():
        raise RunImportError(
            f"{Path(demos_root) / task_id / demo_id} already exists; choose another --demo-id"
        )
    recorded = store.read_steps(task_id)
    if [s.index for s in recorded] != list(range(result.steps)):
        raise RunImportError(
            f"{where}: the trace holds steps {[s.index for s in recorded]}, the result says "
            f"{result.steps} steps; a damaged or cut steps.jsonl is not imported"
        )
    steps = [s for s in recorded if _on_phone(s)]
    if not steps or _action(steps[-1], where).type is not ActionType.DONE:
        raise RunImportError(f"{where}: the trace does not end with the agent's 'done'")
    imported = [_imported(run_dir, step, where) for step in steps]
    instruction = _adopt_task(store, task_id, Path(demos_root)) or result.instruction
    try:
        return write_demonstration(
            imported,
            demos_root=Path(demos_root),
            task_id=task_id,
            demo_id=demo_id,
            instruction=instruction,
            source_name=SOURCE,
            notes=(f"imported from {where} ({len(imported)} steps)",),
        )
    except GraphBuilderError as exc:
        raise RunImportError(f"{where}: {exc}") from exc


def _adopt_task(store: RunStore, task_id: str, demos_root: Path) -> str | None:
    """When the demos have no task.json for the task yet, the run's suite's one (reset
    recipe, criteria and all, rather than one made from the run's instruction, which may
    be the normalized variant); its instruction, or None when the suite has none."""
    suite = run_suite_dir(store)
    if suite is None or not (suite / task_id / TASK_FILE).is_file():
        return None
    try:
        task = load_task(suite / task_id)
        if not (demos_root / task_id / TASK_FILE).exists():
            save_task(task, demos_root / task_id)
    except (GraphBuilderError, OSError):
        return None  # the run's own instruction makes one
    return task.instruction


def _on_phone(step: StepRecord) -> bool:
    if step.action is None:
        return False  # an unparsable reply: nothing was done
    kind = step.action.get("type")
    return kind not in {t.value for t in _NOT_ON_PHONE}


def _action(step: StepRecord, where: str) -> Action:
    try:
        return Action.from_json(step.action, where=f"step {step.index} action")
    except GraphBuilderError as exc:
        raise RunImportError(f"{where}: step {step.index}: {exc}") from exc


def _imported(run_dir: Path, step: StepRecord, where: str) -> ImportedStep:
    """One trace step's files, read only from inside the run folder."""
    if not step.screenshot:
        raise RunImportError(f"{where}: step {step.index} has no screenshot in the trace")
    if not step.hierarchy:
        raise RunImportError(f"{where}: step {step.index} has no hierarchy in the trace")
    try:
        png_path = input_file(run_dir, step.screenshot, source=run_dir)
        xml_path = input_file(run_dir, step.hierarchy, source=run_dir)
        check_png_file(png_path)
        png = read_png(png_path)
        xml = xml_path.read_bytes()
    except FileNotFoundError as exc:
        raise RunImportError(f"{where}: step {step.index}: {exc.filename} is missing") from exc
    except OSError as exc:
        raise RunImportError(f"{where}: step {step.index}: cannot read: {exc}") from exc
    except GraphBuilderError as exc:
        raise RunImportError(f"{where}: step {step.index}: {exc}") from exc
    return ImportedStep(
        png=png,
        xml=xml,
        action=_action(step, where),
        activity=step.activity,
        time=float(step.index),
        source=png_path,
    )
