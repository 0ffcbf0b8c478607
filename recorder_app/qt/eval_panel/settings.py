"""The evaluation panel's settings, saved per workspace in ``.studio/eval_settings.json``.

No Qt here. API keys are never stored: an agent names the environment variable that holds
its key (``api_key_env``), and extra settings that look like secrets are refused.

>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> settings = load_settings(Path(tmp.name))  # the defaults when nothing is saved yet
>>> settings.agent
'replay'
>>> save_settings(Path(tmp.name), replace(settings, agent="random")).name
'eval_settings.json'
>>> load_settings(Path(tmp.name)).agent
'random'
>>> tmp.cleanup()
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from evaluator.errors import EvaluatorError
from evaluator.run_store import RUN_FILE, RunStore, redact
from evaluator.runner import load_jobs, resume_config
from evaluator.secrets import Secrets
from graph_builder.errors import GraphBuilderError
from graph_builder.io import SUITE_FILE, atomic_write_json, is_hidden, read_json, suite_task_dirs
from recorder_app.errors import SettingsError

SETTINGS_FILE = Path(".studio") / "eval_settings.json"
SETTINGS_SCHEMA_VERSION = 1
# The shipped suite is package data of task_graphs, installed as plain files (never zipped).
SAMPLE_SUITE = Path(str(resources.files("task_graphs").joinpath("sample")))


def json_object(text: str, what: str, example: str) -> dict[str, Any]:
    """A JSON object typed into the form ({} when blank); secrets are refused."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{what} are not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{what} must be a JSON object, e.g. {example}")
    if redact(data) != data:
        raise SettingsError(
            f"{what} hold a secret; put the key in an environment variable and give the "
            'variable\'s name instead ("api_key_env")'
        )
    return data


def scrub(text: str) -> str:
    """The typed JSON with secret values replaced by ``***``, so none reaches the disk."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    masked = Secrets.of(data).scrub_json(redact(data))  # keys and flags (--api-key X)
    return json.dumps(masked) if masked != data else text


def judge_config(text: str) -> dict[str, dict[str, Any]]:
    """Per-judge settings, e.g. ``{"vlm": {"base_url": ..., "model": ...}}``."""
    data = json_object(
        text, "the judge settings", '{"vlm": {"base_url": "http://...", "model": "m"}}'
    )
    for name, settings in data.items():
        if not isinstance(settings, dict):
            raise SettingsError(f"the settings of judge {name!r} must be a JSON object")
    return data


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """What the form edits for one agent. ``extra`` is a JSON object of further settings."""

    endpoint: str = ""
    model: str = ""
    api_key_env: str = ""
    prompt: str = ""
    extra: str = ""
    family: str = ""  # a model family of evaluator.agents.families ("": the agent's default)

    def to_json(self) -> dict[str, str]:
        return {
            "endpoint": self.endpoint,
            "model": self.model,
            "api_key_env": self.api_key_env,
            "prompt": self.prompt,
            "extra": scrub(self.extra),
            "family": self.family,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgentSettings:
        return cls(**{k: str(data.get(k, "")) for k in cls.__dataclass_fields__})

    def agent_config(self) -> dict[str, Any]:
        """The agent's config dict (as ``create_agent`` takes it); blank fields are left out."""
        config = json_object(self.extra, "the extra agent settings", '{"seed": 3}')
        for key, value in (
            ("base_url", self.endpoint),
            ("model", self.model),
            ("api_key_env", self.api_key_env),
            ("prompt", self.prompt),
            ("family", self.family),
        ):
            if value.strip():
                config[key] = value.strip()
        return config


@dataclass(frozen=True, slots=True)
class EvalSettings:
    """Everything the run form remembers. Empty strings mean "not chosen" (``out``: a new
    folder per run; ``run_protocol``: each task's own; filters: any)."""

    suite: str = ""
    label_filter: str = ""  # "dimension=value"
    app_filter: str = ""
    protocol_filter: str = ""
    agent: str = "replay"
    agents: Mapping[str, AgentSettings] = field(default_factory=dict)
    demos: str = ""
    run_protocol: str = ""
    variant: str = "original"
    mode: str = "strict"
    workers: int = 1
    devices: tuple[str, ...] = ()
    judges: tuple[str, ...] = ("rule",)
    judge_config: str = ""
    judge_file: str = ""  # judge settings in a file, as --judge-config FILE
    matching: str = "elderbench"
    executor: str = "local"  # a name of evaluator.farm.executors.EXECUTORS
    ray_address: str = ""  # an existing Ray cluster ("": a local one)
    trials: int = 1
    user_simulator: str = ""  # the simulated user's endpoint file ("": scripted replies)
    out: str = ""
    custom_categories: tuple[str, ...] = ()

    def agent_settings(self, agent: str | None = None) -> AgentSettings:
        return self.agents.get(agent or self.agent, AgentSettings())

    def with_agent_settings(self, agent: str, settings: AgentSettings) -> EvalSettings:
        return replace(self, agents={**self.agents, agent: settings})

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SETTINGS_SCHEMA_VERSION,
            "suite": self.suite,
            "label_filter": self.label_filter,
            "app_filter": self.app_filter,
            "protocol_filter": self.protocol_filter,
            "agent": self.agent,
            "agents": {k: v.to_json() for k, v in sorted(self.agents.items())},
            "demos": self.demos,
            "run_protocol": self.run_protocol,
            "variant": self.variant,
            "mode": self.mode,
            "workers": self.workers,
            "devices": list(self.devices),
            "judges": list(self.judges),
            "judge_config": scrub(self.judge_config),
            "judge_file": self.judge_file,
            "matching": self.matching,
            "executor": self.executor,
            "ray_address": self.ray_address,
            "trials": self.trials,
            "user_simulator": self.user_simulator,
            "out": self.out,
            "custom_categories": list(self.custom_categories),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EvalSettings:
        defaults = cls()
        text = {
            k: str(data.get(k, getattr(defaults, k)))
            for k in (
                "suite",
                "label_filter",
                "app_filter",
                "protocol_filter",
                "agent",
                "demos",
                "run_protocol",
                "variant",
                "mode",
                "judge_config",
                "judge_file",
                "matching",
                "executor",
                "ray_address",
                "user_simulator",
                "out",
            )
        }
        agents = data.get("agents")
        return cls(
            **text,
            agents={
                str(k): AgentSettings.from_json(v)
                for k, v in (agents.items() if isinstance(agents, dict) else ())
                if isinstance(v, dict)
            },
            workers=_count(data.get("workers", 1)),
            trials=_count(data.get("trials", 1)),
            devices=tuple(str(d) for d in data.get("devices") or ()),
            judges=tuple(str(j) for j in data.get("judges") or ("rule",)),
            custom_categories=tuple(str(c) for c in data.get("custom_categories") or ()),
        )


def _count(value: object) -> int:
    """A remembered count of at least 1 (1 when it is not a number)."""
    try:
        return max(1, int(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 1


def load_settings(workspace_root: Path) -> EvalSettings:
    """The saved settings; defaults when there are none or the file is unreadable."""
    path = Path(workspace_root) / SETTINGS_FILE
    if not path.is_file():
        return EvalSettings()
    try:
        data = read_json(path)
    except GraphBuilderError:
        return EvalSettings()
    return EvalSettings.from_json(data) if isinstance(data, dict) else EvalSettings()


def save_settings(workspace_root: Path, settings: EvalSettings) -> Path:
    path = Path(workspace_root) / SETTINGS_FILE
    data = settings.to_json()
    atomic_write_json(path, Secrets.of(data).scrub_json(data))
    return path


def new_run_folder(
    runs_dir: Path, agent: str, variant: str = "original", now: float | None = None
) -> Path:
    """``<runs>/<timestamp>-<agent>-<instruction variant>``, with a suffix when it exists.

    The variant is in the name because original and normalized runs are made in pairs and
    compared, and a list of folders must tell them apart.
    """
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() if now is None else now))
    base = Path(runs_dir) / f"{stamp}-{agent}-{variant}"
    candidate, n = base, 2
    while candidate.exists():
        candidate = base.with_name(f"{base.name}-{n}")
        n += 1
    return candidate


def suite_choices(suites_dir: Path | None) -> list[Path]:
    """Suites to offer: the workspace's (those with tasks first), then the shipped sample."""
    found: list[Path] = []
    if suites_dir is not None and suites_dir.is_dir():
        listed = suites_dir.glob(f"*/{SUITE_FILE}")
        suites = sorted(p.parent for p in listed if not is_hidden(p.parent))
        found = sorted(suites, key=lambda p: not suite_task_dirs(p))
    if (SAMPLE_SUITE / SUITE_FILE).is_file() or any(SAMPLE_SUITE.glob("*/task.json")):
        # Offered as installed: a run of a packed suite reads a complete copy of it
        # (evaluator.runner.readable_suite), so listing it writes nothing.
        found.append(SAMPLE_SUITE)
    return found


def run_folders(runs_dir: Path | None) -> list[Path]:
    """Run folders under ``runs_dir`` (those with run.json), newest first."""
    if runs_dir is None or not runs_dir.is_dir():
        return []
    runs = [p.parent for p in runs_dir.glob(f"*/{RUN_FILE}")]
    return sorted(runs, key=lambda p: (p / RUN_FILE).stat().st_mtime, reverse=True)


@dataclass(frozen=True, slots=True)
class StoppedRun:
    """A run folder with selected tasks that have no result yet (``Resume run…`` offers it)."""

    folder: Path
    finished: int
    total: int


def stopped_runs(runs_dir: Path | None, limit: int = 30) -> list[StoppedRun]:
    """The newest runs under ``runs_dir`` that a resume would continue, newest first.

    A run whose configuration or suite can no longer be read is left out: resuming it
    would fail the same way.
    """
    found: list[StoppedRun] = []
    for folder in run_folders(runs_dir)[:limit]:
        try:
            jobs = load_jobs(resume_config(folder))
            finished = RunStore.open(folder).finished_ids()
        except (EvaluatorError, GraphBuilderError, OSError):
            continue
        done = sum(1 for job in jobs if job.task_id in finished)
        if done < len(jobs):
            found.append(StoppedRun(folder, done, len(jobs)))
    return found
