"""Loading and saving every on-disk format, with atomic writes.

Layout (see docs/formats.md):

    <workspace>/demos/<task_id>/<demo_id>/demo.json, steps/0003.png, steps/0003.xml
    <suite>/suite.json, <suite>/<task_id>/task.json, graph.json, nodes/<node_id>.png|.xml

Loading never modifies what is on disk. Every write goes to a temporary file in the same
folder and is renamed over the target, so a crash leaves either the old or the new file.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from graph_builder.errors import FormatError, GraphBuilderError
from graph_builder.model import (
    SCHEMA_VERSION,
    Action,
    Demonstration,
    DemoStatus,
    DeviceInfo,
    GraphLayout,
    Observation,
    Step,
    Suite,
    Task,
    TaskGraph,
    validate_id,
)

DEMO_FILE = "demo.json"
TASK_FILE = "task.json"
SUITE_FILE = "suite.json"
GRAPH_FILE = "graph.json"
LAYOUT_FILE = "layout.json"  # where the graph editor draws the nodes; rebuilds keep it
STEPS_DIR = "steps"
NODES_DIR = "nodes"
# A suite may ship its demonstrations inside itself (<suite>/demos/, like the sample suite).
SUITE_DEMOS_DIR = "demos"

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PNG_END = b"IEND\xaeB`\x82"  # the IEND chunk's type and CRC: the last bytes of every PNG
# Limits of every JSON file read (read_json): the largest graph.json we know is a few MB,
# the deepest document nests under ten levels.
MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_JSON_DEPTH = 100
# A screenshot larger than this many pixels is a decompression bomb, not a phone screen
# (Pillow's own warning limit; the largest phones are about 1440 x 3200 = 4.6 M).
MAX_PNG_PIXELS = 89_478_485
# A phone screenshot is a few MB (4.6 M pixels stored uncompressed are 18 MB); a larger
# "PNG" is refused at capture, build and eval before it is read, copied or decoded.
MAX_PNG_BYTES = 48 * 1024 * 1024

# --------------------------------------------------------------------------- atomic writes


def _umask() -> int:
    # Read without changing it where the system tells (Linux); else set-and-restore.
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a plain ``open()`` would give a new file (0666 less the umask): temporary
    files are created 0600, and a lab sharing run folders must get what its umask says."""
    return 0o666 & ~_umask()


def make_temp_dir(parent: Path, name: str) -> Path:
    """A fresh, empty folder ``parent/name`` (a leftover of a killed process is removed),
    with the mode its umask gives (not mkdtemp's 0700)."""
    path = Path(parent) / name
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def replace_folder(new: Path, target: Path) -> None:
    """Put the finished folder ``new`` in place of ``target`` with two renames.

    The old folder is moved aside to ``.<name>.old`` first and deleted only once ``new``
    is in place, so a crash leaves the old folder or the new one. A crash between the two
    renames leaves only ``.<name>.old``: the next call for ``target`` (or
    ``recover_folder``) puts it back or deletes it.
    """
    new, target = Path(new), Path(target)
    recover_folder(target)
    if not target.exists():
        os.replace(new, target)
        return
    old = _old_copy(target)
    os.replace(target, old)
    try:
        os.replace(new, target)
    except OSError:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _old_copy(target: Path) -> Path:
    return target.with_name(f".{target.name}.old")


def recover_folder(target: Path) -> None:
    """Undo what a crash inside ``replace_folder`` left: the old folder moved aside is put
    back when ``target`` is missing, and deleted when ``target`` is there."""
    old = _old_copy(Path(target))
    if not old.exists():
        return
    if Path(target).exists():
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(old, target)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, data: Any) -> None:
    """Write JSON; a NaN or infinity (which JSON cannot hold) is refused naming the file."""
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise FormatError(f"cannot be written as JSON: {exc}", source=Path(path)) from exc
    atomic_write_text(path, text + "\n")


def read_json(path: Path, *, max_bytes: int | None = None) -> Any:
    """Parse a JSON file; a missing, malformed, too large or too deeply nested file is a
    FormatError naming it (``max_bytes`` defaults to ``MAX_JSON_BYTES``)."""
    path = Path(path)
    limit = MAX_JSON_BYTES if max_bytes is None else max_bytes
    try:
        with path.open("rb") as fh:
            raw = fh.read(limit + 1)
    except FileNotFoundError:
        raise FormatError("file not found", source=path) from None
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror}", source=path) from exc
    if len(raw) > limit:
        raise FormatError(
            f"the file is larger than {limit:,} bytes; no file of this format is that large, "
            "so it is refused unread",
            source=path,
        )
    if not raw.strip():
        raise FormatError("the file is empty", source=path)
    return parse_json(raw, source=path)


def parse_json(raw: str | bytes, *, source: object = None) -> Any:
    """Parse one JSON document (a file's bytes, or a line of a .jsonl file), refusing
    NaN, infinity and nesting deeper than ``MAX_JSON_DEPTH`` with a FormatError naming
    ``source``. Python's parser recurses once per level: a small file nested a hundred
    thousand levels deep would stop the whole program with a RecursionError.

    >>> parse_json('{"a": [1, {"b": 2}]}')
    {'a': [1, {'b': 2}]}
    >>> parse_json("[" * 500 + "]" * 500, source="deep.json")
    Traceback (most recent call last):
    ...
    graph_builder.errors.FormatError: deep.json: nested 500 levels deep (at most 100); ...
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    depth = json_depth(data)
    if depth > MAX_JSON_DEPTH:
        raise FormatError(
            f"nested {depth} levels deep (at most {MAX_JSON_DEPTH}); no file of ours nests "
            "that deep, so it is damaged or made to crash the reader",
            source=source,
        )
    try:
        return json.loads(raw, parse_constant=_no_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FormatError(f"not valid JSON: {exc}", source=source) from exc
    except ValueError as exc:
        raise FormatError(str(exc), source=source) from exc
    except RecursionError as exc:  # the stack was already deep where we were called
        raise FormatError("nested too deep to read", source=source) from exc


# A JSON string, escapes included (written unrolled so long strings match in linear time).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def json_depth(raw: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings do
    not count), without parsing it.

    >>> json_depth(b'{"a": [1, "[[[", {"b": []}]}')
    4
    """
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(_DEPTH_STEP[b] for b in brackets), default=0)


def _no_constant(name: str) -> Any:
    # Python's json reads NaN and Infinity, which JSON does not have: a coordinate or a
    # threshold that is not a number must fail here, naming the file, not later.
    raise ValueError(f"not valid JSON: {name} is not a number JSON can hold")


def _check_schema(data: Any, path: Path) -> None:
    if not isinstance(data, dict):
        raise FormatError(f"expected a JSON object, found {type(data).__name__}", source=path)
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise FormatError("missing or non-integer 'schema_version'", source=path)
    if version > SCHEMA_VERSION:
        raise FormatError(
            f"schema_version {version} was written by a newer ElderBench Studio; this version "
            f"reads up to {SCHEMA_VERSION}. Upgrade elderbench-studio to open it.",
            source=path,
        )
    if version < 1:
        raise FormatError(f"unknown schema_version {version}", source=path)


def confined(folder: Path, relative: str, *, source: Path | None = None) -> Path:
    """``folder / relative``, for a path stored in a file of ``folder`` (a screenshot or
    hierarchy named in demo.json or graph.json). Refused with a FormatError naming
    ``source`` when the path is absolute, climbs out with ``..``, or leads outside
    ``folder`` through a symbolic link: a file must never make the studio read, link or
    upload a file that is not its own."""
    folder = Path(folder)
    pure = PurePosixPath(relative)
    if (
        not relative
        or pure.is_absolute()
        or ".." in pure.parts
        or "\\" in relative
        or PureWindowsPath(relative).drive
    ):
        raise FormatError(
            f"the path {relative!r} must be relative to {folder} and stay inside it "
            "(no leading '/', no '..')",
            source=source or folder,
        )
    path = folder / pure
    # Only a symbolic link below the folder can lead out: look for one (an lstat per part)
    # before paying for a full resolve of both paths.
    below = folder
    for part in pure.parts:
        below = below / part
        if below.is_symlink():
            break
    else:
        return path
    if not path.resolve().is_relative_to(folder.resolve()):
        raise FormatError(
            f"{relative!r} leads outside {folder} through a symbolic link; replace the link "
            "with the file itself",
            source=source or folder,
        )
    return path


def _confine_observations(folder: Path, observations: Iterator[Any], source: Path) -> None:
    for observation in observations:
        confined(folder, observation.screenshot, source=source)
        if observation.hierarchy:
            confined(folder, observation.hierarchy, source=source)


def _load[T](path: Path, parse: Callable[..., T]) -> T:
    data = read_json(path)
    _check_schema(data, path)
    return parse(data, source=path)


# --------------------------------------------------------------------------- documents


def load_task(path: Path) -> Task:
    """Load ``task.json`` (or the task folder holding it)."""
    path = Path(path)
    return _load(path / TASK_FILE if path.is_dir() else path, Task.from_json)


def save_task(task: Task, folder: Path) -> Path:
    path = Path(folder) / TASK_FILE
    atomic_write_json(path, task.to_json())
    return path


def load_suite(folder: Path) -> Suite:
    return _load(Path(folder) / SUITE_FILE, Suite.from_json)


def save_suite(suite: Suite, folder: Path) -> Path:
    path = Path(folder) / SUITE_FILE
    atomic_write_json(path, suite.to_json())
    return path


def is_hidden(path: Path) -> bool:
    """A hidden folder (``.name``) is never a task or a demonstration: builds write their
    temporary ``.<task>.building`` and ``.<task>.old`` folders under such names."""
    return Path(path).name.startswith(".")


def suite_task_dirs(folder: Path) -> list[Path]:
    """Task folders of a suite, sorted by id (hidden and temporary folders are not)."""
    return sorted(p.parent for p in Path(folder).glob(f"*/{TASK_FILE}") if not is_hidden(p.parent))


LEFTOVER_SUFFIXES = (".building", ".old")


def leftovers(suite_dir: Path) -> list[Path]:
    """Temporary folders a killed build left in a suite (``.<task>.building``, ``.<task>.old``)."""
    folder = Path(suite_dir)
    if not folder.is_dir():
        return []
    return sorted(
        p
        for p in folder.iterdir()
        if p.is_dir() and is_hidden(p) and p.name.endswith(LEFTOVER_SUFFIXES)
    )


def leftover_task(folder: Path) -> str:
    """The task a leftover folder belongs to (``.font_bigger.building`` -> ``font_bigger``)."""
    name = Path(folder).name[1:]
    return name.rsplit(".", 1)[0]


def load_suite_tasks(folder: Path) -> list[Task]:
    return [load_task(d) for d in suite_task_dirs(folder)]


def load_graph(path: Path) -> TaskGraph:
    """Load ``graph.json`` (or the task folder holding it); node files must lie inside
    the task folder."""
    path = Path(path)
    file = path / GRAPH_FILE if path.is_dir() else path
    graph = _load(file, TaskGraph.from_json)
    _confine_observations(file.parent, iter(graph.nodes), file)
    return graph


def save_graph(graph: TaskGraph, folder: Path) -> Path:
    """Write graph.json atomically; node images are written by the builder beforehand."""
    path = Path(folder) / GRAPH_FILE
    atomic_write_json(path, graph.to_json())
    return path


def load_layout(task_dir: Path) -> GraphLayout | None:
    """``<task_dir>/layout.json``, or None when there is none (FormatError when unreadable)."""
    path = Path(task_dir) / LAYOUT_FILE
    if not path.exists():
        return None
    return _load(path, GraphLayout.from_json)


def save_layout(layout: GraphLayout, task_dir: Path) -> Path:
    """Write layout.json atomically (the caller holds the suite's lock)."""
    path = Path(task_dir) / LAYOUT_FILE
    atomic_write_json(path, layout.to_json())
    return path


def load_demo(folder: Path) -> Demonstration:
    """Load a demonstration; its step files must lie inside its folder."""
    file = Path(folder) / DEMO_FILE
    demo = _load(file, Demonstration.from_json)
    _confine_observations(file.parent, (step.observation for step in demo.steps), file)
    return demo


def save_demo(demo: Demonstration, folder: Path) -> Path:
    path = Path(folder) / DEMO_FILE
    atomic_write_json(path, demo.to_json())
    return path


def shipped_demos(suite_dir: Path, task_id: str | None = None) -> Path | None:
    """The demonstrations root a suite ships inside itself, or None when it ships none.

    With ``task_id``, only when it holds demonstrations of that task. Whoever needs
    demonstrations for a suite (the replay agent, the graph editor) uses these before
    the workspace's own.
    """
    root = Path(suite_dir) / SUITE_DEMOS_DIR
    wanted = root / task_id if task_id is not None else root
    return root if wanted.is_dir() else None


def demo_dirs(demos_root: Path, task_id: str | None = None) -> list[Path]:
    """Demonstration folders under ``demos_root`` (``<task>/<demo>/demo.json``), sorted."""
    if task_id is None:
        found = Path(demos_root).glob(f"*/*/{DEMO_FILE}")
        return sorted(
            p.parent for p in found if not is_hidden(p.parent) and not is_hidden(p.parent.parent)
        )
    # Glob inside the task's own folder: a pattern starting at the root lists the whole
    # root for every task, which made a 10,000-task evaluation quadratic.
    folder = Path(demos_root) / validate_id(task_id, "task id")
    return sorted(p.parent for p in folder.glob(f"*/{DEMO_FILE}") if not is_hidden(p.parent))


def read_png(path: Path) -> bytes:
    """The bytes of a PNG file, checked by signature, file size and claimed pixels before
    it is read whole; a FormatError naming the file otherwise."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            _check_png_size(size, path)
            data = fh.read(MAX_PNG_BYTES + 1)
    except FileNotFoundError:
        raise FormatError("screenshot not found", source=path) from None
    except OSError as exc:
        raise FormatError(f"cannot read screenshot: {exc.strerror}", source=path) from exc
    _check_png_size(len(data), path)  # the file grew while it was read
    if not data.startswith(PNG_MAGIC):
        raise FormatError("not a PNG file (bad signature)", source=path)
    _check_png_header(data[:24], path)
    return data


def _check_png_size(size: int, path: Path | None) -> None:
    if size > MAX_PNG_BYTES:
        raise FormatError(
            f"the PNG is {size:,} bytes (at most {MAX_PNG_BYTES:,}): not a phone screenshot; "
            "recapture the screen",
            source=path,
        )


def check_png_file(path: Path) -> tuple[int, int]:
    """Width and height of a PNG file, checked without decoding it: the signature, a sane
    size (no decompression bomb) and the end chunk (no truncation). FormatError otherwise."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            head = fh.read(24)
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - len(PNG_END)))
            tail = fh.read()
    except FileNotFoundError:
        raise FormatError("screenshot not found", source=path) from None
    except OSError as exc:
        raise FormatError(f"cannot read screenshot: {exc.strerror}", source=path) from exc
    return check_png_bytes(head, tail, path, size=size)


def check_png_bytes(
    head: bytes, tail: bytes, path: Path | None, *, size: int | None = None
) -> tuple[int, int]:
    """The checks of ``check_png_file`` on the first 24 and last 8 bytes of a PNG (and
    its size in bytes, when known)."""
    if size is not None:
        _check_png_size(size, path)
    if not head.startswith(PNG_MAGIC):
        raise FormatError("not a PNG file (bad signature)", source=path)
    width, height = _check_png_header(head, path)
    if tail != PNG_END:
        raise FormatError(
            "the PNG is cut short (no end chunk): the file was truncated; recapture the screen",
            source=path,
        )
    return width, height


def _check_png_header(head: bytes, path: Path | None) -> tuple[int, int]:
    if len(head) < 24 or head[12:16] != b"IHDR":
        raise FormatError("not a PNG file (no image header)", source=path)
    width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if not width or not height or width * height > MAX_PNG_PIXELS:
        raise FormatError(
            f"the PNG claims {width} x {height} pixels: not a screenshot (a decompression "
            "bomb?); recapture the screen",
            source=path,
        )
    return width, height


# --------------------------------------------------------------------------- recording


class DemoWriter:
    """Writes a demonstration step by step, so that a crash loses at most the current step.

    Each ``add_step`` writes the screenshot and hierarchy, then rewrites demo.json
    atomically. Until ``finish``, the demo's status is ``incomplete``.

    >>> from io import BytesIO
    >>> from PIL import Image
    >>> png = BytesIO()
    >>> Image.new("RGB", (108, 240), "white").save(png, "PNG")
    >>> tmp = tempfile.TemporaryDirectory()
    >>> task = Task("wifi_on", "turn on the wifi please")
    >>> writer = DemoWriter.create(Path(tmp.name), task, demo_id="d1")
    >>> step = writer.add_step(png.getvalue(), None, action=Action.done(),
    ...                        activity="pkg/.Main", screen=(108, 240), time=0.0)
    >>> load_demo(writer.folder).status  # on disk after every step, not yet complete
    <DemoStatus.INCOMPLETE: 'incomplete'>
    >>> writer.finish().status, load_demo(writer.folder).steps[0].observation.screenshot
    (<DemoStatus.COMPLETE: 'complete'>, 'steps/0000.png')
    >>> tmp.cleanup()
    """

    def __init__(self, folder: Path, demo: Demonstration) -> None:
        self.folder = Path(folder)
        self._demo = demo
        self._jump_at: int | None = None  # the index of the step saved as a jump

    def mark_jump(self) -> None:
        """The next step's screen was not reached by the last step's action (a resumed
        demo continued from another screen): that step is saved with ``jumped``."""
        self._jump_at = len(self._demo.steps) if self._demo.steps else None

    @property
    def jump_pending(self) -> bool:
        """The next step will be saved as a jump (``mark_jump`` since the last step)."""
        return self._jump_at is not None and self._jump_at == len(self._demo.steps)

    @classmethod
    def create(
        cls,
        demos_root: Path,
        task: Task,
        *,
        device: DeviceInfo | None = None,
        annotator: str = "",
        demo_id: str | None = None,
        source: str = "recorded",
        clock: Callable[[], float] = time.time,
    ) -> DemoWriter:
        """Start a new demo folder; never reuses an existing one."""
        task_dir = Path(demos_root) / validate_id(task.id, "task id")
        created = clock()
        if demo_id is None:
            stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(created))
            demo_id = stamp
            n = 2
            while (task_dir / demo_id).exists():
                demo_id = f"{stamp}-{n}"
                n += 1
        folder = task_dir / validate_id(demo_id, "demonstration id")
        try:
            (folder / STEPS_DIR).mkdir(parents=True, exist_ok=False)
        except FileExistsError:
            raise GraphBuilderError(
                f"{folder} already exists; choose another demonstration id"
            ) from None
        demo = Demonstration(
            id=demo_id,
            task_id=task.id,
            instruction=task.instruction,
            app=task.app,
            device=device,
            annotator=annotator,
            status=DemoStatus.INCOMPLETE,
            created=created,
            source=source,
        )
        save_demo(demo, folder)
        return cls(folder, demo)

    @classmethod
    def resume(cls, folder: Path) -> DemoWriter:
        """Continue an incomplete demonstration (after a crash or a disconnect)."""
        demo = load_demo(folder)
        if demo.status is not DemoStatus.INCOMPLETE:
            raise GraphBuilderError(
                f"{folder} is {demo.status.value}; only incomplete demos resume"
            )
        return cls(folder, demo)

    @property
    def demo(self) -> Demonstration:
        return self._demo

    def add_step(
        self,
        screenshot_png: bytes,
        hierarchy_xml: str | bytes | None,
        *,
        action: Action,
        activity: str | None,
        screen: tuple[int, int],
        time: float,
        phash: str | None = None,
        performed: bool = True,
    ) -> Step:
        """Write one step. ``performed=False`` saves it before its action is sent (the
        recorder); ``mark_performed`` records that the action returned. A step is added
        only after the previous action returned, so the previous step is marked too."""
        index = len(self._demo.steps)
        stem = f"{STEPS_DIR}/{index:04d}"
        # refused at capture: a screenshot that build and eval would refuse
        check_png_bytes(
            screenshot_png[:24],
            screenshot_png[-len(PNG_END) :],
            self.folder / f"{stem}.png",
            size=len(screenshot_png),
        )
        atomic_write_bytes(self.folder / f"{stem}.png", screenshot_png)
        xml_name = None
        if hierarchy_xml is not None:
            xml_name = f"{stem}.xml"
            data = (
                hierarchy_xml.encode("utf-8") if isinstance(hierarchy_xml, str) else hierarchy_xml
            )
            atomic_write_bytes(self.folder / xml_name, data)
        step = Step(
            index=index,
            observation=Observation(
                screenshot=f"{stem}.png",
                hierarchy=xml_name,
                activity=activity,
                time=time,
                screen=screen,
                phash=phash,
            ),
            action=action,
            performed=performed,
            jumped=index == self._jump_at,
        )
        earlier = self._demo.steps
        if earlier and not earlier[-1].performed:
            earlier = (*earlier[:-1], replace(earlier[-1], performed=True))
        self._commit(replace(self._demo, steps=(*earlier, step)))
        return step

    def mark_performed(self) -> Step:
        """Record that the last step's action returned from the phone."""
        if not self._demo.steps:
            raise GraphBuilderError("the demonstration has no steps to mark")
        last = self._demo.steps[-1]
        if not last.performed:
            last = replace(last, performed=True)
            self._commit(replace(self._demo, steps=(*self._demo.steps[:-1], last)))
        return last

    def drop_last_step(self) -> Step:
        """Remove the trailing step (its files stay until overwritten by the next step)."""
        if not self._demo.steps:
            raise GraphBuilderError("the demonstration has no steps to delete")
        last = self._demo.steps[-1]
        self._commit(replace(self._demo, steps=self._demo.steps[:-1]))
        return last

    def finish(self, status: DemoStatus = DemoStatus.COMPLETE) -> Demonstration:
        if status is DemoStatus.COMPLETE and not self._demo.is_finished:
            raise GraphBuilderError("a complete demonstration must end with a 'done' step")
        self._commit(replace(self._demo, status=status))
        return self._demo

    def _commit(self, demo: Demonstration) -> None:
        save_demo(demo, self.folder)
        self._demo = demo


def set_demo_status(folder: Path, status: DemoStatus) -> Demonstration:
    """Discard or restore a demonstration without touching its steps."""
    demo = load_demo(folder)
    updated = replace(demo, status=status)
    save_demo(updated, folder)
    return updated


def iter_demos(
    demos_root: Path, task_id: str | None = None
) -> Iterator[tuple[Path, Demonstration]]:
    """(folder, demo) for every demonstration; raises on the first unreadable one."""
    for folder in demo_dirs(demos_root, task_id):
        yield folder, load_demo(folder)
