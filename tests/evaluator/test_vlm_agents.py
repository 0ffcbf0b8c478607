"""The OpenAI-compatible agents against a real local HTTP server with canned answers."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from evaluator.agents import create_agent
from evaluator.errors import ConfigError
from evaluator.run_store import RunStore
from evaluator.runner import RunConfig, run_suite
from graph_builder.io import load_graph
from tests.evaluator.fake_llm_server import FakeLLMServer, Received, garbage, reply, status

SECRET = "sk-test-DO-NOT-LEAK-7f3a9"


def targets(suite: Path, task_id: str) -> list[tuple[float, float]]:
    """The [0,1000] points of the task's tap edges on the straight path (e0, e1, ...)."""
    graph = load_graph(suite / task_id)
    return [e.rule.points[0] for e in graph.edges if e.id.startswith("e") and e.rule.points]


def answer_in(style: str, point: tuple[float, float] | None, size=(270, 600)) -> str:
    if point is None:
        return {
            "json": '{"action": "done"}',
            "autoglm": 'finish(message="ok")',
            "uitars": "Thought: finished\nAction: finished(content='ok')",
            "qwen_mobile_use": '<tool_call>{"name": "mobile_use", "arguments": '
            '{"action": "terminate", "status": "success"}}</tool_call>',
        }[style]
    x, y = point
    px, py = round(x * size[0] / 1000), round(y * size[1] / 1000)
    return {
        "json": f'{{"thought": "go", "action": "tap", "x": {x:.0f}, "y": {y:.0f}}}',
        "autoglm": f'<think>go</think><answer>do(action="Tap", element=[{x:.0f}, {y:.0f}])'
        "</answer>",
        "uitars": f"Thought: go\nAction: click(start_box='({x:.0f},{y:.0f})')",
        "qwen_mobile_use": f'<tool_call>{{"name": "mobile_use", "arguments": '
        f'{{"action": "click", "coordinate": [{px}, {py}]}}}}</tool_call>',
    }[style]


def run(suite, out, agent_config, tasks=("task001",), agent="openai", **options):
    run_suite(
        RunConfig(
            suite=suite, out=out, agent=agent, tasks=tasks, agent_config=agent_config, **options
        )
    )
    store = RunStore.open(out)
    return {r.task_id: r for r in store.results()}, store


def endpoint(server: FakeLLMServer, **extra):
    return {
        "base_url": server.base_url,
        "model": "gpt-4o",
        "api_key_env": "EVAL_TEST_KEY",
        "backoff": 0,
        "retries": 2,
        "timeout": 5,
        **extra,
    }


@pytest.mark.parametrize("style", ["json", "autoglm", "uitars", "qwen_mobile_use"])
def test_vlm_agent_succeeds_in_every_output_style(synthetic, tmp_path, monkeypatch, style):
    monkeypatch.setenv("EVAL_TEST_KEY", SECRET)
    points = targets(synthetic.suite, "task001")
    answers = [reply(answer_in(style, p)) for p in [*points, None]]
    with FakeLLMServer(answers) as server:
        results, store = run(synthetic.suite, tmp_path / "run", endpoint(server, parser=style))
    result = results["task001"]
    assert result.success, result.reason
    assert (result.input_tokens, result.output_tokens) == (360, 90)
    assert result.inference_seconds > 0
    first = server.received[0]
    assert first.authorization == f"Bearer {SECRET}"
    assert first.images() == 1
    assert synthetic.tasks[1].instruction in first.text()
    assert first.body["model"] == "gpt-4o"
    steps = store.read_steps("task001")
    assert steps[0].raw_output == answer_in(style, points[0])


def test_the_key_never_reaches_the_run_folder(synthetic, tmp_path, monkeypatch):
    monkeypatch.setenv("EVAL_TEST_KEY", SECRET)
    with FakeLLMServer([status(401, f"invalid key {SECRET}"), reply("{}")]) as server:
        run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, headers_note="x"),
            tasks=("task000", "task001"),
        )
    from evaluator.report import write_report

    write_report(tmp_path / "run")
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
    assert any(p.name == "report.html" for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["agent"]["endpoint"]["api_key_env"] == "EVAL_TEST_KEY"


def test_a_literal_key_in_the_config_is_refused():
    with pytest.raises(ConfigError, match="api_key_env"):
        create_agent("openai", {"base_url": "http://x", "model": "m", "api_key": SECRET})


def test_server_errors_are_retried_then_succeed(synthetic, tmp_path):
    points = targets(synthetic.suite, "task000")
    answers = [
        status(500),
        status(503),
        reply(answer_in("json", points[0])),
        reply('{"action": "done"}'),
    ]
    with FakeLLMServer(answers) as server:
        results, _ = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None),
            tasks=("task000",),
        )
    assert results["task000"].success
    assert len(server.received) == 4


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_endpoint_down_is_a_task_error_and_the_run_goes_on(synthetic, tmp_path):
    config = {
        "base_url": f"http://127.0.0.1:{free_port()}/v1",
        "model": "m",
        "backoff": 0,
        "retries": 1,
    }
    results, _ = run(synthetic.suite, tmp_path / "run", config, tasks=("task000", "task001"))
    assert [r.status.value for r in results.values()] == ["error", "error"]
    assert "failed 2 time(s)" in results["task000"].reason
    assert "cannot connect" in results["task000"].reason


@pytest.mark.parametrize(
    ("answers", "reason"),
    [
        ([garbage()], "not a chat completion"),
        ([status(401, "invalid key")], "refused the request: HTTP 401"),
        ([reply("{}", delay=1.0)], "no answer within"),
    ],
)
def test_garbage_refusals_and_timeouts_are_errors(synthetic, tmp_path, answers, reason):
    with FakeLLMServer(answers) as server:
        results, _ = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None, timeout=0.3, retries=1),
            tasks=("task000",),
        )
    assert results["task000"].status.value == "error"
    assert reason in results["task000"].reason


def test_missing_key_variable_is_an_error_naming_it(synthetic, tmp_path, monkeypatch):
    monkeypatch.delenv("EVAL_TEST_KEY", raising=False)
    with FakeLLMServer([reply("{}")]) as server:
        results, _ = run(synthetic.suite, tmp_path / "run", endpoint(server), tasks=("task000",))
    assert "EVAL_TEST_KEY is not set" in results["task000"].reason
    assert not server.received


def test_unparseable_answers_are_recorded_parse_failures(synthetic, tmp_path):
    with FakeLLMServer([reply("I would press the big blue button")]) as server:
        results, store = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None),
            tasks=("task000",),
            mode="tolerant",
        )
    result = results["task000"]
    assert result.status.value == "failure" and result.parse_failures == result.steps
    step = store.read_steps("task000")[0]
    assert step.raw_output == "I would press the big blue button"
    assert "no JSON object" in step.parse_error


def test_images_are_shrunk_and_pixel_answers_rescaled(synthetic, tmp_path):
    point = targets(synthetic.suite, "task000")[0]
    # 270x600 screenshots sent with max side 300 -> 135x300 image; answer in those pixels
    answers = [
        reply(answer_in("qwen_mobile_use", point, size=(135, 300))),
        reply(answer_in("qwen_mobile_use", None)),
    ]
    with FakeLLMServer(answers) as server:
        results, _ = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None, parser="qwen_mobile_use", max_image_side=300),
            tasks=("task000",),
        )
    assert results["task000"].success
    assert "135 x 300" in server.received[0].text()


def mobile_agent_answers(points):
    """Reflection says correct (right) at step 1 and no_change (wrong) at step 2."""
    decisions = iter([answer_in("json", p) for p in points] + ['{"action": "done"}'])
    verdicts = iter(['{"verdict": "A", "reason": "moved on"}', "Answer: C"])

    def respond(request: Received):
        text = request.text()
        if "last action on a phone did what was intended" in text:
            return reply(next(verdicts), 50, 5)
        if "keep track of progress" in text:
            return reply("Opened the first screen.", 20, 10)
        return reply(next(decisions).replace('"go"', '"go", "memory": "PIN 4321"'), 100, 20)

    return respond


def test_mobile_agent_v2_reflections_are_scored(synthetic, tmp_path):
    points = targets(synthetic.suite, "task001")
    with FakeLLMServer(mobile_agent_answers(points)) as server:
        results, store = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None),
            agent="mobile_agent_v2",
        )
    result = results["task001"]
    assert result.success
    assert (result.reflections, result.correct_reflections) == (2, 1)
    steps = store.read_steps("task001")
    assert [s.reflection for s in steps] == [None, "correct", "no_change"]
    assert [s.reflection_correct for s in steps] == [None, True, False]
    # step 2: reflection, planning, decision; step 3: reflection (no_change: no planning), decision
    assert len(server.received) == 1 + 3 + 2
    assert result.input_tokens == 100 + (50 + 20 + 100) + (50 + 100)
    decision = server.received[-1].text()
    assert "PIN 4321" in decision and "changed nothing" in decision
    assert server.received[1].images() == 2
