"""``elderbench table``: every format carries report --json's numbers; hand-computed tests."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from elderbench import __version__
from elderbench.cli import main
from evaluator.manifest import essentials_json, read_manifest, suite_hash
from evaluator.records import TaskResult
from evaluator.run_store import RunStore
from evaluator.run_summary import summarize
from evaluator.table_formats import CSV_HEADER, latex_escape, render
from evaluator.tables import TableError, build_tables
from graph_builder.model import Labels
from tests.evaluator.sample_runs import RUNS, SAMPLE


@pytest.fixture(scope="module")
def summaries(sample_runs) -> dict[str, dict]:
    return {run.name: summarize(run).to_json() for run in sample_runs}


@pytest.fixture(scope="module")
def sample_tables(sample_runs):
    return build_tables(sample_runs)


def _label(name: str) -> str:
    agent, variant = name.split("-")
    return f"{agent} ({variant})"


# --------------------------------------------------------------------------- round trips


def test_json_has_the_numbers_of_report_json_exactly(sample_tables, summaries):
    data = json.loads(render(sample_tables, "json"))
    assert [r["run"] for r in data["main"]] == [_label(n) for n in RUNS]
    for row, name in zip(data["main"], RUNS, strict=True):
        s = summaries[name]
        offline = s["breakdowns"]["protocol"]["offline"]
        assert row["sr"]["value"] == s["sr"] and [row["sr"]["low"], row["sr"]["high"]] == s["sr_ci"]
        assert (row["sr"]["successes"], row["sr"]["evaluated"]) == (
            s["bases"]["sr"]["successes"],
            s["bases"]["sr"]["evaluated"],
        )
        assert row["sr_offline"]["value"] == offline["sr"]
        assert row["sr_offline"]["high"] == offline["sr_high"]
        assert row["sr_online"] is None  # no online task ran
        assert row["cr"] == {"value": s["cr"], "tasks": s["bases"]["cr"]["tasks"]}
        assert (
            row["da"]["value"] == s["da"]
            and row["da"]["decisions"] == s["bases"]["da"]["decisions"]
        )
        assert row["ail"]["value"] == s["ail"]
        assert row["tokens_in"]["value"] == s["tokens"]["input"]
        assert row["cost"]["value"] == s["cost"]
    for row in data["labels"]:
        for name in RUNS:
            group = summaries[name]["breakdowns"][row["dimension"]][row["label"]]
            rate = row["runs"][_label(name)]
            assert (rate["value"], rate["low"], rate["successes"], rate["evaluated"]) == (
                group["sr"],
                group["sr_low"],
                group["successes"],
                group["n"],
            )


def test_csv_opens_with_one_header_and_reads_back_every_number(sample_tables, summaries):
    text = render(sample_tables, "csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert tuple(rows[0]) == CSV_HEADER
    assert all(len(r) == len(CSV_HEADER) for r in rows)
    values: dict[tuple[str, ...], float | None] = {}
    for table, run, versus, dimension, label, quantity, value in rows[1:]:
        if table != "manifest":  # text: what pins each run (tested apart)
            values[(table, run, versus, dimension, label, quantity)] = (
                float(value) if value else None
            )
    for name in RUNS:
        s, key = summaries[name], ("main", _label(name), "", "", "")
        assert values[(*key, "sr")] == s["sr"]
        assert [values[(*key, "sr_low")], values[(*key, "sr_high")]] == s["sr_ci"]
        assert values[(*key, "sr_evaluated")] == s["bases"]["sr"]["evaluated"]
        assert values[(*key, "cr")] == s["cr"] and values[(*key, "da")] == s["da"]
        assert values[(*key, "ail")] == s["ail"] and values[(*key, "cost")] == s["cost"]
        assert values[(*key, "sr_online")] is None
        canonical = s["breakdowns"]["syntax"]["canonical"]
        assert values[("labels", _label(name), "", "syntax", "canonical", "sr")] == canonical["sr"]
        assert values[("labels", _label(name), "", "syntax", "canonical", "sr_evaluated")] == 9


def test_pairs_are_report_compare_numbers_holm_adjusted(sample_runs, sample_tables):
    first, second = sample_runs[0], sample_runs[1]
    comparison = summarize(first, compare=second).to_json()["comparison"]
    pair = sample_tables.pairs[0]
    assert (pair["a"], pair["b"]) == (_label(RUNS[0]), _label(RUNS[1]))
    for key in ("pairs", "sr_a", "sr_b", "only_a", "only_b", "mcnemar_p", "sr_difference"):
        assert pair[key] == comparison[key], key
    assert (pair["ci_low"], pair["ci_high"]) == (comparison["ci"]["low"], comparison["ci"]["high"])
    assert len(sample_tables.pairs) == 6
    ordered = sorted(sample_tables.pairs, key=lambda p: p["mcnemar_p"])
    assert ordered[0]["holm_p"] == pytest.approx(min(1.0, 6 * ordered[0]["mcnemar_p"]), abs=1e-15)
    assert all(p["holm_p"] >= p["mcnemar_p"] for p in sample_tables.pairs)


def test_markdown_shows_the_rounded_numbers_their_bases_and_the_best(sample_tables, summaries):
    text = render(sample_tables, "md")
    first_table = text.split("**Table 2")[0]
    rows = {
        cells[0]: cells
        for line in first_table.splitlines()
        if line.startswith("| ") and (cells := [c.strip() for c in line.strip("|").split(" | ")])
    }
    for name in RUNS:
        s, cells = summaries[name], rows[_label(name)]
        assert len(cells) == 10
        sr = re.fullmatch(
            r"(\*\*)?([\d.]+)%(\*\*)? \[([\d.]+), ([\d.]+)\] \((\d+) of (\d+)\)", cells[1]
        )
        assert sr is not None, cells[1]
        assert sr.group(2) == f"{100 * s['sr']:.1f}"
        assert (sr.group(4), sr.group(5)) == tuple(f"{100 * v:.1f}" for v in s["sr_ci"])
        assert (int(sr.group(6)), int(sr.group(7))) == (
            s["bases"]["sr"]["successes"],
            s["bases"]["sr"]["evaluated"],
        )
        assert cells[3] == "n/a (no task)"
        d = s["bases"]["da"]
        assert cells[5].replace("**", "").endswith(f"% ({d['correct']} of {d['decisions']})")
    best_sr = max(summaries.values(), key=lambda s: s["sr"])
    assert rows[f"{best_sr['agent']} ({best_sr['variant']})"][1].startswith("**")
    assert sum(1 for name in RUNS if rows[_label(name)][1].startswith("**")) == 1
    # every run has 0 tokens: nobody is marked best on a tie of all
    assert not any(rows[_label(n)][7].startswith("**") for n in RUNS)


# --------------------------------------------------------------------------- LaTeX


def _check_latex_structure(tex: str) -> None:
    """Balanced braces, booktabs rules, and every row as wide as its column spec."""
    unescaped = re.sub(r"\\[{}&%$#_]", "", tex)
    depth = 0
    for ch in unescaped:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    tables = re.findall(
        r"^\\begin\{tabular\}\{([lr]+)\}\n(.*?)^\\end\{tabular\}$", tex, re.S | re.M
    )
    assert len(tables) == 3
    for spec, body in tables:
        lines = body.strip().splitlines()
        assert lines[0] == r"\toprule" and lines[2] == r"\midrule" and lines[-1] == r"\bottomrule"
        for row in [lines[1], *lines[3:-1]]:
            assert row.endswith(r" \\")
            assert len(re.split(r"(?<!\\)&", row)) == len(spec), row


def test_latex_has_booktabs_structure_and_escapes_names(sample_runs):
    odd = "50% a_b & {x} #1 $ ~^\\ <3>"
    tables = build_tables(sample_runs, names={sample_runs[0]: odd})
    tex = render(tables, "latex")
    _check_latex_structure(tex)
    assert latex_escape(odd) in tex and odd not in tex
    assert r"\textless{}3\textgreater{}" in tex  # a bare "<" prints an inverted "!"
    # heuristic on normalized instructions: the best SR over its interval and count
    assert r"{\textbf{36.0\%}} \\ {[20.2, 55.5]} \\ {(9 of 25)}" in tex
    assert r"\caption{Success and cost of 4 run(s)}" in tex  # LaTeX numbers the tables


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine installed")
def test_latex_compiles_with_booktabs(sample_runs, tmp_path):
    tables = build_tables(sample_runs, names={sample_runs[0]: "50% a_b & {x} #1 $ ~^\\ <3>"})
    doc = tmp_path / "tables.tex"
    doc.write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        + render(tables, "latex")
        + "\\end{document}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", doc.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "tables.pdf").stat().st_size > 1000


# --------------------------------------------------------------------------- refusals


def test_other_task_sets_are_refused_unless_allowed_and_then_noted(sample_runs, tmp_path):
    few = tmp_path / "few"
    argv = ["eval", "--suite", str(SAMPLE), "--agent", "heuristic", "--mode", "tolerant"]
    argv += ["--protocol", "offline", "--tasks", "bp_pills_out", "call_daughter"]
    assert main([*argv, "--out", str(few), "--no-report"]) == 0
    with pytest.raises(TableError, match="lacks 23 task") as refused:
        build_tables([sample_runs[0], few], names={few: "few"})
    assert "--allow-different-tasks" in str(refused.value)
    tables = build_tables([sample_runs[0], few], names={few: "few"}, allow_different_tasks=True)
    assert tables.pairs[0]["pairs"] == 2  # the tasks both evaluated
    text = render(tables, "md")
    assert "Note: few lacks 23 task(s) of heuristic (original): call_doctor_lee," in text
    assert "differ in offline mode: heuristic (original) strict, few tolerant." in text


def test_other_suite_contents_are_refused(sample_runs, tmp_path):
    copy = tmp_path / "sample-copy"
    shutil.copytree(SAMPLE, copy)
    assert suite_hash(copy) == suite_hash(SAMPLE)  # where it lies is no matter
    task = copy / "airplane_on" / "task.json"
    data = json.loads(task.read_text(encoding="utf-8"))
    data["max_steps"] = data.get("max_steps", 10) + 1
    task.write_text(json.dumps(data), encoding="utf-8")
    assert suite_hash(copy) != suite_hash(SAMPLE)
    run = tmp_path / "copy-run"
    argv = ["eval", "--suite", str(copy), "--protocol", "offline", "--agent", "random"]
    assert main([*argv, "--out", str(run), "--no-report"]) == 0
    with pytest.raises(TableError, match=r"ran on suite .*sample-copy \(content [0-9a-f]{12}\)"):
        build_tables([sample_runs[0], run], names={run: "copy"})


# --------------------------------------------------------------------------- by hand


def _constructed(path: Path, suite: Path, model: str, outcomes: str) -> Path:
    """Ten tasks t0..t9 (t0-t4 canonical, t5-t9 elliptical); outcomes s/f/e per task."""
    store = RunStore.create(
        path,
        {"agent": {"name": "scripted"}, "model": model, "suite": {"path": str(suite)}},
    )
    status = {"s": "success", "f": "failure", "e": "error"}
    for i, o in enumerate(outcomes):
        labels = Labels(syntax=("canonical" if i < 5 else "elliptical",))
        store.append_result(TaskResult(f"t{i}", status[o], "online", labels=labels))
    store.close()
    return path


def test_hand_computed_mcnemar_holm_and_label_bases(tmp_path, capsys):
    suite = tmp_path / "suite"
    (suite / "t0").mkdir(parents=True)
    (suite / "t0" / "task.json").write_text("{}", encoding="utf-8")
    a = _constructed(tmp_path / "a", suite, "model-a", "sssssssfff")
    b = _constructed(tmp_path / "b", suite, "model-b", "ssfffffsfe")
    c = _constructed(tmp_path / "c", suite, "model-c", "sfffffffff")
    tables = build_tables([a, b, c])
    ab, ac, bc = tables.pairs
    # A-B: t9 errored in B, so 9 pairs; only A t2..t6 (5), only B t7 (1):
    # p = 2 * (C(6,0) + C(6,1)) / 2^6 = 14/64
    assert (ab["pairs"], ab["only_a"], ab["only_b"]) == (9, 5, 1)
    assert ab["mcnemar_p"] == 0.21875
    assert (ab["successes_a"], ab["successes_b"]) == (7, 3)
    assert ab["sr_difference"] == pytest.approx(4 / 9)
    assert ab["left_out"]["errors_b"] == ["t9"]
    # A-C: 10 pairs, only A t1..t6 (6): p = 2 / 2^6; B-C: only B t1, t7: p = 2 / 2^2
    assert (ac["pairs"], ac["only_a"], ac["only_b"], ac["mcnemar_p"]) == (10, 6, 0, 0.03125)
    assert (bc["pairs"], bc["only_a"], bc["only_b"], bc["mcnemar_p"]) == (9, 2, 0, 0.5)
    # Holm: 3 x 0.03125, then max(that, 2 x 0.21875), then max(that, 0.5)
    assert (ac["holm_p"], ab["holm_p"], bc["holm_p"]) == (0.09375, 0.4375, 0.5)
    rows = {(r["dimension"], r["label"]): r["runs"] for r in tables.labels}
    elliptical = rows[("syntax", "elliptical")]
    assert (elliptical["model-a"]["successes"], elliptical["model-a"]["evaluated"]) == (2, 5)
    assert (elliptical["model-b"]["successes"], elliptical["model-b"]["evaluated"]) == (1, 4)
    assert elliptical["model-b"]["errors"] == 1
    # The headline: A best (7 of 10); B's SR counts 9 evaluated, the error named.
    main_rows = {r["run"]: r for r in tables.main}
    assert main_rows["model-a"]["best"] == ["sr", "sr_online"]
    assert main_rows["model-b"]["sr"]["evaluated"] == 9
    assert main(["table", str(a), str(b), str(c), "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert "| model-a | model-b | 9 | 77.8% (7 of 9) | 33.3% (3 of 9) | +44.4" in out
    assert "| 5 / 1 | 0.2188 | 0.4375 |" in out
    assert "model-a vs model-b: left out errors b: t9." in out
    assert "model-b: SR with errors as failures 30.0% (3 of 10)." in out
    assert (
        "| syntax | elliptical | 40.0% (2 of 5) | 25.0% (1 of 4; 1 error) | 0.0% (0 of 5) |" in out
    )


def test_cli_writes_the_file_and_checks_names(sample_runs, tmp_path, capsys):
    out = tmp_path / "t.csv"
    first, second = map(str, sample_runs[:2])
    argv = ["table", first, second, "--format", "csv", "--out", str(out)]
    assert main([*argv, "--name", f"{first}=Ours"]) == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert {r["run"] for r in rows if r["table"] == "main"} == {"Ours", "heuristic (normalized)"}
    assert main(["table", first, second, "--name", "nowhere=X"]) == 1
    assert "nowhere is not one of the runs" in capsys.readouterr().err
    assert main(["table", first, first]) == 1
    assert "would both be named 'heuristic (original)'" in capsys.readouterr().err


def test_readme_shows_what_the_command_makes(sample_runs):
    """The README's tables are this command's output on the sample suite (AIL aside: it is
    measured time)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    made = render(build_tables(sample_runs), "md")
    ail = re.compile(r"\| (\*\*)?(<?[\d.]+)(\*\*)? \((\d+) steps\) \|")
    # the tool's commit and Python change with every commit and machine
    tool = re.compile(r"elderbench \S+ \([^)]*\), Python [\d.]+")
    start = readme.index("**Table 1: ")
    shown = readme[start : readme.index("\nAIL is measured time", start)]
    assert tool.sub("TOOL", ail.sub(r"| AIL (\4 steps) |", shown)) == tool.sub(
        "TOOL", ail.sub(r"| AIL (\4 steps) |", made)
    )


# --------------------------------------------------------------------------- manifests


def _pinned_run(sample_runs, tmp_path) -> Path:
    """A copy of a sample run whose manifest names a model, a prompt, a seed and a device."""
    run = tmp_path / "pinned"
    shutil.copytree(sample_runs[0], run)
    data = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    data["models"] = {"agent": "gpt-4o-2024-08-06", "judge:vlm": None}
    data["prompts"] = {"agent.system_template": {"hash": "sha256:" + "ab" * 32, "text": "Tap"}}
    data["seeds"] = {"agent": 7}
    data["devices"] = [
        {
            "serial": "emulator-5554",
            "model": "Pixel 7",
            "android_version": "14",
            "width": 1080,
            "height": 2400,
            "packages": {"com.a": {"version_name": "2.0", "version_code": 20}, "com.b": None},
        }
    ]
    (run / "manifest.json").write_text(json.dumps(data), encoding="utf-8")
    return run


def test_every_format_carries_the_manifest_under_each_table(sample_runs, tmp_path):
    run = _pinned_run(sample_runs, tmp_path)
    tables = build_tables([run, sample_runs[1]], names={run: "pinned_a"})
    commit = read_manifest(run)["tool"]["commit"][:12]
    note = f"Manifest of pinned_a: elderbench {__version__} ({commit}"
    pinned = (
        f"suite ElderBench Studio sample: {suite_hash(SAMPLE).removeprefix('sha256:')[:12]}; "
        "models: agent gpt-4o-2024-08-06; prompt templates: agent.system_template "
        f"{'ab' * 6}; seeds: agent 7; device emulator-5554: Pixel 7, Android 14, 1080x2400; "
        "com.a 2.0 (20), com.b not installed."
    )
    md = render(tables, "md")
    lines = [line for line in md.splitlines() if line.startswith(note)]
    assert len(lines) == 3 and all(line.endswith(pinned) for line in lines)  # under each table
    other = [line for line in md.splitlines() if line.startswith("Manifest of heuristic (norm")]
    assert len(other) == 3
    # under each table: the manifest lines come after the table's own rows
    for number in (1, 2, 3):
        after = md.split(f"**Table {number}: ")[1].split("**Table ")[0]
        assert note in after and after.index(note) > after.rindex("|")
    tex = render(tables, "latex")
    assert tex.count(latex_escape(lines[0])) == 3
    for block in tex.split(r"\begin{table*}")[1:]:
        assert block.index("Manifest of pinned\\_a") > block.index(r"\bottomrule")
    rows = list(csv.reader(io.StringIO(render(tables, "csv"))))
    assert all(len(r) == len(CSV_HEADER) for r in rows)  # one rectangle a spreadsheet opens
    found = {(r[1], r[5]): r[6] for r in rows if r[0] == "manifest"}
    assert found[("pinned_a", "tool_commit")] == read_manifest(run)["tool"]["commit"]
    assert found[("pinned_a", "prompt:agent.system_template")] == "sha256:" + "ab" * 32
    assert found[("pinned_a", "seed:agent")] == "7"
    assert found[("pinned_a", "model:agent")] == "gpt-4o-2024-08-06"
    assert found[("pinned_a", "device:emulator-5554:package:com.a")] == "2.0 (20)"
    assert found[("pinned_a", "suite_hash")] == suite_hash(SAMPLE)
    data = json.loads(render(tables, "json"))
    assert data["manifests"]["pinned_a"] == essentials_json(read_manifest(run))
    assert data["manifests"]["pinned_a"]["prompts"] == {
        "agent.system_template": "sha256:" + "ab" * 32
    }


def test_a_run_without_manifest_says_so_under_each_table(sample_runs, tmp_path):
    run = tmp_path / "old"
    shutil.copytree(sample_runs[0], run)
    (run / "manifest.json").unlink()
    tables = build_tables([run], names={run: "old"})
    md = render(tables, "md")
    assert md.count(f"Manifest of old: none ({run} has no manifest.json") == 3
    assert json.loads(render(tables, "json"))["manifests"] == {"old": None}
    rows = list(csv.reader(io.StringIO(render(tables, "csv"))))
    assert ["manifest", "old", "", "", "", "manifest", "none"] in rows
