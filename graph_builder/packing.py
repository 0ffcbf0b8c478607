"""Shipping a suite without its duplicate files, and putting them back on first use.

A recorded suite holds the same PNG many times: a node's image is its first member's
step screenshot, and several demonstrations pass the same screens (the sample suite: 454
PNGs, 123 distinct). Files are only ever replaced, never changed in place, so within a
source tree they could all be hard links; a wheel cannot hold links. So the wheel build
(setup.py, for the sample suite) keeps one copy of each content and lists the others in
``duplicates.json``: ``{"schema_version": 1, "files": {"<path>": "<path of the same
bytes>"}}``, paths relative to the suite. ``restore(suite)`` puts the missing copies back
(hard links where the file system allows, else copies, each written atomically), so that
every reader sees the ordinary suite format. Readers must not write into a suite they only
read: ``complete_suite(suite)`` gives the suite itself when it is complete, else a complete
copy under the user's cache folder (the evaluator runs that). A source checkout has every
file and no ``duplicates.json``.

>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> suite = Path(tmp.name) / "suite"  # a node image that is also a step of a demonstration
>>> for name in ("task/nodes/n1.png", "demos/task/d1/steps/0000.png",
...              "demos/task/d2/steps/0000.png"):
...     (suite / name).parent.mkdir(parents=True, exist_ok=True)
...     _ = (suite / name).write_bytes(b"\\x89PNG the same bytes")
>>> dropped = pack(suite)
>>> dropped, (suite / DUPLICATES_FILE).is_file()
(2, True)
>>> readable = complete_suite(suite, cache=Path(tmp.name) / "cache")
>>> readable != suite, missing(suite) == dropped, missing(readable)  # the suite is untouched
(True, True, 0)
>>> complete_suite(suite, cache=Path(tmp.name) / "cache") == readable  # made once
True
>>> restore(suite) == dropped, restore(suite)  # every copy back, then nothing left to do
(True, 0)
>>> complete_suite(suite) == suite
True
>>> tmp.cleanup()
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

DUPLICATES_FILE = "duplicates.json"
SCHEMA_VERSION = 1


def duplicate_map(suite: Path) -> dict[str, str]:
    """For every file whose bytes an earlier file (in sorted path order) already holds,
    its path and that earlier file's path, both relative to ``suite``."""
    suite = Path(suite)
    first: dict[tuple[int, str], str] = {}
    duplicates: dict[str, str] = {}
    for path in sorted(p for p in suite.rglob("*") if p.is_file() and p.suffix == ".png"):
        relative = path.relative_to(suite).as_posix()
        key = (path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest())
        if key in first:
            duplicates[relative] = first[key]
        else:
            first[key] = relative
    return duplicates


def pack(suite: Path) -> int:
    """Delete the duplicate PNGs of ``suite`` (a build copy!) and list them in
    duplicates.json; returns how many were dropped."""
    suite = Path(suite)
    duplicates = duplicate_map(suite)
    for relative in duplicates:
        (suite / relative).unlink()
    manifest = {"schema_version": SCHEMA_VERSION, "files": duplicates}
    (suite / DUPLICATES_FILE).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return len(duplicates)


def restore(suite: Path) -> int:
    """Put back the files a packed suite left out; returns how many were written. A suite
    with no duplicates.json, or with every file present, is left alone."""
    from graph_builder.io import confined, read_json  # here: setup.py loads this file on its own

    suite = Path(suite)
    manifest = suite / DUPLICATES_FILE
    if not manifest.is_file():
        return 0
    data = read_json(manifest)
    files = data.get("files", {}) if isinstance(data, dict) else {}
    written = 0
    for relative, source in sorted(files.items()):
        target = confined(suite, relative, source=manifest)
        source_path = confined(suite, source, source=manifest)
        if target.exists():
            continue
        tmp = target.with_name(f".{target.name}.restoring")
        tmp.unlink(missing_ok=True)
        try:
            os.link(source_path, tmp)
        except OSError:
            shutil.copyfile(source_path, tmp)
        os.replace(tmp, target)
        written += 1
    return written


def _manifest_files(suite: Path) -> dict[str, str]:
    manifest = suite / DUPLICATES_FILE
    if not manifest.is_file():
        return {}
    data = json.loads(manifest.read_text(encoding="utf-8"))
    files = data.get("files", {}) if isinstance(data, dict) else {}
    return files if isinstance(files, dict) else {}


def missing(suite: Path) -> int:
    """How many files a packed suite leaves out (0: complete, or not packed)."""
    suite = Path(suite)
    return sum(1 for relative in _manifest_files(suite) if not (suite / relative).exists())


def cache_root() -> Path:
    """Where complete copies of packed suites are kept: the user's cache folder."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "elderbench-studio" / "suites"


def complete_suite(suite: Path, *, cache: Path | None = None) -> Path:
    """``suite`` when it holds every file, else a complete copy of it under ``cache``
    (default ``cache_root()``), made once per suite folder and manifest: hard links to the
    suite's files where the file system allows, plus the restored duplicates. The suite
    itself is only read. OSError: the copy cannot be written."""
    suite = Path(suite)
    if missing(suite) == 0:
        return suite
    manifest = (suite / DUPLICATES_FILE).read_bytes()
    key = hashlib.sha256(str(suite.resolve()).encode("utf-8") + b"\0" + manifest).hexdigest()
    root = cache or cache_root()
    target = root / f"{suite.resolve().name}-{key[:16]}"
    if target.is_dir() and missing(target) == 0:
        return target
    root.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=root))
    try:
        shutil.copytree(suite, building / "suite", copy_function=_link_or_copy)
        restore(building / "suite")
        shutil.rmtree(target, ignore_errors=True)  # an incomplete copy left by a crash
        try:
            os.replace(building / "suite", target)
        except OSError:
            if not (target.is_dir() and missing(target) == 0):
                raise  # not another process's complete copy: a real failure
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return target


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
