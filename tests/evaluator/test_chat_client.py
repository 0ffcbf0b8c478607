"""The chat client's deadlines, waits and refusals against a real local HTTP server."""

from __future__ import annotations

import email.utils
import shutil
import time
from pathlib import Path

import pytest

from evaluator.chat_client import ChatClient, EndpointConfig
from evaluator.errors import EndpointError, JudgeError
from evaluator.judges import create_judge
from evaluator.language.proposals import Kind, ProposalStore, propose
from tests.evaluator.fake_llm_server import Answer, FakeLLMServer, reply, status
from tests.evaluator.test_judges import evidence
from tests.evaluator.test_language import SAMPLE


def client(server: FakeLLMServer, waits: list[float] | None = None, **extra) -> ChatClient:
    config = EndpointConfig(server.base_url, "m", **{"backoff": 0.01, "retries": 1, **extra})
    if waits is None:
        return ChatClient(config)
    return ChatClient(config, sleep=waits.append)


def trickling(seconds_per_byte: float = 0.05) -> Answer:
    # A good answer, one byte every `seconds_per_byte`: each read finds a byte well within
    # any per-read timeout, and the whole answer takes far longer than the deadline.
    return Answer(body=reply("{}").body, trickle=seconds_per_byte)


def test_a_trickling_server_cannot_keep_a_call_past_its_deadline():
    with FakeLLMServer([trickling()]) as server:
        started = time.monotonic()
        with pytest.raises(EndpointError, match="no answer within 0.5 s"):
            client(server, timeout=0.5, retries=1).complete([{"role": "user", "content": "hi"}])
        elapsed = time.monotonic() - started
    # two attempts of 0.5 s each (and a 10 ms backoff), not the answer's 20+ s per attempt
    assert elapsed < 3.0
    assert len(server.received) == 2


def test_the_whole_call_deadline_bounds_every_attempt_together():
    with FakeLLMServer([trickling()]) as server:
        started = time.monotonic()
        with pytest.raises(EndpointError):
            client(server, timeout=5, retries=5, call_timeout=0.8).complete(
                [{"role": "user", "content": "hi"}]
            )
        assert time.monotonic() - started < 2.5


def test_the_vlm_judge_shares_the_deadline():
    with FakeLLMServer([trickling()]) as server:
        judge = create_judge(
            "vlm",
            {"base_url": server.base_url, "model": "j", "timeout": 0.5, "retries": 0, "frames": 1},
        )
        started = time.monotonic()
        with pytest.raises(JudgeError, match="no answer within"):
            judge.judge(evidence(None))
        assert time.monotonic() - started < 2.5


def small_suite(tmp_path: Path) -> Path:
    out = tmp_path / "suite"
    out.mkdir()
    shutil.copy(SAMPLE / "suite.json", out / "suite.json")
    (out / "call_daughter").mkdir()
    shutil.copy(SAMPLE / "call_daughter" / "task.json", out / "call_daughter" / "task.json")
    return out


def test_the_language_tools_share_the_deadline(tmp_path):
    suite = small_suite(tmp_path)
    with FakeLLMServer([trickling()]) as server:
        started = time.monotonic()
        with pytest.raises(EndpointError, match="no answer within"):
            propose(suite, Kind.LABELS, client(server, timeout=0.5, retries=0))
        assert time.monotonic() - started < 2.5


def test_retry_after_in_seconds_is_honoured():
    waits: list[float] = []
    answers = [status(429, "slow down", retry_after="2")]
    with FakeLLMServer([*answers, reply("fine")]) as server:
        answer = client(server, waits).complete([{"role": "user", "content": "hi"}])
    assert answer.text == "fine" and answer.attempts == 2
    assert waits == [2.0]


def test_retry_after_as_an_http_date_is_honoured():
    waits: list[float] = []
    when = email.utils.formatdate(time.time() + 3, usegmt=True)
    answers = [status(503, "busy", retry_after=when)]
    with FakeLLMServer([*answers, reply("fine")]) as server:
        assert client(server, waits).complete([{"role": "user", "content": "x"}]).text == "fine"
    assert len(waits) == 1 and 1.0 <= waits[0] <= 3.0


def test_a_retry_after_past_the_deadline_ends_the_call_at_once():
    waits: list[float] = []
    answers = [status(429, "quota", retry_after="3600")]
    with FakeLLMServer([*answers, reply("too late")]) as server:
        with pytest.raises(EndpointError, match=r"asked to wait 3600 s .*Retry-After"):
            client(server, waits, timeout=2, retries=3).complete([{"role": "user", "content": "x"}])
        assert len(server.received) == 1
    assert waits == []


def test_a_reply_cut_short_of_its_content_length_is_retried():
    body = reply("the whole answer").body
    cut = Answer(body=body[: len(body) // 2], announce=len(body))
    with FakeLLMServer([cut, reply("the whole answer")]) as server:
        answer = client(server, timeout=2).complete([{"role": "user", "content": "x"}])
    assert (answer.text, answer.attempts) == ("the whole answer", 2)


@pytest.mark.parametrize("field", ["prompt_tokens", "completion_tokens"])
def test_absurd_token_counts_are_the_replys_garbage(field):
    counts = {"prompt_tokens": 10, "completion_tokens": 10, field: 10**30}
    garbage = f"{field} = 1e\\+30.*not a real count"
    with (
        FakeLLMServer([reply("{}", **counts)]) as server,
        pytest.raises(EndpointError, match=garbage),
    ):
        client(server, retries=0).complete([{"role": "user", "content": "x"}])


def test_a_reply_larger_than_the_cap_is_refused(monkeypatch):
    import evaluator.chat_client as chat_client

    monkeypatch.setattr(chat_client, "MAX_REPLY_BYTES", 1000)
    too_large = "announces .* bytes \\(at most 1000\\)"
    with (
        FakeLLMServer([reply("x" * 5000)]) as server,
        pytest.raises(EndpointError, match=too_large),
    ):
        client(server, retries=0).complete([{"role": "user", "content": "x"}])


def test_the_key_an_endpoint_echoes_never_leaves_the_client(monkeypatch):
    monkeypatch.setenv("CHAT_TEST_KEY", "sk-echoed-key-123456")
    with FakeLLMServer(lambda r: reply(f"you sent {r.authorization}")) as server:
        answer = client(server, api_key_env="CHAT_TEST_KEY").complete(
            [{"role": "user", "content": "x"}]
        )
    assert answer.text == "you sent Bearer ***"


def test_a_proposal_store_written_from_an_echo_holds_no_key(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAT_TEST_KEY", "sk-echoed-key-123456")
    suite = small_suite(tmp_path)
    with FakeLLMServer(lambda r: reply(f"key {r.authorization}")) as server:
        propose(suite, Kind.LABELS, client(server, api_key_env="CHAT_TEST_KEY"))
    assert ProposalStore(suite).path.is_file()
    assert "sk-echoed-key-123456" not in ProposalStore(suite).path.read_text()
