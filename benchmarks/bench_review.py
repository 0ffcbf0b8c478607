"""How fast the possible-merges review is on built graphs (what `build --explain` and the
editor's Possible merges panel run).

    .venv/bin/python benchmarks/bench_review.py [--tasks 20] [--demos 5] [--steps 10]

Builds TASKS tasks of the synthetic 1080x2400 workspace of ``bench_build.py`` (cached under
the system temp folder), then times ``review_task`` per task from cold (every step's
features read from its files, as the CLI does) and ``review_graph`` again with the screens
already loaded (as the editor does after each decision). Prints medians.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench_build import workspace

from graph_builder.build import build_workspace, default_jobs
from graph_builder.io import load_graph
from graph_builder.review import DemoScreens, review_graph, review_task
from graph_builder.settings import graph_settings
from graph_builder.similarity import SimilaritySettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--demos", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    demos_root = workspace(args.tasks, args.demos, args.steps)
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite"
        reports = build_workspace(
            demos_root, suite, settings=SimilaritySettings(), jobs=default_jobs()
        )
        cold: list[float] = []
        warm: list[float] = []
        pairs = 0
        for report in reports:
            started = time.perf_counter()
            review = review_task(report.output, demos_root)
            cold.append(time.perf_counter() - started)
            pairs += len(review.possible_merges)
            graph = load_graph(report.output)
            screens = DemoScreens(demos_root, graph.task_id)
            review_graph(graph, screens, graph_settings(graph).settings)  # loads the features
            started = time.perf_counter()
            review_graph(graph, screens, graph_settings(graph).settings)
            warm.append(time.perf_counter() - started)
    nodes = statistics.median(r.nodes for r in reports)
    print(
        f"{len(reports)} tasks x {args.demos} demos x {args.steps} steps "
        f"(median {nodes:g} nodes per task), {pairs} possible merges in all"
    )
    print(
        f"review per task, cold (features read from files): {statistics.median(cold):.3f} s median"
    )
    print(
        "review per task, screens loaded (after a decision): "
        f"{statistics.median(warm) * 1000:.1f} ms median"
    )


if __name__ == "__main__":
    main()
