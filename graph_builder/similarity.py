"""Are two observed screens the same UI state? An explainable decision.

Three components, each in [0, 1]:

- **visual**: 1 - Hamming distance / bits of the masked perceptual hashes (``phash``);
- **structure**: multiset Jaccard of the visible elements' class + resource-id paths;
- **content**: weighted Jaccard of the normalized texts and content descriptions, plus the
  on/off state of checkable and selected elements (switches, tabs). Volatile texts (times,
  dates, "5 min ago", or longer than ``long_text_chars``) weigh ``volatile_text_weight``;

plus the foreground activity, which must match when both are known, and **text changes**:
the summed weight of the texts and states found on only one of the two screens. One real
text changing (a counter, a typed word, a switch) is a different state, so at most
``max_text_changes`` is allowed, which a few ticking clocks stay under. System UI elements
(status bar, navigation bar) are left out of the hierarchy components.

>>> verdict = compare(ScreenState.from_observation(obs_a, folder_a),
...                   ScreenState.from_observation(obs_b, folder_b), settings=SimilaritySettings())
>>> verdict.same, verdict.reason  # doctest: +SKIP
(True, 'same: score 0.93 >= 0.80')
"""

from __future__ import annotations

import functools
import io
import os
import re
import shutil
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from graph_builder.errors import FormatError
from graph_builder.hierarchy import Hierarchy, load_hierarchy
from graph_builder.io import PNG_MAGIC, read_png
from graph_builder.model import MemberRef, Observation
from graph_builder.phash import SYSTEM_UI_PACKAGE, compute_phash, hash_bits
from graph_builder.settings import SimilaritySettings, load_settings

__all__ = [
    "Features",
    "ScreenState",
    "SimilaritySettings",
    "Verdict",
    "compare",
    "compare_features",
    "load_settings",
]

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Features:
    """What a comparison needs from one screen, computed once per screen."""

    hash: int
    bits: int
    activity: str | None
    structure: Counter[str] | None
    content: Mapping[str, float] | None

    @property
    def has_hierarchy(self) -> bool:
        return self.structure is not None


class ScreenState:
    """One observed screen. Files are read lazily from ``folder``, or given in memory.

    ``member`` says which demonstration step it is (for node members and explanations).
    """

    __slots__ = (
        "observation",
        "folder",
        "member",
        "_image",
        "_png",
        "_hierarchy",
        "_hierarchy_loaded",
        "_features",
    )

    def __init__(
        self,
        observation: Observation,
        *,
        folder: Path | None = None,
        member: MemberRef | None = None,
        image: Image.Image | None = None,
        hierarchy: Hierarchy | None = None,
    ) -> None:
        self.observation = observation
        self.folder = Path(folder) if folder is not None else None
        self.member = member
        self._image = image
        self._png: bytes | None = None
        self._hierarchy = hierarchy
        self._hierarchy_loaded = hierarchy is not None or observation.hierarchy is None
        self._features: tuple[SimilaritySettings, Features] | None = None

    @classmethod
    def from_observation(
        cls, observation: Observation, folder: Path, member: MemberRef | None = None
    ) -> ScreenState:
        return cls(observation, folder=folder, member=member)

    def __repr__(self) -> str:
        return f"ScreenState({self.label!r})"

    @property
    def label(self) -> str:
        return str(self.member) if self.member else self.observation.screenshot

    def _path(self, relative: str) -> Path:
        if self.folder is None:
            raise FormatError(f"{self.label}: {relative} is not loaded and the state has no folder")
        return self.folder / relative

    def png_bytes(self) -> bytes:
        """The screenshot as PNG bytes (read from disk, or encoded from the in-memory image)."""
        if self._png is None:
            if self._image is not None and self.folder is None:
                buffer = io.BytesIO()
                self._image.save(buffer, format="PNG")
                self._png = buffer.getvalue()
            else:
                self._png = read_png(self._path(self.observation.screenshot))
        return self._png

    def image(self) -> Image.Image:
        if self._image is None:
            try:
                image = Image.open(io.BytesIO(self.png_bytes()))
                image.load()
            except (OSError, Image.DecompressionBombError) as exc:
                raise FormatError(
                    f"cannot decode the screenshot: {exc}",
                    source=self._path(self.observation.screenshot),
                ) from exc
            self._image = image
        return self._image

    def hierarchy(self) -> Hierarchy | None:
        if not self._hierarchy_loaded:
            assert self.observation.hierarchy is not None
            self._hierarchy = load_hierarchy(self._path(self.observation.hierarchy))
            self._hierarchy_loaded = True
        return self._hierarchy

    def copy_files(self, screenshot: Path, hierarchy: Path | None) -> None:
        """Write the screenshot (and the hierarchy, when both sides have one) to these paths.

        Files are hard-linked when source and target share a file system (step files are
        only ever replaced, never changed in place), else copied; never decoded. Each
        lands atomically (a temporary name, then renamed). In-memory states write their
        image; their hierarchy text is not kept.
        """
        sources: list[tuple[Path | bytes, Path]] = []
        if self.folder is not None and self._png is None and self._image is None:
            sources.append((self._path(self.observation.screenshot), screenshot))
        else:
            sources.append((self.png_bytes(), screenshot))
        if hierarchy is not None and self.folder is not None and self.observation.hierarchy:
            sources.append((self._path(self.observation.hierarchy), hierarchy))
        for source, target in sources:
            tmp = target.with_name(f".{target.name}.tmp")
            try:
                tmp.unlink(missing_ok=True)
                if isinstance(source, bytes):
                    tmp.write_bytes(source)
                else:
                    _link_or_copy(source, tmp)
                os.replace(tmp, target)
            except OSError as exc:
                tmp.unlink(missing_ok=True)
                raise FormatError(
                    f"cannot copy to {target}: {exc.strerror or exc}",
                    source=source if isinstance(source, Path) else None,
                ) from exc

    def check_screenshot(self) -> None:
        """Raise FormatError when the screenshot file is missing or not a PNG (no decode)."""
        if self._image is not None or self._png is not None or self.folder is None:
            return
        path = self._path(self.observation.screenshot)
        try:
            with path.open("rb") as fh:
                head = fh.read(len(PNG_MAGIC))
        except FileNotFoundError:
            raise FormatError("screenshot not found", source=path) from None
        except OSError as exc:
            raise FormatError(f"cannot read screenshot: {exc.strerror}", source=path) from exc
        if head != PNG_MAGIC:
            raise FormatError("not a PNG file (bad signature)", source=path)

    def features(self, settings: SimilaritySettings) -> Features:
        """The comparison features; raises FormatError when a needed file is bad."""
        if self._features is not None and self._features[0] == settings:
            return self._features[1]
        hierarchy = self.hierarchy()
        stored = self.observation.phash
        value = hash_bits(stored, settings) if stored else None
        if value is None:
            value = hash_bits(compute_phash(self.image(), hierarchy, settings=settings), settings)
            assert value is not None
        structure, content = (
            hierarchy_signatures(hierarchy, settings) if hierarchy is not None else (None, None)
        )
        features = Features(
            hash=value,
            bits=_hash_length(settings),
            activity=(self.observation.activity or "").strip() or None,
            structure=structure,
            content=content,
        )
        self._features = (settings, features)
        return features


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or links not supported
        shutil.copyfile(source, target)


def _hash_length(settings: SimilaritySettings) -> int:
    return settings.hash_size * settings.hash_size


def normalize_text(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _volatile(settings: SimilaritySettings) -> re.Pattern[str]:
    return _compiled_patterns(settings.volatile_text_patterns)


@functools.lru_cache(maxsize=8)
def _compiled_patterns(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns) or r"(?!)", re.IGNORECASE)


def _toast_elements(hierarchy: Hierarchy) -> set[int]:
    """Indices of toast windows: a window holding ``android:id/message`` and nothing to tap.

    A toast outlives the action that raised it by seconds, so the same screen is dumped
    with and without it. Dialogs use the same id but have buttons, so they stay.
    """
    out: set[int] = set()
    for root in hierarchy.roots():
        subtree, stack = [], [root]
        while stack:
            element = stack.pop()
            subtree.append(element)
            stack.extend(hierarchy.children(element))
        if any(e.resource_id == "android:id/message" for e in subtree) and not any(
            e.interactive for e in subtree
        ):
            out.update(e.index for e in subtree)
    return out


def hierarchy_signatures(
    hierarchy: Hierarchy, settings: SimilaritySettings
) -> tuple[Counter[str], dict[str, float]]:
    """The structure multiset and the weighted content tokens of one screen.

    Structure: root-to-element paths of ``class#resource-id`` steps. Content: normalized
    texts and content descriptions, and ``[on]``/``[off]``/``[selected]`` tokens for
    checkable and selected elements, keyed by label and occurrence. System UI is left out,
    and so are toasts when ``settings.ignore_toasts``.
    """
    volatile = _volatile(settings)
    skip = _toast_elements(hierarchy) if settings.ignore_toasts else set()
    paths: dict[int, str] = {}
    structure: Counter[str] = Counter()
    content: dict[str, float] = {}
    names: Counter[str] = Counter()
    for e in hierarchy.elements:
        step = f"{e.class_name.rpartition('.')[2]}#{e.resource_id.rpartition('/')[2]}"
        path = f"{paths[e.parent]}/{step}" if e.parent is not None else step
        paths[e.index] = path
        if not e.visible or e.bounds.area <= 0 or e.package == SYSTEM_UI_PACKAGE:
            continue
        if e.index in skip:
            continue
        structure[path] += 1
        for raw in (e.text, e.content_desc):
            text = normalize_text(raw)
            if text and text not in content:
                fleeting = len(text) > settings.long_text_chars or volatile.search(text)
                content[text] = settings.volatile_text_weight if fleeting else 1.0
        if e.checkable or e.selected:
            # Keyed by a readable name and its occurrence, not by the state, so that a
            # flipped switch shows up as one token gone and one new.
            name = e.label().rpartition(".")[2] if not (e.text or e.content_desc) else e.label()
            names[name] += 1
            state = "on" if e.checked else "off" if e.checkable else "selected"
            content[f"[{state}] {name} #{names[name]}"] = 1.0
    return structure, content


def multiset_jaccard(a: Counter[str], b: Counter[str]) -> float:
    if not a and not b:
        return 1.0
    inter = sum(min(n, b[k]) for k, n in a.items() if k in b)
    return inter / (a.total() + b.total() - inter)


def weighted_jaccard(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    if not a and not b:
        return 1.0
    inter = sum(w for k, w in a.items() if k in b)
    union = sum(a.values()) + sum(w for k, w in b.items() if k not in a)
    return inter / union if union else 1.0


def text_changes(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """The summed weight of the tokens found on only one side."""
    return sum(w for k, w in a.items() if k not in b) + sum(w for k, w in b.items() if k not in a)


def _changed(a: Mapping[str, float], b: Mapping[str, float]) -> list[str]:
    """The heaviest one-sided tokens first, for the explanation."""
    tokens = [(w, k) for k, w in a.items() if k not in b] + [
        (w, k) for k, w in b.items() if k not in a
    ]
    return [k for _, k in sorted(tokens, key=lambda t: -t[0])]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision with every component, so an editor can show why."""

    same: bool
    score: float
    visual: float
    structure: float | None
    content: float | None
    activity: str  # "same" | "different" | "unknown"
    reason: str
    changes: float | None = None

    def describe(self) -> str:
        parts = [f"visual {self.visual:.2f}"]
        if self.structure is not None:
            parts.append(f"structure {self.structure:.2f}")
        if self.content is not None:
            parts.append(f"content {self.content:.2f}")
        if self.changes is not None:
            parts.append(f"text changes {self.changes:.2f}")
        parts.append(f"activity {self.activity}")
        return f"{'SAME' if self.same else 'DIFFERENT'} ({self.reason}; {', '.join(parts)})"


def compare(a: ScreenState, b: ScreenState, *, settings: SimilaritySettings) -> Verdict:
    """Decide whether two screens are the same UI state."""
    return compare_features(a.features(settings), b.features(settings), settings)


def visual_similarity(a: Features, b: Features) -> float:
    return 1.0 - (a.hash ^ b.hash).bit_count() / a.bits


def clearly_different(a: Features, b: Features, settings: SimilaritySettings) -> bool:
    """True when compare_features would say different from the activity and hash alone.

    A cheap test that lets the merge skip the hierarchy components for most pairs.
    """
    if settings.activity_must_match and a.activity and b.activity and a.activity != b.activity:
        return True
    floor = (
        settings.visual_floor
        if a.has_hierarchy and b.has_hierarchy
        else (settings.visual_only_threshold)
    )
    return visual_similarity(a, b) < floor


def compare_features(a: Features, b: Features, settings: SimilaritySettings) -> Verdict:
    visual = visual_similarity(a, b)
    if a.activity is None or b.activity is None:
        activity = "unknown"
    else:
        activity = "same" if a.activity == b.activity else "different"
    if a.structure is None or b.structure is None or a.content is None or b.content is None:
        same = visual >= settings.visual_only_threshold
        reason = (
            f"no hierarchy: visual {visual:.2f} "
            f"{'>=' if same else '<'} {settings.visual_only_threshold:.2f}"
        )
        structure = content = changes = None
        score = visual
    else:
        structure = multiset_jaccard(a.structure, b.structure)
        content = weighted_jaccard(a.content, b.content)
        total = settings.weight_visual + settings.weight_structure + settings.weight_content
        score = (
            settings.weight_visual * visual
            + settings.weight_structure * structure
            + settings.weight_content * content
        ) / total
        floors = (
            ("visual", visual, settings.visual_floor),
            ("structure", structure, settings.structure_floor),
            ("content", content, settings.content_floor),
        )
        low = next(((name, v, f) for name, v, f in floors if v < f), None)
        changes = text_changes(a.content, b.content)
        if low is not None:
            same, reason = False, f"{low[0]} {low[1]:.2f} < floor {low[2]:.2f}"
        elif changes > settings.max_text_changes:
            same, reason = (
                False,
                (
                    f"text changes {changes:.2f} > {settings.max_text_changes:.2f} allowed: "
                    + ", ".join(repr(t) for t in _changed(a.content, b.content)[:3])
                ),
            )
        else:
            same = score >= settings.same_threshold
            reason = f"score {score:.2f} {'>=' if same else '<'} {settings.same_threshold:.2f}"
    if activity == "different" and settings.activity_must_match:
        same, reason = False, f"different activities ({a.activity} vs {b.activity})"
    return Verdict(
        same=same,
        score=score,
        visual=visual,
        structure=structure,
        content=content,
        activity=activity,
        reason=reason,
        changes=changes,
    )
