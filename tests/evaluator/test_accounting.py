"""Every token where it was spent, and AIL without retries, against the local test server."""

from __future__ import annotations

import pytest

from evaluator.prices import Price, PriceTable
from evaluator.run_summary import summarize
from tests.evaluator.fake_llm_server import FakeLLMServer, reply, status
from tests.evaluator.test_vlm_agents import answer_in, endpoint, ma2_decision, run, targets


def test_a_503_with_backoff_is_retry_time_not_inference(synthetic, tmp_path):
    points = targets(synthetic.suite, "task000")
    answers = [
        status(503),
        reply(answer_in("json", points[0]), 100, 10),
        reply("I am not sure what to do", 50, 5),  # a parse failure: its tokens count too
        *(reply(answer_in("json", p), 100, 10) for p in points[1:]),
        reply('{"action": "done"}', 100, 10),
    ]
    with FakeLLMServer(answers) as server:
        results, store = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None, backoff=0.5, retries=2),
            tasks=("task000",),
            mode="tolerant",
        )
    result = results["task000"]
    assert result.success, result.reason
    steps = store.read_steps("task000")
    # the server answers in milliseconds; the half-second backoff is beside AIL, not in it
    assert steps[0].retry_seconds >= 0.5 > steps[0].inference_seconds
    assert all(s.retry_seconds == 0 for s in steps[1:])
    assert result.retry_seconds == pytest.approx(steps[0].retry_seconds)
    assert result.inference_seconds < 0.5
    assert steps[1].parse_error is not None and steps[1].input_tokens == 50
    calls = len(points) + 1  # every tap and the done
    assert (result.input_tokens, result.output_tokens) == (100 * calls + 50, 10 * calls + 5)
    prices = PriceTable("USD", {"gpt-4o": Price(2.5, 10.0)})
    summary = summarize(tmp_path / "run", prices=prices).to_json()
    assert summary["retry_seconds"] == pytest.approx(result.retry_seconds)
    assert summary["agent_cost"] == pytest.approx(
        ((100 * calls + 50) * 2.5 + (10 * calls + 5) * 10) / 1e6
    )
    assert summary["judge_cost"] == 0.0 and summary["cost"] == summary["agent_cost"]


def test_an_errored_task_keeps_its_tokens_variant_and_model(synthetic, tmp_path):
    points = targets(synthetic.suite, "task001")
    answers = [reply(answer_in("json", points[0]), 100, 10), status(500)]
    with FakeLLMServer(answers) as server:
        results, _ = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None, retries=1),
            tasks=("task001",),
            variant="normalized",
        )
    result = results["task001"]
    assert result.status.value == "error" and "failed 2 time(s)" in result.reason
    assert (result.steps, result.input_tokens, result.output_tokens) == (1, 100, 10)
    assert (result.variant, result.model) == ("normalized", "gpt-4o")
    assert result.instruction == synthetic.tasks[1].normalized_instruction
    summary = summarize(tmp_path / "run").to_json()
    assert summary["tokens"]["input"] == 100  # an error's tokens are spent too


def test_agents_without_a_model_are_timed_by_the_protocol(synthetic, tmp_path):
    results, store = run(
        synthetic.suite, tmp_path / "run", {}, agent="replay", demos=synthetic.demos
    )
    assert results["task001"].success
    assert all(s.inference_seconds > 0 for s in store.read_steps("task001"))
    assert summarize(tmp_path / "run").to_json()["ail"] > 0


def test_the_backoff_of_a_call_that_ended_in_an_error_is_retry_time(synthetic, tmp_path):
    """The waits before an endpoint gave up are time the run spent: they are in the errored
    task's retry seconds and in the report's "retries and backoff", as for a call that
    was answered in the end."""
    points = targets(synthetic.suite, "task001")
    answers = [reply(answer_in("json", points[0]), 100, 10), status(503), status(503)]
    with FakeLLMServer(answers) as server:
        results, _ = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None, retries=1, backoff=0.4),
            tasks=("task001",),
        )
    result = results["task001"]
    assert result.status.value == "error" and "failed 2 time(s)" in result.reason
    assert result.retry_seconds >= 0.4  # the wait between the two failed attempts
    assert (result.steps, result.input_tokens, result.output_tokens) == (1, 100, 10)
    summary = summarize(tmp_path / "run").to_json()
    assert summary["retry_seconds"] == pytest.approx(result.retry_seconds)


def test_a_multi_call_step_that_fails_keeps_what_its_answered_calls_spent(synthetic, tmp_path):
    """Mobile-Agent-v2 calls the model up to three times a step: when the planning call
    fails after the reflection was answered, the reflection's tokens are still spent."""
    points = targets(synthetic.suite, "task001")
    answers = [
        reply(ma2_decision(points[0]), 100, 20),
        reply("### Answer ###\nA", 50, 5),  # the reflection on step 0, in step 1
        status(503),  # the planning call fails, twice
        status(503),
    ]
    with FakeLLMServer(answers) as server:
        results, _ = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None, retries=1, backoff=0.3),
            tasks=("task001",),
            agent="mobile_agent_v2",
        )
    result = results["task001"]
    assert result.status.value == "error"
    assert (result.input_tokens, result.output_tokens) == (100 + 50, 20 + 5)
    assert result.retry_seconds >= 0.3
