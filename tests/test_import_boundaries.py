"""The libraries never import Qt, and graph_builder imports none of our other packages."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Runs in a fresh interpreter so that nothing imported by other tests leaks in.
PROBE = textwrap.dedent(
    """
    import importlib, pkgutil, sys

    blocked = set(sys.argv[2].split(","))

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in blocked:
                raise ImportError(f"{name} is blocked for this check")
            return None

    sys.meta_path.insert(0, Block())
    package = importlib.import_module(sys.argv[1])
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    if package.__name__ == "elderbench":
        # Building --help imports every subcommand module; none may pull in Qt.
        from elderbench.cli import build_parser
        build_parser()
    print("ok")
    """
)

CASES = {
    "graph_builder": "PySide6,devices,evaluator,recorder_app",
    "devices": "PySide6,evaluator,recorder_app",
    "evaluator": "PySide6,recorder_app",
    "recorder_app.recording": "PySide6",
    "virtual_phone": "PySide6,devices,evaluator,graph_builder,recorder_app,elderbench",
    "elderbench": "PySide6",
}


@pytest.mark.parametrize(("package", "blocked"), CASES.items())
def test_package_imports_without_forbidden_dependencies(package, blocked):
    result = subprocess.run(
        [sys.executable, "-c", PROBE, package, blocked],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"
