"""Agents end to end on the synthetic suite: the oracle, the floor, the baseline, and a
program behind the JSON-lines protocol."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evaluator.agents import AGENTS, create_agent
from evaluator.errors import ConfigError
from evaluator.run_store import RunStore
from evaluator.runner import RunConfig, run_suite
from graph_builder.build import build_workspace
from graph_builder.io import load_graph
from graph_builder.similarity import SimilaritySettings

LINE_AGENT = Path(__file__).with_name("line_agent.py")


def evaluate(suite: Path, out: Path, agent: str, **options):
    finished = run_suite(RunConfig(suite=suite, out=out, agent=agent, **options))
    assert not finished.not_run
    return {r.task_id: r for r in RunStore.open(out).results()}


def success_rate(results) -> float:
    return sum(r.success for r in results.values()) / len(results)


def test_registry_and_unknown_agent():
    assert {"replay", "random", "heuristic", "openai", "mobile_agent_v2", "subprocess"} <= set(
        AGENTS
    )
    with pytest.raises(ConfigError, match="unknown agent 'nope'"):
        create_agent("nope")


@pytest.mark.parametrize("with_demos", [True, False])
def test_replay_scores_100_percent_offline_on_hand_built_graphs(synthetic, tmp_path, with_demos):
    results = evaluate(
        synthetic.suite, tmp_path / "run", "replay", demos=synthetic.demos if with_demos else None
    )
    assert success_rate(results) == 1.0
    assert all(
        r.completion_rate == 1.0 and r.correct_decisions == r.decisions for r in results.values()
    )


@pytest.mark.parametrize("demo_id", ["demo1", "demo2"])
def test_replay_follows_either_demo_on_the_hand_built_graphs(synthetic, tmp_path, demo_id):
    results = evaluate(
        synthetic.suite,
        tmp_path / "run",
        "replay",
        demos=synthetic.demos,
        agent_config={"demo_id": demo_id},
    )
    assert success_rate(results) == 1.0


def test_replay_scores_100_percent_on_graphs_built_from_its_demos(synthetic, tmp_path):
    reports = build_workspace(synthetic.demos, tmp_path / "built", settings=SimilaritySettings())
    assert all(r.written and r.demos_used == 2 for r in reports)
    assert all(r.nodes == len(load_graph(synthetic.suite / r.task_id).nodes) for r in reports)
    for demo_id in ("demo1", "demo2"):
        results = evaluate(
            tmp_path / "built",
            tmp_path / demo_id,
            "replay",
            demos=synthetic.demos,
            agent_config={"demo_id": demo_id},
        )
        assert len(results) == 10 and success_rate(results) == 1.0
    steps = RunStore.open(tmp_path / "demo2").read_steps("task000")
    assert [s.rule for s in steps[:2]] == ["inside bounds", "type back"]
    assert steps[1].next_node == steps[0].node  # back at START


def test_random_scores_low_and_is_reproducible(synthetic, tmp_path):
    first = evaluate(synthetic.suite, tmp_path / "a", "random", agent_config={"seed": 7})
    evaluate(synthetic.suite, tmp_path / "b", "random", agent_config={"seed": 7})
    assert success_rate(first) <= 0.1
    store_a, store_b = RunStore.open(tmp_path / "a"), RunStore.open(tmp_path / "b")
    for task_id in first:
        assert [s.action for s in store_a.read_steps(task_id)] == [
            s.action for s in store_b.read_steps(task_id)
        ]


def test_heuristic_shows_the_cost_of_elderly_phrasing(synthetic, tmp_path):
    original = evaluate(synthetic.suite, tmp_path / "o", "heuristic")
    normalized = evaluate(synthetic.suite, tmp_path / "n", "heuristic", variant="normalized")
    assert success_rate(normalized) >= 0.9
    assert success_rate(original) <= 0.2
    typing = [t for t in synthetic.tasks if '"' in (t.normalized_instruction or "")]
    assert typing and all(normalized[t.id].success for t in typing)


def test_subprocess_agent_runs_a_program(synthetic, tmp_path):
    results = evaluate(
        synthetic.suite,
        tmp_path / "run",
        "subprocess",
        variant="normalized",
        tasks=("task000", "task001", "task002"),
        agent_config={"command": [sys.executable, str(LINE_AGENT)]},
    )
    assert all(r.success for r in results.values())
    assert results["task002"].output_tokens == 9 and results["task002"].input_tokens == 7
    steps = RunStore.open(tmp_path / "run").read_steps("task001")
    assert steps[0].raw_output.startswith("tap ") and steps[1].reflection_correct is True


def test_subprocess_garbage_is_a_parse_failure_not_a_crash(synthetic, tmp_path):
    results = evaluate(
        synthetic.suite,
        tmp_path / "run",
        "subprocess",
        tasks=("task000",),
        agent_config={"command": [sys.executable, str(LINE_AGENT), "--mode", "garbage"]},
    )
    result = results["task000"]
    assert result.status.value == "failure" and result.parse_failures == 1
    step = RunStore.open(tmp_path / "run").read_steps("task000")[0]
    assert step.raw_output == "I think I will tap the blue button" and step.parse_error


@pytest.mark.parametrize(
    "answer",
    [
        {"action": {"action": "fly away"}},  # names no action: a parse failure
        {"action": {"action": "click", "x": float("nan"), "y": 3}},  # an invalid action
        {"action": "tap somewhere"},  # not an action object
    ],
)
def test_subprocess_reply_that_fails_keeps_its_own_tokens_and_seconds(synthetic, tmp_path, answer):
    """A reply whose action cannot be used still cost the tokens and the inference time the
    program reports: they are the program's, not replaced by the harness's wait."""
    reply = json.dumps({**answer, "input_tokens": 11, "output_tokens": 3, "inference_seconds": 4.5})
    program = (
        "import sys\nfor line in sys.stdin:\n"
        f"    if '\"step\"' in line: print({reply!r}, flush=True)"
    )
    results = evaluate(
        synthetic.suite,
        tmp_path / "run",
        "subprocess",
        tasks=("task000",),
        agent_config={"command": [sys.executable, "-c", program], "model": "m"},
    )
    result = results["task000"]
    assert result.status.value == "failure" and result.parse_failures == 1
    step = RunStore.open(tmp_path / "run").read_steps("task000")[0]
    assert step.parse_error and step.outcome in ("parse_error", "invalid_action")
    assert (step.input_tokens, step.output_tokens) == (11, 3)
    assert step.inference_seconds == 4.5
    assert (result.input_tokens, result.output_tokens) == (11, 3)


@pytest.mark.parametrize(("mode", "reason"), [("crash", "exited"), ("slow", "no answer within")])
def test_subprocess_death_or_silence_is_a_task_error(synthetic, tmp_path, mode, reason):
    results = evaluate(
        synthetic.suite,
        tmp_path / "run",
        "subprocess",
        tasks=("task000", "task001"),
        agent_config={"command": [sys.executable, str(LINE_AGENT), "--mode", mode], "timeout": 1},
    )
    assert [r.status.value for r in results.values()] == ["error", "error"]
    assert reason in results["task000"].reason
