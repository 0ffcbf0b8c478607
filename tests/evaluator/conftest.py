"""Shared fixtures: a synthetic suite (hand-built graphs plus demonstrations), and the sample
suite evaluated four ways."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from evaluator.synthetic import write_suite
from graph_builder.model import Task
from tests.evaluator.sample_runs import evaluate_sample


@dataclass(frozen=True)
class SyntheticSuite:
    suite: Path
    demos: Path
    tasks: list[Task]


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> SyntheticSuite:
    """Ten synthetic tasks (1-4 taps, every fifth ends by typing), read-only for tests."""
    root = tmp_path_factory.mktemp("synthetic")
    tasks = write_suite(root / "suite", 10, demos=root / "demos", size=(270, 600))
    return SyntheticSuite(root / "suite", root / "demos", tasks)


@pytest.fixture(scope="session")
def sample_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The sample suite's offline tasks, heuristic and random, both instructions
    (``sample_runs.RUNS``); read-only for tests: copy a run before changing it."""
    return evaluate_sample(tmp_path_factory.mktemp("runs"))
