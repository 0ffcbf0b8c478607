"""What each text of a screen means for its identity: state, content or ambient.

A UI state is the same screen of the same app with the same controls, the same
user-entered content and the same checked/selected choices. The hierarchy says which
texts carry that, by what the widgets are, not by what the texts say:

- **state**: what a person typed (editable and password fields, and the texts the
  recordings typed, ``settings.user_texts``, wherever they show up again: a sent
  message is a list row, but it is the person's content), checked/unchecked and
  selected elements, disabled controls, titles (text in a toolbar or action bar, or with a
  ``title`` id outside a list) and control labels (buttons, tabs, switches, check boxes).
  One state token on one side only makes the screens different.
- **ambient**: what changes while the screen stays: the contents of list, grid and feed
  rows (siblings with the same shape: the same ``class#id`` and the same child kinds),
  secondary texts under an entry (every text of a clickable entry after its first),
  elements whose id names ambient content (``summary``, ``badge``, ``clock``, ``date``,
  ``prediction``, ...), clock times, dates and notification counts
  (``volatile_text_patterns``), a content description that adds to a text shown inside
  its element ("Gmail has 3 notifications" on the icon "Gmail"; one that only repeats
  the texts is left out), and slots a suite learned (``settings.ambient_slots``).
  Ambient tokens never make a new state.
- **content**: every other text (a banner, a dialog's message, a counter): a change counts.

Checked, selected and typed text stay state inside list rows: a row's words are ambient,
its switch is not.

>>> from graph_builder.hierarchy import parse_hierarchy
>>> h = parse_hierarchy(
...     '<hierarchy><node class="android.widget.FrameLayout" bounds="[0,0][1080,2400]">'
...     '<node class="android.widget.TextView" resource-id="a:id/title" text="Inbox"'
...     ' bounds="[0,100][1080,200]"/>'
...     '<node class="android.widget.ListView" scrollable="true" bounds="[0,200][1080,2400]">'
...     '<node class="android.widget.TextView" resource-id="a:id/row" text="Hi Ann"'
...     ' bounds="[0,200][1080,300]"/>'
...     '<node class="android.widget.TextView" resource-id="a:id/row" text="Lunch?"'
...     ' bounds="[0,300][1080,400]"/></node></node></hierarchy>'
... )
>>> tokens = screen_tokens(h, SimilaritySettings())
>>> sorted(tokens.state), sorted(tokens.ambient)
(['[title] inbox'], ['hi ann', 'lunch?'])
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from graph_builder.hierarchy import Hierarchy, UIElement
from graph_builder.phash import SYSTEM_UI_PACKAGE
from graph_builder.settings import Box, SimilaritySettings

__all__ = ["ScreenTokens", "learn_ambient_slots", "normalize_text", "screen_tokens"]

_SPACE = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+\+?")  # "9+" badges too
_ID_WORDS = re.compile(r"[a-z]+")
_URL_NUMBER = re.compile(r"=\d{9,}(?=&|$)")  # "?q=x&ts=1591200119988"
_WORD = re.compile(r"[^\W\d_]", re.UNICODE)  # a letter of any script

# Widget classes (last name part, lower case) whose label names a control.
_CONTROL_SUFFIXES = ("button", "switch", "checkbox", "chip", "tab", "tabview", "spinner")
_CONTROL_ID_WORDS = frozenset({"button", "btn", "tab", "switch", "toggle", "checkbox", "chip"})
_TITLE_ID_WORDS = frozenset({"title", "toolbar", "actionbar", "appbar", "headline", "header"})
_BAR_CLASSES = ("toolbar", "actionbar")
# Controls whose value a dump does not show (uiautomator leaves out a slider's position).
_OPAQUE_SUFFIXES = ("seekbar", "slider", "ratingbar")
_SURFACE_SUFFIXES = ("webview", "surfaceview", "textureview", "videoview", "mapview")
_LIST_CLASSES = ("recyclerview", "listview", "gridview")
_DIALOG_ID_WORDS = frozenset({"dialog", "alert", "popup", "sheet", "permission", "prompt"})


def normalize_text(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


@dataclass(frozen=True, slots=True)
class ScreenTokens:
    """One screen's identity, split by role; computed once per screen and settings.

    ``boxes`` holds each state and content token's element bounds (for the keyboard and
    scroll checks), ``sizes`` those and the ambient texts' (for the resize check),
    ``frames`` the first box of every structure path, ``slots`` the
    structure path of each state and content token (a suite learns ambient slots by
    them; a scrolled viewport hides only what lies inside it).
    """

    structure: Counter[str]
    state: Mapping[str, float]
    content: Mapping[str, float]
    ambient: frozenset[str]
    rows: frozenset[str]  # the list rows' names (each row's first text)
    clock: frozenset[str]  # the ambient texts that are times, dates or counts
    asked: frozenset[str]  # content texts of a dialog: what it asks, never learned ambient
    boxes: Mapping[str, Box]
    sizes: Mapping[str, Box]
    frames: Mapping[str, Box]
    slots: Mapping[str, str]
    height: float
    opaque: bool  # a slider's value or a blank web/video/map surface: not in the dump
    typing: bool  # an editable field has focus: a soft keyboard may be up


def _id_words(element: UIElement) -> frozenset[str]:
    """The words of an element's id: ``tab_title``, ``tabTitle`` -> {"tab", "title"}."""
    return _words_of_id(element.resource_id)


@functools.lru_cache(maxsize=4096)
def _words_of_id(resource_id: str) -> frozenset[str]:
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", resource_id.rpartition("/")[2]).casefold()
    return frozenset(_ID_WORDS.findall(name))


def _short_class(element: UIElement) -> str:
    return _short(element.class_name)


@functools.lru_cache(maxsize=1024)
def _short(class_name: str) -> str:
    return class_name.rpartition(".")[2].casefold()


def _editable(element: UIElement) -> bool:
    cls = _short_class(element)
    return element.password or cls.endswith(("edittext", "autocompletetextview", "searchview"))


def _control(element: UIElement) -> bool:
    return _short_class(element).endswith(_CONTROL_SUFFIXES) or bool(
        _id_words(element) & _CONTROL_ID_WORDS
    )


def _titled_in(element: UIElement, tree: _Tree) -> bool:
    return tree.in_bar[element.index] or "title" in _id_words(element)


def _step(element: UIElement) -> str:
    return f"{element.class_name.rpartition('.')[2]}#{element.resource_id.rpartition('/')[2]}"


@functools.lru_cache(maxsize=16)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns) or r"(?!)", re.IGNORECASE)


class _Tree:
    """Per-element facts computed in one or two passes over the pre-order list."""

    def __init__(self, hierarchy: Hierarchy, settings: SimilaritySettings) -> None:
        elements = hierarchy.elements
        n = len(elements)
        self.hierarchy = hierarchy
        self.steps = [_step(e) for e in elements]
        self.end = list(range(n))  # the last index of each element's subtree
        for e in reversed(elements):
            if e.parent is not None and self.end[e.index] > self.end[e.parent]:
                self.end[e.parent] = self.end[e.index]
        self.has_text = [bool(e.text) for e in elements]  # any text in the subtree
        for e in reversed(elements):
            if e.parent is not None and self.has_text[e.index]:
                self.has_text[e.parent] = True
        self._below: dict[int, frozenset[str]] = {}
        # Web content and dialogs: a web view's elements carry no widget roles (every
        # one is a View without an id), and a dialog's sentence is its question.
        self.web = [False] * n
        self.dialog = [False] * n
        for e in elements:
            inherited = e.parent is not None
            cls = _short_class(e)
            self.web[e.index] = (inherited and self.web[e.parent]) or "webview" in cls  # type: ignore[index]
            self.dialog[e.index] = (
                (inherited and self.dialog[e.parent])  # type: ignore[index]
                or "dialog" in cls
                or "popup" in cls
                or bool(_id_words(e) & _DIALOG_ID_WORDS)
            )
        self.row = self._rows(hierarchy)
        ambient_words = frozenset(settings.ambient_id_words)
        self.ambient_id = [bool(_id_words(e) & ambient_words) for e in elements]
        self.in_bar = [False] * n
        for e in elements:
            parent_bar = self.in_bar[e.parent] if e.parent is not None else False
            bar = (
                _short_class(e).endswith(_BAR_CLASSES)
                or bool(_id_words(e) & {"toolbar", "actionbar", "appbar"})
                or "action_bar" in e.resource_id
            )
            self.in_bar[e.index] = parent_bar or bar
        # Secondary texts: in a clickable entry, every text after its first. A clickable
        # entry inside it is an entry of its own (and keeps the scan linear).
        self.secondary = [False] * n
        for e in elements:
            if not e.interactive or _control(e) or _editable(e) or self.web[e.index]:
                continue
            seen_first = False
            i, last = e.index + 1, self.end[e.index]
            while i <= last:
                child = elements[i]
                if child.interactive:
                    i = self.end[i] + 1
                    continue
                i += 1
                if not (child.text or child.content_desc) or _control(child) or _editable(child):
                    continue
                if seen_first:
                    self.secondary[child.index] = True
                seen_first = True

    def texts_below(self, element: UIElement) -> frozenset[str]:
        """The normalized texts of an element and its subtree (computed when asked)."""
        found = self._below.get(element.index)
        if found is None:
            elements = self.hierarchy.elements
            found = frozenset(
                normalize_text(elements[i].text)
                for i in range(element.index, self.end[element.index] + 1)
                if elements[i].text
            )
            self._below[element.index] = found
        return found

    def blank_surface(self, element: UIElement) -> bool:
        """A web view, video, map or drawing surface over a fifth of the screen or more
        that says (almost) nothing in the dump: only the picture shows what it holds."""
        if not _short_class(element).endswith(_SURFACE_SUFFIXES):
            return False
        root = self.hierarchy.elements[0].bounds
        if element.bounds.area < 0.2 * max(root.area, 1):
            return False
        return len(self.texts_below(element)) < 3

    def _rows(self, hierarchy: Hierarchy) -> list[int | None]:
        """For each element, the list row it is in (the row's index), or None.

        Rows are composite siblings of the same shape (same step, same set of child
        steps), at least two of them holding text; in a list widget single text views
        of one shape are rows too. A list widget's other children (a settings page's
        header, its one slider) are not rows.
        """
        elements = hierarchy.elements
        steps = self.steps
        kids: list[list[int]] = [[] for _ in elements]
        for e in elements:
            if e.parent is not None:
                kids[e.parent].append(e.index)
        shape_of = [(steps[i], frozenset(steps[c] for c in kids[i])) for i in range(len(elements))]
        row: list[int | None] = [None] * len(elements)
        for parent in elements:
            children = kids[parent.index]
            if len(children) < 2 or self.dialog[parent.index]:
                continue  # a dialog's list is its choices, not ambient rows
            # Web content has no widget roles: only a longer run of one shape is a list.
            least = 3 if self.web[parent.index] else 2
            is_list = _short_class(parent).endswith(_LIST_CLASSES)
            shapes = Counter(
                shape_of[k] for k in children if self.has_text[k] or elements[k].content_desc
            )
            for k in children:
                # A column of plain labels is not a list: rows are composite items,
                # except in a list widget, whose rows may be single text views.
                repeated = shapes[shape_of[k]] >= least and (bool(kids[k]) or is_list)
                if repeated and row[k] is None:
                    for i in range(k, self.end[k] + 1):
                        if row[i] is None:
                            row[i] = k
        return row


_Rule = Callable[[UIElement, "_Tree"], bool]

# The roles of a text, in order: the first rule that holds decides. State rules first,
# so a switch or a typed word inside a list row stays state.
_STATE_RULES: tuple[tuple[str, _Rule], ...] = (
    ("typed", lambda e, t: _editable(e)),
    ("title", lambda e, t: t.row[e.index] is None and not t.web[e.index] and _titled_in(e, t)),
    ("control", lambda e, t: t.row[e.index] is None and _control(e)),
)
_AMBIENT_RULES: tuple[tuple[str, _Rule], ...] = (
    ("row", lambda e, t: t.row[e.index] is not None),
    ("ambient id", lambda e, t: t.ambient_id[e.index]),
    ("secondary", lambda e, t: t.secondary[e.index]),
)


def _role(element: UIElement, tree: _Tree) -> str | None:
    """The state kind ("typed", "title", "control"), "ambient", or None for content."""
    for name, rule in _STATE_RULES:
        if rule(element, tree):
            return name
    for _, rule in _AMBIENT_RULES:
        if rule(element, tree):
            return "ambient"
    return None


def _overlap(a: Box, b: Box) -> Box | None:
    """The intersection of two rectangles, or None when they do not overlap."""
    left, top = max(a[0], b[0]), max(a[1], b[1])
    right, bottom = min(a[2], b[2]), min(a[3], b[3])
    return (left, top, right, bottom) if right > left and bottom > top else None


def _overlay_elements(tree: _Tree, settings: SimilaritySettings) -> set[int]:
    """Transient overlays: toasts (when ``settings.ignore_toasts``), snackbars and an input
    method's window.

    A toast is a window holding ``android:id/message`` and nothing to tap: it outlives the
    action that raised it by seconds, so the same screen is dumped with and without it.
    Dialogs use the same id but have buttons, so they stay.
    """
    elements = tree.hierarchy.elements
    skip: set[int] = set()
    for e in elements:
        span = range(e.index, tree.end[e.index] + 1)
        if e.parent is None and settings.ignore_toasts:
            window = [elements[i] for i in span]
            if any(w.resource_id == "android:id/message" for w in window) and not any(
                w.interactive for w in window
            ):
                skip.update(span)
        if "snackbar" in _id_words(e) or "inputmethod" in e.package or e.package.endswith(".ime"):
            skip.update(span)
    return skip


def _sentence(text: str, settings: SimilaritySettings) -> bool:
    return len(text) >= settings.sentence_chars and text.count(" ") >= 4


def screen_tokens(hierarchy: Hierarchy, settings: SimilaritySettings) -> ScreenTokens:
    """The structure and the role-split text tokens of one screen (see the module doc).

    Left out: System UI, transient overlays (toasts when ``settings.ignore_toasts``,
    snackbars, an input method's window), and elements off the screen: outside their
    window or scrolled out of a scrolling container. Structure counts each path inside a
    list row once, so rows that come and go leave the structure alone.
    """
    tree = _Tree(hierarchy, settings)
    volatile = _compiled(settings.volatile_text_patterns)
    counters = _compiled(settings.counter_text_patterns)
    learned = frozenset(settings.ambient_slots)
    entered = frozenset(normalize_text(t) for t in settings.user_texts)
    skip = _overlay_elements(tree, settings)
    paths: dict[int, str] = {}
    clips: dict[int, Box | None] = {}  # the area each element's children can show in
    structure: Counter[str] = Counter()
    state: dict[str, float] = {}
    content: dict[str, float] = {}
    ambient: set[str] = set()
    rows: set[str] = set()
    named_rows: set[int] = set()
    asked: set[str] = set()
    clock: set[str] = set()
    boxes: dict[str, Box] = {}
    sizes: dict[str, Box] = {}
    frames: dict[str, Box] = {}
    slots: dict[str, str] = {}
    names: Counter[str] = Counter()
    sentence_slots: Counter[str] = Counter()
    height = 0.0
    opaque = False
    typing = False
    for e in hierarchy.elements:
        b = e.bounds
        box = (float(b.left), float(b.top), float(b.right), float(b.bottom))
        height = max(height, b.bottom)
        opaque = opaque or _short_class(e).endswith(_OPAQUE_SUFFIXES) or tree.blank_surface(e)
        typing = typing or (e.focused and _editable(e))
        if e.parent is None:
            path, shown = tree.steps[e.index], _overlap(box, box)
        else:
            path, clip = f"{paths[e.parent]}/{tree.steps[e.index]}", clips[e.parent]
            shown = _overlap(box, clip) if clip is not None else None
        paths[e.index] = path
        clips[e.index] = shown if e.parent is None or e.scrollable else clips[e.parent]
        if shown is None or not e.visible or e.package == SYSTEM_UI_PACKAGE or e.index in skip:
            continue
        in_row = tree.row[e.index] is not None
        if in_row or tree.web[e.index]:  # how many rows or web items there are varies
            structure[path] = 1
        else:
            structure[path] += 1
        frames.setdefault(path, box)
        role = _role(e, tree)
        for raw, is_desc in ((e.text, False), (e.content_desc, True)):
            text = normalize_text(raw)
            if not text:
                continue
            if is_desc and (text in tree.texts_below(e) or _repeats(text, tree, e)):
                continue  # a description that repeats the texts inside its element
            if is_desc and any(t and t in text for t in tree.texts_below(e)):
                ambient.add(text)  # a shown text with more said about it: a badge
                continue
            volatile_text = bool(volatile.search(text))
            if counters.search(text):
                text = _DIGITS.sub("#", text)
            text = _URL_NUMBER.sub("=#", text)  # a timestamp or session id in a shown URL
            if text in entered and role != "typed":
                role = "entered"  # what the person typed, shown back (a sent message)
            elif role in ("title", "control") and not _WORD.search(text):
                role = "ambient"  # a count or an icon glyph ("13" tabs, "470" likes)
            if role in ("typed", "entered") or (
                role in ("title", "control") and not _sentence(text, settings)
            ):
                token = f"[{role}] {text}"
                if token not in state:
                    state[token] = 1.0
                    boxes[token] = box
                    slots[token] = path
                continue
            if role == "ambient" or volatile_text or path in learned:
                ambient.add(text)
                if volatile_text:
                    clock.add(text)
                row_index = tree.row[e.index]
                if row_index is not None and not volatile_text and row_index not in named_rows:
                    named_rows.add(row_index)  # a row is named by its first text
                    rows.add(text)
                sizes.setdefault(f"[ambient] {text}", box)
                continue
            if text in content:
                continue
            weight = 1.0
            if _sentence(text, settings) and not _editable(e) and not tree.dialog[e.index]:
                weight = settings.volatile_text_weight
                slot = "/".join(path.rsplit("/", 2)[-2:])
                sentence_slots[slot] += 1
                content[f"[sentence] {slot} #{sentence_slots[slot]}"] = 1.0
            elif len(text) > settings.long_text_chars:
                weight = settings.volatile_text_weight
            content[text] = weight
            boxes[text] = box
            slots[text] = path
            if tree.dialog[e.index]:
                asked.add(text)
        _choice_tokens(e, tree, state, names, box, boxes, counters)
    return ScreenTokens(
        structure=structure,
        state=state,
        content=content,
        ambient=frozenset(ambient),
        rows=frozenset(rows),
        clock=frozenset(clock),
        asked=frozenset(asked),
        boxes=boxes,
        sizes={**sizes, **boxes},
        frames=frames,
        slots=slots,
        height=height,
        opaque=opaque,
        typing=typing,
    )


def _repeats(desc: str, tree: _Tree, element: UIElement) -> bool:
    """A description made of the texts inside its element ("Ann, Lunch?, 10:42")."""
    below = tree.texts_below(element)
    return bool(below) and any(t and t in desc for t in below) and len(below) >= 2


def _choice_tokens(
    e: UIElement,
    tree: _Tree,
    state: dict[str, float],
    names: Counter[str],
    box: Box,
    boxes: dict[str, Box],
    counters: re.Pattern[str],
) -> None:
    """``[on]``/``[off]``/``[selected]``/``[disabled]`` tokens of one element.

    Keyed by what a person would call the element (its text, else the first text inside
    it: a row is named by its title) and its occurrence, not by the state, so a flipped
    switch shows up as one token gone and one new, and another selected row as another
    name.
    """
    flags = []
    if e.checkable:
        flags.append("on" if e.checked else "off")
    if e.selected:
        flags.append("selected")
    if not e.enabled and (e.interactive or _control(e)):
        flags.append("disabled")
    if not flags:
        return
    label = tree.hierarchy.spoken_label(e)
    name = normalize_text(label.rpartition(".")[2] if label == e.class_name else label)
    if counters.search(name):
        name = _DIGITS.sub("#", name)  # a tab named "Notifications, 20 new"
    names[name] += 1
    for flag in flags:
        token = f"[{flag}] {name} #{names[name]}"
        state[token] = 1.0
        boxes[token] = box


def learn_ambient_slots(
    screens: Sequence[tuple[str, ScreenTokens]], settings: SimilaritySettings
) -> tuple[str, ...]:
    """Slots (structure paths) whose text varies while the rest of the screen holds.

    ``screens`` are (demonstration id, tokens) of one task's or suite's recordings. Two
    screens from different demonstrations that agree on their structure, on every state
    token and on every content text but those of one slot are two visits of one screen
    whose slot changed by itself. A slot seen with at least ``settings.learn_min_values``
    different texts that way holds ambient content (a greeting that follows the time of
    day, a balance, a headline). A dialog's texts are never learned: another question is
    another dialog. Pure: the same screens give the same slots, sorted.

    >>> from graph_builder.hierarchy import parse_hierarchy
    >>> def screen(news):
    ...     return screen_tokens(parse_hierarchy(
    ...         '<hierarchy><node class="android.widget.FrameLayout" bounds="[0,0][1080,2400]">'
    ...         '<node class="android.widget.TextView" resource-id="a:id/title" text="News"'
    ...         ' bounds="[0,0][1080,200]"/><node class="android.widget.TextView"'
    ...         f' resource-id="a:id/top" text="{news}" bounds="[0,200][1080,400]"/>'
    ...         '</node></hierarchy>'), SimilaritySettings())
    >>> learn_ambient_slots([("d1", screen("Rain")), ("d2", screen("Sun")),
    ...                      ("d3", screen("Snow"))], SimilaritySettings())
    ('FrameLayout#/TextView#top',)
    """
    groups: dict[tuple[frozenset[str], frozenset[tuple[str, int]]], list[tuple[str, ScreenTokens]]]
    groups = {}
    for demo_id, tokens in screens:
        key = (frozenset(tokens.state), frozenset(tokens.structure.items()))
        groups.setdefault(key, []).append((demo_id, tokens))
    values: dict[str, set[str]] = {}
    for visits in groups.values():
        for i, (demo_a, a) in enumerate(visits):
            for demo_b, b in visits[i + 1 :]:
                if demo_a == demo_b:
                    continue
                one_sided = [(t, a) for t in a.content if t not in b.content]
                one_sided += [(t, b) for t in b.content if t not in a.content]
                if any(t in side.asked for t, side in one_sided):
                    continue  # another dialog question: another state
                changed = {side.slots[t] for t, side in one_sided if t in side.slots}
                if len(changed) != 1:
                    continue
                (slot,) = changed
                seen = values.setdefault(slot, set())
                seen.update(t for t in a.content if a.slots.get(t) == slot)
                seen.update(t for t in b.content if b.slots.get(t) == slot)
    return tuple(sorted(s for s, seen in values.items() if len(seen) >= settings.learn_min_values))
