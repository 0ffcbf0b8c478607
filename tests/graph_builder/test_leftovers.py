"""What a killed or crashed build leaves behind: no live workers, no stray folders, and
files with the modes the umask gives."""

from __future__ import annotations

import math
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluator.synthetic import write_suite
from graph_builder import io
from graph_builder.errors import FormatError

ROOT = Path(__file__).resolve().parents[2]


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_killing_build_jobs_2_ends_its_workers(tmp_path):
    write_suite(tmp_path / "made", 24, demos=tmp_path / "demos", size=(270, 600))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "elderbench", "build", str(tmp_path / "demos")]
    process = subprocess.Popen(
        [*command, "-o", str(tmp_path / "suite"), "--jobs", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and len(workers) < 2 and process.poll() is None:
        workers = children_of(process.pid)
        time.sleep(0.05)
    assert len(workers) >= 2, "the build never started its workers"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(alive(w) for w in workers):
        time.sleep(0.1)
    assert not any(alive(w) for w in workers)


def test_a_folder_moved_aside_by_a_crash_is_put_back_or_cleaned(tmp_path):
    target, new = tmp_path / "task", tmp_path / ".task.building"
    (tmp_path / ".task.old").mkdir()  # the crash hit between the two renames
    (tmp_path / ".task.old" / "graph.json").write_text("old")
    io.recover_folder(target)
    assert (target / "graph.json").read_text() == "old"
    (tmp_path / ".task.old").mkdir()  # a crash after the second rename
    new.mkdir()
    (new / "graph.json").write_text("new")
    io.replace_folder(new, target)
    assert (target / "graph.json").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["task"]


def test_written_files_and_folders_follow_the_umask(tmp_path):
    previous = os.umask(0o002)  # a lab sharing run folders with its group
    try:
        io.atomic_write_json(tmp_path / "a" / "run.json", {"x": 1})
        made = io.make_temp_dir(tmp_path, ".task.building")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "a" / "run.json").stat().st_mode) == 0o664
    assert stat.S_IMODE(made.stat().st_mode) == 0o775


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_json_without_a_number_is_refused_naming_the_file(tmp_path, value):
    with pytest.raises(FormatError, match=r"graph\.json.*Out of range float"):
        io.atomic_write_json(tmp_path / "graph.json", {"x": value})
    assert not (tmp_path / "graph.json").exists()
