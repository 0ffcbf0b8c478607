"""The import contracts in pyproject.toml ([tool.importlinter]) hold: layers, Qt confined to
recorder_app.qt, and the virtual phone apart from the client side."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports() -> str:
    beside_python = Path(sys.executable).parent / "lint-imports"
    found = str(beside_python) if beside_python.exists() else shutil.which("lint-imports")
    assert found, "lint-imports is missing: install the [test] extra (pip install -e '.[test]')"
    return found


def test_import_contracts_are_kept():
    result = subprocess.run(
        [_lint_imports(), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    assert "0 broken" in result.stdout


def test_cli_parser_imports_no_qt():
    """`elderbench` imports its subcommand modules by name, which static contracts cannot see."""
    probe = textwrap.dedent(
        """
        import sys
        from elderbench.cli import build_parser
        build_parser()
        loaded = sorted(name for name in sys.modules if name.split(".")[0] == "PySide6")
        print(loaded or "none")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "none"
