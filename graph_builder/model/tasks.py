"""Tasks and suites: what to ask for, how it is labelled, reset and verified.

A suite is a folder: ``suite.json`` (its header, ``Suite``) beside one ``<task_id>/task.json``
(``Task``) per task.

>>> task = Task("font_size", "the letters are too small for me", protocol="online",
...             normalized_instruction="Make the font size larger.")
>>> task.protocol, task.instruction_for("normalized")
(<EvalProtocol.ONLINE: 'online'>, 'Make the font size larger.')
>>> Task.from_json(task.to_json()) == task
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Self

from graph_builder.errors import RecordError
from graph_builder.model._json import SCHEMA_VERSION, Reader
from graph_builder.model.ids import validate_id


class EvalProtocol(StrEnum):
    """How a task is evaluated: on a live device, or against its task graph."""

    ONLINE = "online"
    OFFLINE = "offline"


class InstructionVariant(StrEnum):
    ORIGINAL = "original"
    NORMALIZED = "normalized"


SCENARIOS = (
    "life_service",
    "social_communication",
    "system_settings",
    "information_inquiry",
    "tool_assistance",
)
SYNTAX = ("canonical", "narrative", "elliptical", "compound")
SEMANTICS = (
    "indirect_speech",
    "referential_ambiguity",
    "under_specification",
    "disfluency_correction",
)
DEFAULT_VOCABULARIES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"scenario": SCENARIOS, "syntax": SYNTAX, "semantics": SEMANTICS}
)


@dataclass(frozen=True, slots=True)
class Labels:
    """Linguistic and scenario labels (ElderBench's taxonomy by default)."""

    scenario: str | None = None
    syntax: tuple[str, ...] = ()
    semantics: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "syntax", tuple(self.syntax))
        object.__setattr__(self, "semantics", tuple(self.semantics))

    def items(self) -> Iterable[tuple[str, str]]:
        """(dimension, label) pairs, for breakdowns."""
        if self.scenario:
            yield "scenario", self.scenario
        for s in self.syntax:
            yield "syntax", s
        for s in self.semantics:
            yield "semantics", s

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "syntax": list(self.syntax),
            "semantics": list(self.semantics),
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "labels", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            scenario=r.get("scenario", str, default=None, null=True),
            syntax=r.str_list("syntax"),
            semantics=r.str_list("semantics"),
        )


SETTINGS_NAMESPACES = ("system", "secure", "global")


@dataclass(frozen=True, slots=True)
class SettingValue:
    """One Android setting (``settings put NAMESPACE KEY VALUE``)."""

    namespace: str
    key: str
    value: str

    def __post_init__(self) -> None:
        if self.namespace not in SETTINGS_NAMESPACES:
            raise RecordError(
                f"settings namespace {self.namespace!r} must be one of "
                + ", ".join(SETTINGS_NAMESPACES)
            )
        if not re.fullmatch(r"[A-Za-z0-9_.]+", self.key):
            raise RecordError(f"settings key {self.key!r} must be letters, digits, '_' or '.'")

    def to_json(self) -> dict[str, str]:
        return {"namespace": self.namespace, "key": self.key, "value": self.value}

    @classmethod
    def parse(cls, line: str) -> SettingValue:
        """``system font_scale 1.0`` (namespace, key, then the value, which may hold spaces).

        >>> SettingValue.parse("global wifi_on 1")
        SettingValue(namespace='global', key='wifi_on', value='1')
        """
        parts = line.split(maxsplit=2)
        if len(parts) != 3:
            raise RecordError(
                f"{line.strip()!r}: write a setting as NAMESPACE KEY VALUE, e.g. "
                "'system font_scale 1.0'"
            )
        return cls(*parts)

    def describe(self) -> str:
        return f"{self.namespace} {self.key} {self.value}"

    @classmethod
    def from_json(cls, data: object, *, where: str = "setting", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            namespace=r.get("namespace", str),
            key=r.get("key", str),
            value=r.get("value", str),
        )


# What a new task restores before each demonstration unless its author says otherwise:
# the system settings a researcher (or an earlier task) most often leaves changed.
DEFAULT_RESET_SETTINGS: tuple[tuple[str, str, str], ...] = (
    ("system", "font_scale", "1.0"),
    ("global", "airplane_mode_on", "0"),
    ("global", "wifi_on", "1"),
    ("secure", "ui_night_mode", "1"),  # 1: dark theme off
)
PACKAGE_NAME = re.compile(r"[A-Za-z0-9_.]+")
SNAPSHOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass(frozen=True, slots=True)
class ResetRecipe:
    """How to put the phone in the same state before every demonstration or run.

    In order: load the whole-phone ``snapshot`` (a virtual phone or an emulator keeps
    them), restore the system ``settings`` (e.g. ``system font_scale 1.0``: resetting an
    app does not undo what an earlier task changed in Settings), go home, clear the data
    of ``clear_packages``, then force-stop, optionally clear and launch ``package`` (at
    ``activity`` when given). ``package`` may be empty: the recipe then only restores the
    phone (snapshot, settings, home) and starts ``activity`` if it names a component.
    """

    package: str
    activity: str | None = None
    go_home: bool = True
    force_stop: bool = True
    clear_data: bool = False
    settings: tuple[SettingValue, ...] = ()
    clear_packages: tuple[str, ...] = ()
    snapshot: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "settings", tuple(self.settings))
        object.__setattr__(self, "clear_packages", tuple(self.clear_packages))
        if self.snapshot is not None and not SNAPSHOT_NAME.fullmatch(self.snapshot):
            raise RecordError(
                f"snapshot name {self.snapshot!r} must be letters, digits, '.', '_' or '-'"
            )

    @property
    def is_empty(self) -> bool:
        """Nothing to do: no package, snapshot, settings, packages to clear or activity."""
        return not (
            self.package or self.snapshot or self.settings or self.clear_packages or self.activity
        )

    def bad_packages(self) -> list[str]:
        """The package names that cannot be Android packages (the device refuses them)."""
        names = (self.package, *self.clear_packages) if self.package else self.clear_packages
        return [name for name in names if not PACKAGE_NAME.fullmatch(name)]

    def to_json(self) -> dict[str, Any]:
        return {
            "package": self.package,
            "activity": self.activity,
            "go_home": self.go_home,
            "force_stop": self.force_stop,
            "clear_data": self.clear_data,
            "settings": [v.to_json() for v in self.settings],
            # written only when set, so recipes without them keep their files unchanged
            **({"clear_packages": list(self.clear_packages)} if self.clear_packages else {}),
            **({"snapshot": self.snapshot} if self.snapshot else {}),
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "reset", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            package=r.get("package", str, default=""),
            activity=r.get("activity", str, default=None, null=True),
            go_home=r.get("go_home", bool, default=True),
            force_stop=r.get("force_stop", bool, default=True),
            clear_data=r.get("clear_data", bool, default=False),
            settings=r.records("settings", SettingValue.from_json, default=[]),
            clear_packages=r.str_list("clear_packages"),
            snapshot=r.get("snapshot", str, default=None, null=True),
        )


@dataclass(frozen=True, slots=True)
class SuccessCriteria:
    """Online verification: rules on the final screen, and a rubric for a VLM judge."""

    activity: str | None = None
    must_contain: tuple[str, ...] = ()
    must_not_contain: tuple[str, ...] = ()
    rubric: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "must_contain", tuple(self.must_contain))
        object.__setattr__(self, "must_not_contain", tuple(self.must_not_contain))

    def to_json(self) -> dict[str, Any]:
        return {
            "activity": self.activity,
            "must_contain": list(self.must_contain),
            "must_not_contain": list(self.must_not_contain),
            "rubric": self.rubric,
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "success", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            activity=r.get("activity", str, default=None, null=True),
            must_contain=r.str_list("must_contain"),
            must_not_contain=r.str_list("must_not_contain"),
            rubric=r.get("rubric", str, default=None, null=True),
        )


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    instruction: str
    app: str = ""
    protocol: EvalProtocol = EvalProtocol.OFFLINE
    normalized_instruction: str | None = None
    max_steps: int = 20
    labels: Labels = field(default_factory=Labels)
    reset: ResetRecipe | None = None
    success: SuccessCriteria | None = None
    # accepted answers to an information question (the agent's ``answer`` is checked)
    answers: tuple[str, ...] = ()
    # what the user replies, in order, when the agent asks (``ask_user``)
    clarifications: tuple[str, ...] = ()
    # what the user really wants, hidden from the agent: a simulated user answers from it
    intent: str | None = None
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        validate_id(self.id, "task id")
        object.__setattr__(self, "answers", tuple(self.answers))
        object.__setattr__(self, "clarifications", tuple(self.clarifications))
        object.__setattr__(self, "protocol", EvalProtocol(self.protocol))
        if not self.instruction.strip():
            raise RecordError("a task needs a non-empty instruction")
        if self.max_steps < 1:
            raise RecordError("max_steps must be at least 1")

    def instruction_for(self, variant: InstructionVariant | str) -> str:
        """The instruction an agent sees; falls back to the original when not normalized."""
        if InstructionVariant(variant) is InstructionVariant.NORMALIZED:
            return self.normalized_instruction or self.instruction
        return self.instruction

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "id": self.id,
            "instruction": self.instruction,
            "normalized_instruction": self.normalized_instruction,
            "app": self.app,
            "protocol": self.protocol.value,
            "max_steps": self.max_steps,
            "labels": self.labels.to_json(),
            "reset": self.reset.to_json() if self.reset else None,
            "success": self.success.to_json() if self.success else None,
            # written only when set, so tasks without them keep their files unchanged
            **({"answers": list(self.answers)} if self.answers else {}),
            **({"clarifications": list(self.clarifications)} if self.clarifications else {}),
            **({"intent": self.intent} if self.intent else {}),
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "task", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            schema_version=r.get("schema_version", int),
            id=r.get("id", str),
            instruction=r.get("instruction", str),
            normalized_instruction=r.get("normalized_instruction", str, default=None, null=True),
            app=r.get("app", str, default=""),
            protocol=r.enum("protocol", EvalProtocol, default="offline"),
            max_steps=r.get("max_steps", int, default=20),
            labels=r.optional("labels", Labels.from_json) or Labels(),
            reset=r.optional("reset", ResetRecipe.from_json),
            success=r.optional("success", SuccessCriteria.from_json),
            answers=r.str_list("answers"),
            clarifications=r.str_list("clarifications"),
            intent=r.get("intent", str, default=None, null=True),
        )


@dataclass(frozen=True, slots=True)
class Suite:
    """A benchmark suite's header; its tasks live in sub-folders beside suite.json."""

    name: str
    description: str = ""
    vocabularies: Mapping[str, tuple[str, ...]] = DEFAULT_VOCABULARIES
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        frozen = MappingProxyType({k: tuple(v) for k, v in self.vocabularies.items()})
        object.__setattr__(self, "vocabularies", frozen)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "name": self.name,
            "description": self.description,
            "vocabularies": {k: list(v) for k, v in self.vocabularies.items()},
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "suite", source: object = None) -> Self:
        r = Reader(data, where, source)
        vocab = r.optional("vocabularies", Reader)
        vocabularies = (
            {key: vocab.str_list(key) for key in vocab} if vocab else DEFAULT_VOCABULARIES
        )
        return r.build(
            cls,
            schema_version=r.get("schema_version", int),
            name=r.get("name", str),
            description=r.get("description", str, default=""),
            vocabularies=vocabularies,
        )
