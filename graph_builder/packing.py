"""Shipping a suite without its duplicate files, and putting them back on first use.

A recorded suite holds the same PNG many times: a node's image is its first member's
step screenshot, and several demonstrations pass the same screens (the sample suite: 454
PNGs, 123 distinct). Files are only ever replaced, never changed in place, so within a
source tree they could all be hard links; a wheel cannot hold links. So the wheel build
(setup.py, for the sample suite) keeps one copy of each content and lists the others in
``duplicates.json``: ``{"schema_version": 1, "files": {"<path>": "<path of the same
bytes>"}}``, paths relative to the suite. ``restore(suite)`` puts the missing copies back
(hard links where the file system allows, else copies, each written atomically), so that
every reader sees the ordinary suite format; the evaluator and the studio call it on the
suites they open. A source checkout has every file and no ``duplicates.json``.

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
>>> restore(suite) == dropped, restore(suite)  # every copy back, then nothing left to do
(True, 0)
>>> tmp.cleanup()
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
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
