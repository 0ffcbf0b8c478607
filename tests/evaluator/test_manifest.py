"""manifest.json pins a run; `elderbench verify` says what changed since."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

import pytest

from devices.android import parse_package_version
from devices.device import PackageVersion
from devices.fake import FakeDevice
from elderbench.cli import main
from evaluator.control import Control
from evaluator.manifest import (
    MANIFEST_SCHEMA_VERSION,
    changed_files,
    device_fingerprint,
    essentials,
    essentials_json,
    read_manifest,
    suite_hash,
    suite_record,
    task_hash,
    text_hash,
    tool_commit,
)
from evaluator.prompts import load_prompt
from evaluator.runner import RunConfig, RunStarted, TaskFinished, iter_run, run_suite
from graph_builder.io import load_suite_tasks
from graph_builder.model import EvalProtocol
from graph_builder.screen import Screen
from tests.evaluator import test_online
from tests.evaluator.fake_llm_server import FakeLLMServer, reply

# the virtual phone and the suite recorded on it, shared with the online tests
recorded = test_online.recorded
phone_port = test_online.phone_port
SAMPLE = Path(str(files("task_graphs") / "sample"))
ROOT = Path(__file__).resolve().parents[2]
PLANTED = "sk-planted-manifest-31337"


@pytest.fixture
def suite(tmp_path) -> Path:
    """A copy of the sample suite that a test may change (the sample itself never)."""
    copy = tmp_path / "suite"
    shutil.copytree(SAMPLE, copy)
    return copy


def eval_offline(suite: Path, out: Path, *extra: str) -> int:
    return main(
        [
            *("eval", "--suite", str(suite), "--protocol", "offline"),
            *("--agent", "replay", "--out", str(out), *extra),
        ]
    )


# --------------------------------------------------------------------------- hashes


def test_the_suite_hash_is_stable_order_independent_and_names_the_changed_file(tmp_path):
    # the same files written in another order hash the same
    reversed_copy = tmp_path / "reversed"
    for path in sorted(SAMPLE.rglob("*"), reverse=True):
        if path.is_file():
            target = reversed_copy / path.relative_to(SAMPLE)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    assert suite_hash(reversed_copy) == suite_hash(SAMPLE)
    before = suite_record(reversed_copy)
    node = reversed_copy / "font_bigger" / "nodes" / "n2.xml"
    node.write_bytes(node.read_bytes() + b" ")
    after = suite_record(reversed_copy)
    assert after["hash"] != before["hash"]
    assert after["tasks"]["font_bigger"]["hash"] == task_hash(reversed_copy / "font_bigger")
    assert after["tasks"]["font_bigger"]["hash"] != before["tasks"]["font_bigger"]["hash"]
    assert after["tasks"]["wake_at_eight"] == before["tasks"]["wake_at_eight"]
    assert changed_files(before, after) == [("font_bigger/nodes/n2.xml", "changed")]


def test_dumpsys_package_versions_are_read_per_package():
    dump = (
        "Packages:\n  Package [com.a] (1f):\n    versionCode=42 minSdk=24 targetSdk=34\n"
        "    versionName=1.2.3\n  Package [com.b] (2e):\n    versionCode=7 minSdk=24\n"
        "    versionName=b7\n"
    )
    assert parse_package_version("com.a", dump) == PackageVersion("1.2.3", 42)
    assert parse_package_version("com.b", dump) == PackageVersion("b7", 7)
    assert parse_package_version("com.c", "Unable to find package: com.c\n") is None


def test_a_fake_devices_fingerprint_holds_its_app_versions():
    phone = FakeDevice(
        {"home": Screen((100, 200), png=b"home")},
        "home",
        lambda at, action: at,
        versions={"com.a": PackageVersion("2.0", 20)},
    )
    found = device_fingerprint(phone, ["com.a", "com.missing"])
    assert (found["model"], found["width"], found["height"]) == ("FakeDevice", 100, 200)
    assert found["packages"] == {
        "com.a": {"version_name": "2.0", "version_code": 20},
        "com.missing": None,
    }


def test_the_essentials_read_a_manifest_made_without_git(monkeypatch):
    import subprocess

    def no_git(*args, **kwargs):
        raise FileNotFoundError("git")

    monkeypatch.setattr(subprocess, "run", no_git)
    assert tool_commit() == {"commit": None, "dirty": None}
    data = {
        "tool": {"version": "0.1.0", "commit": None, "dirty": None},
        "python": {"version": "3.12.1"},
        "suite": {"name": "s", "hash": "sha256:ab"},
        "models": {"agent": None},
        "devices": [],
    }
    assert essentials(data) == [
        "elderbench 0.1.0 (no git commit), Python 3.12.1",
        "suite s: sha256:ab",
    ]


# --------------------------------------------------------------------------- verify


def test_verify_passes_on_a_fresh_offline_run_and_report_shows_the_manifest(
    suite, tmp_path, capsys
):
    out = tmp_path / "run"
    assert eval_offline(suite, out) == 0
    manifest = read_manifest(out)
    assert manifest is not None and manifest["schema_version"] == MANIFEST_SCHEMA_VERSION
    assert manifest["suite"]["hash"] == suite_hash(suite)
    assert manifest["tool"]["version"] and manifest["python"]["version"]
    assert manifest["packages"]["numpy"]
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    said = capsys.readouterr().out
    offline = sum(1 for t in load_suite_tasks(suite) if t.protocol is EvalProtocol.OFFLINE)
    assert said.startswith(f"verified: {out} ({offline} tasks, suite {suite_hash(suite)})")
    assert main(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"suite ElderBench Studio sample: {suite_hash(suite)}" in printed
    assert "## Manifest" in (out / "report.md").read_text(encoding="utf-8")


def test_verify_names_a_suite_file_changed_since_the_run(suite, tmp_path, capsys):
    out = tmp_path / "run"
    assert eval_offline(suite, out) == 0
    graph = suite / "font_bigger" / "graph.json"
    graph.write_text(graph.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    (suite / "wake_at_eight" / "nodes" / "n1.png").unlink()
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    said = capsys.readouterr().out
    assert f"suite file {graph} changed since the run" in said
    assert f"suite file {suite / 'wake_at_eight' / 'nodes' / 'n1.png'} removed" in said


def test_verify_names_a_result_line_that_disagrees_with_its_trace(suite, tmp_path, capsys):
    out = tmp_path / "run"
    assert eval_offline(suite, out) == 0
    results = out / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines()
    edited = []
    for line in lines:
        data = json.loads(line)
        if data["task_id"] == "font_bigger":
            data["steps"] += 1
        if data["task_id"] == "wake_at_eight":
            data["status"], data["reason"] = "failure", "edited by hand"
        edited.append(json.dumps(data))
    results.write_text("\n".join(edited) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    said = capsys.readouterr().out
    assert re.search(r"task font_bigger: steps is \d+ in results.jsonl but \d+ in its trace", said)
    # the edited status no longer gives the report's SR
    assert re.search(r"report.json: sr no longer recomputes from the results", said)
    assert str(results) in said


def test_verify_names_a_success_whose_trace_does_not_end_in_done(suite, tmp_path, capsys):
    out = tmp_path / "run"
    assert eval_offline(suite, out, "--tasks", "font_bigger") == 0
    steps = out / "traces" / "font_bigger" / "steps.jsonl"
    lines = steps.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    last["action"] = {"type": "back"}
    steps.write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["verify", str(out)]) == 1
    assert (
        "task font_bigger is a success in results.jsonl but the last step of its trace is back"
        in (capsys.readouterr().out)
    )


def test_verify_takes_a_report_from_before_the_asking_counts_and_names_a_lost_number(
    suite, tmp_path, capsys
):
    out = tmp_path / "run"
    assert eval_offline(suite, out, "--tasks", "font_bigger") == 0
    report = out / "report.json"
    stored = json.loads(report.read_text(encoding="utf-8"))
    older = {k: v for k, v in stored.items() if k not in ("asking", "user_cost")}
    del older["tokens"]["user_input"]
    report.write_text(json.dumps(older), encoding="utf-8")
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0  # numbers it did not have are not differences
    stored["bogus_number"] = 3  # a number the fresh summary does not give is one
    report.write_text(json.dumps(stored), encoding="utf-8")
    assert main(["verify", str(out)]) == 1
    assert "report.json: bogus_number no longer recomputes" in capsys.readouterr().out


def test_a_resume_keeps_the_manifest_and_reports_a_changed_suite(suite, tmp_path):
    out = tmp_path / "run"
    config = RunConfig(suite=suite, out=out, agent="replay", tasks=("font_bigger", "wake_at_eight"))
    control = Control()
    for event in iter_run(config, control=control):
        if isinstance(event, TaskFinished):
            control.stop.set()  # the second task is left for the resume
    first = read_manifest(out)
    task = suite / "wake_at_eight" / "task.json"
    task.write_text(task.read_text(encoding="utf-8").replace("wake me", "wake me up"), "utf-8")
    events = list(iter_run(replace(config, resume=True)))
    started = next(e for e in events if isinstance(e, RunStarted))
    assert [e.task_id for e in events if isinstance(e, TaskFinished)] == ["wake_at_eight"]
    assert started.suite_change is not None and "wake_at_eight/task.json changed" in (
        started.suite_change
    )
    again = read_manifest(out)
    assert first is not None and again is not None
    assert again["times"]["started"] == first["times"]["started"]
    assert len(again["times"]["resumed"]) == 1
    (change,) = again["suite_changes"]
    assert change["files"] == ["wake_at_eight/task.json changed"]
    assert (change["from"], change["to"]) == (first["suite"]["hash"], suite_hash(suite))


def test_no_key_reaches_the_manifest_and_prompts_models_sampling_are_pinned(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_MANIFEST_KEY", PLANTED)
    prompt = tmp_path / "prompt.md"
    # a template someone pasted a key into: stored masked
    prompt.write_text(load_prompt("agent_json.md") + f"\n(Bearer {PLANTED})\n", "utf-8")
    out = tmp_path / "run"
    with FakeLLMServer([reply('{"action": "done"}')]) as server:
        run_suite(
            RunConfig(
                suite=SAMPLE,
                out=out,
                agent="openai",
                agent_config={
                    "base_url": server.base_url,
                    "model": "lab-model-7b",
                    "api_key_env": "LAB_MANIFEST_KEY",
                    "temperature": 0.25,
                    "top_p": 0.9,
                    "seed": 11,
                    "extra_body": {"tenant": {"api_key": PLANTED}},
                    "prompt": str(prompt),
                },
                tasks=("font_bigger",),
            )
        )
        assert any(PLANTED in (r.authorization or "") for r in server.received)
    text = (out / "manifest.json").read_text(encoding="utf-8")
    assert PLANTED not in text
    manifest = json.loads(text)
    assert manifest["models"] == {"agent": "lab-model-7b"}
    assert manifest["endpoints"]["agent"] == server.base_url
    assert manifest["sampling"]["agent"] == {"temperature": 0.25, "top_p": 0.9, "max_tokens": 1024}
    assert manifest["seeds"] == {"agent": 11}
    template = manifest["prompts"]["agent.template"]
    assert template["hash"] == text_hash(prompt.read_text(encoding="utf-8"))
    assert template["text"].endswith("(Bearer ***)\n")
    assert main(["verify", str(out)]) == 0


def test_an_endpoint_is_recorded_without_password_or_query_values():
    from evaluator.manifest import masked_endpoint
    from evaluator.secrets import Secrets

    url = f"https://lab:{PLANTED}@llm.example:8443/v1?deployment=abc"
    masked = masked_endpoint(url, Secrets([PLANTED]))
    assert masked == "https://***@llm.example:8443/v1?deployment=***"


def test_the_formats_doc_example_of_a_manifest_loads():
    doc = (ROOT / "docs" / "formats.md").read_text("utf-8")
    (example,) = re.findall(r"<!-- run: manifest -->\s*```json\n(.*?)```", doc, re.S)
    data = json.loads(example)
    assert data["schema_version"] == MANIFEST_SCHEMA_VERSION
    record = data["suite"]
    assert record["hash"].startswith("sha256:")
    assert changed_files(record, record) == []
    for prompt in data["prompts"].values():
        assert prompt["hash"] == text_hash(prompt["text"])
    for device in data["devices"]:
        assert {"serial", "model", "android_version", "width", "height", "packages"} <= set(device)


# --------------------------------------------------------------------------- online


def test_an_online_runs_manifest_fingerprints_the_phone_with_app_versions(
    recorded, tmp_path, phone_port, capsys
):
    suite, demos = recorded
    out = tmp_path / "run"
    run_suite(test_online.online(suite, out, demos=demos))
    manifest = read_manifest(out)
    assert manifest is not None
    (device,) = manifest["devices"]
    assert device["serial"] == "virtual-1"
    assert (device["model"], device["android_version"]) == ("ElderPhone Virtual", "14")
    assert (device["width"], device["height"]) == (1080, 2400)
    # the virtual phone's Settings app, as `dumpsys package` reports it
    assert device["packages"] == {
        "com.android.settings": {"version_name": "14", "version_code": 34}
    }
    assert manifest["models"] == {"agent": None, "judge:rule": None}
    assert main(["verify", str(out)]) == 0
    assert main(["report", str(out)]) == 0
    assert (
        "device virtual-1: ElderPhone Virtual, Android 14, 1080x2400; com.android.settings 14 (34)"
        in (capsys.readouterr().out)
    )


def test_report_shows_the_manifest_under_its_table_and_in_its_json(suite, tmp_path, capsys):
    out = tmp_path / "run"
    assert eval_offline(suite, out) == 0
    manifest = read_manifest(out)
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["manifest"] == essentials_json(manifest)
    assert printed["manifest"]["suite_hash"] == suite_hash(suite)
    # report.json stays the summary alone: verify recomputes it
    assert "manifest" not in json.loads((out / "report.json").read_text(encoding="utf-8"))
    md = (out / "report.md").read_text(encoding="utf-8")
    overview = md.split("## Overview")[1]
    table_end = overview.index("\n\n", overview.index("|---"))
    pinned = f"Manifest: elderbench {manifest['tool']['version']} ("
    assert overview[table_end:].lstrip().startswith(pinned)
    assert suite_hash(suite).removeprefix("sha256:")[:12] in overview[table_end:].split("\n")[2]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.index(pinned) > html.index("<table>")


def test_verify_recomputes_with_the_prices_the_run_recorded_and_names_a_changed_price(
    tmp_path, capsys
):
    prices = tmp_path / "lab_prices.json"
    table = {"currency": "EUR", "models": {"lab-model-7b": {"input": 4.0, "output": 20.0}}}
    prices.write_text(json.dumps(table), encoding="utf-8")
    out = tmp_path / "run"
    with FakeLLMServer([reply('{"action": "done"}', 1000, 100)]) as server:
        config = tmp_path / "agent.json"
        config.write_text(json.dumps({"base_url": server.base_url, "model": "lab-model-7b"}))
        code = main(
            [
                *("eval", "--suite", str(SAMPLE), "--protocol", "offline"),
                *("--agent", "openai", "--agent-config", str(config), "--out", str(out)),
                *("--tasks", "font_bigger", "--prices", str(prices)),
            ]
        )
    assert code == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["cost"] == pytest.approx((1000 * 4.0 + 100 * 20.0) / 1_000_000)
    assert report["basis"]["prices"]["file"] == str(prices)
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"recomputed with the prices recorded in {out / 'report.json'}" in said
    assert f"(read from {prices}), seed 0" in said
    # a price changed in what the run recorded: the cost no longer recomputes
    report["basis"]["prices"]["models"]["lab-model-7b"]["input"] = 5.0
    (out / "report.json").write_text(json.dumps(report), encoding="utf-8")
    assert main(["verify", str(out)]) == 1
    said = capsys.readouterr().out
    assert re.search(r"json: cost no longer recomputes from the results \(stored 0.006", said)


def test_verify_recomputes_a_comparison_with_the_seed_the_report_used(suite, tmp_path, capsys):
    out, other = tmp_path / "run", tmp_path / "other"
    assert eval_offline(suite, out) == 0
    assert eval_offline(suite, other) == 0
    # the other run fails half its tasks, so the bootstrap's interval depends on the seed
    results = other / "results.jsonl"
    lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    for data in lines[::2]:
        data["status"], data["success"], data["reason"] = "failure", False, "edited"
    results.write_text("".join(json.dumps(d) + "\n" for d in lines), encoding="utf-8")
    assert main(["report", str(out), "--compare", str(other), "--seed", "7"]) == 0
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    assert "seed 7" in capsys.readouterr().out
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    report["basis"]["seed"] = 8
    (out / "report.json").write_text(json.dumps(report), encoding="utf-8")
    assert main(["verify", str(out)]) == 1
    assert "report.json: comparison." in capsys.readouterr().out
