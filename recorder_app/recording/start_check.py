"""Before the first step of a demonstration: does the phone show the task's START?

A demonstration that starts elsewhere (a font left Large, another app on top) merges with
the wrong screens. When the task already has a graph, the first captured screen is
compared with its START node, with the similarity settings the graph was built with, and
the studio warns (showing both) before anything is recorded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from graph_builder.errors import GraphBuilderError
from graph_builder.io import GRAPH_FILE, load_graph, read_png
from graph_builder.screen import Screen
from graph_builder.settings import SimilaritySettings
from graph_builder.similarity import compare
from recorder_app.recording.session import PendingStep, ResumeCheck


@dataclass(frozen=True, slots=True)
class StartReference:
    """The START node of a task's graph, ready to compare with the phone."""

    node_id: str
    screen: Screen
    png: bytes
    settings: SimilaritySettings


def load_start_reference(task_dir: Path) -> StartReference | None:
    """The START of ``<task_dir>/graph.json``; None when the task has no graph yet.

    A graph that cannot be read raises GraphBuilderError (the caller reports it)."""
    if not (task_dir / GRAPH_FILE).is_file():
        return None
    graph = load_graph(task_dir)
    start = graph.start
    if start is None:
        return None
    stored = graph.meta.get("settings")
    settings = SimilaritySettings()
    if isinstance(stored, Mapping):
        # an older graph's unreadable settings: the defaults compare well enough to warn
        with contextlib.suppress(GraphBuilderError):
            settings = SimilaritySettings.from_json(stored)
    screen = Screen(
        start.screen,
        screenshot_path=task_dir / start.screenshot,
        hierarchy_path=task_dir / start.hierarchy if start.hierarchy else None,
        activity=start.activity,
        phash=start.phash,
    )
    return StartReference(start.id, screen, read_png(task_dir / start.screenshot), settings)


def check_start(reference: StartReference, pending: PendingStep) -> ResumeCheck:
    """Whether the phone's first screen is the graph's START (``same`` None: no verdict)."""
    live = (
        pending.screen if pending.hierarchy_problem is None else pending.screen.without_hierarchy()
    )
    try:
        verdict = compare(reference.screen, live, settings=reference.settings)
    except GraphBuilderError as exc:
        return ResumeCheck(
            None, f"The first screen could not be compared with START: {exc}", reference.png
        )
    if verdict.same:
        return ResumeCheck(
            True, f"The phone shows the task's START ({reference.node_id}).", reference.png
        )
    return ResumeCheck(
        False,
        f"The phone does not show the task's START ({reference.node_id}) before the first "
        f"step: {verdict.describe()}. The reset recipe may not restore everything the "
        "task depends on (a setting, another app's data).",
        reference.png,
    )
