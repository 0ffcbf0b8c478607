"""The graph builder's settings: every threshold in one frozen record, loadable from JSON.

docs/graph_builder.md explains each field and why its default is what it is.

>>> SimilaritySettings().max_text_changes
0.5
>>> import json, tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp) / "settings.json"
...     _ = path.write_text(json.dumps({"max_text_changes": 0.9}))
...     settings = load_settings(path)
>>> settings.max_text_changes, settings.hash_size  # missing fields keep their defaults
(0.9, 16)
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graph_builder.errors import FormatError

if TYPE_CHECKING:
    from graph_builder.model import TaskGraph

Box = tuple[float, float, float, float]

# Texts that change while the screen stays the same: clock times, dates, "5 min ago",
# notification badges ("Gmail has 10 notifications", "9+ notificaciones").
DEFAULT_VOLATILE_PATTERNS: tuple[str, ...] = (
    r"\b\d{1,2}[:.]\d{2}\b",
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b",
    r"\b\d{1,2}\.?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)",
    r"\b\d{1,4}[/-]\d{1,2}[/-]\d{1,4}\b",
    r"\b\d+\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hrs?|hours?|d|days?)\s+ago\b",
    r"\d+\+?\s*(new\s+)?(notifications?|notificaciones|notifica[cç][aã]o)\b",
)

# Texts whose numbers change while the screen stays: notification counts ("Gmail has 10
# notifications", "9+ notificaciones", "3 unread"), temperatures. Their digits are masked.
# Not percentages or plain numbers: a brightness level or a picked hour is a state.
DEFAULT_COUNTER_PATTERNS: tuple[str, ...] = (
    r"\d+\+?\s*(new\s+)?(notifications?|notificaciones|notifica[cç][aã]o|unread|ungelesen)",
    r"\b(notifications?|notificaciones|unread)\b.*\d",
    r"-?\d+(?:[.,]\d+)?\s*°\s*[cf]?\b",
)

# Words of resource ids whose element shows ambient content (``android:id/summary``,
# ``badge_count``, ``date_widget``, ``predicted_apps``); matched as whole words of the id.
DEFAULT_AMBIENT_ID_WORDS: tuple[str, ...] = (
    "summary",
    "badge",
    "clock",
    "date",
    "timestamp",
    "prediction",
    "predictions",
    "predicted",
    "suggestion",
    "suggestions",
    "weather",
    "snippet",
    "preview",
    "unread",
    "notification",
    "notifications",
)

# The calibrated model's coefficients: intercept, then the rules' decision, visual,
# structure, content, content changes, state changes, ambient agreement
# (graph_builder.calibration). Fitted on the labelled real screens (dev_screens and
# real_screens, 11 sources) by benchmarks/identity_loso.py, which also measures them
# leave one source out.
DEFAULT_CALIBRATION: tuple[float, ...] = (
    -9.2952,
    6.2965,
    2.6773,
    6.9069,
    2.8828,
    1.7725,
    -7.0632,
    -2.9434,
)


@dataclass(frozen=True, slots=True)
class SimilaritySettings:
    """How screens are compared, merged into nodes, and how edges are formed."""

    # -- perceptual hash of the screenshot
    hash_method: str = "phash"
    hash_size: int = 16
    status_bar_band: float = 0.035
    nav_bar_band: float = 0.055
    volatile_regions: tuple[Box, ...] = ()

    # -- hierarchy similarity
    volatile_text_patterns: tuple[str, ...] = DEFAULT_VOLATILE_PATTERNS
    volatile_text_weight: float = 0.05
    long_text_chars: int = 80
    counter_text_patterns: tuple[str, ...] = DEFAULT_COUNTER_PATTERNS
    ambient_id_words: tuple[str, ...] = DEFAULT_AMBIENT_ID_WORDS
    ambient_slots: tuple[str, ...] = ()
    user_texts: tuple[str, ...] = ()
    sentence_chars: int = 40
    max_text_changes: float = 0.5
    ignore_toasts: bool = True

    # -- the same/different decision
    visual_floor: float = 0.75
    structure_floor: float = 0.7
    content_floor: float = 0.6
    min_hierarchy_tokens: int = 4
    resized_share: float = 0.3
    min_row_overlap: float = 0.34
    keyboard_share: float = 0.15
    visual_only_threshold: float = 0.9
    activity_must_match: bool = True
    calibration: tuple[float, ...] = DEFAULT_CALIBRATION

    # -- learning ambient slots from a task's own screens
    learn_ambient: bool = True
    learn_min_values: int = 3

    # -- merging states into nodes
    linkage_sample: int = 8

    # -- edges
    tap_radius: float = 50.0
    point_tolerance: float = 50.0
    text_threshold: float = 80.0
    max_element_area: float = 0.25

    def __post_init__(self) -> None:
        from graph_builder.phash import HASHERS  # the hash registry lives with the hasher

        if self.hash_method not in HASHERS:
            raise ValueError(
                f"hash_method {self.hash_method!r} is unknown; use one of {', '.join(HASHERS)}"
            )
        if not 4 <= self.hash_size <= 32:
            raise ValueError("hash_size must be between 4 and 32")
        for name in ("status_bar_band", "nav_bar_band"):
            if not 0 <= getattr(self, name) < 0.5:
                raise ValueError(f"{name} must be a fraction of the height in [0, 0.5)")
        for name in (
            "volatile_text_weight",
            "visual_floor",
            "resized_share",
            "min_row_overlap",
            "keyboard_share",
            "structure_floor",
            "content_floor",
            "visual_only_threshold",
            "max_element_area",
        ):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be between 0 and 1")
        if len(self.calibration) != len(DEFAULT_CALIBRATION):
            raise ValueError(
                f"calibration must hold {len(DEFAULT_CALIBRATION)} numbers (intercept and "
                "one coefficient per component)"
            )
        object.__setattr__(self, "calibration", tuple(float(c) for c in self.calibration))
        if self.min_hierarchy_tokens < 0 or self.learn_min_values < 2:
            raise ValueError(
                "min_hierarchy_tokens must not be negative and learn_min_values must be >= 2"
            )
        if self.linkage_sample < 1:
            raise ValueError("linkage_sample must be at least 1")
        if self.tap_radius < 0 or self.point_tolerance < 0:
            raise ValueError("tap_radius and point_tolerance must not be negative")
        if not 0 <= self.text_threshold <= 100:
            raise ValueError("text_threshold must be between 0 and 100")
        if self.long_text_chars < 1 or self.max_text_changes < 0:
            raise ValueError("long_text_chars must be positive and max_text_changes not negative")
        if self.sentence_chars < 1:
            raise ValueError("sentence_chars must be positive")
        for name in ("ambient_id_words", "ambient_slots", "user_texts"):
            words = tuple(getattr(self, name))
            if not all(isinstance(w, str) and w for w in words):
                raise ValueError(f"{name} must be a list of non-empty strings")
            object.__setattr__(self, name, words)
        for name in ("volatile_text_patterns", "counter_text_patterns"):
            patterns = tuple(getattr(self, name))
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except (re.error, TypeError) as exc:
                    raise ValueError(f"{name}: {pattern!r} is not a regex: {exc}") from exc
            object.__setattr__(self, name, patterns)
        boxes = tuple(tuple(float(v) for v in box) for box in self.volatile_regions)
        if any(len(b) != 4 or b[0] > b[2] or b[1] > b[3] for b in boxes):
            raise ValueError("volatile_regions must be [left, top, right, bottom] in [0,1000]")
        object.__setattr__(self, "volatile_regions", boxes)

    def to_json(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["volatile_regions"] = [list(b) for b in self.volatile_regions]
        out["volatile_text_patterns"] = list(self.volatile_text_patterns)
        for name in (
            "counter_text_patterns",
            "ambient_id_words",
            "ambient_slots",
            "user_texts",
            "calibration",
        ):
            out[name] = list(getattr(self, name))
        return out

    @classmethod
    def from_json(cls, data: object, *, source: object = None) -> SimilaritySettings:
        """Settings from a JSON object; missing fields keep their defaults."""
        if not isinstance(data, Mapping):
            raise FormatError("settings must be a JSON object", source=source)
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise FormatError(
                f"unknown settings: {', '.join(unknown)}; known ones are {', '.join(known)}",
                source=source,
            )
        values: dict[str, Any] = {}
        for key, value in data.items():
            default = known[key].default
            if isinstance(default, bool):
                ok = isinstance(value, bool)
            elif isinstance(default, int | float):
                ok = isinstance(value, int | float) and not isinstance(value, bool)
                ok = ok and (isinstance(default, float) or float(value).is_integer())
                value = type(default)(value) if ok else value
            elif isinstance(default, str):
                ok = isinstance(value, str)
            else:  # volatile_regions, the word and pattern lists, the calibration
                ok = isinstance(value, list | tuple)
            if not ok:
                raise FormatError(f"setting {key!r} has the wrong type: {value!r}", source=source)
            values[key] = value
        try:
            return cls(**values)
        except (ValueError, TypeError) as exc:
            raise FormatError(f"bad settings: {exc}", source=source) from exc


def load_settings(path: Path) -> SimilaritySettings:
    from graph_builder.io import read_json

    return SimilaritySettings.from_json(read_json(path), source=path)


@dataclass(frozen=True, slots=True)
class ChosenSettings:
    """Settings for a build, with where they came from in words (the build report says it)."""

    settings: SimilaritySettings
    origin: str


def graph_settings(graph: TaskGraph | None) -> ChosenSettings:
    """The settings ``graph`` was built with (kept in its meta), else the defaults.

    The one reader of stored build settings: the rebuild, the studio and online evaluation
    all go through it. Settings that cannot be read fall back to the defaults, and
    ``origin`` says why.

    >>> from graph_builder.model import TaskGraph
    >>> stored = {"settings": {"tap_radius": 80.0}}
    >>> graph_settings(TaskGraph("t", nodes=(), edges=(), meta=stored)).settings.tap_radius
    80.0
    >>> graph_settings(TaskGraph("t", nodes=(), edges=(), meta={"settings": 3})).origin
    'the defaults (the stored settings are unreadable: settings must be a JSON object)'
    """
    if graph is None:
        return ChosenSettings(SimilaritySettings(), "the defaults (there is no previous graph)")
    stored = graph.meta.get("settings")
    if stored is None:
        return ChosenSettings(SimilaritySettings(), "the defaults (the graph stores none)")
    try:
        return ChosenSettings(
            SimilaritySettings.from_json(stored), "the settings stored in the previous graph"
        )
    except FormatError as exc:
        return ChosenSettings(
            SimilaritySettings(),
            f"the defaults (the stored settings are unreadable: {exc.problem})",
        )


def comparison_settings(graph: TaskGraph | None) -> SimilaritySettings:
    """The settings ``graph``'s screens were compared with when it was built: the stored
    ones (``graph_settings``) plus what the build derived from its demonstrations, the
    texts people typed (which stay state wherever they reappear, such as a sent message in
    a conversation) and the ambient slots it learned. Whatever compares a screen with the
    graph's nodes (online state mapping, drift, the review of possible merges, the editor's
    similarity view) uses these, so it decides as the build did; a rebuild starts from
    ``graph_settings`` and derives them afresh.

    >>> from graph_builder.model import ActionType, Edge, MatchRule, TaskGraph
    >>> typed = Edge("e1", "start", "done", MatchRule(ActionType.TYPE, texts=("late",)))
    >>> graph = TaskGraph("t", nodes=(), edges=(typed,), meta={"learned_ambient": ["id:sync"]})
    >>> settings = comparison_settings(graph)
    >>> settings.user_texts, settings.ambient_slots
    (('late',), ('id:sync',))
    """
    settings = graph_settings(graph).settings
    if graph is None:
        return settings
    typed = sorted(
        {text for e in graph.edges if e.rule.action_type.value == "type" for text in e.rule.texts}
    )
    learned = graph.meta.get("learned_ambient", ())
    slots = (
        [s for s in learned if isinstance(s, str) and s]
        if isinstance(learned, (list, tuple))
        else []
    )
    return dataclasses.replace(
        settings,
        user_texts=settings.user_texts
        + tuple(t for t in typed if t and t not in settings.user_texts),
        ambient_slots=settings.ambient_slots
        + tuple(s for s in slots if s not in settings.ambient_slots),
    )
