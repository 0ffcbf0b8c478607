"""Demonstrations: a person performing one task once, step by step, as recorded.

A demonstration is a folder (``demo.json`` plus ``steps/NNNN.png|.xml``); paths inside the
records are relative to it.

>>> obs = Observation("steps/0000.png", (1080, 2400), activity="com.android.settings/.Settings")
>>> demo = Demonstration("d1", "font_size", "make the letters bigger",
...                      steps=(Step(0, obs, Action.done()),), status=DemoStatus.COMPLETE)
>>> demo.is_finished, obs.package
(True, 'com.android.settings')
>>> Demonstration.from_json(demo.to_json()) == demo
True
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Self

from graph_builder.errors import RecordError
from graph_builder.model._json import SCHEMA_VERSION, Reader
from graph_builder.model.actions import Action, ActionType
from graph_builder.model.geometry import Size
from graph_builder.model.ids import validate_id


@dataclass(frozen=True, slots=True)
class Observation:
    """What the screen looked like: file paths are relative to the owning folder."""

    screenshot: str
    screen: Size
    hierarchy: str | None = None
    activity: str | None = None
    time: float = 0.0
    phash: str | None = None

    @property
    def package(self) -> str | None:
        return self.activity.partition("/")[0] if self.activity else None

    def to_json(self) -> dict[str, Any]:
        return {
            "screenshot": self.screenshot,
            "hierarchy": self.hierarchy,
            "activity": self.activity,
            "time": self.time,
            "screen": list(self.screen),
            "phash": self.phash,
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "observation", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            screenshot=r.get("screenshot", str),
            hierarchy=r.get("hierarchy", str, default=None, null=True),
            activity=r.get("activity", str, default=None, null=True),
            time=r.get("time", float, default=0.0),
            screen=r.size("screen"),
            phash=r.get("phash", str, default=None, null=True),
        )


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a demonstration: the observation before the action, and the action.

    ``performed`` is False from the moment the step is saved until its action returned
    from the phone: a crash in between leaves a step the phone may never have seen, and
    resuming drops it. Only the last step can be unperformed; files without the field
    (written before it existed, or by importers) are performed.

    ``jumped``: the previous step's action did not lead to this step's screen (the
    recording was resumed from another screen), so no transition joins the two.
    """

    index: int
    observation: Observation
    action: Action
    performed: bool = True
    jumped: bool = False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "index": self.index,
            "observation": self.observation.to_json(),
            "action": self.action.to_json(),
            # written only when set, so demos without jumps keep their files unchanged
            **({"jumped": True} if self.jumped else {}),
        }
        if not self.performed:  # absent means performed: older files read unchanged
            data["performed"] = False
        return data

    @classmethod
    def from_json(cls, data: object, *, where: str = "step", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            index=r.get("index", int),
            observation=r.record("observation", Observation.from_json),
            action=r.record("action", Action.from_json),
            performed=r.get("performed", bool, default=True),
            jumped=r.get("jumped", bool, default=False),
        )


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    serial: str
    model: str = ""
    android_version: str = ""
    width: int = 0
    height: int = 0
    density: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "serial": self.serial,
            "model": self.model,
            "android_version": self.android_version,
            "width": self.width,
            "height": self.height,
            "density": self.density,
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "device", source: object = None) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            serial=r.get("serial", str),
            model=r.get("model", str, default=""),
            android_version=r.get("android_version", str, default=""),
            width=r.get("width", int, default=0),
            height=r.get("height", int, default=0),
            density=r.get("density", int, default=0),
        )


class DemoStatus(StrEnum):
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    DISCARDED = "discarded"


@dataclass(frozen=True, slots=True)
class Demonstration:
    """A human performing one task once. Step paths are relative to the demo folder."""

    id: str
    task_id: str
    instruction: str
    steps: tuple[Step, ...] = ()
    app: str = ""
    device: DeviceInfo | None = None
    annotator: str = ""
    status: DemoStatus = DemoStatus.INCOMPLETE
    created: float = 0.0
    source: str = "recorded"
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        validate_id(self.id, "demonstration id")
        validate_id(self.task_id, "task id")
        object.__setattr__(self, "status", DemoStatus(self.status))
        object.__setattr__(self, "steps", tuple(self.steps))
        for i, step in enumerate(self.steps):
            if step.index != i:
                raise RecordError(
                    f"step {i} has index {step.index}; steps must be numbered 0, 1, 2, ..."
                )

    @property
    def is_finished(self) -> bool:
        """A complete demonstration ends with a ``done`` action."""
        return bool(self.steps) and self.steps[-1].action.type is ActionType.DONE

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "id": self.id,
            "task_id": self.task_id,
            "instruction": self.instruction,
            "app": self.app,
            "device": self.device.to_json() if self.device else None,
            "annotator": self.annotator,
            "status": self.status.value,
            "created": self.created,
            "source": self.source,
            "steps": [s.to_json() for s in self.steps],
        }

    @classmethod
    def from_json(
        cls, data: object, *, where: str = "demonstration", source: object = None
    ) -> Self:
        r = Reader(data, where, source)
        return r.build(
            cls,
            schema_version=r.get("schema_version", int),
            id=r.get("id", str),
            task_id=r.get("task_id", str),
            instruction=r.get("instruction", str),
            app=r.get("app", str, default=""),
            device=r.optional("device", DeviceInfo.from_json),
            annotator=r.get("annotator", str, default=""),
            status=r.enum("status", DemoStatus),
            created=r.get("created", float, default=0.0),
            source=r.get("source", str, default="recorded"),
            steps=r.records("steps", Step.from_json),
        )
