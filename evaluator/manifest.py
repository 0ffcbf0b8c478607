"""``manifest.json``: what pins a run, so that ``elderbench verify`` can say what changed.

The manifest records the tool (version, git commit when the code is a checkout), Python and
key package versions, the suite's content hash with every task's hash and file hashes, the
full text and hash of every prompt template the run's agent and judges use, models, masked
endpoints, sampling parameters, seeds, each device's fingerprint (model, Android version,
screen size and the version of every package the tasks use) and times. The run writes it
under its lock when it starts and again when it ends; a resume keeps what was recorded
before and reports a suite whose hash changed. Every string passes the run's secret
masking before it is written.

Content hashes (``sha256:<hex>``) are of bytes, independent of the order files are listed
in: a task's hash is the SHA-256 of its sorted lines ``<path>\\t<file hash>\\n`` over
``task.json``, ``graph.json`` and every file under ``nodes/`` (paths relative to the task
folder, with ``/``); the suite's hash is the same over ``suite.json`` and one line
``<task folder>\\t<task hash>`` per task folder.

>>> from importlib.resources import files
>>> suite_hash(files("task_graphs") / "sample").startswith("sha256:")
True
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from elderbench import __version__
from evaluator.errors import EvaluatorError
from evaluator.secrets import MASK, Secrets, redact
from graph_builder.errors import GraphBuilderError
from graph_builder.io import atomic_write_json, load_task, read_json, suite_task_dirs

MANIFEST_FILE = "manifest.json"
MANIFEST_SCHEMA_VERSION = 1
DEVICE_FILE = "device.json"  # a device's fingerprint, in the trace of its first task
SUITE_FILE = "suite.json"
# The distributions whose versions can change a number or a screen.
KEY_PACKAGES = ("numpy", "pillow", "adbutils", "lxml", "networkx", "rapidfuzz", "scipy", "ray")
SAMPLING_KEYS = (
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "frequency_penalty",
    "presence_penalty",
    "repetition_penalty",
    "n",
)
GIT_TIMEOUT_S = 5.0


class ManifestError(EvaluatorError):
    """A manifest that cannot be read."""


# --------------------------------------------------------------------------- content hashes


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _combined(entries: Mapping[str, str]) -> str:
    return _sha256("".join(f"{k}\t{v}\n" for k, v in sorted(entries.items())).encode("utf-8"))


def text_hash(text: str) -> str:
    """The hash of a prompt template's text (UTF-8)."""
    return _sha256(text.encode("utf-8"))


def task_file_hashes(task_dir: Path) -> dict[str, str]:
    """``task.json``, ``graph.json`` and node files of a task folder, each with its hash."""
    task_dir = Path(task_dir)
    files = [task_dir / "task.json", task_dir / "graph.json"]
    nodes = task_dir / "nodes"
    if nodes.is_dir():
        files.extend(p for p in nodes.rglob("*") if p.is_file())
    return {
        p.relative_to(task_dir).as_posix(): _sha256(p.read_bytes()) for p in files if p.is_file()
    }


def task_hash(task_dir: Path) -> str:
    """A task's content hash (see the module's documentation)."""
    return _combined(task_file_hashes(task_dir))


def suite_file_hashes(suite: Path) -> dict[str, dict[str, str]]:
    """Per task folder name, its file hashes (``task_file_hashes``)."""
    return {d.name: task_file_hashes(d) for d in suite_task_dirs(Path(suite))}


def suite_hash(suite: Path, files: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """A suite's content hash: ``suite.json`` and every task's hash, in no particular order.
    ``files`` is ``suite_file_hashes(suite)`` when the caller has it."""
    suite = Path(suite)
    files = suite_file_hashes(suite) if files is None else files
    entries = {name: _combined(hashes) for name, hashes in files.items()}
    if (suite / SUITE_FILE).is_file():
        entries[SUITE_FILE] = _sha256((suite / SUITE_FILE).read_bytes())
    return _combined(entries)


def suite_record(suite: Path) -> dict[str, Any]:
    """The suite part of a manifest: its hash, suite.json's hash, and per task its hash
    and file hashes."""
    suite = Path(suite)
    files = suite_file_hashes(suite)
    json_file = suite / SUITE_FILE
    return {
        "path": str(suite.resolve()),
        "hash": suite_hash(suite, files),
        "suite_json": _sha256(json_file.read_bytes()) if json_file.is_file() else None,
        "tasks": {name: {"hash": _combined(h), "files": h} for name, h in files.items()},
    }


def suite_packages(suite: Path) -> list[str]:
    """Every app package the suite's tasks use (their app and reset package)."""
    found: set[str] = set()
    for task_dir in suite_task_dirs(Path(suite)):
        try:
            task = load_task(task_dir)
        except GraphBuilderError:
            continue  # reported as the task's error by the run
        found.update(p for p in (task.app, task.reset.package if task.reset else None) if p)
    return sorted(found)


def device_fingerprint(device: Any, packages: list[str]) -> dict[str, Any]:
    """Model, Android version, screen size and density of a Device, and the version of
    each package in ``packages`` (`dumpsys package`; None: not installed)."""
    versions = device.package_versions(packages)
    return {
        **device.info().to_json(),
        "packages": {p: v.to_json() if v is not None else None for p, v in versions.items()},
        "time": time.time(),
    }


# --------------------------------------------------------------------------- the environment


def tool_commit() -> dict[str, Any]:
    """The git commit of the running code and whether it had changes; nulls when the code
    is not a checkout or git is missing or slow."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
        )
        if head.returncode != 0:
            return {"commit": None, "dirty": None}
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
    return {"commit": head.stdout.strip() or None, "dirty": dirty}


def package_versions(names: Iterable[str] = KEY_PACKAGES) -> dict[str, str | None]:
    """Installed versions (None: not installed)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def masked_endpoint(url: str, secrets: Secrets) -> str:
    """``url`` without a password or query values, and with the run's secrets masked."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    if parts.username:
        netloc = f"{MASK}@{netloc}"
    query = "&".join(
        f"{name}={MASK}" for name, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    )
    return secrets.scrub(urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, "")))


def _templates(owner: str, obj: Any) -> dict[str, dict[str, str]]:
    """Every prompt template an agent or judge holds (attributes named ``*template``)."""
    out = {}
    for name in sorted(dir(obj)):
        if name.endswith("template") and not name.startswith("_"):
            text = getattr(obj, name, None)
            if isinstance(text, str):
                out[f"{owner}.{name}"] = {"hash": text_hash(text), "text": text}
    return out


def _sampling(describe: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    endpoint = describe.get("endpoint") or {}
    found = {k: endpoint[k] for k in SAMPLING_KEYS if endpoint.get(k) is not None}
    found.update({k: config[k] for k in SAMPLING_KEYS if config.get(k) is not None})
    return found


def models_and_prompts(agent: Any, judges: Mapping[str, Any], user: Any = None) -> dict[str, Any]:
    """Models, endpoints, sampling, seeds and prompt templates of an agent, its judges and
    a simulated user (endpoints not yet masked: ``build_manifest`` masks them)."""
    describe = agent.describe()
    config = describe.get("config") or {}
    prompts = _templates("agent", agent)
    models: dict[str, Any] = {"agent": describe.get("model")}
    endpoints: dict[str, Any] = {}
    sampling: dict[str, Any] = {"agent": _sampling(describe, config)}
    seeds: dict[str, Any] = {}
    if (describe.get("endpoint") or {}).get("base_url"):
        endpoints["agent"] = describe["endpoint"]["base_url"]
    if config.get("seed") is not None:
        seeds["agent"] = config["seed"]
    for name, judge in judges.items():
        prompts.update(_templates(f"judge:{name}", judge))
        models[f"judge:{name}"] = getattr(judge, "model", None)
        endpoint = getattr(judge, "endpoint", None)
        if endpoint is not None:
            endpoints[f"judge:{name}"] = endpoint.base_url
            sampling[f"judge:{name}"] = _sampling({"endpoint": endpoint.describe()}, {})
    if user is not None and getattr(user, "model", None) is not None:
        prompts.update(_templates("user", user))
        models["user"] = user.model
        endpoints["user"] = user.endpoint.base_url
        sampling["user"] = _sampling({"endpoint": user.endpoint.describe()}, {})
    return {
        "models": models,
        "endpoints": endpoints,
        "sampling": sampling,
        "seeds": seeds,
        "prompts": prompts,
    }


def build_manifest(
    suite: Path,
    suite_name: str,
    setup: Mapping[str, Any],
    secrets: Secrets,
    *,
    started: float,
) -> dict[str, Any]:
    """A new manifest (no devices yet: the run adds each as it first uses it)."""
    endpoints = {k: masked_endpoint(str(v), secrets) for k, v in setup["endpoints"].items()}
    data = {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "tool": {"name": "elderbench", "version": __version__, **tool_commit()},
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
            "platform": platform.platform(),
        },
        "packages": package_versions(),
        "suite": {"name": suite_name, **suite_record(suite)},
        **setup,
        "sampling": redact(setup["sampling"]),
        "endpoints": endpoints,
        "devices": [],
        "times": {"started": started, "updated": time.time(), "resumed": []},
        "suite_changes": [],
    }
    return secrets.scrub_json(data)


# --------------------------------------------------------------------------- on disk


def read_manifest(run_dir: Path) -> dict[str, Any] | None:
    """The run's manifest (None: the run has none, e.g. made by an older version)."""
    path = Path(run_dir) / MANIFEST_FILE
    if not path.exists():
        return None
    try:
        data = read_json(path)
    except GraphBuilderError as exc:
        raise ManifestError(str(exc)) from exc
    if not isinstance(data, dict) or data.get("schema_version") != MANIFEST_SCHEMA_VERSION:
        raise ManifestError(
            f"{path} is not a manifest of schema version {MANIFEST_SCHEMA_VERSION}; "
            "it was written by another version of elderbench"
        )
    return data


def write_manifest(run_dir: Path, fresh: dict[str, Any], secrets: Secrets) -> str | None:
    """Write the manifest of a run that starts or resumes (call it under the run's lock).

    On a resume, what was recorded before (start time, devices) is kept, the resume time
    is added and a changed suite hash is recorded in ``suite_changes``. Returns a sentence
    saying how the suite changed, or None."""
    previous = read_manifest(run_dir)
    change = None
    data = dict(fresh)
    if previous is not None:
        before, now = previous.get("suite", {}).get("hash"), fresh["suite"]["hash"]
        changes = list(previous.get("suite_changes", []))
        if before != now:
            files = [
                f"{name} {how}" for name, how in changed_files(previous["suite"], fresh["suite"])
            ]
            change = (
                f"the suite changed since this run began ({before} -> {now}): "
                + (", ".join(files[:10]) or "its task folders")
                + (f" and {len(files) - 10} more" if len(files) > 10 else "")
            )
            changes.append({"time": time.time(), "from": before, "to": now, "files": files})
        times = dict(previous.get("times", {}))
        data["times"] = {
            **times,
            "updated": time.time(),
            "resumed": [*times.get("resumed", []), time.time()],
        }
        data["devices"] = previous.get("devices", [])
        data["suite_changes"] = changes
    atomic_write_json(Path(run_dir) / MANIFEST_FILE, secrets.scrub_json(data))
    return change


def add_devices(run_dir: Path, traces: Path, secrets: Secrets) -> None:
    """Record in the manifest the fingerprint of every device the run's traces name
    (``traces/<task>/device.json``); a device seen again keeps its latest fingerprint."""
    data = read_manifest(run_dir)
    if data is None:
        return
    by_serial = {d.get("serial"): d for d in data.get("devices", [])}
    for path in sorted(Path(traces).glob(f"*/{DEVICE_FILE}")):
        try:
            found = read_json(path)
        except GraphBuilderError:
            continue  # a trace torn by a crash: the device is recorded by another task
        if isinstance(found, dict) and found.get("serial"):
            by_serial[found["serial"]] = found
    data["devices"] = [by_serial[s] for s in sorted(by_serial, key=str)]
    data["times"] = {**data.get("times", {}), "updated": time.time()}
    atomic_write_json(Path(run_dir) / MANIFEST_FILE, secrets.scrub_json(data))


def changed_files(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Suite files (``task/path``, relative to the suite) ``added``, ``removed`` or
    ``changed`` between two suite records (``suite_record``)."""
    out = []
    if before.get("suite_json") != now.get("suite_json"):
        out.append((SUITE_FILE, "changed"))
    old, new = before.get("tasks", {}), now.get("tasks", {})
    for task in sorted(set(old) | set(new)):
        a, b = old.get(task, {}).get("files", {}), new.get(task, {}).get("files", {})
        for name in sorted(set(a) | set(b)):
            if name not in b:
                out.append((f"{task}/{name}", "removed"))
            elif name not in a:
                out.append((f"{task}/{name}", "added"))
            elif a[name] != b[name]:
                out.append((f"{task}/{name}", "changed"))
    return out


def short_hash(digest: str) -> str:
    """The first 12 hex digits of a ``sha256:...`` digest, as tables and reports show it."""
    return digest.removeprefix("sha256:")[:12]


def essentials_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """What pins the run, in short: tool version and commit, suite and its hash, model ids,
    prompt template hashes, seeds and each device's fingerprint (app versions included)."""
    tool = data.get("tool", {})
    suite = data.get("suite", {})
    prompts = data.get("prompts", {})
    return {
        "tool_version": tool.get("version"),
        "tool_commit": tool.get("commit"),
        "tool_dirty": tool.get("dirty"),
        "python": data.get("python", {}).get("version"),
        "suite": suite.get("name"),
        "suite_hash": suite.get("hash"),
        "models": {k: v for k, v in data.get("models", {}).items() if v},
        "prompts": {k: v.get("hash") for k, v in prompts.items() if isinstance(v, Mapping)},
        "seeds": dict(data.get("seeds", {})),
        "devices": [
            {
                "serial": d.get("serial"),
                "model": d.get("model"),
                "android_version": d.get("android_version"),
                "size": f"{d.get('width')}x{d.get('height')}",
                "packages": {
                    p: f"{v['version_name']} ({v['version_code']})" if v else None
                    for p, v in d.get("packages", {}).items()
                },
            }
            for d in data.get("devices", [])
        ],
    }


def essentials(data: Mapping[str, Any]) -> list[str]:
    """A few lines saying what pins the run: tool, suite hash, models, prompts, seeds,
    devices."""
    return essentials_lines(essentials_json(data))


def essentials_lines(e: Mapping[str, Any], *, short: bool = False) -> list[str]:
    """``essentials_json`` as lines of text; ``short``: the suite hash in 12 digits."""
    commit = e["tool_commit"]
    changes = ", with local changes" if e["tool_dirty"] else ""
    commit_text = f" ({commit[:12]}{changes})" if isinstance(commit, str) else " (no git commit)"
    lines = [
        f"elderbench {e['tool_version']}{commit_text}, Python {e['python']}",
        f"suite {e['suite']}: "
        + (short_hash(str(e["suite_hash"])) if short and e["suite_hash"] else str(e["suite_hash"])),
    ]
    if e["models"]:
        lines.append("models: " + ", ".join(f"{k} {v}" for k, v in e["models"].items()))
    if e["prompts"]:
        lines.append(
            "prompt templates: "
            + ", ".join(f"{k} {short_hash(str(v))}" for k, v in e["prompts"].items())
        )
    if e["seeds"]:
        lines.append("seeds: " + ", ".join(f"{k} {v}" for k, v in e["seeds"].items()))
    for device in e["devices"]:
        apps = ", ".join(
            f"{p} {v}" if v else f"{p} not installed" for p, v in device["packages"].items()
        )
        lines.append(
            f"device {device['serial']}: {device['model']}, Android "
            f"{device['android_version']}, {device['size']}" + (f"; {apps}" if apps else "")
        )
    return lines
