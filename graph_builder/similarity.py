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

>>> from PIL import Image, ImageDraw
>>> def state(title, clock="12:00", activity="app/.Main"):
...     image = Image.new("RGB", (270, 600), "white")
...     draw = ImageDraw.Draw(image)
...     draw.text((4, 2), clock, fill="black")
...     draw.rectangle((0, 21, 270, 70), fill=(30, 90, 160))
...     xml = ('<hierarchy><node class="android.widget.FrameLayout" package="app" '
...            'bounds="[0,0][270,600]"><node class="android.widget.TextView" package="app" '
...            f'text="{title}" bounds="[0,21][270,70]"/></node></hierarchy>')
...     return Screen((270, 600), image=image, hierarchy_xml=xml, activity=activity)
>>> verdict = compare(state("Display"), state("Display", "12:07"), settings=SimilaritySettings())
>>> verdict.same, verdict.reason
(True, 'score 1.00 >= 0.88')
>>> compare(state("Display"), state("Sound"), settings=SimilaritySettings()).same
False
>>> compare(state("Display"), state("Display", activity="app/.Other"),
...         settings=SimilaritySettings()).reason
'different activities (app/.Main vs app/.Other)'
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from graph_builder.hierarchy import Hierarchy
from graph_builder.phash import SYSTEM_UI_PACKAGE, compute_phash, hash_bits
from graph_builder.screen import Screen
from graph_builder.settings import SimilaritySettings, load_settings

__all__ = [
    "Features",
    "SimilaritySettings",
    "Verdict",
    "compare",
    "compare_features",
    "load_settings",
    "screen_features",
]

_SPACE = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+\+?")  # "9+" badges too


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


def screen_features(screen: Screen, settings: SimilaritySettings) -> Features:
    """The comparison features of one screen, computed once per screen and settings;
    raises FormatError when a needed file is bad."""
    return screen.derived("similarity", settings, lambda: _features(screen, settings))


def _features(screen: Screen, settings: SimilaritySettings) -> Features:
    hierarchy = screen.hierarchy()
    stored = screen.phash
    value = hash_bits(stored, settings) if stored else None
    if value is None:
        value = hash_bits(compute_phash(screen.image(), hierarchy, settings=settings), settings)
        assert value is not None
    structure, content = (
        hierarchy_signatures(hierarchy, settings) if hierarchy is not None else (None, None)
    )
    return Features(
        hash=value,
        bits=_hash_length(settings),
        activity=(screen.activity or "").strip() or None,
        structure=structure,
        content=content,
    )


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


_Box = tuple[float, float, float, float]


def _overlap(a: _Box, b: _Box) -> _Box | None:
    """The intersection of two rectangles, or None when they do not overlap."""
    left, top = max(a[0], b[0]), max(a[1], b[1])
    right, bottom = min(a[2], b[2]), min(a[3], b[3])
    return (left, top, right, bottom) if right > left and bottom > top else None


def _sentence(text: str, settings: SimilaritySettings) -> bool:
    return len(text) >= settings.sentence_chars and text.count(" ") >= 4


def hierarchy_signatures(
    hierarchy: Hierarchy, settings: SimilaritySettings
) -> tuple[Counter[str], dict[str, float]]:
    """The structure multiset and the weighted content tokens of one screen.

    Structure: root-to-element paths of ``class#resource-id`` steps. Content: normalized
    texts and content descriptions, and ``[on]``/``[off]``/``[selected]`` tokens for
    checkable and selected elements, keyed by label and occurrence. Left out: System UI,
    toasts when ``settings.ignore_toasts``, and elements off the screen: outside their
    window or scrolled out of a scrolling container (a launcher dumps the icons of its
    other pages, a web view the rest of its list).

    Texts matching ``counter_text_patterns`` ("3 new notifications", "21°C") have their
    digits masked (``# new notifications``). A sentence (``sentence_chars`` or longer, five
    words or more) in a text that is not edited weighs ``volatile_text_weight``, and its
    element counts as a ``[sentence]`` token, so a status sentence reworded in place costs
    little while a sentence that appears costs a full change.
    """
    volatile = _volatile(settings)
    counters = _compiled_patterns(settings.counter_text_patterns)
    skip = _toast_elements(hierarchy) if settings.ignore_toasts else set()
    paths: dict[int, str] = {}
    clips: dict[int, _Box | None] = {}  # the area each element's children can show in
    structure: Counter[str] = Counter()
    content: dict[str, float] = {}
    names: Counter[str] = Counter()
    slots: Counter[str] = Counter()
    for e in hierarchy.elements:
        step = f"{e.class_name.rpartition('.')[2]}#{e.resource_id.rpartition('/')[2]}"
        b = e.bounds
        box = (b.left, b.top, b.right, b.bottom)
        if e.parent is None:
            path, shown = step, _overlap(box, box)
        else:
            path, clip = f"{paths[e.parent]}/{step}", clips[e.parent]
            shown = _overlap(box, clip) if clip is not None else None
        paths[e.index] = path
        clips[e.index] = shown if e.parent is None or e.scrollable else clips[e.parent]
        if shown is None or not e.visible or e.package == SYSTEM_UI_PACKAGE:
            continue
        if e.index in skip:
            continue
        structure[path] += 1
        for raw in (e.text, e.content_desc):
            text = normalize_text(raw)
            if not text:
                continue
            if counters.search(text):
                text = _DIGITS.sub("#", text)
            if text in content:
                continue
            weight = 1.0
            if volatile.search(text):
                weight = settings.volatile_text_weight
            elif _sentence(text, settings) and not e.class_name.endswith("EditText"):
                weight = settings.volatile_text_weight
                slot = "/".join(path.rsplit("/", 2)[-2:])
                slots[slot] += 1
                content[f"[sentence] {slot} #{slots[slot]}"] = 1.0
            elif len(text) > settings.long_text_chars:
                weight = settings.volatile_text_weight
            content[text] = weight
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


def compare(a: Screen, b: Screen, *, settings: SimilaritySettings) -> Verdict:
    """Decide whether two screens are the same UI state."""
    return compare_features(screen_features(a, settings), screen_features(b, settings), settings)


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
