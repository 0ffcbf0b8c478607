"""The figures of runs, from their summaries (``run_summary.summarize(...).to_json()``,
what ``report --json`` prints): every plotted number is copied from there, never
recomputed.

- ``sr_by_label``: SR per label (one panel per dimension), a bar per run with its 95%
  Wilson interval, each group's size;
- ``latency_vs_sr`` and ``cost_vs_sr``: a run's AIL or cost against its SR;
- ``failure_shares``: each run's analysed failures by primary cause;
- ``sr_against``: any per-group metric against SR (the report draws AIL by app).

``runs`` is a sequence of ``(label, summary JSON)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluator.metrics import group_rate
from evaluator.plots import Plot, bars

LABEL_DIMENSIONS = ("syntax", "semantics", "scenario")

Runs = Sequence[tuple[str, Mapping[str, Any]]]


def _bar(group: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A run's bar for one label: none where the run has no such task, or only errors."""
    if group is None or group["sr"] is None:
        return None
    return group_rate(group, base="n")


def sr_by_label(runs: Runs, dimensions: Sequence[str] = LABEL_DIMENSIONS) -> Plot | None:
    """Grouped bars of SR per label; None when no run has a labelled task."""
    panels = []
    for dimension in dimensions:
        labels: list[str] = []
        for _, summary in runs:
            labels += [g for g in summary["breakdowns"].get(dimension, {}) if g not in labels]
        if not labels:
            continue
        panels.append(
            {
                "title": dimension,
                "groups": [
                    {
                        "label": label,
                        "bars": [
                            _bar(summary["breakdowns"].get(dimension, {}).get(label))
                            for _, summary in runs
                        ],
                    }
                    for label in labels
                ],
            }
        )
    if not panels:
        return None
    return bars(
        "sr_by_label",
        "Success rate by label",
        "SR of the evaluated tasks carrying each label (successes over n, harness errors "
        "excluded), whiskers the 95% Wilson interval; n is the label's evaluated tasks, one "
        "per run when they differ. A task with two labels of one dimension counts in both.",
        axis="SR (%) over the label's n tasks",
        series=[label for label, _ in runs],
        panels=panels,
    )


def _point(label: str, x: float, summary: Mapping[str, Any]) -> dict[str, Any]:
    low, high = summary["sr_ci"] if summary["sr_ci"] is not None else (None, None)
    base = summary["bases"]["sr"]
    return {
        "label": label,
        "x": x,
        "y": summary["sr"],
        "low": low,
        "high": high,
        "successes": base["successes"],
        "n": base["evaluated"],
    }


def _tasks_phrase(runs: Runs) -> str:
    sizes = sorted({s["bases"]["sr"]["evaluated"] for _, s in runs})
    return f"{sizes[0]}" if len(sizes) == 1 else "/".join(str(n) for n in sizes)


def latency_vs_sr(runs: Runs) -> Plot | None:
    """Each run's AIL (seconds per step) against its SR; None when no run has both."""
    points = [
        _point(label, s["ail"], s) | {"steps": s["bases"]["ail"]["steps"]}
        for label, s in runs
        if s["ail"] is not None and s["sr"] is not None
    ]
    if not points:
        return None
    return Plot(
        "latency_vs_sr",
        "Latency against success",
        "scatter",
        "AIL: seconds of model inference and action parsing per step of the evaluated tasks "
        "(retries and backoff apart); SR over each run's evaluated tasks, whiskers the 95% "
        "Wilson interval.",
        {
            "x_label": "AIL (s per step)",
            "y_label": f"SR (%) over {_tasks_phrase(runs)} tasks",
            "points": points,
        },
    )


def cost_vs_sr(runs: Runs, currency: str) -> Plot | None:
    """Each run's cost (agent and judges) against its SR; None when no run has both."""
    points = [
        _point(label, s["cost"], s) | {"unpriced_models": list(s["unpriced_models"])}
        for label, s in runs
        if s["cost"] is not None and s["sr"] is not None
    ]
    if not points:
        return None
    unpriced = sorted({m for p in points for m in p["unpriced_models"]})
    caption = (
        f"Cost: every token of the agent and the judges, errored tasks included, in "
        f"{currency}; SR over each run's evaluated tasks, whiskers the 95% Wilson interval."
    )
    if unpriced:
        caption += f" No price for {', '.join(unpriced)}: their tokens cost nothing here."
    return Plot(
        "cost_vs_sr",
        "Cost against success",
        "scatter",
        caption,
        {
            "x_label": f"Cost ({currency}, whole run)",
            "y_label": f"SR (%) over {_tasks_phrase(runs)} tasks",
            "points": points,
        },
    )


def failure_shares(runs: Runs) -> Plot | None:
    """Each run's analysed failures by primary cause; None when no run has a failure."""
    if not any(s["failure_analysis"]["failures"] for _, s in runs):
        return None
    categories: list[str] = []
    for _, s in runs:
        categories += [
            c["category"]
            for c in s["failure_analysis"]["categories"]
            if c["category"] not in categories
        ]
    rows = []
    for label, s in runs:
        found = {c["category"]: c for c in s["failure_analysis"]["categories"]}
        base = s["failure_analysis"]["analysed"]
        rows.append(
            {
                "label": label,
                "base": base,
                "failures": s["failure_analysis"]["failures"],
                "shares": [
                    (found[c]["share"] or 0.0) if c in found and base else 0.0 for c in categories
                ],
                "counts": [found[c]["primary"] if c in found else 0 for c in categories],
            }
        )
    return Plot(
        "failure_shares",
        "Failures by primary cause",
        "shares",
        "Share of each run's analysed failures (tagged by a person) by primary cause; each "
        "failure counts once, under its first tag. Beside each run: analysed of all failures.",
        {
            "axis": "Share (%) of the analysed failures",
            "categories": categories,
            "rows": rows,
        },
    )


def sr_against(
    name: str,
    title: str,
    groups: Mapping[str, Mapping[str, Any]],
    metric: str,
    x_label: str,
    caption: str,
) -> Plot | None:
    """One point per breakdown group: its ``metric`` against its SR (with interval)."""
    points = [
        {
            "label": f"{g} (n={m['n']})",
            "x": m[metric],
            "y": m["sr"],
            "low": m["sr_low"],
            "high": m["sr_high"],
            "successes": m["successes"],
            "n": m["n"],
        }
        for g, m in groups.items()
        if m.get(metric) is not None and m["sr"] is not None
    ]
    if not points:
        return None
    return Plot(
        name,
        title,
        "scatter",
        caption,
        {
            "x_label": x_label,
            "y_label": "SR (%) over its n tasks",
            "points": points,
        },
    )


def run_plots(runs: Runs, currency: str) -> list[Plot]:
    """Every figure of ``elderbench figures`` that the runs have data for."""
    found = (
        sr_by_label(runs),
        latency_vs_sr(runs),
        cost_vs_sr(runs, currency),
        failure_shares(runs),
    )
    return [p for p in found if p is not None]
