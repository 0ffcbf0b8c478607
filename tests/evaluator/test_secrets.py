"""No secret value known to a run reaches a file it writes, its report, or stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.chat_client import EndpointConfig
from evaluator.errors import ConfigError
from evaluator.secrets import Secrets
from tests.evaluator.fake_llm_server import FakeLLMServer, Received, reply, status

ROOT = Path(__file__).resolve().parents[2]
ENV_KEY = "sk-lab-cred-0123456789"  # in a variable with an unusual name
BODY_KEY = "eb-tenant-secret-4242"  # in extra_body
ARGV_KEY = "argv-secret-777777"  # on an agent's command line


def echo(request: Received) -> object:
    """An endpoint that echoes what it was sent, headers included (a debugging proxy)."""
    said = f"you sent {request.authorization} and {json.dumps(request.body)[:4000]}"
    if "tenant" in json.dumps(request.body) and len(said) % 3 == 0:
        return status(500, said)  # and sometimes fails with the echo in its error text
    return reply(said)


def test_the_run_writes_no_secret_anywhere(synthetic, tmp_path):
    out = tmp_path / "run"
    agent = tmp_path / "agent.json"
    agent.write_text(
        json.dumps(
            {
                "base_url": "",
                "model": "m",
                "api_key_env": "LAB_CRED_7",
                "extra_body": {"tenant": {"api_key": BODY_KEY}},
                "retries": 1,
                "backoff": 0,
            }
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LAB_CRED_7": ENV_KEY}
    with FakeLLMServer(echo) as server:
        agent.write_text(
            agent.read_text().replace('"base_url": ""', f'"base_url": "{server.base_url}"')
        )
        run = subprocess.run(
            [
                *(sys.executable, "-m", "elderbench", "eval", "--suite", str(synthetic.suite)),
                *("--agent", "openai", "--agent-config", str(agent), "--out", str(out)),
                *("--tasks", "task000", "task001", "task002"),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert server.received, run.stderr
        assert any(ENV_KEY in (r.authorization or "") for r in server.received)
    assert run.returncode in (0, 3), run.stderr
    report = subprocess.run(
        [sys.executable, "-m", "elderbench", "report", str(out), "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.returncode == 0, report.stderr
    steps = (out / "traces" / "task000" / "steps.jsonl").read_text()
    assert "you sent Bearer ***" in steps  # the echo was recorded, with the key masked
    written = [p for p in out.rglob("*") if p.is_file()]
    assert len(written) > 5
    for text in [
        *(p.read_bytes().decode("utf-8", "replace") for p in written),
        run.stderr,
        report.stdout,
        report.stderr,
    ]:
        assert ENV_KEY not in text and BODY_KEY not in text


def test_a_key_in_an_agents_argv_is_masked_in_run_json(synthetic, tmp_path):
    from evaluator.runner import RunConfig, run_suite

    line_agent = Path(__file__).with_name("line_agent.py")
    command = [sys.executable, str(line_agent), "--api-key", ARGV_KEY, f"--token={ARGV_KEY}x"]
    run_suite(
        RunConfig(
            suite=synthetic.suite,
            out=tmp_path / "run",
            agent="subprocess",
            agent_config={"command": command},
            tasks=("task000",),
        )
    )
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert ARGV_KEY not in path.read_text(errors="replace")
    assert Secrets.of({"command": command}).values == (ARGV_KEY + "x", ARGV_KEY)


@pytest.mark.parametrize(
    "url",
    [
        "https://user:sk-inurl-555555@llm.example/v1",
        "https://llm.example/v1?api_key=sk-inurl-555555",
        "https://llm.example/v1?key=sk-inurl-555555",
    ],
)
def test_a_key_inside_base_url_is_refused_without_repeating_it(url):
    with pytest.raises(ConfigError, match="api_key_env") as refused:
        EndpointConfig(url, "m")
    assert "sk-inurl-555555" not in str(refused.value)
    EndpointConfig("https://llm.example/openai?api-version=2024-06-01", "m")  # not a key
