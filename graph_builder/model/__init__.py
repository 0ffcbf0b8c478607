"""The data model: every record that crosses a package boundary or lands on disk.

All records are frozen, slotted dataclasses validated in ``__post_init__`` (a broken rule
raises ``RecordError``), holding tuples and read-only mappings only. Each has ``to_json()``
and ``from_json(data, *, where=..., source=None)``: ``where`` names the record's place in
its document and ``source`` the file, for error messages. Top-level documents (demo.json,
task.json, suite.json, graph.json) carry ``schema_version``; ``graph_builder.io`` checks it.

One module per concept: ``geometry`` (screen spaces, bounds), ``actions``,
``demonstrations``, ``tasks`` (tasks and suites), ``graphs``, ``links`` (merge
constraints) and ``layouts`` (where the editor draws nodes); ``ids`` checks the ids that
become folder names. Import the names from here.

Coordinates: actions are stored in the pixels of the screen they were taken on, together
with that screen's size. Agents speak the normalized ``[0,1000]`` space. An action in that
space is simply an action whose ``screen`` is ``NORMALIZED_SCREEN``, and ``rescale_point``
is the one place that converts between spaces.

>>> tap = Action.tap(540, 1200, screen=(1080, 2400))
>>> tap.normalized().x, tap.normalized().y
(500.0, 500.0)
"""

from graph_builder.errors import RecordError
from graph_builder.model._json import SCHEMA_VERSION
from graph_builder.model.actions import Action, ActionType, ElementRef, SwipeDirection
from graph_builder.model.demonstrations import (
    Demonstration,
    DemoStatus,
    DeviceInfo,
    Observation,
    Step,
)
from graph_builder.model.geometry import NORMALIZED_SCREEN, Bounds, Point, Size, rescale_point
from graph_builder.model.graphs import (
    Edge,
    EdgeSupport,
    MatchRule,
    MemberRef,
    Node,
    NodeKind,
    Pin,
    PinKind,
    TaskGraph,
)
from graph_builder.model.ids import validate_id
from graph_builder.model.layouts import GraphLayout, NodePlace
from graph_builder.model.links import Constraint, ConstraintSet, LinkKind, now_utc
from graph_builder.model.tasks import (
    DEFAULT_RESET_SETTINGS,
    DEFAULT_VOCABULARIES,
    PACKAGE_NAME,
    SCENARIOS,
    SEMANTICS,
    SETTINGS_NAMESPACES,
    SYNTAX,
    EvalProtocol,
    InstructionVariant,
    Labels,
    ResetRecipe,
    SettingValue,
    SuccessCriteria,
    Suite,
    Task,
)

__all__ = [
    "DEFAULT_VOCABULARIES",
    "NORMALIZED_SCREEN",
    "SCENARIOS",
    "SCHEMA_VERSION",
    "SEMANTICS",
    "DEFAULT_RESET_SETTINGS",
    "PACKAGE_NAME",
    "SETTINGS_NAMESPACES",
    "SYNTAX",
    "Action",
    "ActionType",
    "Bounds",
    "Constraint",
    "ConstraintSet",
    "GraphLayout",
    "NodePlace",
    "DemoStatus",
    "Demonstration",
    "DeviceInfo",
    "Edge",
    "EdgeSupport",
    "ElementRef",
    "EvalProtocol",
    "InstructionVariant",
    "Labels",
    "LinkKind",
    "MatchRule",
    "MemberRef",
    "Node",
    "NodeKind",
    "Observation",
    "Pin",
    "PinKind",
    "Point",
    "RecordError",
    "ResetRecipe",
    "SettingValue",
    "Size",
    "Step",
    "SuccessCriteria",
    "Suite",
    "SwipeDirection",
    "Task",
    "TaskGraph",
    "now_utc",
    "rescale_point",
    "validate_id",
]
