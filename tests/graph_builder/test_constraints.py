"""Merge constraints: people's must-link and cannot-link decisions, kept in the task folder
and honoured by every rebuild; the possible merges and graph checks that lead to them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elderbench.cli import main
from graph_builder.build import build_task
from graph_builder.constraints import CONSTRAINTS_FILE, load_constraints, set_decision
from graph_builder.errors import FormatError
from graph_builder.io import load_graph
from graph_builder.model import Action, Constraint, ConstraintSet, LinkKind, MemberRef, now_utc
from graph_builder.review import PairKind, review_task
from graph_builder.similarity import SimilaritySettings
from tests.graph_builder.gb_synthetic import Sketch, tap_row, write_demo

HOME = Sketch("Home", ("Settings", "Contacts"))
_NOTES = {"a": "Backup", "b": "Storage", "c": "Accounts"}
SETTINGS = Sketch("Settings", ("Display", "Sound"), extra=_NOTES)
# The same page with one more text outside its list (a list row would be ambient): the
# builder calls it another state, with little margin.
SETTINGS_MORE = Sketch("Settings", ("Display", "Sound"), extra={**_NOTES, "d": "Battery"})
DISPLAY = Sketch("Display", ("Brightness", "Dark theme"))
# A first screen of another kind: START takes it all the same.
LAUNCHER = Sketch("Launcher", ("Settings", "Clock", "Camera"))

A1, B1, C1 = MemberRef("a", 1), MemberRef("b", 1), MemberRef("c", 1)


def _path(settings: Sketch, clock: str, home: Sketch = HOME) -> list[tuple[Sketch, Action]]:
    return [
        (home.with_clock(clock), tap_row(home, "Settings")),
        (settings.with_clock(clock), tap_row(settings, "Display")),
        (DISPLAY.with_clock(clock), Action.done()),
    ]


@pytest.fixture
def demos(tmp_path: Path) -> Path:
    root = tmp_path / "demos"
    write_demo(root, "a", _path(SETTINGS, "09:00"))
    write_demo(root, "b", _path(SETTINGS_MORE, "09:30"))
    write_demo(root, "c", _path(SETTINGS, "10:30", home=LAUNCHER))
    return root


def _build(demos: Path, suite: Path):  # type: ignore[no-untyped-def]
    report = build_task(demos, "task1", suite, settings=SimilaritySettings())
    assert report.written, report.note
    return report


def _node_of(suite: Path) -> dict[MemberRef, str]:
    return {m: n.id for n in load_graph(suite / "task1").nodes for m in n.members}


def _decide(task_dir: Path, kind: LinkKind, a: MemberRef, b: MemberRef) -> None:
    set_decision(task_dir, a, b, Constraint(kind, a, b, "ann", now_utc()))


def test_a_must_link_joins_nodes_the_builder_kept_apart_in_every_rebuild(
    demos: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    _build(demos, suite)
    before = _node_of(suite)
    assert before[A1] == before[C1] != before[B1]  # the extra row made another state
    _decide(suite / "task1", LinkKind.MUST_LINK, A1, B1)
    for _ in range(2):  # the decision outlives the rebuild that applied it
        report = _build(demos, suite)
        after = _node_of(suite)
        assert after[A1] == after[B1] == after[C1]
        assert len(set(after.values())) == len(set(before.values())) - 1
        [outcome] = report.constraints
        assert outcome.honoured and outcome.detail == f"both in {after[A1]}"
    assert [c.pair for c in load_constraints(suite / "task1").constraints] == [(A1, B1)]


def test_a_cannot_link_splits_what_the_builder_merged(demos: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    _build(demos, suite)
    assert _node_of(suite)[A1] == _node_of(suite)[C1]
    _decide(suite / "task1", LinkKind.CANNOT_LINK, A1, C1)
    report = _build(demos, suite)
    after = _node_of(suite)
    assert after[A1] != after[C1]
    assert report.constraints[0].honoured
    # The rebuilt graph keeps its edges on the split screens.
    graph = load_graph(suite / "task1")
    assert {(e.source, e.target) for e in graph.edges} >= {
        ("start", after[A1]),
        ("start", after[C1]),
        (after[A1], "done"),
        (after[C1], "done"),
    }


def test_a_cannot_link_reaches_through_a_must_link(demos: Path, tmp_path: Path) -> None:
    """c#1 is the same screen as a#1, but people said it is not b#1's state, and b#1 is a#1's."""
    suite = tmp_path / "suite"
    _build(demos, suite)
    _decide(suite / "task1", LinkKind.MUST_LINK, A1, B1)
    _decide(suite / "task1", LinkKind.CANNOT_LINK, B1, C1)
    report = _build(demos, suite)
    after = _node_of(suite)
    assert after[A1] == after[B1] != after[C1]
    assert all(o.honoured for o in report.constraints)


def test_constraints_that_cannot_hold_or_whose_steps_are_gone_are_reported_and_kept(
    demos: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    _build(demos, suite)
    task_dir = suite / "task1"
    _decide(task_dir, LinkKind.CANNOT_LINK, MemberRef("a", 0), MemberRef("b", 0))
    _decide(task_dir, LinkKind.MUST_LINK, MemberRef("a", 0), MemberRef("a", 2))
    _decide(task_dir, LinkKind.MUST_LINK, MemberRef("gone", 1), A1)
    report = _build(demos, suite)
    notes = [o.describe() for o in report.constraints]
    assert [o.honoured for o in report.constraints] == [False, False, False]
    assert "START holds every first screen" in notes[0]
    assert "one holds the first screens (START), the other an end screen" in notes[1]
    assert "stale: gone#1 no longer in the demonstrations" in notes[2]
    assert all(n in report.warnings for n in notes)
    assert len(load_constraints(task_dir).constraints) == 3  # nothing decided is dropped


def test_a_broken_constraints_file_refuses_the_build_naming_the_file(
    demos: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    _build(demos, suite)
    path = suite / "task1" / CONSTRAINTS_FILE
    path.write_text(json.dumps({"schema_version": 1, "task_id": "task1", "constraints": [{}]}))
    report = build_task(demos, "task1", suite, settings=SimilaritySettings())
    assert not report.written and str(path) in report.note
    with pytest.raises(FormatError, match="annotator|kind"):
        load_constraints(suite / "task1")


def test_the_constraints_file_round_trips_and_refuses_unsigned_decisions() -> None:
    signed = Constraint(LinkKind.MUST_LINK, B1, A1, "ann", "2026-12-01T15:00:00Z", "same list")
    decided = ConstraintSet("task1").decide(signed)
    assert decided.constraints[0].pair == (A1, B1)  # stored in order
    assert ConstraintSet.from_json(json.loads(json.dumps(decided.to_json()))) == decided
    again = decided.decide(Constraint(LinkKind.CANNOT_LINK, A1, B1, "bo", now_utc()))
    assert [c.kind for c in again.constraints] == [LinkKind.CANNOT_LINK]  # the later decision
    with pytest.raises(ValueError, match="signed"):
        Constraint(LinkKind.MUST_LINK, A1, B1, " ", now_utc())
    with pytest.raises(ValueError, match="ISO 8601"):
        Constraint(LinkKind.MUST_LINK, A1, B1, "ann", "yesterday")


def test_review_lists_the_possible_merges_best_first_and_the_mixed_start(
    demos: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    _build(demos, suite)
    review = review_task(suite / "task1", demos)
    first = review.possible_merges[0]
    assert (first.kind, first.a, first.b) == (PairKind.KEPT_APART, A1, B1)
    assert "text changes" in first.verdict.reason and "battery" in first.verdict.reason
    assert first.screenshots == (
        demos / "task1" / "a" / "steps" / "0001.png",
        demos / "task1" / "b" / "steps" / "0001.png",
    )
    distances = [p.distance for p in review.possible_merges]
    assert distances == sorted(distances)
    [start] = [m for m in review.mixed if m.node_id == "start"]
    assert (start.checked, start.states) == (3, 2)  # the launcher is another first screen
    # Decided pairs leave the list.
    _decide(suite / "task1", LinkKind.CANNOT_LINK, A1, B1)
    assert all({p.a, p.b} != {A1, B1} for p in review_task(suite / "task1", demos).possible_merges)


def test_the_command_line_decides_and_the_next_build_honours_it(
    demos: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    assert main(["build", str(demos), "-o", str(suite), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "possible merges: " in out
    assert "kept apart: n1 and n2, a#1 vs b#1, score " in out
    assert f"screenshot {demos / 'task1' / 'b' / 'steps' / '0001.png'}" in out
    assert "mixed node start: 2 states among 3 screens" in out
    args = ["constrain", str(suite), "--task", "task1"]
    assert main([*args, "--must-link", "a#1", "b#1", "--annotator", "ann"]) == 0
    assert "recorded must-link a#1 ~ b#1 (ann, " in capsys.readouterr().out
    assert main([*args, "--cannot-link", "a#1", "zz#1"]) == 2
    assert "zz#1 is not a screen of the graph of task1" in capsys.readouterr().err
    assert main([*args, "--must-link", "a1", "b#1"]) == 2
    assert "write DEMO#STEP" in capsys.readouterr().err
    assert main(["build", str(demos), "-o", str(suite)]) == 0
    out = capsys.readouterr().out
    assert "constraint must-link a#1 ~ b#1 (ann, " in out and "honoured, both in n1" in out
    assert _node_of(suite)[A1] == _node_of(suite)[B1]
    assert main([*args, "--list"]) == 0
    assert "1 constraints" in capsys.readouterr().out
    assert main([*args, "--withdraw", "b#1", "a#1"]) == 0
    assert "withdrew must-link a#1 ~ b#1" in capsys.readouterr().out
    assert main(["build", str(demos), "-o", str(suite)]) == 0
    assert _node_of(suite)[A1] != _node_of(suite)[B1]


def test_build_explain_names_a_mixed_start_on_real_first_screens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real demonstrations start wherever the phone was: START then holds different states."""
    from graph_builder.io import DemoWriter
    from graph_builder.model import Task
    from tests.shared_fixtures import require_dev_screens

    root = require_dev_screens()
    rows = [line.split("\t") for line in (root / "screens.tsv").read_text().splitlines()]
    header, rows = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}

    def first_of(label: str, k: int = 1) -> list[list[str]]:
        return [r for r in rows if r[col["label"]] == label][:k]

    starts = [
        *first_of("facebook:login_empty", 2),  # one state, twice
        *first_of("haoce:home"),
        *first_of("settings:main"),
    ]
    [end] = first_of("miui_launcher:home_page1")
    demos = tmp_path / "demos"
    task = Task(id="task1", instruction="Open the app", app="com.example.app")
    for i, start in enumerate(starts):
        writer = DemoWriter.create(demos, task, demo_id=f"d{i}")
        for row, action in ((start, Action.home()), (end, Action.done())):
            size = (int(row[col["width"]]), int(row[col["height"]]))
            writer.add_step(
                (root / row[col["png"]]).read_bytes(),
                (root / row[col["xml"]]).read_text(encoding="utf-8"),
                action=action,
                activity=None,
                screen=size,
                time=0.0,
            )
        writer.finish()
    assert main(["build", str(demos), "-o", str(tmp_path / "suite"), "--explain"]) == 0
    out = capsys.readouterr().out
    # Three apps' screens among the four first screens; the two empty login forms are one.
    assert "mixed node start: 3 states among 4 screens" in out


def test_when_decisions_contradict_the_cannot_link_wins_and_the_report_says_so(
    demos: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    _build(demos, suite)
    _decide(suite / "task1", LinkKind.MUST_LINK, A1, B1)
    _decide(suite / "task1", LinkKind.MUST_LINK, B1, C1)
    _decide(suite / "task1", LinkKind.CANNOT_LINK, A1, C1)
    report = _build(demos, suite)
    after = _node_of(suite)
    assert after[A1] != after[C1]
    must_ab, must_bc, cannot_ac = report.constraints
    assert cannot_ac.honoured
    assert not (must_ab.honoured and must_bc.honoured)
    refused = [o for o in (must_ab, must_bc) if not o.honoured]
    assert all("must stay apart" in o.detail for o in refused)


def test_a_pair_is_borderline_by_every_measure_that_said_different() -> None:
    from graph_builder.review import flip_distance
    from graph_builder.similarity import Verdict

    settings = SimilaritySettings()  # floors 0.75 / 0.7 / 0.6, 0.5 text changes allowed

    def verdict(
        same: bool,
        score: float,
        changes: float = 0.0,
        visual: float = 1.0,
        structure: float = 1.0,
        state: float = 0.0,
    ) -> Verdict:
        return Verdict(same, score, visual, structure, 1.0, "same", "why", changes, state)

    # A merge flips when any one measure crosses: its smallest slack.
    assert flip_distance(verdict(True, 0.93), settings) == pytest.approx(0.3)
    assert flip_distance(verdict(True, 0.93, structure=0.75), settings) == pytest.approx(0.05)
    assert flip_distance(verdict(True, 0.56), settings) == pytest.approx(0.06)
    # A split flips only when everything that said "different" changes: the largest.
    assert flip_distance(verdict(False, 0.40), settings) == pytest.approx(0.10)
    one_row = verdict(False, 0.95, changes=1.0)  # one new list row
    assert flip_distance(one_row, settings) == pytest.approx(0.05)
    typed = verdict(False, 0.95, changes=1.0, state=1.0)  # another e-mail address typed
    assert flip_distance(typed, settings) == pytest.approx(1.0)
    assert flip_distance(verdict(False, 0.95, visual=0.72), settings) == pytest.approx(0.03)
    other_app = Verdict(False, 0.99, 1.0, 1.0, 1.0, "different", "different activities")
    assert flip_distance(other_app, settings) == float("inf")


def test_a_mixed_start_leaves_a_split_state_that_explain_names(tmp_path: Path) -> None:
    """A demonstration that starts on Settings puts Settings in START, where the other
    demonstrations' Settings screens cannot join (START also holds Home): one state, two
    nodes."""
    demos = tmp_path / "demos"
    write_demo(demos, "a", _path(SETTINGS, "09:00"))
    write_demo(demos, "d", _path(SETTINGS, "09:10")[1:])
    suite = tmp_path / "suite"
    _build(demos, suite)
    node_of = _node_of(suite)
    assert node_of[MemberRef("d", 0)] == "start" != node_of[A1]
    review = review_task(suite / "task1", demos)
    [split] = review.split
    assert {split.node_a, split.node_b} == {"start", node_of[A1]}
    assert {split.a, split.b} == {MemberRef("d", 0), A1}
    assert [m.node_id for m in review.mixed] == ["start"]
    assert any(
        p.kind is PairKind.KEPT_APART and {p.a, p.b} == {MemberRef("d", 0), A1}
        for p in review.possible_merges
    )


def test_a_decision_is_refused_while_a_build_holds_the_suite(
    demos: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A build carries the task folder's other files over, so a decision written in the
    middle of it could be lost: the suite's lock refuses it, naming the build."""
    from graph_builder.build import suite_lock
    from graph_builder.folder_lock import FolderLockedError

    suite = tmp_path / "suite"
    _build(demos, suite)
    with suite_lock(suite):
        with pytest.raises(FolderLockedError, match="a build of task graphs"):
            _decide(suite / "task1", LinkKind.MUST_LINK, A1, B1)
        args = ["constrain", str(suite), "--task", "task1", "--must-link", "a#1", "b#1"]
        assert main([*args, "--annotator", "ann"]) == 2
        assert "a build of task graphs" in capsys.readouterr().err
    assert load_constraints(suite / "task1").constraints == ()
    _decide(suite / "task1", LinkKind.MUST_LINK, A1, B1)  # once the build is over
    assert len(load_constraints(suite / "task1").constraints) == 1


def test_the_review_compares_screens_as_the_build_did() -> None:
    """A sent message is a list row of the conversation, but the build keeps the text it
    typed as state; a review that forgot it listed the empty conversation and DONE (the
    message sent) as one state, score 1.00."""
    from importlib.resources import files

    from graph_builder.settings import comparison_settings, graph_settings

    sample = Path(str(files("task_graphs") / "sample"))
    graph = load_graph(sample / "text_tom_late")
    assert "Running late, sorry" in comparison_settings(graph).user_texts
    assert not graph_settings(graph).settings.user_texts  # rebuilds derive them afresh
    review = review_task(sample / "text_tom_late", sample / "demos")
    done = {m for n in graph.nodes if n.kind.value == "done" for m in n.members}
    assert not [p for p in review.possible_merges if {p.a, p.b} & done and p.verdict.same]
