"""Finding a demonstrated element again on a live screen, and spotting dialogs.

An edge's element is known by its resource-id, text and content description as the
demonstration's hierarchy had them. A list row often has none of its own (a settings
row is a bare layout), so it is known by its title instead: the first text inside it.
On the live screen the element is looked up by those, never by position; only an
element with nothing to know it by falls back to the demonstrated point.

>>> from graph_builder.hierarchy import parse_hierarchy
>>> row = ('<node class="L" clickable="true" bounds="[0,{0}][1080,{1}]">'
...        '<node text="{2}" bounds="[40,{0}][400,{1}]"/></node>')
>>> def screen(*titles):
...     rows = [row.format(200 * i, 200 * i + 180, t) for i, t in enumerate(titles)]
...     return parse_hierarchy("<hierarchy>" + "".join(rows) + "</hierarchy>")
>>> target = target_in(screen("Wi-Fi", "Display"), (540, 290), None)
>>> target.known_by
"title 'Display'"
>>> locate(target, screen("Display", "Wi-Fi")).element.bounds.top
0
>>> locate(target, screen("Wi-Fi", "Screen")).note
"no element titled 'Display'"
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from graph_builder.hierarchy import Hierarchy, UIElement
from graph_builder.model import Bounds, ElementRef, Point

# What marks a dialog window in a uiautomator dump: its title (or, untitled, its message).
_DIALOG_TITLE = "android:id/alertTitle"
_DIALOG_MESSAGE = "android:id/message"
_DIALOG_BUTTONS = "android:id/buttonPanel"


@dataclass(frozen=True, slots=True)
class Target:
    """What a demonstrated element is known by; ``point`` is where it was tapped."""

    resource_id: str
    text: str
    content_desc: str
    class_name: str
    title: str  # the first text inside, when the element has no text or description
    interactive: bool
    point: Point
    bounds: Bounds | None = None  # the element's box on the demonstrated screen

    @property
    def known_by(self) -> str:
        parts = []
        if self.resource_id:
            parts.append(f"id {self.resource_id.rpartition('/')[2]}")
        if self.text:
            parts.append(f"text {self.text!r}")
        if self.content_desc:
            parts.append(f"description {self.content_desc!r}")
        if not parts and self.title:
            parts.append(f"title {self.title!r}")
        return ", ".join(parts) or "its position alone"


@dataclass(frozen=True, slots=True)
class Found:
    """The live element (None: gone), how it was found, and what is there instead."""

    element: UIElement | None
    how: str
    note: str = ""


def target_in(hierarchy: Hierarchy | None, point: Point, element: ElementRef | None) -> Target:
    """The target a demonstration tapped at ``point`` (device pixels of ``hierarchy``).

    ``element`` is the action's own record of it; the node's hierarchy adds its title.
    """
    found = _demonstrated(hierarchy, point, element) if hierarchy is not None else None
    if found is not None and hierarchy is not None:
        return Target(
            found.resource_id,
            found.text,
            found.content_desc,
            found.class_name,
            "" if found.text or found.content_desc else _first_text(hierarchy, found),
            found.interactive,
            point,
            found.bounds,
        )
    if element is not None:
        return Target(
            element.resource_id,
            element.text,
            element.content_desc,
            element.class_name,
            "",
            True,
            point,
            element.bounds,
        )
    return Target("", "", "", "", "", True, point)


def _demonstrated(
    hierarchy: Hierarchy, point: Point, element: ElementRef | None
) -> UIElement | None:
    if element is not None:
        for e in hierarchy.visible():
            if e.class_name == element.class_name and _same_box(e, element):
                return e
    return hierarchy.element_at(*point)


def _same_box(e: UIElement, ref: ElementRef) -> bool:
    a, b = e.bounds, ref.bounds
    return (
        max(
            abs(a.left - b.left),
            abs(a.top - b.top),
            abs(a.right - b.right),
            abs(a.bottom - b.bottom),
        )
        <= 2
    )


def _first_text(hierarchy: Hierarchy, element: UIElement) -> str:
    pending = list(hierarchy.children(element))
    while pending:
        current = pending.pop(0)
        if current.visible and (current.text or current.content_desc):
            return current.text or current.content_desc
        pending[:0] = hierarchy.children(current)
    return ""


def locate(target: Target, live: Hierarchy) -> Found:
    """Find ``target`` on the live screen; the nearest to the demonstrated point wins."""
    shown = [e for e in live.visible()]
    if target.text or target.content_desc:
        label = target.text or target.content_desc
        exact = [e for e in shown if _labelled(e, target) and _same_id(e, target)]
        if exact:
            return Found(_nearest(exact, target.point), f"by {target.known_by}")
        relabelled = [e for e in shown if _labelled(e, target)]
        if relabelled:
            return Found(_nearest(relabelled, target.point), f"by {label!r} (its id changed)")
        return Found(None, "", _instead(target, shown) or f"no element {label!r}")
    if target.title:
        rows = [
            r
            for e in shown
            if target.title in (e.text, e.content_desc)
            for r in _row(e, live, target)
        ]
        if rows:
            return Found(_nearest(rows, target.point), f"by title {target.title!r}")
        return Found(None, "", f"no element titled {target.title!r}")
    if target.resource_id:
        same = [e for e in shown if e.resource_id == target.resource_id]
        if same:
            return Found(_nearest(same, target.point), f"by {target.known_by}")
        return Found(None, "", f"no element with {target.known_by}")
    return Found(live.element_at(*target.point), "at the demonstrated point")


def aim(target: Target, element: UIElement) -> Point:
    """Where to tap ``element``: at the same spot within it as the demonstration tapped
    within its old box (a slider keeps its value), else at its centre."""
    old, new = target.bounds, element.bounds
    if old is None or old.width <= 0 or old.height <= 0:
        return new.center
    fx = min(max((target.point[0] - old.left) / old.width, 0.0), 1.0)
    fy = min(max((target.point[1] - old.top) / old.height, 0.0), 1.0)
    return new.left + fx * new.width, new.top + fy * new.height


def _labelled(e: UIElement, target: Target) -> bool:
    return (not target.text or e.text == target.text) and (
        not target.content_desc or e.content_desc == target.content_desc
    )


def _same_id(e: UIElement, target: Target) -> bool:
    return not target.resource_id or e.resource_id == target.resource_id


def _instead(target: Target, shown: list[UIElement]) -> str:
    """For a renamed element: what the element with its id reads now."""
    if not target.resource_id:
        return ""
    same = [e for e in shown if e.resource_id == target.resource_id]
    if not same:
        return ""
    now = _nearest(same, target.point)
    label = target.text or target.content_desc
    short = target.resource_id.rpartition("/")[2]
    reads = now.text or now.content_desc
    return f"no element {label!r}; the element with id {short} now reads {reads!r}"


def _row(e: UIElement, live: Hierarchy, target: Target) -> list[UIElement]:
    """The element (``e`` or an ancestor) of the target's class that holds the title ``e``."""
    for candidate in (e, *live.ancestors(e)):
        if candidate.class_name == target.class_name and (
            candidate.interactive or not target.interactive
        ):
            return [candidate]
    return []


def _nearest(elements: list[UIElement], point: Point) -> UIElement:
    return min(elements, key=lambda e: math.dist(e.bounds.center, point))


def dialogs(hierarchy: Hierarchy | None) -> set[str]:
    """The dialogs on a screen, each named by its title (or its message)."""
    if hierarchy is None:
        return set()
    titles = {e.text for e in hierarchy.visible() if e.resource_id == _DIALOG_TITLE and e.text}
    if titles or not any(e.resource_id == _DIALOG_BUTTONS for e in hierarchy.visible()):
        return titles
    return {e.text for e in hierarchy.visible() if e.resource_id == _DIALOG_MESSAGE and e.text}
