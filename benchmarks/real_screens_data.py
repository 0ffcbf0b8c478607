"""Rebuild the broader set of labelled real screens from pinned commits of public repositories.

    .venv/bin/python benchmarks/real_screens_data.py SNAPSHOTS OUT [--labels DIR]

The label files in ``benchmarks/real_screens_labels/`` (``screens.tsv``, ``pairs.tsv``,
``README.md``: a state label per screen, every pair marked, and the provenance) name each
screen's source repository, the commit and the paths of its screenshot and hierarchy. The
images themselves are not in this repository (third-party captures, some show personal
photos or e-mail addresses): this script takes them from local snapshots of those
repositories and writes the folder the benchmark reads, in the layout of
``../shared/fixtures/real/dev_screens``:

    OUT/<source>/<name>.png  the screenshot (a JPEG capture is decoded and stored as PNG)
    OUT/<source>/<name>.xml  the hierarchy as a uiautomator dump
    OUT/screens.tsv, OUT/pairs.tsv, OUT/README.md  copied from the label folder

``SNAPSHOTS`` holds one git directory per repository, named ``owner+name`` (a bare
repository, or a folder with the git directory in ``repo/``, ``repo/.git/`` or
``.git/``). The script never reaches the network: fetch the snapshots first (``git clone
--bare`` of each repository in the README, or any mirror of them); nothing is checked out.

Hierarchies recorded by a GUI explorer as a JSON view list (``xml_format`` is
``droidbot_state_json``) are turned into a uiautomator dump with the same elements by
``graph_builder.importers.droidbot.views_to_xml``, the converter the importer uses; each
result is checked against the ``xml_sha256`` in ``screens.tsv``. XML dumps are copied
byte for byte. The output folder is written beside ``OUT`` and put in place in one step,
under ``OUT``'s parent folder lock, so a failed run leaves the previous folder as it was.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from graph_builder.folder_lock import FolderLock
from graph_builder.importers.droidbot import views_to_xml
from graph_builder.io import make_temp_dir, replace_folder

LABELS = Path(__file__).resolve().parent / "real_screens_labels"
LABEL_FILES = ("screens.tsv", "pairs.tsv", "README.md")
GIT_TIMEOUT_S = 60.0


class RebuildError(Exception):
    """A snapshot, a file in it or a label row is missing or does not match."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One repository's local git directory."""

    repo: str
    git_dir: Path

    def blob(self, commit: str, path: str) -> bytes:
        """The bytes of ``path`` at ``commit``; RebuildError naming both when absent."""
        try:
            done = subprocess.run(
                ["git", "--git-dir", str(self.git_dir), "cat-file", "blob", f"{commit}:{path}"],
                capture_output=True,
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            took = f"git took over {GIT_TIMEOUT_S:.0f} s"
            raise RebuildError(f"{self.repo}: {took} for {path}") from exc
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip()
            raise RebuildError(f"{self.repo} has no {path} at {commit[:12]} ({detail})")
        return done.stdout


def find_snapshot(snapshots: Path, repo: str) -> Snapshot:
    """The git directory of ``owner/name`` under ``snapshots`` (see the module doc)."""
    base = snapshots / repo.replace("/", "+")
    for candidate in (base / "repo", base / "repo" / ".git", base / ".git", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return Snapshot(repo, candidate)
    raise RebuildError(f"no snapshot of {repo}: expected a git directory at {base}")


def _droidbot_xml(data: bytes, source: str) -> bytes:
    state = json.loads(data)
    return views_to_xml(state["views"], Path(source)).encode("utf-8")


HIERARCHY_READERS: dict[str, Callable[[bytes, str], bytes]] = {
    "uiautomator_dump": lambda data, _source: data,
    "appium_uia2_page_source": lambda data, _source: data,
    "droidbot_state_json": _droidbot_xml,
}


def png_bytes(data: bytes, source: str) -> bytes:
    """The screenshot as PNG: PNG bytes unchanged, anything else decoded and re-encoded."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return data
    try:
        with Image.open(io.BytesIO(data)) as image:
            out = io.BytesIO()
            image.convert("RGB").save(out, format="PNG")
    except OSError as exc:
        raise RebuildError(f"{source}: not a readable image ({exc})") from exc
    return out.getvalue()


def rebuild_screen(row: dict[str, str], snapshot: Snapshot, out: Path) -> None:
    """Write one screen's PNG and XML under ``out`` as ``screens.tsv`` names them."""
    reader = HIERARCHY_READERS.get(row["xml_format"])
    if reader is None:
        raise RebuildError(f"{row['id']}: unknown xml_format {row['xml_format']!r}")
    xml = reader(snapshot.blob(row["commit"], row["original_xml_path"]), row["original_xml_path"])
    expected = row.get("xml_sha256", "")
    if expected and hashlib.sha256(xml).hexdigest() != expected:
        raise RebuildError(
            f"{row['id']}: the hierarchy from {row['original_xml_path']} differs from the "
            "labelled one (xml_sha256); the converter or the snapshot changed"
        )
    (out / row["xml"]).parent.mkdir(parents=True, exist_ok=True)
    (out / row["xml"]).write_bytes(xml)
    if row["png"]:  # empty for a dump-only screen
        image = snapshot.blob(row["commit"], row["original_path"])
        (out / row["png"]).write_bytes(png_bytes(image, row["original_path"]))


def read_rows(labels: Path) -> list[dict[str, str]]:
    for name in LABEL_FILES:
        if not (labels / name).is_file():
            raise RebuildError(f"label folder {labels} lacks {name}")
    with (labels / "screens.tsv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def rebuild(snapshots: Path, out: Path, labels: Path = LABELS) -> int:
    """Rebuild ``out`` from the snapshots and the label files; returns the screen count."""
    rows = read_rows(labels)
    snaps = {repo: find_snapshot(snapshots, repo) for repo in {r["source_repo"] for r in rows}}
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with FolderLock(out.parent, purpose=f"rebuilding {out.name}"):
        work = make_temp_dir(out.parent, f".{out.name}.new")
        try:
            for row in rows:
                rebuild_screen(row, snaps[row["source_repo"]], work)
            for name in LABEL_FILES:
                shutil.copyfile(labels / name, work / name)
            replace_folder(work, out)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return len(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshots", type=Path, help="folder of owner+name git directories")
    parser.add_argument("out", type=Path, help="folder to (re)build, e.g. ../devdata/real_screens")
    parser.add_argument("--labels", type=Path, default=LABELS, help="label folder")
    args = parser.parse_args()
    try:
        count = rebuild(args.snapshots, args.out, args.labels)
    except RebuildError as exc:
        print(f"real_screens_data: {exc}", file=sys.stderr)
        return 2
    print(f"real_screens_data: {count} screens written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
