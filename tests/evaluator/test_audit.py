"""elderbench audit on real offline runs of the sample suite: groups, stable ids, signed
marks in the suite that survive rebuilds, the HTML sheet, and the SR bounds they imply."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from lxml import etree

from elderbench.cli import main
from evaluator.audit_groups import AuditError, collect, is_unmatched
from evaluator.audit_marks import MARKS_FILE, MarksError, Target, load_marks, set_mark
from evaluator.bounds import sr_bounds
from evaluator.records import StepRecord, TaskResult, TaskStatus
from evaluator.run_store import RunStore
from evaluator.run_summary import summarize
from evaluator.runner import RunConfig, run_suite
from graph_builder.build import build_task, suite_lock
from graph_builder.folder_lock import FolderLockedError
from graph_builder.io import SUITE_DEMOS_DIR
from task_graphs.generate import SUITE_DIR

# Tasks where the heuristic agent (normalized instructions) and the random agent leave the
# graph: on call_tom_back the heuristic taps Back on the DONE screen instead of saying done;
# on wake_at_eight both agents tap the 8:00 AM alarm, which no demonstration did.
TASKS = ("call_tom_back", "wake_at_eight", "doctor_when")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A copy of part of the sample suite (marks are written into it)."""
    out = tmp_path / "suite"
    out.mkdir()
    shutil.copy2(SUITE_DIR / "suite.json", out / "suite.json")
    for task in TASKS:
        shutil.copytree(SUITE_DIR / task, out / task)
        shutil.copytree(SUITE_DIR / SUITE_DEMOS_DIR / task, out / SUITE_DEMOS_DIR / task)
    return out


def _run(suite: Path, out: Path, agent: str, **config: object) -> Path:
    run_suite(
        RunConfig(suite=suite, out=out, agent=agent, protocol="offline", **config)  # type: ignore[arg-type]
    )
    return out


@pytest.fixture
def runs(suite: Path, tmp_path: Path) -> tuple[Path, Path]:
    heuristic = _run(suite, tmp_path / "heuristic", "heuristic", variant="normalized")
    random = _run(suite, tmp_path / "random", "random")
    return heuristic, random


def _unmatched(run: Path) -> list[tuple[str, StepRecord]]:
    store = RunStore.open(run)
    return [
        (r.task_id, s)
        for r in store.results()
        for s in store.read_steps(r.task_id)
        if is_unmatched(s)
    ]


def test_every_unmatched_step_lands_in_one_group_across_runs_and_agents(runs):
    heuristic, random = runs
    audit = collect([heuristic, random])
    found = [(s.run, s.task_id, s.index) for g in audit.groups for s in g.steps]
    expected = [(str(run), t, s.index) for run in runs for t, s in _unmatched(run)]
    assert sorted(found) == sorted(expected) and len(set(found)) == len(found)
    assert len(expected) >= 3
    (alarm,) = [g for g in audit.groups if g.task_id == "wake_at_eight" and len(g.steps) == 2]
    assert alarm.agents == ["heuristic", "random"]
    assert alarm.target.element is not None and alarm.target.element[1] == "8:00 AM"
    (back,) = [g for g in audit.groups if g.task_id == "call_tom_back" and g.node_id == "done"]
    assert back.agents == ["heuristic"]
    assert back.target.element == ("com.android.systemui:id/back", "", "Back")
    # Ids are stable: the same in another invocation, whatever the order of the runs.
    again = collect([random, heuristic])
    assert {g.id: len(g.steps) for g in again.groups} == {g.id: len(g.steps) for g in audit.groups}


def test_taps_without_an_element_group_within_the_node_tolerance(suite, tmp_path):
    from evaluator.audit_groups import NodeTargets, UnmatchedStep, group_steps
    from evaluator.offline import GraphContext

    targets = NodeTargets(GraphContext.load(suite / "wake_at_eight"))

    def tap(run: str, x: float, y: float) -> UnmatchedStep:
        return UnmatchedStep(
            run, run, "wake_at_eight", "start", 0, {}, "", "", Target("tap", point=(x, y))
        )

    # 50 units apart at most from the first point (in coordinate order): one group; the
    # third is 60 from the first and starts its own.
    steps = [tap("a", 100, 100), tap("b", 130, 140), tap("c", 160, 100)]
    groups = group_steps(steps, {"wake_at_eight": targets}, suite)
    assert sorted(len(g.steps) for g in groups) == [1, 2]
    assert sorted(
        len(g.steps) for g in group_steps(steps[::-1], {"wake_at_eight": targets}, suite)
    ) == [1, 2]


def test_marks_are_signed_kept_in_the_suite_and_survive_a_rebuild(runs, suite, tmp_path, capsys):
    heuristic, random = runs
    audit = collect([heuristic, random])
    (back,) = [g for g in audit.groups if g.task_id == "call_tom_back" and g.node_id == "done"]
    assert main(["audit", str(heuristic), "--mark", back.id, "valid", "--annotator", "ana"]) == 0
    assert f"marked {back.id}" in capsys.readouterr().out
    data = json.loads((suite / "call_tom_back" / MARKS_FILE).read_text())
    (mark,) = data["marks"]
    assert mark["group"] == back.id and mark["verdict"] == "valid" and mark["annotator"] == "ana"
    assert mark["time"] > 0 and ["d1", 2] in mark["node_members"]
    # Marking again keeps the earlier verdict in the history.
    assert main(["audit", str(heuristic), "--mark", back.id, "unsure", "--annotator", "bo"]) == 0
    assert main(["audit", str(heuristic), "--mark", back.id, "valid", "--annotator", "ana"]) == 0
    (mark,) = load_marks(suite / "call_tom_back")
    assert [h["verdict"] for h in mark.history] == ["valid", "unsure"]

    # A rebuild rewrites graph.json and nodes/ but keeps the marks.
    report = build_task(suite / SUITE_DEMOS_DIR, "call_tom_back", suite, force=True)
    assert report.written
    rebuilt = collect([heuristic, random])
    (same,) = [g for g in rebuilt.groups if g.id == back.id]
    assert same.mark is not None and same.mark.annotator == "ana"

    # A rebuild that numbers the nodes otherwise: a new run on it still finds the mark,
    # because marks name nodes by their demonstration steps, not their ids.
    _rename_nodes(suite / "call_tom_back", {"done": "fin", "n1": "dialer"})
    fresh = _run(
        suite, tmp_path / "fresh", "heuristic", variant="normalized", tasks=("call_tom_back",)
    )
    (found,) = collect([fresh]).groups
    assert found.node_id == "fin" and found.id == back.id
    assert found.mark is not None and found.mark.verdict.value == "valid"


def _rename_nodes(task_dir: Path, names: dict[str, str]) -> None:
    path = task_dir / "graph.json"
    graph = json.loads(path.read_text())
    for node in graph["nodes"]:
        node["id"] = names.get(node["id"], node["id"])
    for edge in graph["edges"]:
        edge["source"] = names.get(edge["source"], edge["source"])
        edge["target"] = names.get(edge["target"], edge["target"])
    path.write_text(json.dumps(graph, indent=2))


def test_a_mark_must_be_signed_and_waits_for_no_one(runs, suite):
    heuristic, _ = runs
    group = collect([heuristic]).groups[0]
    with pytest.raises(MarksError, match="signed"):
        set_mark(
            suite,
            group.task_id,
            group=group.id,
            verdict="valid",
            annotator=" ",
            node_members=group.node_members,
            target=group.target,
        )
    with pytest.raises(MarksError, match="not one of"):
        set_mark(
            suite,
            group.task_id,
            group=group.id,
            verdict="maybe",
            annotator="ana",
            node_members=group.node_members,
            target=group.target,
        )
    with (
        suite_lock(suite, purpose="a build of task graphs"),
        pytest.raises(FolderLockedError, match="a build of task graphs"),
    ):
        set_mark(
            suite,
            group.task_id,
            group=group.id,
            verdict="valid",
            annotator="ana",
            node_members=group.node_members,
            target=group.target,
        )
    assert not (suite / group.task_id / MARKS_FILE).exists()
    with pytest.raises(AuditError, match="no audit group"):
        collect([heuristic]).group("gnothere")


def test_the_sheet_draws_each_group_on_its_node_screenshot(runs, tmp_path, capsys):
    heuristic, random = runs
    assert main(["audit", str(heuristic), str(random), "--out", str(tmp_path / "sheet")]) == 0
    out = capsys.readouterr().out
    audit = collect([heuristic, random])
    for g in audit.groups:
        assert g.id in out
    page = (tmp_path / "sheet" / "audit.html").read_text()
    tree = etree.fromstring(page.encode(), etree.HTMLParser())
    cards = tree.xpath("//div[@class='card']")
    assert [c.get("id") for c in cards] == [g.id for g in audit.groups]
    for card in cards:
        assert card.xpath(".//img[starts-with(@src, 'data:image/png;base64,')]")
        # the action drawn over the screenshot: a point, or what was pressed or typed
        drawn = card.xpath(".//svg//circle") or card.xpath(".//svg//text")
        assert drawn
    saved = json.loads((tmp_path / "sheet" / "audit.json").read_text())
    assert [g["id"] for g in saved["groups"]] == [g.id for g in audit.groups]


def test_report_shows_strict_sr_and_the_upper_bound_of_valid_marks(runs, suite, capsys):
    heuristic, _ = runs
    before = summarize(heuristic).bounds
    assert before is not None and before["undetermined"] == 0
    assert "call_tom_back" in before["unmarked_tasks"]
    back = next(g for g in collect([heuristic]).groups if g.task_id == "call_tom_back")
    assert main(["audit", str(heuristic), "--mark", back.id, "valid", "--annotator", "ana"]) == 0
    after = summarize(heuristic)
    assert after.bounds is not None
    n, wins = after.bounds["n"], after.bounds["successes"]
    assert after.bounds["undetermined_tasks"] == ["call_tom_back"]
    assert after.bounds["strict_sr"] == pytest.approx(wins / n) == pytest.approx(after.sr)
    assert after.bounds["upper_sr"] == pytest.approx((wins + 1) / n)
    assert main(["report", str(heuristic)]) == 0
    text = capsys.readouterr().out
    assert (
        f"| Upper bound | {100 * (wins + 1) / n:.1f}% | {wins} + 1 undetermined | {n} evaluated |"
        in text
    )


# --------------------------------------------------------------------------- bounds by hand


def _step(index: int, node: str, **fields: object) -> StepRecord:
    return StepRecord(index=index, node=node, **fields)  # type: ignore[arg-type]


BACK_TAP = {
    "type": "tap",
    "x": 180,
    "y": 2334,
    "screen": [1080, 2400],
    "element": {
        "bounds": [70, 2268, 290, 2400],
        "resource_id": "com.android.systemui:id/back",
        "text": "",
        "content_desc": "Back",
        "class": "android.widget.ImageView",
    },
}
PHONE_TAP = {"type": "tap", "x": 100, "y": 100, "screen": [1000, 1000]}


def test_bounds_on_a_constructed_run(suite, tmp_path):
    """Five episodes on copies of call_tom_back's graph, computed by hand:

    - ok: success;
    - branch: fails on a tap of Back at the DONE node, marked valid: undetermined;
    - refused: fails on a tap in the top-left corner of START, marked wrong: failure;
    - parsed: a parse failure first, then the valid branch (tolerant): failure;
    - damaged: fails on a step whose stored action cannot be read: failure, unmarked;
    - broken: an error, left out of both rates.

    Strict SR = 1/5 (ok), upper bound = (1 + 1)/5 (ok and branch), 1 undetermined.
    """
    for task in ("ok", "branch", "refused", "parsed", "damaged", "broken"):
        shutil.copytree(suite / "call_tom_back", suite / task)
    store = RunStore.create(tmp_path / "run", {"suite": {"path": str(suite)}})
    unmatched = {"matched": False, "rule": "no tap edge here", "decision_correct": False}
    episodes = {
        "ok": (TaskStatus.SUCCESS, []),
        "branch": (TaskStatus.FAILURE, [_step(0, "done", action=BACK_TAP, **unmatched)]),
        "refused": (TaskStatus.FAILURE, [_step(0, "start", action=PHONE_TAP, **unmatched)]),
        "parsed": (
            TaskStatus.FAILURE,
            [
                _step(0, "done", outcome="parse_error", parse_error="?"),
                _step(1, "done", action=BACK_TAP, **unmatched),
            ],
        ),
        "damaged": (TaskStatus.FAILURE, [_step(0, "start", action={"type": "tap"}, **unmatched)]),
        "broken": (TaskStatus.ERROR, []),
    }
    for task, (status, steps) in episodes.items():
        trace = store.start_trace(task)
        for s in steps:
            trace.add(s)
        trace.close()
        store.append_result(TaskResult(task, status, "offline", steps=len(steps)))
    audit = collect([tmp_path / "run"])
    by_task = {g.task_id: g for g in audit.groups}
    assert set(by_task) == {"branch", "refused", "parsed"}
    assert any("damaged step 0 left out" in note for note in audit.notes)
    for task, verdict in (("branch", "valid"), ("refused", "wrong"), ("parsed", "valid")):
        g = by_task[task]
        set_mark(
            suite,
            task,
            group=g.id,
            verdict=verdict,
            annotator="ana",
            node_members=g.node_members,
            target=g.target,
        )
    bounds = sr_bounds(store, store.results(), {}, suite)
    assert (bounds.n, bounds.successes) == (5, 1)
    assert bounds.undetermined == ("branch",)
    assert bounds.strict == pytest.approx(0.2) and bounds.upper == pytest.approx(0.4)
    assert bounds.unmarked == ("damaged",) and bounds.unsure == ()


def test_the_formats_doc_example_of_audit_marks_loads_and_round_trips():
    import re

    from evaluator.audit_marks import Mark

    doc = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text("utf-8")
    (example,) = re.findall(r"<!-- marks: audit_marks -->\s*```json\n(.*?)```", doc, re.S)
    data = json.loads(example)
    assert data["schema_version"] == 1
    for raw in data["marks"]:
        mark = Mark.from_json(raw)
        assert mark.to_json() == raw
        assert mark.covers_node({("d2", 3)}) and not mark.covers_node({("d2", 2)})
