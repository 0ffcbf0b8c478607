"""Report charts: compared bars carry their values, scatter labels do not overprint."""

from __future__ import annotations

from lxml import etree

from evaluator.svg import bar_chart, scatter_chart

NS = "{http://www.w3.org/2000/svg}"


def texts(svg: str) -> list[etree._Element]:
    return list(etree.fromstring(svg.encode()).iter(f"{NS}text"))


def test_compared_bars_show_both_values():
    svg = bar_chart("SR", [("canonical", 0.5, "50.0% (n=4)")], alt=[0.25], alt_notes=["25.0%"])
    shown = [t.xpath("string()") for t in texts(svg)]
    assert "50.0% (n=4)" in shown and "25.0%" in shown


def test_scatter_labels_of_equal_points_do_not_overlap():
    points = [(f"group{i}", 1.0, 0.5) for i in range(5)]  # five groups on one spot
    svg = scatter_chart("AIL vs SR", points, x_label="AIL", y_label="SR")
    labels = [t for t in texts(svg) if t.xpath("string()").startswith("group")]
    spots = {(t.get("x"), t.get("y")) for t in labels}
    assert len(labels) == 5 and len(spots) == 5
    ys = sorted(float(t.get("y")) for t in labels if t.get("x") == labels[0].get("x"))
    assert all(b - a >= 14 for a, b in zip(ys, ys[1:], strict=False))
