"""Run folders: torn lines, latest results, refusals, redaction, verdicts and tags."""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.synchronize
import threading
from pathlib import Path

import pytest

from evaluator.errors import RunStoreError
from evaluator.records import TaskResult, Verdict
from evaluator.run_store import (
    FailureCategory,
    FailureTag,
    HumanVerdict,
    RunStore,
    redact,
)
from graph_builder.model import Labels


def result(task_id: str, status: str = "success", **fields) -> TaskResult:
    return TaskResult(task_id, status, "offline", **fields)


@pytest.fixture
def store(tmp_path) -> RunStore:
    return RunStore.create(tmp_path / "run", {"agent": {"name": "random"}})


def test_results_round_trip_and_the_latest_line_wins(store):
    first = result(
        "t1",
        "error",
        reason="endpoint down",
        labels=Labels("life_service", ("narrative",), ("indirect_speech",)),
        verification=(Verdict("rule", True, "ok"),),
    )
    store.append_result(first)
    store.append_result(result("t2", "failure"))
    store.append_result(result("t1", "success"))
    loaded = {r.task_id: r for r in store.results()}
    assert loaded["t1"].status.value == "success"
    assert [r.task_id for r in store.results()] == ["t1", "t2"]
    assert TaskResult.from_json(first.to_json()) == first
    assert store.finished_ids() == {"t1", "t2"}


def test_a_torn_last_line_is_skipped_then_cut_before_the_next_append(store):
    store.append_result(result("t1"))
    store.append_result(result("t2"))
    path = store.run_dir / "results.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"task_id": "t3", "status": "succ')
    reopened = RunStore.open(store.run_dir)
    assert [r.task_id for r in reopened.results()] == ["t1", "t2"]
    assert reopened.skipped_lines == 1
    reopened.append_result(result("t3"))
    lines = path.read_bytes().splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == ["t1", "t2", "t3"]
    assert (store.run_dir / "results.jsonl.torn").read_bytes().startswith(b'{"task_id": "t3"')


def test_errors_are_not_finished_for_resume(store):
    store.append_result(result("t1", "error", reason="device lost"))
    store.append_result(result("t2", "failure"))
    assert store.finished_ids() == {"t2"}
    assert store.finished_ids(include_errors=True) == {"t1", "t2"}


def test_concurrent_appends_never_interleave(store):
    def work(k: int) -> None:
        for i in range(25):
            store.append_result(result(f"w{k}-{i}", reason="x" * 2000))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.results()) == 100 and store.skipped_lines == 0


def test_create_never_overwrites(tmp_path, store):
    with pytest.raises(RunStoreError, match="in use by elderbench eval"):
        RunStore.create(store.run_dir, {"agent": {"name": "random"}}, resume=True)
    store.close()
    with pytest.raises(RunStoreError, match="--resume"):
        RunStore.create(store.run_dir, {"agent": {"name": "random"}})
    with pytest.raises(RunStoreError, match="same agent"):
        RunStore.create(store.run_dir, {"agent": {"name": "replay"}}, resume=True)
    resumed = RunStore.create(store.run_dir, {"agent": {"name": "random"}}, resume=True)
    assert len(resumed.info()["resumed"]) == 1
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(RunStoreError, match="not empty"):
        RunStore.create(tmp_path / "busy", {})
    with pytest.raises(RunStoreError, match="not a run folder"):
        RunStore.open(tmp_path / "busy")


def test_secrets_are_redacted_from_run_json(tmp_path):
    info = {
        "agent": {
            "name": "openai",
            "config": {
                "api_key_env": "OPENAI_API_KEY",
                "api_key": "sk-123",
                "headers": {"Authorization": "Bearer x"},
                "nested": [{"token": "abc"}],
                "max_tokens": 100,
            },
        }
    }
    store = RunStore.create(tmp_path / "run", info)
    text = (store.run_dir / "run.json").read_text()
    assert "sk-123" not in text and "Bearer x" not in text and '"abc"' not in text
    config = store.info()["agent"]["config"]
    assert config["api_key_env"] == "OPENAI_API_KEY" and config["max_tokens"] == 100
    assert redact({"password": ""}) == {"password": ""}


def test_human_verdicts_and_failure_tags(store):
    store.set_override("t1", HumanVerdict(True, "the judge missed the toast", "ana"))
    verdict = store.overrides()["t1"]
    assert verdict.success and verdict.annotator == "ana" and verdict.time > 0
    store.set_override("t1", None)
    assert store.overrides() == {}

    store.add_tag("t2", FailureTag(FailureCategory.GROUNDING, step=3, note="tapped the label"))
    store.add_tag("t2", FailureTag("custom", label="ad popup"))
    tags = store.tags()["t2"]
    assert [t.title for t in tags] == ["Visual grounding / action execution", "ad popup"]
    assert tags[0].step == 3
    store.set_tags("t2", [])
    assert store.tags() == {}
    with pytest.raises(ValueError, match="label"):
        FailureTag("custom")


def test_traces_restart_for_an_unfinished_task(store):
    from evaluator.records import StepRecord

    trace = store.start_trace("t1")
    trace.add(StepRecord(0, action_text="tap"))
    trace.save_file("0000.png", b"png")
    trace.close()
    trace = store.start_trace("t1")
    trace.add(StepRecord(0, action_text="back"))
    trace.close()
    assert [s.action_text for s in store.read_steps("t1")] == ["back"]
    assert not (store.trace_dir("t1") / "0000.png").exists()


def _annotate(run_dir: str, writer: str, count: int, start: multiprocessing.synchronize.Event):
    """One process of two: ``count`` verdicts and two tags per task, each its own write."""
    store = RunStore.open(Path(run_dir))
    start.wait(10)
    for n in range(count):
        task_id = f"{writer}_{n:03d}"
        store.set_override(task_id, HumanVerdict(n % 2 == 0, annotator=writer))
        store.add_tag(task_id, FailureTag(FailureCategory.GROUNDING, n, writer))
        store.add_tag(task_id, FailureTag(FailureCategory.PLANNING, None, writer))


def test_two_processes_writing_verdicts_and_tags_lose_none(store):
    """Each write is a read-modify-write under the run's annotation lock, so two studios
    (or a studio and `elderbench failures`) on one run never drop the other's writes."""
    count = 72
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    writers = [
        context.Process(target=_annotate, args=(str(store.run_dir), name, count, start))
        for name in ("a", "b")
    ]
    for process in writers:
        process.start()
    start.set()
    for process in writers:
        process.join(120)
    assert [p.exitcode for p in writers] == [0, 0]
    overrides, tags = store.overrides(), store.tags()
    expected = {f"{w}_{n:03d}" for w in ("a", "b") for n in range(count)}
    assert set(overrides) == expected  # 144 verdicts
    assert sum(len(t) for t in tags.values()) == 2 * len(expected)  # 288 tags
    assert all(overrides[t].annotator == t[0] for t in expected)
    assert all([tag.note for tag in tags[t]] == [t[0], t[0]] for t in expected)


def test_removing_a_tag_keeps_one_another_writer_added_meanwhile(store):
    grounding, planning = (
        FailureTag(FailureCategory.GROUNDING, 2),
        FailureTag(FailureCategory.PLANNING),
    )
    store.add_tag("t1", grounding)
    other = RunStore.open(store.run_dir)  # another studio on the same run
    stale_view = store.tags()["t1"]
    other.add_tag("t1", planning)
    assert store.remove_tag("t1", stale_view[0])
    assert store.tags()["t1"] == (planning,)
    assert not store.remove_tag("t1", grounding)  # gone already: nothing else is touched
    assert store.remove_tag("t1", planning) and "t1" not in store.tags()
