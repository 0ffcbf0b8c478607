"""The house style is checked, not hoped for: ruff's lint rules and formatting on all code."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CODE = [
    "elderbench",
    "graph_builder",
    "devices",
    "virtual_phone",
    "evaluator",
    "recorder_app",
    "task_graphs",
    "tests",
    "benchmarks",
]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists():
        pytest.skip("ruff is not installed (it comes with the [test] extra)")
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    return subprocess.run(
        [ruff, *args, *CODE], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_ruff_lint_passes():
    result = _ruff("check", "--no-cache")
    assert result.returncode == 0, result.stdout[-3000:]


def test_code_is_ruff_formatted():
    result = _ruff("format", "--check", "--no-cache")
    assert result.returncode == 0, result.stdout[-3000:]


def test_packages_type_check():
    """mypy over the packages listed in pyproject.toml ([tool.mypy] packages)."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-3000:]
