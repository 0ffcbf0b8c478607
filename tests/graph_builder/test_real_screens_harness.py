"""The leave-one-source-out harness and the rebuild of the labelled real screens."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from benchmarks import real_screens, real_screens_data
from graph_builder.importers.droidbot import views_to_xml
from graph_builder.screen import Screen
from graph_builder.settings import SimilaritySettings
from graph_builder.similarity import Verdict, compare

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests/fixtures/real_screens_small"
LABELS = ROOT / "benchmarks/real_screens_labels"
FDROID = "Kqramazov/fdroid_utg"
CHAOS = "Ferruolo/chaos-monkey-ai"
S = SimilaritySettings()


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def test_each_source_is_decided_by_settings_fitted_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trained_on: dict[int, frozenset[str]] = {}
    used: list[tuple[Screen, Screen, SimilaritySettings]] = []

    def fit(train: Sequence[real_screens.SourceData]) -> SimilaritySettings:
        # A distinct settings object per fit (linkage_sample does not change a verdict).
        settings = dataclasses.replace(S, linkage_sample=8 + len(trained_on))
        trained_on[id(settings)] = frozenset(s.name for s in train)
        return settings

    def recording_compare(a: Screen, b: Screen, *, settings: SimilaritySettings) -> Verdict:
        used.append((a, b, settings))
        return compare(a, b, settings=settings)

    monkeypatch.setattr(real_screens, "compare", recording_compare)
    report = real_screens.run([SMALL], fit)
    sources = set(report.data.sources)
    assert sources == {FDROID, "drme/gui-test", "ToolmanInside/DroidbotExp", CHAOS}
    # One fit per held-out source, and one without both sources of the cross-source pair.
    assert set(trained_on.values()) == {frozenset(sources - {s}) for s in sources} | {
        frozenset(sources - {"drme/gui-test", "ToolmanInside/DroidbotExp"})
    }
    source_of = {id(s.screen): s.source for s in report.data.screens.values()}
    assert len(used) == len(report.decisions)
    for a, b, settings in used:
        held_out = {source_of[id(a)], source_of[id(b)]}
        assert trained_on[id(settings)] == frozenset(sources - held_out)
    monkeypatch.undo()
    fixed = real_screens.run([SMALL], real_screens.fixed(S))
    assert fixed.by_source() == report.by_source()


def test_the_small_set_counts_every_labelled_pair_once() -> None:
    report = real_screens.run([SMALL], real_screens.fixed(S))
    pairs = [p for p in _rows(SMALL / "pairs.tsv") if p["kind"] != "ambiguous"]
    assert len(report.decisions) == len(pairs)
    decided = {(d.pair.a, d.pair.b) for d in report.decisions if d.verdict is not None}
    within = sum(p["scope"] == "within_source" and (p["a"], p["b"]) in decided for p in pairs)
    by_source = report.by_source().values()
    assert sum(c.tp + c.fp + c.fn + c.tn for c in by_source) == within
    precision, recall = report.macro()
    scored = [c for c in by_source if c.tp + c.fn]
    assert recall == pytest.approx(sum(c.recall for c in scored) / len(scored))
    merged = [c for c in by_source if c.tp + c.fp]
    assert precision == pytest.approx(sum(c.precision for c in merged) / len(merged))


def test_pairs_with_a_dump_only_screen_are_reported_not_counted() -> None:
    report = real_screens.run([SMALL], real_screens.fixed(S))
    dump_only = {r["id"] for r in _rows(SMALL / "screens.tsv") if not r["png"]}
    assert dump_only
    undecided = [d for d in report.decisions if d.verdict is None]
    assert undecided
    for d in undecided:
        assert {d.pair.a, d.pair.b} & dump_only
        assert "screenshot" in d.error
    counted = sum(c.tp + c.fp + c.fn + c.tn for c in report.by_source().values())
    within = [d for d in report.decisions if d.pair.scope == "within_source"]
    assert counted == len([d for d in within if d.verdict is not None])


def test_a_screen_id_in_two_folders_is_refused() -> None:
    with pytest.raises(real_screens.DataError, match="fdroid_000"):
        real_screens.load([SMALL, SMALL])


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(real_screens.DataError, match="pairs.tsv missing|screens.tsv missing"):
        real_screens.load([tmp_path])


def test_the_small_fixture_agrees_with_the_full_labels() -> None:
    full = {r["id"]: r for r in _rows(LABELS / "screens.tsv")}
    small = _rows(SMALL / "screens.tsv")
    assert 10 <= len(small) <= 30
    for row in small:
        assert full[row["id"]]["label"] == row["label"]
        assert full[row["id"]]["commit"] == row["commit"]
        xml = (SMALL / row["xml"]).read_bytes()
        assert hashlib.sha256(xml).hexdigest() == row["xml_sha256"]
    full_pairs = {(p["a"], p["b"]): p["kind"] for p in _rows(LABELS / "pairs.tsv")}
    for pair in _rows(SMALL / "pairs.tsv"):
        assert full_pairs[(pair["a"], pair["b"])] == pair["kind"]


def test_label_files_pair_every_screen_within_its_source() -> None:
    screens = _rows(LABELS / "screens.tsv")
    pairs = {frozenset((p["a"], p["b"])) for p in _rows(LABELS / "pairs.tsv")}
    by_source: dict[str, list[str]] = {}
    for row in screens:
        by_source.setdefault(row["source_repo"], []).append(row["id"])
    for ids in by_source.values():
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                assert frozenset((a, b)) in pairs, (a, b)


# -- the rebuild from pinned commits


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout.strip()


def _source_repo(tmp_path: Path) -> tuple[Path, str, dict[str, Any]]:
    """A one-commit repository holding an explorer state (JSON + JPEG) and a dump + PNG."""
    work = tmp_path / "work"
    (work / "states").mkdir(parents=True)
    state = {
        "views": [
            {"temp_id": 0, "parent": -1, "children": [1], "bounds": [[0, 0], [40, 80]]},
            {"temp_id": 1, "parent": 0, "text": "Hello", "bounds": [[0, 0], [40, 20]]},
        ]
    }
    (work / "states/state_1.json").write_text(json.dumps(state), encoding="utf-8")
    jpeg = io.BytesIO()
    Image.new("RGB", (40, 80), (200, 10, 10)).save(jpeg, format="JPEG")
    (work / "states/screen_1.jpg").write_bytes(jpeg.getvalue())
    (work / "home.xml").write_text('<hierarchy rotation="0"></hierarchy>', encoding="utf-8")
    Image.new("RGB", (40, 80), (0, 0, 0)).save(work / "home.png")
    _git(work, "init", "-q")
    _git(work, "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "captures")
    snapshots = tmp_path / "snapshots"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(work), str(snapshots / "someone+captures")],
        check=True,
        timeout=30,
    )
    return snapshots, _git(work, "rev-parse", "HEAD"), state


def _labels(tmp_path: Path, commit: str, state: dict[str, Any], sha: str = "") -> Path:
    labels = tmp_path / "labels"
    labels.mkdir(exist_ok=True)
    xml = views_to_xml(state["views"], Path("states/state_1.json")).encode()
    common = {"source_repo": "someone/captures", "commit": commit, "label": "x:a"}
    rows = [
        {
            **common,
            "id": "c_000",
            "original_path": "states/screen_1.jpg",
            "original_xml_path": "states/state_1.json",
            "png": "c/state_1.png",
            "xml": "c/state_1.xml",
            "xml_format": "droidbot_state_json",
            "xml_sha256": sha or hashlib.sha256(xml).hexdigest(),
        },
        {
            **common,
            "id": "c_001",
            "original_path": "home.png",
            "original_xml_path": "home.xml",
            "png": "c/home.png",
            "xml": "c/home.xml",
            "xml_format": "uiautomator_dump",
            "xml_sha256": "",
        },
    ]
    with (labels / "screens.tsv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t")
        writer.writeheader()
        writer.writerows(rows)
    (labels / "pairs.tsv").write_text("a\tb\tkind\tscope\tsame_app\tnote\n", encoding="utf-8")
    (labels / "README.md").write_text("provenance\n", encoding="utf-8")
    return labels


def test_rebuild_writes_png_and_dump_from_the_pinned_commit(tmp_path: Path) -> None:
    snapshots, commit, state = _source_repo(tmp_path)
    labels = _labels(tmp_path, commit, state)
    out = tmp_path / "data" / "real_screens"
    assert real_screens_data.rebuild(snapshots, out, labels) == 2
    with Image.open(out / "c/state_1.png") as image:
        assert (image.format, image.size) == ("PNG", (40, 80))
    assert b'text="Hello"' in (out / "c/state_1.xml").read_bytes()
    assert (out / "c/home.xml").read_bytes() == b'<hierarchy rotation="0"></hierarchy>'
    assert (out / "c/home.png").read_bytes() == (tmp_path / "work/home.png").read_bytes()
    assert (out / "README.md").read_text() == "provenance\n"


def test_a_changed_conversion_fails_and_keeps_the_old_folder(tmp_path: Path) -> None:
    snapshots, commit, state = _source_repo(tmp_path)
    out = tmp_path / "data" / "real_screens"
    real_screens_data.rebuild(snapshots, out, _labels(tmp_path, commit, state))
    before = sorted(p.name for p in out.rglob("*"))
    with pytest.raises(real_screens_data.RebuildError, match="c_000.*xml_sha256"):
        real_screens_data.rebuild(snapshots, out, _labels(tmp_path, commit, state, sha="0" * 64))
    assert sorted(p.name for p in out.rglob("*")) == before
    assert not (out.parent / ".real_screens.new").exists()


def test_a_missing_snapshot_or_commit_is_named(tmp_path: Path) -> None:
    snapshots, commit, state = _source_repo(tmp_path)
    labels = _labels(tmp_path, commit, state)
    with pytest.raises(real_screens_data.RebuildError, match="no snapshot of someone/captures"):
        real_screens_data.rebuild(tmp_path / "elsewhere", tmp_path / "out", labels)
    labels = _labels(tmp_path, "f" * 40, state)
    with pytest.raises(real_screens_data.RebuildError, match="has no states/"):
        real_screens_data.rebuild(snapshots, tmp_path / "out", labels)
