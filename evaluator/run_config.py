"""A run's configuration (``RunConfig``), as run.json records it and a resume checks it.

``FIELDS`` is the one table of RunConfig's fields: how each is written to run.json and
read back, the ``elderbench eval`` option that sets it, and the studio setting
(``EvalSettings``) that remembers it. A field added to RunConfig without a row fails
tests/evaluator/test_run_config.py, so that it can no longer vanish from run.json or
from the resume check.

>>> config = RunConfig(suite=Path("suite"), out=Path("run"), agent="replay", workers=2)
>>> again = RunConfig.from_json(config.to_json(), resume=True)
>>> again.workers, again.resume, resume_changes(config.to_json(), again)
(2, True, [])
>>> resume_changes(config.to_json(), RunConfig(suite=Path("suite"), out=Path("run"),
...                                            agent="replay", max_steps=5))
['--max-steps null -> 5']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from devices.errors import DeviceError
from devices.hierarchy import DEFAULT_HIERARCHY, check_hierarchy
from evaluator.errors import ConfigError
from evaluator.farm.pool import FarmSettings
from evaluator.matching import PROFILES
from evaluator.offline import Mode
from evaluator.run_store import RunStore
from evaluator.secrets import Secrets, redact
from evaluator.users import create_user
from graph_builder.io import shipped_demos
from graph_builder.model import EvalProtocol, InstructionVariant


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything a run needs. ``protocol`` None runs each task under its own protocol;
    a protocol selects the tasks declared with it (or, with ``tasks``, forces it)."""

    suite: Path
    out: Path
    agent: str
    agent_config: Mapping[str, Any] = field(default_factory=dict)
    protocol: EvalProtocol | None = None
    tasks: tuple[str, ...] = ()
    variant: InstructionVariant = InstructionVariant.ORIGINAL
    demos: Path | None = None
    mode: Mode = Mode.STRICT
    max_steps: int | None = None
    devices: tuple[str, ...] = ()
    workers: int = 1
    judges: tuple[str, ...] = ("rule",)
    judge_config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    resume: bool = False
    settle_timeout: float = 3.0
    judge_frames: int = 3
    matching: str = "elderbench"  # a profile of evaluator.matching.PROFILES
    farm: FarmSettings = field(default_factory=FarmSettings)
    max_wait: float = 10.0  # seconds a wait action may sleep online
    record_screen: bool = False  # online: a screenrecord MP4 of each episode beside its trace
    hierarchy: str = DEFAULT_HIERARCHY  # how online phones dump their view hierarchy
    # the endpoint of a simulated user who answers ask_user (evaluator.users); empty: the
    # tasks' scripted clarifications answer
    user_simulator: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "suite", Path(self.suite))
        if self.demos is None:
            # A suite that ships its demonstrations (like task_graphs/sample) needs no --demos.
            object.__setattr__(self, "demos", shipped_demos(self.suite))
        object.__setattr__(self, "out", Path(self.out))
        object.__setattr__(self, "variant", InstructionVariant(self.variant))
        object.__setattr__(self, "mode", Mode(self.mode))
        if self.protocol is not None:
            object.__setattr__(self, "protocol", EvalProtocol(self.protocol))
        object.__setattr__(self, "tasks", tuple(self.tasks))
        object.__setattr__(self, "devices", tuple(self.devices))
        object.__setattr__(self, "judges", tuple(self.judges))
        if self.workers < 1:
            raise ConfigError("workers must be at least 1")
        if self.matching not in PROFILES:
            raise ConfigError(
                f"unknown matching profile {self.matching!r}; choose from: {', '.join(PROFILES)}"
            )
        if self.max_steps is not None and self.max_steps < 1:
            raise ConfigError(f"max_steps must be at least 1, got {self.max_steps}")
        if not self.max_wait >= 0:
            raise ConfigError(f"max_wait must be a number of seconds >= 0, got {self.max_wait}")
        try:
            object.__setattr__(self, "hierarchy", check_hierarchy(self.hierarchy))
        except DeviceError as exc:
            raise ConfigError(str(exc)) from exc
        if self.user_simulator:
            try:
                create_user(self.user_simulator)
            except ConfigError as exc:
                raise ConfigError(f"--user-simulator: {exc}") from exc

    def agent_settings(self) -> dict[str, Any]:
        settings = dict(self.agent_config)
        if self.demos is not None:
            settings.setdefault("demos", str(self.demos))
        return settings

    def secrets(self) -> Secrets:
        """The secret values this run knows (scrubbed from everything it writes)."""
        return Secrets.of(
            self.agent_config, self.judge_config, self.user_simulator, self.farm.to_json()
        )

    def to_json(self) -> dict[str, Any]:
        """What run.json records (the fields of ``FIELDS``); ``agent_config`` includes the
        demos, as an absolute path like every other path."""
        out = {name: spec.write(getattr(self, name)) for name, spec in FIELDS.items()}
        settings = self.agent_settings()
        if self.demos is not None and settings.get("demos") == str(self.demos):
            settings["demos"] = str(self.demos.resolve())
        out["agent_config"] = settings
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], **overrides: Any) -> RunConfig:
        """A config from ``to_json``'s output. A field that is missing or null takes the
        dataclass default; ``overrides`` win over ``data``. KeyError: a required field is
        missing."""
        values: dict[str, Any] = dict(overrides)
        for f in fields(cls):
            if f.name in values or f.name not in FIELDS:
                continue
            raw = data.get(f.name)
            if raw is not None:
                values[f.name] = FIELDS[f.name].read(raw)
            elif f.default is MISSING and f.default_factory is MISSING:
                raise KeyError(f.name)
        return cls(**values)


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One RunConfig field: how run.json writes and reads it, the ``elderbench eval``
    options that set it, and the ``EvalSettings`` attributes the studio keeps it in (none:
    the studio's run form does not offer it, and the field takes its default there)."""

    write: Callable[[Any], Any]
    read: Callable[[Any], Any]
    options: tuple[str, ...] = ()
    studio: tuple[str, ...] = ()

    def name(self, field_name: str) -> str:
        """How a refusal names the field: its one option, else the field itself."""
        return self.options[0] if len(self.options) == 1 else field_name


def _same(value: Any) -> Any:
    return value


def _value(member: Any) -> Any:
    return member.value if member is not None else None


def _path(path: Path) -> str:
    return str(path.resolve())


# The defaults are the dataclass's own, stated once above.
FIELDS: dict[str, FieldSpec] = {
    "suite": FieldSpec(_path, Path, ("--suite",), ("suite",)),
    "out": FieldSpec(_path, Path, ("--out",), ("out",)),
    "agent": FieldSpec(_same, str, ("--agent",), ("agent",)),
    # written by to_json as agent_settings(); the studio keeps it per agent
    "agent_config": FieldSpec(dict, dict, ("--agent-config",), ("agents",)),
    "protocol": FieldSpec(_value, _same, ("--protocol",), ("run_protocol",)),
    # the studio picks tasks by its filters
    "tasks": FieldSpec(
        list, tuple, ("--tasks",), ("label_filter", "app_filter", "protocol_filter")
    ),
    "variant": FieldSpec(_value, _same, ("--instruction",), ("variant",)),
    "demos": FieldSpec(
        lambda path: str(path.resolve()) if path else None,
        lambda raw: Path(raw) if raw else None,
        ("--demos",),
        ("demos",),
    ),
    "mode": FieldSpec(_value, _same, ("--mode",), ("mode",)),
    "max_steps": FieldSpec(_same, _same, ("--max-steps",)),
    "devices": FieldSpec(list, tuple, ("--device",), ("devices",)),
    "workers": FieldSpec(_same, int, ("--workers",), ("workers",)),
    "judges": FieldSpec(list, tuple, ("--judge",), ("judges",)),
    "judge_config": FieldSpec(
        lambda configs: {k: dict(v) for k, v in configs.items()},
        dict,
        ("--judge-config",),
        ("judge_config", "judge_file"),
    ),
    "settle_timeout": FieldSpec(_same, float),
    "judge_frames": FieldSpec(_same, int),
    "matching": FieldSpec(_same, str, ("--matching",), ("matching",)),
    "farm": FieldSpec(
        lambda farm: farm.to_json(),
        FarmSettings.from_json,
        ("--executor", "--ray-address", "--task-retries", "--device-restart", "--quarantine-after"),
        ("executor", "ray_address"),
    ),
    "max_wait": FieldSpec(_same, float, ("--max-wait",)),
    "record_screen": FieldSpec(_same, bool, ("--record-screen",)),
    # the studio takes it from its device connection (the Record tab's setting)
    "hierarchy": FieldSpec(_same, str, ("--hierarchy",)),
    "user_simulator": FieldSpec(dict, dict, ("--user-simulator",), ("user_simulator",)),
}
# RunConfig fields that are requests to this session, not part of the run's record.
NOT_RECORDED = frozenset({"resume"})


def resume_config(run_dir: Path) -> RunConfig:
    """The configuration recorded in ``run_dir``'s run.json, set to resume that run there
    (what a GUI needs to continue a run it did not start). Keys redacted in run.json stay
    redacted: agents read keys from environment variables, never from the config."""
    data = RunStore.open(run_dir).info().get("config")
    if not isinstance(data, dict):
        raise ConfigError(f"{run_dir} has no run configuration in run.json; start a new run")
    try:
        return RunConfig.from_json(data, out=Path(run_dir), resume=True)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"the configuration in {run_dir}/run.json is damaged: {exc}") from exc


# What a resume may change: where the run lives and what it runs on, never what it measures.
# The hierarchy tool is how a phone is read; either gives the same XML.
_RESUME_MAY_CHANGE = frozenset({"out", "workers", "devices", "hierarchy"})


def resume_changes(previous: Mapping[str, Any], config: RunConfig) -> list[str]:
    """How ``config`` differs from the configuration recorded in a run's run.json, one
    phrase per setting (empty: the run may be resumed with it). Settings an older run.json
    did not record are not compared."""
    current = config.secrets().scrub_json(redact(config.to_json()))
    changes = []
    for key, value in current.items():
        if key in _RESUME_MAY_CHANGE or key not in previous:
            continue
        before = previous[key]
        if key == "tasks":
            before, value = sorted(before or []), sorted(value)
        if before != value:
            name = FIELDS[key].name(key)
            changes.append(f"{name} {_shown(before)} -> {_shown(value)}")
    return changes


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def check_resume(config: RunConfig, info: Mapping[str, Any]) -> None:
    """Refuse to resume the run whose run.json is ``info`` with a different ``config``."""
    previous = info.get("config")
    if not isinstance(previous, dict):
        return
    changes = resume_changes(previous, config)
    if changes:
        raise ConfigError(
            f"{config.out} holds a run with another configuration; --resume would mix "
            f"results of both: {'; '.join(changes)}. Resume with the run's own options "
            "(the studio's Resume does), or choose another --out folder."
        )
