"""Where a suite's demonstrations live, for whoever adds one (an explored branch, an
imported run): the ``demos/`` the suite ships, else the workspace's. The Graphs tab reads
demonstrations from the same places, so the next build of the task merges the new one."""

from __future__ import annotations

from pathlib import Path

from graph_builder.io import shipped_demos


def suite_demos(suite: Path | None, workspace_demos: Path | None) -> Path | None:
    """The demonstrations root for ``suite``; None when it ships none and there is no
    workspace."""
    shipped = shipped_demos(suite) if suite is not None else None
    return shipped or workspace_demos
