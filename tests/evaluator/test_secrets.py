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


# --------------------------------------------------------------------------- every channel
# Each test plants a known key in one channel and reads every file the command wrote.

LANGUAGE_KEY = "sk-language-echo-31337"
STDERR_KEY = "agent-flag-key-424242"
ENV_TOKEN = "env-token-value-909090"
RESTART_TOKEN = "restart-bearer-abc123xyz"
STUDIO_KEY = "sk-studio-typed-5150"


def assert_nowhere(key: str, folder: Path, *texts: str) -> None:
    written = [p for p in folder.rglob("*") if p.is_file()]
    assert written
    for path in written:
        assert key not in path.read_bytes().decode("utf-8", "replace"), path
    for text in texts:
        assert key not in text


def echo_key(request: Received) -> object:
    return reply(f'{{"rewrite": "x", "category": "x", "said": "{request.authorization}"}}')


@pytest.mark.parametrize("command", ["label", "normalize"])
def test_label_and_normalize_write_no_echoed_key(tmp_path, monkeypatch, capsys, command):
    from elderbench.cli import main as elderbench
    from tests.evaluator.test_chat_client import small_suite

    monkeypatch.setenv("LANGUAGE_TEST_KEY", LANGUAGE_KEY)
    suite = small_suite(tmp_path)
    endpoint = tmp_path / "endpoint.json"
    with FakeLLMServer(echo_key) as server:
        endpoint.write_text(
            json.dumps(
                {"base_url": server.base_url, "model": "m", "api_key_env": "LANGUAGE_TEST_KEY"}
            )
        )
        elderbench([command, str(suite), "--endpoint", str(endpoint)])
        assert LANGUAGE_KEY in (server.received[0].authorization or "")
    said = capsys.readouterr()
    assert (suite / "language" / "proposals.json").is_file()
    assert "Bearer ***" in (suite / "language" / "proposals.json").read_text()
    assert_nowhere(LANGUAGE_KEY, suite, said.out, said.err)


def test_failures_writes_no_echoed_key(tmp_path, monkeypatch, capsys):
    from elderbench.cli import main as elderbench
    from evaluator.records import TaskResult, TaskStatus
    from evaluator.run_store import RunStore

    monkeypatch.setenv("LANGUAGE_TEST_KEY", LANGUAGE_KEY)
    store = RunStore.create(tmp_path / "run", {"agent": {"name": "test"}, "suite": {}})
    store.append_result(TaskResult("t0", TaskStatus.FAILURE, "online", instruction="do it"))
    store.close()
    endpoint = tmp_path / "endpoint.json"
    with FakeLLMServer(echo_key) as server:
        endpoint.write_text(
            json.dumps(
                {"base_url": server.base_url, "model": "m", "api_key_env": "LANGUAGE_TEST_KEY"}
            )
        )
        elderbench(["failures", str(tmp_path / "run"), "--endpoint", str(endpoint)])
        assert server.received
    said = capsys.readouterr()
    assert (tmp_path / "run" / "failure_proposals.json").is_file()
    assert_nowhere(LANGUAGE_KEY, tmp_path / "run", said.out, said.err)


def test_a_subprocess_agents_stderr_passes_no_key(synthetic, tmp_path):
    noisy = tmp_path / "noisy_agent.py"
    noisy.write_text(
        "import os, runpy, sys\n"
        "print('argv:', ' '.join(sys.argv), 'token:', os.environ['AGENT_TOKEN'], file=sys.stderr)\n"
        f"runpy.run_path({str(Path(__file__).with_name('line_agent.py'))!r}, run_name='__main__')\n"
    )
    config = tmp_path / "agent.json"
    config.write_text(
        json.dumps(
            {
                "command": [sys.executable, str(noisy), "--api-key", STDERR_KEY],
                "env": {"AGENT_TOKEN": ENV_TOKEN},
            }
        )
    )
    out = tmp_path / "run"
    run = subprocess.run(
        [
            *(sys.executable, "-m", "elderbench", "eval", "--suite", str(synthetic.suite)),
            *("--agent", "subprocess", "--agent-config", str(config), "--out", str(out)),
            *("--tasks", "task000"),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode in (0, 3), run.stderr
    assert "argv:" in run.stderr and "token: ***" in run.stderr  # relayed, masked
    for key in (STDERR_KEY, ENV_TOKEN):
        assert_nowhere(key, out, run.stdout, run.stderr)


def test_a_bearer_token_in_the_restart_command_stays_off_disk(synthetic, tmp_path):
    from evaluator.farm.pool import FarmSettings
    from evaluator.runner import RunConfig, run_suite

    restart = f"curl -s -H 'Authorization: Bearer {RESTART_TOKEN}' http://farm.local/{{serial}}"
    config = RunConfig(
        suite=synthetic.suite,
        out=tmp_path / "run",
        agent="replay",
        tasks=("task000",),
        farm=FarmSettings(restart_command=restart),
    )
    run_suite(config)
    assert "Bearer ***" in (tmp_path / "run" / "run.json").read_text()
    assert_nowhere(RESTART_TOKEN, tmp_path / "run")
    from dataclasses import replace

    run_suite(replace(config, resume=True))  # the same command: not refused as a change
    assert_nowhere(RESTART_TOKEN, tmp_path / "run")


def test_the_studio_settings_hold_no_key_typed_in_a_command(tmp_path):
    from recorder_app.qt.eval_panel.settings import (
        AgentSettings,
        EvalSettings,
        save_settings,
    )

    extra = json.dumps({"command": ["my-agent", "--api-key", STUDIO_KEY]})
    settings = EvalSettings(agents={"subprocess": AgentSettings(extra=extra)})
    save_settings(tmp_path, settings)
    assert_nowhere(STUDIO_KEY, tmp_path)


def test_inline_credentials_are_found_and_plain_words_are_not():
    from evaluator.secrets import inline_credentials

    assert inline_credentials("curl -H 'Authorization: Bearer abc123def456'") == ["abc123def456"]
    assert inline_credentials("https://h/heal?token=t0k3n-value&x=1") == ["t0k3n-value"]
    assert inline_credentials('{"api_key": "sk-0123456789"}') == ["sk-0123456789"]
    assert inline_credentials("bearer tokens and token: counting") == []


def test_the_farm_log_masks_a_token_the_restart_command_printed(tmp_path):
    from evaluator.farm.log import FarmLog, read_farm_log
    from evaluator.farm.pool import FarmSettings

    restart = f"heal --token {RESTART_TOKEN} {{serial}}"
    Secrets.of(FarmSettings(restart_command=restart).to_json())  # what a run does at start
    FarmLog(tmp_path).record("restart", "emu-1", output=f"healed with {RESTART_TOKEN}")
    assert read_farm_log(tmp_path)[0]["output"] == "healed with ***"
    assert_nowhere(RESTART_TOKEN, tmp_path)
