"""The shipped sample suite: it loads, validates, round-trips, has the promised shape,
replays to 100% offline, and regenerates byte for byte from its recipes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from devices.android import AndroidDevice, adb_client
from evaluator.judges import JudgeEvidence, RuleJudge
from evaluator.records import TaskStatus
from evaluator.run_store import RunStore
from evaluator.runner import DeviceFactory, RunConfig, run_suite
from graph_builder.io import (
    DEMO_FILE,
    GRAPH_FILE,
    SUITE_DEMOS_DIR,
    TASK_FILE,
    iter_demos,
    load_demo,
    load_graph,
    load_suite,
    load_suite_tasks,
    load_task,
    suite_task_dirs,
)
from graph_builder.model import DemoStatus, EvalProtocol, Task
from graph_builder.validate import Severity, validate_graph
from task_graphs.generate import SUITE_DIR, compare_trees, generate, graph_defects
from task_graphs.sample_recipes import RECIPES

DEMOS_DIR = SUITE_DIR / SUITE_DEMOS_DIR
TASKS = load_suite_tasks(SUITE_DIR)
OFFLINE = [t for t in TASKS if t.protocol is EvalProtocol.OFFLINE]
ONLINE = [t for t in TASKS if t.protocol is EvalProtocol.ONLINE]
# Offline tasks that carry online criteria too: both protocols score the same episodes.
BOTH = [t for t in OFFLINE if t.success is not None]
# A small offline task (three short paths) and an online one: quick to regenerate.
REGENERATED = ("call_doctor_lee", "phone_tom")


def _as_written(data: object) -> bytes:
    """The bytes graph_builder.io writes for a JSON document."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def test_every_document_loads_and_round_trips_byte_for_byte():
    suite = load_suite(SUITE_DIR)
    assert (SUITE_DIR / "suite.json").read_bytes() == _as_written(suite.to_json())
    for task_dir in suite_task_dirs(SUITE_DIR):
        task = load_task(task_dir)
        assert (task_dir / TASK_FILE).read_bytes() == _as_written(task.to_json())
        if task.protocol is EvalProtocol.OFFLINE:
            graph = load_graph(task_dir)
            assert (task_dir / GRAPH_FILE).read_bytes() == _as_written(graph.to_json())
    demos = list(iter_demos(DEMOS_DIR))
    assert {d.task_id for _, d in demos} == {t.id for t in TASKS}
    for folder, demo in demos:
        assert (folder / DEMO_FILE).read_bytes() == _as_written(demo.to_json())
        assert demo.status is DemoStatus.COMPLETE and demo.is_finished
        for step in demo.steps:
            assert (folder / step.observation.screenshot).is_file()
            assert step.observation.hierarchy and (folder / step.observation.hierarchy).is_file()
            assert step.observation.phash


@pytest.mark.parametrize("task", OFFLINE, ids=lambda t: t.id)
def test_offline_graph_validates_and_describes_its_task(task: Task):
    task_dir = SUITE_DIR / task.id
    graph = load_graph(task_dir)
    demos = [load_demo(d) for d in sorted((DEMOS_DIR / task.id).iterdir())]
    errors = [p for p in validate_graph(graph, demos) if p.severity is Severity.ERROR]
    assert errors == []
    assert graph_defects(graph, demos) == []
    assert sorted(graph.meta["demos"]) == [d.id for d in demos]
    for node in graph.nodes:
        assert (task_dir / node.screenshot).is_file()
        assert node.hierarchy and (task_dir / node.hierarchy).is_file()


def test_the_suite_has_the_promised_shape():
    assert len(TASKS) >= 30
    assert [r.task for r in RECIPES] == TASKS, "regenerate: python -m task_graphs.generate"
    vocabularies = load_suite(SUITE_DIR).vocabularies
    assert {t.labels.scenario for t in TASKS} == set(vocabularies["scenario"])
    for protocol in (OFFLINE, ONLINE):
        assert 0.4 <= len(protocol) / len(TASKS) <= 0.6
        assert len({t.labels.scenario for t in protocol}) >= 4
    for task in TASKS:
        assert set(task.labels.syntax) <= set(vocabularies["syntax"])
        assert set(task.labels.semantics) <= set(vocabularies["semantics"])
        assert task.normalized_instruction and task.normalized_instruction != task.instruction
        assert task.reset is not None
    # The register of older adults: mostly short, some in Chinese, every semantic kind.
    assert sum(len(t.instruction) < 20 for t in TASKS) > len(TASKS) / 2
    assert sum(any("\u4e00" <= c <= "\u9fff" for c in t.instruction) for t in TASKS) >= 3
    semantics = Counter(s for t in TASKS for s in t.labels.semantics)
    assert set(semantics) == set(vocabularies["semantics"])


def test_some_tasks_cannot_be_done_right_without_asking_and_some_end_in_an_answer():
    """At least five tasks leave open which of two things the person means (labelled so),
    with a scripted clarification and the hidden intent a simulated user answers from;
    at least three ask a question about the phone, with accepted answers and an intent."""
    asking = [t for t in TASKS if t.clarifications]
    assert len(asking) >= 5
    for task in asking:
        assert task.intent and task.intent != task.instruction
        assert {"referential_ambiguity", "under_specification"} & set(task.labels.semantics)
    answering = [t for t in TASKS if t.answers]
    assert len(answering) >= 3
    assert all(t.intent for t in answering)
    assert {t.protocol for t in answering} == {EvalProtocol.OFFLINE, EvalProtocol.ONLINE}


@pytest.mark.parametrize("task", OFFLINE, ids=lambda t: t.id)
def test_offline_tasks_have_three_demonstrations_along_different_paths(task: Task):
    demos = [d for _, d in iter_demos(DEMOS_DIR, task.id)]
    assert len(demos) >= 3
    paths = {tuple(s.action.describe() for s in d.steps) for d in demos}
    assert len(paths) == len(demos)


@pytest.mark.parametrize("task", ONLINE, ids=lambda t: t.id)
def test_online_criteria_fail_on_the_first_screen_and_pass_after_the_solution(task: Task):
    assert task.success is not None and task.success.rubric
    ((folder, solution),) = iter_demos(DEMOS_DIR, task.id)
    judge = RuleJudge()

    def verdict(step_index: int) -> bool | None:
        observation = solution.steps[step_index].observation
        assert observation.hierarchy is not None
        return judge.judge(
            JudgeEvidence(
                task=task,
                instruction=task.instruction,
                final_png=(folder / observation.screenshot).read_bytes(),
                final_hierarchy_xml=(folder / observation.hierarchy).read_text("utf-8"),
                final_activity=observation.activity,
            )
        ).passed

    assert verdict(0) is False
    assert verdict(-1) is True


def test_enough_offline_tasks_carry_online_criteria_that_every_demonstration_meets():
    assert len(BOTH) >= 10
    judge = RuleJudge()
    for task in BOTH:
        assert task.success is not None and task.success.rubric
        demos = list(iter_demos(DEMOS_DIR, task.id))
        assert len(demos) >= 3
        for folder, demo in demos:
            for index, wanted in ((0, False), (-1, True)):
                observation = demo.steps[index].observation
                assert observation.hierarchy is not None
                verdict = judge.judge(
                    JudgeEvidence(
                        task=task,
                        instruction=task.instruction,
                        final_png=(folder / observation.screenshot).read_bytes(),
                        final_hierarchy_xml=(folder / observation.hierarchy).read_text("utf-8"),
                        final_activity=observation.activity,
                    )
                )
                assert verdict.passed is wanted, (task.id, demo.id, index, verdict.reason)


def _run(
    tmp_path: Path, name: str, device_factory: DeviceFactory | None = None, **config: object
) -> dict[str, TaskStatus]:
    out = tmp_path / name
    run_suite(
        RunConfig(suite=SUITE_DIR, out=out, **config),  # type: ignore[arg-type]
        device_factory=device_factory,
    )
    return {r.task_id: r.status for r in RunStore.open(out).results()}


def test_replay_scores_every_offline_task(tmp_path):
    by_graph = _run(tmp_path, "graph", agent="replay", protocol="offline")
    by_demo = _run(tmp_path, "demos", agent="replay", protocol="offline", demos=DEMOS_DIR)
    expected = {t.id: TaskStatus.SUCCESS for t in OFFLINE}
    assert by_graph == expected
    assert by_demo == expected


def test_replay_of_the_recorded_solutions_passes_every_online_task(tmp_path, virtual_server):
    statuses = _run(
        tmp_path,
        "online",
        lambda serial: AndroidDevice(serial, client=adb_client(port=virtual_server.port)),
        agent="replay",
        protocol="online",
        demos=DEMOS_DIR,
        devices=("virtual-1",),
    )
    assert statuses == {t.id: TaskStatus.SUCCESS for t in ONLINE}


def test_the_heuristic_agent_does_worse_on_the_original_instructions(tmp_path):
    original = _run(tmp_path, "original", agent="heuristic", protocol="offline")
    normalized = _run(
        tmp_path, "normalized", agent="heuristic", protocol="offline", variant="normalized"
    )
    wins = sum(s is TaskStatus.SUCCESS for s in original.values())
    assert wins < sum(s is TaskStatus.SUCCESS for s in normalized.values())


def test_regeneration_is_deterministic_and_matches_the_shipped_suite(tmp_path):
    first = generate(tmp_path / "first", tasks=REGENERATED).out
    second = generate(tmp_path / "second", tasks=REGENERATED).out
    assert compare_trees(first, second, png_pixels=False) == []
    stale = compare_trees(SUITE_DIR, first, tasks=REGENERATED)
    assert stale == [], "the virtual phone changed: run `python -m task_graphs.generate`"
