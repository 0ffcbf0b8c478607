"""``elderbench figures``: the plotted numbers are report --json's, the files are vector
with embedded fonts, and runs on other suites are refused as ``table`` refuses them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree
from matplotlib.patches import Rectangle

from elderbench.cli import main
from evaluator.figures import FIGURES_JSON, build_figures, write_figures
from evaluator.plots import MIN_FONT_SIZE, PALETTE, Plot, draw
from evaluator.run_summary import summarize
from evaluator.tables import TableError
from graph_builder.io import load_task, suite_task_dirs
from graph_builder.model import EvalProtocol
from tests.evaluator.sample_runs import RUNS, SAMPLE

SAMPLE_TASKS = [load_task(folder) for folder in suite_task_dirs(SAMPLE)]
OFFLINE_TASKS = sum(1 for task in SAMPLE_TASKS if task.protocol is EvalProtocol.OFFLINE)
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def written(sample_runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("figures")
    assert main(["figures", *map(str, sample_runs), "--out", str(out)]) == 0
    return out


def _plots(folder: Path) -> dict[str, Plot]:
    data = json.loads((folder / FIGURES_JSON).read_text(encoding="utf-8"))
    return {
        p["name"]: Plot(p["name"], p["title"], p["kind"], p["caption"], p["data"])
        for p in data["plots"]
    }


def test_every_figure_is_written_as_pdf_and_svg(written):
    names = set(_plots(written))
    assert names == {
        "sr_by_label",
        "latency_vs_sr",
        "cost_vs_sr",
        "failure_shares",
        "language_lengths",
        "language_labels",
    }
    for name in names:
        assert (written / f"{name}.pdf").read_bytes().startswith(b"%PDF")
        assert (written / f"{name}.svg").is_file()


def test_plotted_numbers_are_report_json_to_the_last_digit(sample_runs, written):
    plots = _plots(written)
    summaries = [summarize(run).to_json() for run in sample_runs]
    for panel in plots["sr_by_label"].data["panels"]:
        for group in panel["groups"]:
            for bar, summary in zip(group["bars"], summaries, strict=True):
                found = summary["breakdowns"][panel["title"]][group["label"]]
                assert (bar["value"], bar["low"], bar["high"], bar["n"]) == (
                    found["sr"],
                    found["sr_low"],
                    found["sr_high"],
                    found["n"],
                )
    for name, metric in (("latency_vs_sr", "ail"), ("cost_vs_sr", "cost")):
        points = plots[name].data["points"]
        assert [p["x"] for p in points] == [s[metric] for s in summaries]
        assert [p["y"] for p in points] == [s["sr"] for s in summaries]
        assert [[p["low"], p["high"]] for p in points] == [s["sr_ci"] for s in summaries]
        # the rate names its base: the runs were offline, over the suite's offline tasks
        assert f"over {OFFLINE_TASKS} tasks" in plots[name].data["y_label"]
    rows = plots["failure_shares"].data["rows"]
    assert [(r["base"], r["failures"]) for r in rows] == [
        (s["failure_analysis"]["analysed"], s["failure_analysis"]["failures"]) for s in summaries
    ]


def drawn_bar_widths(fig) -> list[float]:
    """Every bar's length as drawn (in axis units), panel by panel, series by series."""
    return [float(p.get_width()) for ax in fig.axes for p in ax.patches if isinstance(p, Rectangle)]


def test_the_drawn_bars_are_the_data(written):
    plot = _plots(written)["sr_by_label"]
    expected = [
        100.0 * group["bars"][s]["value"]
        for panel in plot.data["panels"]
        for s in range(len(plot.data["series"]))
        for group in panel["groups"]
    ]
    assert drawn_bar_widths(draw(plot)) == expected


def test_svg_is_xml_with_one_named_bar_per_label_and_run(written):
    plot = _plots(written)["sr_by_label"]
    root = etree.parse(str(written / "sr_by_label.svg")).getroot()
    assert root.tag == f"{SVG}svg"
    bars = [
        g.get("id")
        for g in root.iter(f"{SVG}g")
        if re.fullmatch(r"sr_by_label-bar-\d+-\d+-\d+", g.get("id") or "")
    ]
    labels = sum(len(p["groups"]) for p in plot.data["panels"])
    assert len(bars) == labels * len(RUNS) == len(set(bars))
    assert labels == 13  # 4 syntax, 4 semantics, 5 scenario labels in the sample suite
    # text is drawn as glyph outlines: no <text> element depends on the reader's fonts
    assert not list(root.iter(f"{SVG}text"))
    colours = {
        c.upper()
        for c in re.findall(r"#[0-9a-fA-F]{6}\b", (written / "sr_by_label.svg").read_text())
    }
    assert {PALETTE[i].upper() for i in range(len(RUNS))} <= colours


def test_pdf_embeds_its_fonts_as_truetype(written):
    for pdf in written.glob("*.pdf"):
        data = pdf.read_bytes()
        fonts = data.count(b"/Type /FontDescriptor")
        assert fonts >= 1, pdf.name
        # each font's descriptor carries its TrueType file (Type 42: a CID TrueType font)
        assert data.count(b"/FontFile2") == fonts, pdf.name
        assert data.count(b"/Subtype /CIDFontType2") == fonts, pdf.name
        # no bitmap (Type 3) font, no unembedded standard font
        assert b"/Subtype /Type3" not in data and b"/Subtype /Type1" not in data


def test_one_column_wide_with_readable_text(written):
    for plot in _plots(written).values():
        fig = draw(plot)
        assert fig.get_figwidth() == pytest.approx(3.4)
        sizes = {
            t.get_fontsize()
            for t in fig.findobj(lambda a: hasattr(a, "get_fontsize"))
            if getattr(t, "get_text", lambda: "")()
        }
        assert sizes and min(sizes) >= MIN_FONT_SIZE, plot.name


def test_files_are_reproducible(sample_runs, written, tmp_path):
    again = tmp_path / "again"
    write_figures(build_figures(sample_runs), again)
    for name in ("sr_by_label.svg", "sr_by_label.pdf", FIGURES_JSON):
        assert (again / name).read_bytes() == (written / name).read_bytes(), name


def test_language_against_another_set(sample_runs, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("please turn the lights on in the kitchen now\ncall mum\n", encoding="utf-8")
    figures = build_figures(sample_runs[:1], against=other)
    plots = {p.name: p for p in figures.plots}
    lengths = plots["language_lengths"].data
    # each share's base: every request of the suite (online ones too), and the 2 others
    assert lengths["series"] == [f"sample (n={len(SAMPLE_TASKS)})", "other (n=2)"]
    shares = [g["bars"][1] for g in lengths["panels"][0]["groups"]]
    assert sum(s["count"] for s in shares) == 2 and all(s["of"] == 2 for s in shares)
    # an unlabelled list has no label shares: only the suite's are drawn
    assert plots["language_labels"].data["series"] == [f"sample (n={len(SAMPLE_TASKS)})"]


def test_runs_on_another_suite_are_refused_unless_allowed(sample_runs, tmp_path, capsys):
    copy = tmp_path / "sample-copy"
    shutil.copytree(SAMPLE, copy)
    task = copy / "airplane_on" / "task.json"
    data = json.loads(task.read_text(encoding="utf-8"))
    data["max_steps"] = data.get("max_steps", 10) + 1
    task.write_text(json.dumps(data), encoding="utf-8")
    run = tmp_path / "copy-run"
    argv = ["eval", "--suite", str(copy), "--protocol", "offline", "--agent", "random"]
    assert main([*argv, "--out", str(run), "--no-report"]) == 0
    with pytest.raises(TableError, match=r"ran on suite .*sample-copy"):
        build_figures([sample_runs[0], run], names={run: "copy"})
    out = tmp_path / "out"
    assert main(["figures", str(sample_runs[0]), str(run), "--out", str(out)]) != 0
    assert "--allow-different-tasks" in capsys.readouterr().err
    assert not out.exists()
    argv = ["figures", str(sample_runs[0]), str(run), "--name", f"{run}=copy"]
    assert main([*argv, "--allow-different-tasks", "--out", str(out)]) == 0
    assert "note: copy ran on suite" in capsys.readouterr().err
    assert json.loads((out / FIGURES_JSON).read_text())["notes"]


def test_the_cli_and_the_studio_start_without_matplotlib():
    code = (
        "import sys; from elderbench.cli import build_parser; build_parser(); "
        "import evaluator.report, evaluator.figures, recorder_app.qt.app; "
        "print('matplotlib' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "False", done.stderr


def test_the_readme_figure_is_what_the_command_draws(written):
    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "](docs/images/sr_by_label.svg)" in readme
    assert "elderbench figures runs/heuristic-original runs/heuristic-normalized" in readme
    committed = (root / "docs" / "images" / "sr_by_label.svg").read_text(encoding="utf-8")
    assert committed == (written / "sr_by_label.svg").read_text(encoding="utf-8"), (
        "docs/images/sr_by_label.svg is stale: remake it with the command in the README"
    )
