"""The built wheel works on its own: installed into a fresh environment, away from the
checkout, `elderbench` finds its prompts, prices and sample suite as package data.

The fresh environment borrows the test environment's third-party packages through a .pth
line (so no network is needed) but not its editable install of this project, and runs from
an empty folder with PYTHONPATH unset, so only the installed wheel can be imported.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns(
    ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".venv", "runs"
)


def _copy_sources(target: Path) -> None:
    """The files a fresh clone would hold (plus untracked, not ignored ones)."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )
    if listing.returncode != 0:  # not a git checkout: copy the tree
        shutil.copytree(ROOT, target, ignore=IGNORED)
        return
    for name in listing.stdout.decode().split("\0"):
        source = ROOT / name
        if name and source.is_file():  # a file deleted but not yet committed is skipped
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(the fresh environment's bin folder, an environment for running its commands)"""
    base = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    sources, dist, fresh = base / "src", base / "dist", base / "fresh"
    _copy_sources(sources)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    _run(
        [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["-w", str(dist), str(sources)],
        base,
        env,
    )
    (wheel,) = dist.glob("elderbench_studio-*.whl")
    venv.EnvBuilder(with_pip=False).create(fresh)
    bin_dir = fresh / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    fresh_site = Path(
        _run(
            [str(python), "-c", "import site; print(site.getsitepackages()[0])"], base, env
        ).stdout.strip()
    )
    # Plain path entries: the parent's .pth files (its editable install) are not processed.
    (fresh_site / "_test_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    _run(
        [*pip, "--python", str(python), "install", "-q", "--no-deps", "--no-index"]
        + ["--no-compile", str(wheel)],
        base,
        env,
    )
    return bin_dir, env


def test_the_installed_wheel_evaluates_and_reports_the_sample_suite(installed, tmp_path):
    bin_dir, env = installed
    python, elderbench = str(bin_dir / "python"), str(bin_dir / "elderbench")

    where = _run(
        [python, "-c", "import evaluator, task_graphs; print(evaluator.__file__)"], tmp_path, env
    )
    assert not Path(where.stdout.strip()).is_relative_to(ROOT), "imported the checkout"

    help_text = _run([elderbench, "--help"], tmp_path, env).stdout
    for command in ("studio", "phone", "build", "eval", "report"):
        assert command in help_text

    shipped = _run(
        [
            python,
            "-c",
            "from importlib import resources\n"
            "from evaluator.prompts import load_prompt\n"
            "from evaluator.language.definitions import label_definitions\n"
            "assert '$instruction' in load_prompt('agent_json.md')\n"
            "assert label_definitions()\n"
            "print(resources.files('task_graphs').joinpath('sample'))",
        ],
        tmp_path,
        env,
    )
    suite = Path(shipped.stdout.strip())
    assert not suite.is_relative_to(ROOT)

    out = tmp_path / "replay"
    installed_files = sorted(p for p in suite.rglob("*") if p.is_file())
    cache = tmp_path / "cache"  # the packed suite runs from a complete copy here
    _run(
        [elderbench, "eval", "--suite", str(suite), "--protocol", "offline", "--agent", "replay"]
        + ["--out", str(out)],
        tmp_path,
        {**env, "XDG_CACHE_HOME": str(cache)},
    )
    assert sorted(p for p in suite.rglob("*") if p.is_file()) == installed_files  # only read
    assert any(cache.rglob("*/task.json"))
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    tasks = [json.loads(path.read_text()) for path in suite.glob("*/task.json")]
    offline = [task for task in tasks if task["protocol"] == "offline"]
    assert len(results) == len(offline) > 0
    assert {r["status"] for r in results} == {"success"}  # the replay agent walks every graph

    (out / "report.md").unlink()
    report = _run([elderbench, "report", str(out)], tmp_path, env)
    assert "report.md" in report.stdout
    assert "SR" in (out / "report.md").read_text()
