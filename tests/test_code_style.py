"""The house style is checked, not hoped for: ruff's lint rules and formatting on all code."""

from __future__ import annotations

import ast
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


LIBRARIES = ["evaluator", "graph_builder", "devices", "recorder_app"]
MAX_FUNCTION_LINES = 150


def long_functions(root: Path, packages: list[str], limit: int) -> list[str]:
    """Every function or method (nested ones too) longer than ``limit`` lines, from its
    ``def`` to its last line, as "path:line name (N lines)"."""
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > limit:
                        where = path.relative_to(root).as_posix()
                        found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_in_the_libraries_is_over_150_lines():
    too_long = long_functions(ROOT, LIBRARIES, MAX_FUNCTION_LINES)
    assert not too_long, "split these functions:\n" + "\n".join(too_long)


def test_the_length_check_names_a_long_function(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    body = "\n".join(f"        x{i} = {i}" for i in range(150))
    (package / "mod.py").write_text(
        f"def short():\n    return 1\n\n\nclass C:\n    @staticmethod\n    def long():\n{body}\n",
        encoding="utf-8",
    )
    assert long_functions(tmp_path, ["pkg"], 150) == ["pkg/mod.py:7 long (151 lines)"]
