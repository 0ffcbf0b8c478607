"""The `elderbench` command itself."""

from __future__ import annotations

import subprocess
import sys

from elderbench import __version__
from elderbench.cli import main


def test_version(capsys):
    try:
        main(["--version"])
    except SystemExit as exc:
        assert exc.code == 0
    assert capsys.readouterr().out.strip() == f"elderbench {__version__}"


def test_help_lists_the_subcommands(capsys):
    try:
        main(["--help"])
    except SystemExit as exc:
        assert exc.code == 0
    out = capsys.readouterr().out
    assert "ElderBench Studio" in out
    for command in ("studio", "phone", "build", "import", "eval", "report"):
        assert command in out


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "usage: elderbench" in capsys.readouterr().out


def test_module_entry_point_runs():
    result = subprocess.run(
        [sys.executable, "-m", "elderbench", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert result.stdout.startswith("elderbench ")
