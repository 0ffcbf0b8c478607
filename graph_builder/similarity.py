"""Are two observed screens the same UI state? An explained decision with a probability.

The hierarchy decides what a state is (``graph_builder.roles``): its **state** texts (typed
text, checked and selected choices, titles, control labels), its other **content** texts
and its **ambient** ones (list rows, summaries, badges, clocks, predictions), which never
make a new state. The decision, in order (``compare_features``):

1. different foreground activities -> different (``activity_must_match``);
2. no hierarchy on one side -> the screenshots' hashes decide (``visual_only_threshold``);
3. a state token on one side only -> different (a typed word, a flipped switch, another
   selected tab, another title), unless the keyboard covers it (below);
4. structure (paths of ``class#id`` steps, list rows counted once) < ``structure_floor``;
5. content changes (the summed weight of content texts on one side only) >
   ``max_text_changes``, or content Jaccard < ``content_floor``;
6. both screens show list rows and no row text is on both (another folder, another
   conversation: a refresh keeps some rows), or the elements both screens hold changed
   size (``resized_share`` of them: another font or display size);
7. visual < ``visual_floor`` when the hierarchy cannot settle it: some content text
   changed, it holds fewer than ``min_hierarchy_tokens`` state and content texts, or a
   control whose value the dump leaves out (a slider);
8. else the same: the screenshot's hash never vetoes two screens whose hierarchies agree
   on everything that is state.

A soft keyboard resizes the app's window: when a frame both screens hold is shorter by
``keyboard_share`` of the screen on one side, the texts the other side shows below that
edge are covered, not changed. The Verdict's ``score`` is the calibrated probability of
"same" (``graph_builder.calibration``); its ``reason`` says which rule decided.

>>> from PIL import Image, ImageDraw
>>> def state(title, clock="12:00", activity="app/.Main"):
...     image = Image.new("RGB", (270, 600), "white")
...     draw = ImageDraw.Draw(image)
...     draw.text((4, 2), clock, fill="black")
...     draw.rectangle((0, 21, 270, 70), fill=(30, 90, 160))
...     xml = ('<hierarchy><node class="android.widget.FrameLayout" package="app" '
...            'bounds="[0,0][270,600]"><node class="android.widget.TextView" package="app" '
...            f'resource-id="app:id/title" text="{title}" bounds="[0,21][270,70]"/>'
...            '</node></hierarchy>')
...     return Screen((270, 600), image=image, hierarchy_xml=xml, activity=activity)
>>> verdict = compare(state("Display"), state("Display", "12:07"), settings=SimilaritySettings())
>>> verdict.same, verdict.reason.split(";")[0]  # the clock is in the picture, not a state
(True, 'the hierarchies agree on every state text (1)')
>>> compare(state("Display"), state("Sound"), settings=SimilaritySettings()).same
False
>>> compare(state("Display"), state("Display", activity="app/.Other"),
...         settings=SimilaritySettings()).reason
'different activities (app/.Main vs app/.Other)'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from graph_builder.calibration import feature_row, probability
from graph_builder.phash import compute_phash, hash_bits
from graph_builder.roles import ScreenTokens, normalize_text, screen_tokens
from graph_builder.screen import Screen
from graph_builder.settings import Box, SimilaritySettings, load_settings

__all__ = [
    "Features",
    "SimilaritySettings",
    "Verdict",
    "compare",
    "compare_features",
    "load_settings",
    "normalize_text",
    "screen_features",
]


@dataclass(frozen=True, slots=True)
class Features:
    """What a comparison needs from one screen, computed once per screen."""

    hash: int
    bits: int
    activity: str | None
    tokens: ScreenTokens | None

    @property
    def has_hierarchy(self) -> bool:
        return self.tokens is not None


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
    return Features(
        hash=value,
        bits=settings.hash_size * settings.hash_size,
        activity=(screen.activity or "").strip() or None,
        tokens=screen_tokens(hierarchy, settings) if hierarchy is not None else None,
    )


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
    """The decision with every component, so an editor can show why.

    ``score`` is the calibrated probability that the screens are one state; ``changes``
    the content changes; ``state_changes`` the state tokens found on one side only;
    ``ambient`` the Jaccard agreement of the ambient texts (1 when both have none).
    """

    same: bool
    score: float
    visual: float
    structure: float | None
    content: float | None
    activity: str  # "same" | "different" | "unknown"
    reason: str
    changes: float | None = None
    state_changes: float | None = None
    ambient: float | None = None

    def describe(self) -> str:
        parts = [f"p(same) {self.score:.2f}", f"visual {self.visual:.2f}"]
        if self.structure is not None:
            parts.append(f"structure {self.structure:.2f}")
        if self.content is not None:
            parts.append(f"content {self.content:.2f}")
        if self.changes is not None:
            parts.append(f"text changes {self.changes:.2f}")
        if self.state_changes is not None:
            parts.append(f"state changes {self.state_changes:.0f}")
        if self.ambient is not None:
            parts.append(f"ambient {self.ambient:.2f}")
        parts.append(f"activity {self.activity}")
        return f"{'SAME' if self.same else 'DIFFERENT'} ({self.reason}; {', '.join(parts)})"


def compare(a: Screen, b: Screen, *, settings: SimilaritySettings) -> Verdict:
    """Decide whether two screens are the same UI state."""
    return compare_features(screen_features(a, settings), screen_features(b, settings), settings)


def visual_similarity(a: Features, b: Features) -> float:
    return 1.0 - (a.hash ^ b.hash).bit_count() / a.bits


def clearly_different(a: Features, b: Features, settings: SimilaritySettings) -> bool:
    """True when compare_features would say different from the activity and hash alone.

    A cheap test that lets the merge skip the hierarchy components for some pairs. With
    both hierarchies present the hash alone never decides, so only the activity can.
    """
    if settings.activity_must_match and a.activity and b.activity and a.activity != b.activity:
        return True
    if a.tokens is None or b.tokens is None:
        return visual_similarity(a, b) < settings.visual_only_threshold
    # Pictures this far apart are the same state only when a keyboard or a scroll explains
    # them (rule 8); when neither can, the hierarchy need not be compared.
    return (
        visual_similarity(a, b) < settings.visual_floor
        and not (a.tokens.typing or b.tokens.typing)
        and _covered(a.tokens, b.tokens, settings) == (None, None)
        and _scrolled(a.tokens, b.tokens) is None
        and _scrolled(b.tokens, a.tokens) is None
    )


def _covered(
    a: ScreenTokens, b: ScreenTokens, settings: SimilaritySettings
) -> tuple[float | None, float | None]:
    """Where a soft keyboard cuts each screen's window: (edge on a, edge on b) or None.

    A frame (a structure path) both screens hold whose top stays and whose bottom moved up
    by ``keyboard_share`` of the screen on one side: that side's window was resized by an
    input method, so what the other side shows below the new edge is hidden, not gone.
    """
    height = max(a.height, b.height, 1)
    edges: list[float | None] = [None, None]
    for path, box_a in a.frames.items():
        box_b = b.frames.get(path)
        if box_b is None or abs(box_a[1] - box_b[1]) > 0.03 * height:
            continue
        shrink = box_b[3] - box_a[3]
        if abs(shrink) < settings.keyboard_share * height:
            continue
        side, edge = (0, box_a[3]) if shrink > 0 else (1, box_b[3])
        if edges[side] is None or edge < edges[side]:  # type: ignore[operator]
            edges[side] = edge
    if edges[0] is not None and edges[1] is not None:
        return None, None  # both shrank somewhere: no single keyboard explains it
    return edges[0], edges[1]


_CHOICES = ("[typed] ", "[on] ", "[off] ", "[selected] ", "[disabled] ")


def _one_sided(
    mine: Mapping[str, float],
    theirs: Mapping[str, float],
    tokens: ScreenTokens,
    their_edge: float | None,
    scroll: tuple[float, Box, str] | None = None,
) -> tuple[dict[str, float], set[str]]:
    """My tokens the other side lacks, less those it hides; and those it hides.

    A keyboard hides what lies below its edge, and the app scrolls the focused field into
    view, which can push labels out at the top; a scrolled viewport hides what the scroll
    took out of it. Typed text and choices are hidden only when out of view.
    """
    out: dict[str, float] = {}
    hidden: set[str] = set()
    for token, weight in mine.items():
        if token in theirs:
            continue
        box = tokens.boxes.get(token)
        under_keyboard = their_edge is not None and (
            not token.startswith(_CHOICES) or (box is not None and box[1] >= their_edge - 2)
        )
        if under_keyboard or _out_of_view(box, tokens.slots.get(token, ""), scroll):
            hidden.add(token)
            continue
        out[token] = weight
    return out, hidden


def _scrolled(a: ScreenTokens, b: ScreenTokens) -> tuple[float, Box, str] | None:
    """How far b's content scrolled against a's, b's viewport and its path; None when
    it did not.

    The texts both screens hold moved by one common offset (at least three of them) inside
    a frame that stayed put: that frame is the viewport, and a's texts inside it that the
    same offset takes out of it are scrolled out of view on b, not gone.
    """
    shifts: Counter[float] = Counter()
    for token, box in a.boxes.items():
        other = b.boxes.get(token)
        if other is not None and other[1] != box[1]:
            shifts[other[1] - box[1]] += 1
    if not shifts:
        return None
    dy, count = shifts.most_common(1)[0]
    if count < 3:
        return None
    moved = [
        b.boxes[t] for t, box in a.boxes.items() if t in b.boxes and b.boxes[t][1] - box[1] == dy
    ]
    top, bottom = min(m[1] for m in moved), max(m[3] for m in moved)
    best: tuple[Box, str] | None = None
    for path, frame in b.frames.items():
        before = a.frames.get(path)
        if before is None or abs(before[1] - frame[1]) > 2 or abs(before[3] - frame[3]) > 2:
            continue
        if (
            frame[1] <= top
            and frame[3] >= bottom
            and (best is None or (frame[3] - frame[1]) < (best[0][3] - best[0][1]))
        ):
            best = (frame, path)
    return (dy, best[0], best[1]) if best is not None else None


def _out_of_view(box: Box | None, path: str, scroll: tuple[float, Box, str] | None) -> bool:
    if box is None or scroll is None:
        return False
    dy, view, view_path = scroll
    if not path.startswith(view_path + "/"):
        return False  # not inside the viewport (a toolbar above a scrolled page)
    return box[1] + dy < view[1] - 2 or box[3] + dy > view[3] + 2


def _resized(a: ScreenTokens, b: ScreenTokens) -> tuple[int, int]:
    """How many elements both screens hold changed height by over 15%, of how many."""
    changed = total = 0
    for token, box_a in a.sizes.items():
        box_b = b.sizes.get(token)
        if box_b is None:
            continue
        total += 1
        h_a, h_b = box_a[3] - box_a[1], box_b[3] - box_b[1]
        if abs(h_a - h_b) > 0.15 * max(h_a, h_b, 1):
            changed += 1
    return changed, total


def _unsettled(
    a: ScreenTokens,
    b: ScreenTokens,
    changes: float,
    informative: int,
    covered: int,
    settings: SimilaritySettings,
) -> str:
    """Why the hierarchy cannot overrule pictures that differ, or "" when it can.

    It can when it agrees on everything but times, dates and counts, and a keyboard
    explains the picture (a focused field, or texts it hid): the keyboard is not in most
    dumps. It cannot when some content or other ambient text changed, when it holds few
    texts, when a slider or a blank
    web, video or map surface hides what the picture shows, or when nothing explains the
    difference (a menu window the dump left out).
    """
    if changes:
        return f"{changes:.2f} text changes"
    moved = (a.ambient - a.clock) ^ (b.ambient - b.clock)
    if moved:
        return f"{len(moved)} ambient texts differ"
    if informative < settings.min_hierarchy_tokens:
        return f"only {informative} texts"
    if a.opaque or b.opaque:
        return "a slider or a blank surface the dump does not show"
    if not (covered or a.typing or b.typing):
        return "no keyboard or scroll to explain the picture"
    return ""


def _quote(tokens: list[str]) -> str:
    return ", ".join(repr(t) for t in tokens[:3])


def compare_features(a: Features, b: Features, settings: SimilaritySettings) -> Verdict:
    visual = visual_similarity(a, b)
    if a.activity is None or b.activity is None:
        activity = "unknown"
    else:
        activity = "same" if a.activity == b.activity else "different"
    if a.tokens is None or b.tokens is None:
        same = visual >= settings.visual_only_threshold
        reason = (
            f"no hierarchy: visual {visual:.2f} "
            f"{'>=' if same else '<'} {settings.visual_only_threshold:.2f}"
        )
        verdict = Verdict(same, visual, visual, None, None, activity, reason)
    else:
        verdict = _hierarchy_verdict(a.tokens, b.tokens, visual, activity, settings)
    if activity == "different" and settings.activity_must_match:
        return Verdict(
            False,
            verdict.score,
            verdict.visual,
            verdict.structure,
            verdict.content,
            activity,
            f"different activities ({a.activity} vs {b.activity})",
            verdict.changes,
            verdict.state_changes,
            verdict.ambient,
        )
    return verdict


def _hierarchy_verdict(
    a: ScreenTokens, b: ScreenTokens, visual: float, activity: str, settings: SimilaritySettings
) -> Verdict:
    structure = multiset_jaccard(a.structure, b.structure)
    if structure < settings.structure_floor:  # other layouts: no need to look further
        return _verdict(
            False,
            f"structure {structure:.2f} < floor {settings.structure_floor:.2f}",
            visual,
            structure,
            weighted_jaccard(a.content, b.content),
            activity,
            text_changes(a.content, b.content),
            float(len(a.state.keys() ^ b.state.keys())),
            _agreement(a.ambient, b.ambient),
            settings,
        )
    edge_a, edge_b = _covered(a, b, settings)
    a_to_b, b_to_a = _scrolled(a, b), _scrolled(b, a)
    state_a, hidden_a = _one_sided(a.state, b.state, a, edge_b, a_to_b)
    state_b, hidden_b = _one_sided(b.state, a.state, b, edge_a, b_to_a)
    content_a, covered_a = _one_sided(a.content, b.content, a, edge_b, a_to_b)
    content_b, covered_b = _one_sided(b.content, a.content, b, edge_a, b_to_a)
    covered = len(hidden_a) + len(hidden_b) + len(covered_a) + len(covered_b)
    state_changes = float(len(state_a) + len(state_b))
    changes = sum(content_a.values()) + sum(content_b.values())
    if covered_a or covered_b:
        content = weighted_jaccard(
            {k: w for k, w in a.content.items() if k not in covered_a},
            {k: w for k, w in b.content.items() if k not in covered_b},
        )
    else:
        content = weighted_jaccard(a.content, b.content)
    ambient = _agreement(a.ambient, b.ambient)
    if state_changes:  # decided: the rest of the checks cannot make it the same
        reason = "state differs: " + _quote(_changed(state_a, state_b))
        return _verdict(
            False,
            reason,
            visual,
            structure,
            content,
            activity,
            changes,
            state_changes,
            ambient,
            settings,
        )
    informative = len(a.state.keys() | b.state.keys()) + len(a.content.keys() | b.content.keys())
    resized, held = _resized(a, b)
    union_rows = a.rows | b.rows
    rows = len(a.rows & b.rows) / len(union_rows) if union_rows else 1.0
    if changes > settings.max_text_changes:
        same, reason = (
            False,
            f"text changes {changes:.2f} > {settings.max_text_changes:.2f} allowed: "
            + _quote(_changed(content_a, content_b)),
        )
    elif content < settings.content_floor:
        same, reason = False, f"content {content:.2f} < floor {settings.content_floor:.2f}"
    elif a.rows and b.rows and rows < settings.min_row_overlap:
        same, reason = (
            False,
            f"the lists show other items (row overlap {rows:.2f} < "
            f"{settings.min_row_overlap:.2f}): " + _quote(sorted(a.rows ^ b.rows)),
        )
    elif held >= 3 and resized > settings.resized_share * held:
        same, reason = False, f"layout resized: {resized} of {held} elements changed height"
    elif visual < settings.visual_floor and (
        why := _unsettled(a, b, changes, informative, covered, settings)
    ):
        same, reason = (
            False,
            f"visual {visual:.2f} < floor {settings.visual_floor:.2f} and the hierarchy does "
            f"not explain it ({why})",
        )
    else:
        same = True
        reason = f"the hierarchies agree on every state text ({len(a.state)})"
        notes = []
        if covered:
            notes.append(f"{covered} texts under the keyboard or scrolled out")
        if a.ambient != b.ambient:
            notes.append(f"{len(a.ambient ^ b.ambient)} ambient texts differ")
        if notes:
            reason += ", " + ", ".join(notes)
    return _verdict(
        same,
        reason,
        visual,
        structure,
        content,
        activity,
        changes,
        state_changes,
        ambient,
        settings,
    )


def _agreement(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def _verdict(
    same: bool,
    reason: str,
    visual: float,
    structure: float,
    content: float,
    activity: str,
    changes: float,
    state_changes: float,
    ambient: float,
    settings: SimilaritySettings,
) -> Verdict:
    """The Verdict with its calibrated probability."""
    score = probability(
        settings.calibration,
        feature_row(same, visual, structure, content, changes, state_changes, ambient),
    )
    return Verdict(
        same=same,
        score=score,
        visual=visual,
        structure=structure,
        content=content,
        activity=activity,
        reason=reason,
        changes=changes,
        state_changes=state_changes,
        ambient=ambient,
    )
