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
from graph_builder.model import NORMALIZED_SCREEN, Action
from tests.evaluator.fake_llm_server import FakeLLMServer, Received, garbage, reply, status
from tests.evaluator.family_replies import reply_for

SECRET = "sk-test-DO-NOT-LEAK-7f3a9"


def targets(suite: Path, task_id: str) -> list[tuple[float, float]]:
    """The [0,1000] points of the task's tap edges on the straight path (e0, e1, ...)."""
    graph = load_graph(suite / task_id)
    return [e.rule.points[0] for e in graph.edges if e.id.startswith("e") and e.rule.points]


def answer_in(family: str, point: tuple[float, float] | None, sent=(270, 600)) -> str:
    """A reply in ``family``'s format: a tap on ``point`` ([0,1000]) or, for None, done."""
    if point is None:
        return reply_for(family, Action.done(), sent)
    return reply_for(family, Action.tap(*point, screen=NORMALIZED_SCREEN), sent)


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


@pytest.mark.parametrize("family", ["json", "autoglm", "ui-tars-1.5", "qwen2.5-vl"])
def test_vlm_agent_succeeds_in_every_output_style(synthetic, tmp_path, monkeypatch, family):
    monkeypatch.setenv("EVAL_TEST_KEY", SECRET)
    points = targets(synthetic.suite, "task001")
    sent = (270, 600)  # the synthetic screenshots are small: sent as they are
    answers = [reply(answer_in(family, p, sent)) for p in [*points, None]]
    with FakeLLMServer(answers) as server:
        results, store = run(synthetic.suite, tmp_path / "run", endpoint(server, family=family))
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
    assert steps[0].raw_output == answer_in(family, points[0], sent)
    assert steps[0].extra["family"] == family and steps[0].extra["sent_size"] == [270, 600]


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
        ([reply("{}", prompt_tokens=10**30)], "not a real count"),
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
    # 270x600 screenshots sent with max side 300 -> 135x300, which Qwen2.5-VL's processor
    # smart-resizes to 140x308: it answers in those pixels, and its prompt says so
    answers = [
        reply(answer_in("qwen2.5-vl", point, sent=(135, 300))),
        reply(answer_in("qwen2.5-vl", None)),
    ]
    with FakeLLMServer(answers) as server:
        results, store = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None, family="qwen2.5-vl", max_image_side=300),
            tasks=("task000",),
        )
    assert results["task000"].success
    assert "140 x 308" in server.received[0].text()
    step = store.read_steps("task000")[0]
    assert step.extra["sent_size"] == [135, 300] and step.extra["space_size"] == [140, 308]
    assert "smart_resize(factor 28" in step.extra["coordinate_space"]


def test_a_server_with_other_pixel_limits_changes_the_resize_rule():
    agent = create_agent(
        "openai",
        {"base_url": "http://x", "model": "m", "family": "qwen2.5-vl", "max_pixels": 200_000},
    )
    width, height = agent.family.space_size((1080, 2400))
    assert width * height <= 200_000 and width % 28 == 0 and height % 28 == 0
    with pytest.raises(ConfigError, match="min_pixels"):
        create_agent(
            "openai",
            {
                "base_url": "http://x",
                "model": "m",
                "family": "gui-owl",
                "min_pixels": 10,
                "max_pixels": 5,
            },
        )


def test_an_old_parser_key_is_refused_with_a_pointer():
    with pytest.raises(ConfigError, match="family"):
        create_agent("openai", {"base_url": "http://x", "model": "m", "parser": "uitars"})
    with pytest.raises(ConfigError, match="ui-tars-1.5"):
        create_agent("openai", {"base_url": "http://x", "model": "m", "family": "uitars"})


def wrong_point(suite: Path, task_id: str) -> tuple[float, float]:
    graph = load_graph(suite / task_id)
    return next(e.rule.points[0] for e in graph.edges if e.id == "wrong")


def ma2_decision(point: tuple[float, float] | None, sent=(270, 600)) -> str:
    """A Mobile-Agent-v2 decision in the paper's format, in pixels of the sent image."""
    action = Action.done() if point is None else Action.tap(*point, screen=NORMALIZED_SCREEN)
    return reply_for("mobile-agent-v2", action, sent) + "\n### Memory ###\nPIN 4321"


def mobile_agent_answers(decisions: list[str], verdicts: list[str]):
    decided, judged = iter(decisions), iter(verdicts)

    def respond(request: Received):
        text = request.text()
        if "taken before and after one operation" in text:
            return reply(next(judged), 50, 5)
        if "keep track of progress" in text:
            return reply("Opened the first screen.", 20, 10)
        return reply(next(decided), 100, 20)

    return respond


def test_mobile_agent_v2_reflections_are_scored(synthetic, tmp_path):
    points = targets(synthetic.suite, "task001")
    answers = mobile_agent_answers(
        [ma2_decision(p) for p in points] + [ma2_decision(None)],
        ["### Thought ###\nIt moved on.\n### Answer ###\nA", "### Answer ###\nC"],
    )
    with FakeLLMServer(answers) as server:
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
    assert steps[0].extra["family"] == "mobile-agent-v2"
    # step 2: reflection, planning, decision; step 3: reflection (no_change: no planning), decision
    assert len(server.received) == 1 + 3 + 2
    assert result.input_tokens == 100 + (50 + 20 + 100) + (50 + 100)
    decision = server.received[-1].text()
    assert "PIN 4321" in decision and "did not meet your expectation" in decision
    assert "270 pixels wide" in decision
    assert server.received[1].images() == 2


def test_mobile_agent_v2_presses_back_after_a_wrong_page(synthetic, tmp_path):
    points = targets(synthetic.suite, "task001")
    decisions = [ma2_decision(wrong_point(synthetic.suite, "task001"))]
    decisions += [ma2_decision(p) for p in points] + [ma2_decision(None)]
    verdicts = ["### Answer ###\nB"] + ["### Answer ###\nA"] * len(points)
    with FakeLLMServer(mobile_agent_answers(decisions, verdicts)) as server:
        results, store = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None),
            agent="mobile_agent_v2",
        )
    assert results["task001"].success, results["task001"].reason
    steps = store.read_steps("task001")
    assert [s.node for s in steps[:3]] == ["start", "detour", "start"]
    assert steps[1].action["type"] == "back" and steps[1].extra["automatic_back"]
    assert steps[1].reflection == "wrong" and steps[1].reflection_correct is False
    # the automatic Back is not reflected on: the next reflection judges the next decision
    assert steps[2].reflection is None
    assert "did not meet your expectation" in server.received[2].text()


def test_a_huge_model_reply_is_stored_as_a_marked_prefix(synthetic, tmp_path):
    huge = "I will think about this. " * 80_000  # 2 MB of text and no action
    with FakeLLMServer([reply(huge)]) as server:
        _, store = run(
            synthetic.suite,
            tmp_path / "run",
            endpoint(server, api_key_env=None),
            tasks=("task000",),
        )
    steps_file = tmp_path / "run" / "traces" / "task000" / "steps.jsonl"
    assert steps_file.stat().st_size < 300_000
    [step] = store.read_steps("task000")
    kept, mark, _ = step.raw_output.partition("[... cut, ")
    assert mark and huge.startswith(kept) and len(kept) >= 16_000
    assert step.raw_output.endswith(f"{len(huge) - len(kept)} of {len(huge)} bytes]")
