"""The `elderbench` command itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from elderbench import __version__
from elderbench.cli import main

ROOT = Path(__file__).resolve().parents[2]


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


def test_eval_help_lists_every_registered_agent(capsys, monkeypatch):
    from evaluator.agents import AGENTS
    from evaluator.agents.heuristic import HeuristicAgent

    class NewcomerAgent(HeuristicAgent):
        name = "newcomer_agent"

    monkeypatch.setitem(AGENTS, "newcomer_agent", NewcomerAgent)
    with pytest.raises(SystemExit) as exited:
        main(["eval", "--help"])
    assert exited.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "subprocess or newcomer_agent (docs/agents.md)" in help_text
    for name in AGENTS:
        assert name in help_text


def test_building_the_parser_imports_no_agent():
    """The agent names in `eval --help` are read only when the help is shown."""
    probe = (
        "import sys\n"
        "from elderbench.cli import build_parser\n"
        "build_parser()\n"
        "print(sorted(m for m in sys.modules if m.startswith('evaluator.agents')) or 'none')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "none"
