"""Rule and VLM judges on online evidence."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from evaluator.errors import ConfigError, JudgeError
from evaluator.judges import (
    JudgeEvidence,
    RuleJudge,
    activity_matches,
    combine,
    create_judge,
    sample_frames,
)
from evaluator.records import Verdict
from graph_builder.model import SuccessCriteria, Task
from tests.evaluator.fake_llm_server import FakeLLMServer, garbage, reply, status

XML = (
    '<hierarchy rotation="0"><node class="android.widget.FrameLayout" bounds="[0,0][100,200]" '
    'package="com.clock"><node class="android.widget.TextView" text="Alarm set for 7:00 AM" '
    'bounds="[0,0][100,40]" package="com.clock"/></node></hierarchy>'
)


def png(color=(200, 10, 10)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (50, 100), color).save(buffer, format="PNG")
    return buffer.getvalue()


def evidence(
    criteria: SuccessCriteria | None,
    activity="com.clock/.AlarmActivity",
    xml: str | None = XML,
    frames=(),
) -> JudgeEvidence:
    task = Task(id="alarm", instruction="wake me at seven", success=criteria)
    return JudgeEvidence(
        task, task.instruction, png(), xml, activity, tuple(frames), ("tap (10, 20) 'Alarm'",)
    )


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        ("com.clock/.AlarmActivity", "com.clock/com.clock.AlarmActivity", True),
        ("com.clock", "com.clock/.AlarmActivity", True),
        ("AlarmActivity", "com.clock/.AlarmActivity", True),
        ("com.clock/.Other", "com.clock/.AlarmActivity", False),
        ("com.clock", None, False),
    ],
)
def test_activity_matching(expected, actual, same):
    assert activity_matches(expected, actual) is same


def test_rule_judge():
    judge = RuleJudge()
    ok = judge.judge(evidence(SuccessCriteria("com.clock/.AlarmActivity", ("alarm set for 7",))))
    assert ok.passed is True
    bad = judge.judge(evidence(SuccessCriteria("com.clock/.Settings", ("8:00",), ("Alarm set",))))
    assert bad.passed is False
    assert "activity is" in bad.reason and "missing text '8:00'" in bad.reason
    assert "forbidden text 'Alarm set' present" in bad.reason
    assert judge.judge(evidence(None)).passed is None
    assert judge.judge(evidence(SuccessCriteria(rubric="only a rubric"))).passed is None
    with pytest.raises(JudgeError, match="final hierarchy"):
        judge.judge(evidence(SuccessCriteria(must_contain=("x",)), xml=None))
    assert (
        RuleJudge({"case_sensitive": True})
        .judge(evidence(SuccessCriteria(must_contain=("alarm set",))))
        .passed
        is False
    )


def test_combine_and_sampling():
    assert combine([Verdict("rule", True, ""), Verdict("vlm", None, "")]) is True
    assert combine([Verdict("rule", True, ""), Verdict("vlm", False, "")]) is False
    assert combine([Verdict("rule", None, "")]) is None
    frames = [bytes([i]) for i in range(10)]
    assert sample_frames(frames, 3) == (b"\x00", b"\x03", b"\x06")
    assert sample_frames(frames[:2], 3) == (b"\x00", b"\x01")


def vlm(server, **extra):
    return create_judge(
        "vlm",
        {
            "base_url": server.base_url,
            "model": "judge-model",
            "backoff": 0,
            "retries": 1,
            "timeout": 2,
            "frames": 2,
            **extra,
        },
    )


def test_vlm_judge_sees_rubric_frames_and_final_screen():
    answer = reply('```json\n{"verdict": "success", "reason": "alarm shown"}\n```')
    with FakeLLMServer([answer]) as server:
        verdict = vlm(server).judge(
            evidence(
                SuccessCriteria(rubric="An alarm for 7 AM is enabled."),
                frames=[png((0, 0, 255)), png((0, 255, 0)), png((9, 9, 9))],
            )
        )
    assert (verdict.judge, verdict.passed, verdict.reason) == ("vlm", True, "alarm shown")
    request = server.received[0]
    assert request.images() == 3  # two sampled frames and the final screen
    text = request.text()
    assert "An alarm for 7 AM is enabled." in text and "wake me at seven" in text
    assert "com.clock/.AlarmActivity" in text


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ([reply('{"verdict": "failure", "reason": "no alarm"}')], False),
        ([reply("Verdict: **success**")], True),
    ],
)
def test_vlm_judge_reads_verdicts(answers, expected):
    with FakeLLMServer(answers) as server:
        assert vlm(server).judge(evidence(None)).passed is expected


@pytest.mark.parametrize("answers", [[reply("I am not sure.")], [status(500)], [garbage()]])
def test_vlm_judge_failures_are_judge_errors(answers):
    with FakeLLMServer(answers) as server, pytest.raises(JudgeError):
        vlm(server).judge(evidence(None))


def test_unknown_judge():
    with pytest.raises(ConfigError, match="unknown judge"):
        create_judge("oracle")
