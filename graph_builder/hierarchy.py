"""Parse uiautomator dumps into UI elements, and find the element under a point.

>>> h = parse_hierarchy(xml_text)  # doctest: +SKIP
>>> h.element_at(540, 1200).label()  # doctest: +SKIP
'Display'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from graph_builder.errors import FormatError
from graph_builder.model import Bounds, ElementRef

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_MAX_XML_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class UIElement:
    """One ``<node>`` of a uiautomator dump. ``index`` is its pre-order position."""

    index: int
    parent: int | None
    depth: int
    bounds: Bounds
    class_name: str = ""
    resource_id: str = ""
    text: str = ""
    content_desc: str = ""
    package: str = ""
    clickable: bool = False
    long_clickable: bool = False
    scrollable: bool = False
    checkable: bool = False
    checked: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    selected: bool = False
    password: bool = False
    visible: bool = True

    @property
    def interactive(self) -> bool:
        return self.clickable or self.long_clickable

    def label(self) -> str:
        """What a person would call the element."""
        return (
            self.text or self.content_desc or self.resource_id.rpartition("/")[2] or self.class_name
        )

    def ref(self) -> ElementRef:
        """The compact summary stored on an action."""
        return ElementRef(
            bounds=self.bounds,
            resource_id=self.resource_id,
            text=self.text,
            content_desc=self.content_desc,
            class_name=self.class_name,
        )


class Hierarchy:
    """The element tree of one screen, in pre-order, with parent links."""

    __slots__ = ("elements", "rotation", "_children")

    def __init__(self, elements: list[UIElement], rotation: int = 0) -> None:
        self.elements: tuple[UIElement, ...] = tuple(elements)
        self.rotation = rotation
        children: list[list[int]] = [[] for _ in elements]
        for e in elements:
            if e.parent is not None:
                children[e.parent].append(e.index)
        self._children = tuple(tuple(c) for c in children)

    def __len__(self) -> int:
        return len(self.elements)

    def __iter__(self) -> Iterator[UIElement]:
        return iter(self.elements)

    def children(self, element: UIElement) -> tuple[UIElement, ...]:
        return tuple(self.elements[i] for i in self._children[element.index])

    def roots(self) -> tuple[UIElement, ...]:
        return tuple(e for e in self.elements if e.parent is None)

    def ancestors(self, element: UIElement) -> Iterator[UIElement]:
        parent = element.parent
        while parent is not None:
            yield self.elements[parent]
            parent = self.elements[parent].parent

    def visible(self) -> Iterator[UIElement]:
        """Elements a person can see: visible to the user and not zero-sized."""
        return (e for e in self.elements if e.visible and e.bounds.area > 0)

    def element_at(self, x: float, y: float) -> UIElement | None:
        """The element a tap at (x, y) lands on.

        The smallest clickable (or long-clickable) element containing the point; if none
        is, the smallest element containing it. Zero-sized and invisible elements never
        match. Ties go to the element later in document order, which draws on top.
        """
        best: UIElement | None = None
        best_interactive: UIElement | None = None
        for e in self.visible():
            if not e.bounds.contains(x, y):
                continue
            if best is None or e.bounds.area <= best.bounds.area:
                best = e
            if e.interactive and (
                best_interactive is None or e.bounds.area <= best_interactive.bounds.area
            ):
                best_interactive = e
        return best_interactive or best

    def find(
        self,
        *,
        text: str | None = None,
        resource_id: str | None = None,
        content_desc: str | None = None,
    ) -> list[UIElement]:
        """Elements whose given attributes equal the given values."""
        return [
            e
            for e in self.elements
            if (text is None or e.text == text)
            and (resource_id is None or e.resource_id == resource_id)
            and (content_desc is None or e.content_desc == content_desc)
        ]

    def texts(self) -> list[str]:
        """Every non-empty text and content description on screen, in document order."""
        out: list[str] = []
        for e in self.visible():
            out.extend(t for t in (e.text, e.content_desc) if t)
        return out


def parse_hierarchy(xml: str | bytes, *, source: str | Path | None = None) -> Hierarchy:
    """Parse a uiautomator dump. Bad input raises FormatError naming ``source``."""
    data = xml.encode("utf-8") if isinstance(xml, str) else xml
    if not data.strip():
        raise FormatError("the hierarchy file is empty", source=source)
    if len(data) > _MAX_XML_BYTES:
        raise FormatError(f"hierarchy is larger than {_MAX_XML_BYTES} bytes", source=source)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise FormatError(f"malformed hierarchy XML: {exc}", source=source) from exc
    if root.tag != "hierarchy":
        raise FormatError(
            f"not a uiautomator dump: the root element is <{root.tag}>, expected <hierarchy>",
            source=source,
        )
    elements: list[UIElement] = []

    def walk(node: etree._Element, parent: int | None, depth: int) -> None:
        for child in node:
            if child.tag != "node":
                continue  # comments and unknown tags carry no UI
            index = len(elements)
            elements.append(_element(child, index, parent, depth, source))
            walk(child, index, depth + 1)

    walk(root, None, 0)
    if not any(e.bounds.area > 0 for e in elements):
        raise FormatError(
            "the dump has no element with a non-zero size (all bounds like [0,0][0,0]); "
            "it was probably taken while the screen was off or changing",
            source=source,
        )
    try:
        rotation = int(root.get("rotation", "0"))
    except ValueError:
        rotation = 0
    return Hierarchy(elements, rotation)


def load_hierarchy(path: str | Path) -> Hierarchy:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FormatError("hierarchy file not found", source=path) from None
    except OSError as exc:
        raise FormatError(f"cannot read hierarchy: {exc.strerror}", source=path) from exc
    return parse_hierarchy(data, source=path)


def parse_bounds(text: str, *, source: str | Path | None = None) -> Bounds:
    """``[l,t][r,b]`` -> Bounds. Negative or inverted bounds are a FormatError."""
    m = _BOUNDS.fullmatch(text.strip())
    if not m:
        raise FormatError(
            f"bounds {text!r} are not of the form [left,top][right,bottom]", source=source
        )
    left, top, right, bottom = (int(v) for v in m.groups())
    if min(left, top) < 0 or right < left or bottom < top:
        raise FormatError(f"bounds {text!r} are negative or inverted", source=source)
    return Bounds(left, top, right, bottom)


def _flag(node: etree._Element, name: str, default: bool = False) -> bool:
    value = node.get(name)
    return default if value is None else value == "true"


def _element(
    node: etree._Element, index: int, parent: int | None, depth: int, source: str | Path | None
) -> UIElement:
    raw_bounds = node.get("bounds")
    if raw_bounds is None:
        raise FormatError(
            f"node {index} (class {node.get('class', '?')!r}) has no bounds", source=source
        )
    return UIElement(
        index=index,
        parent=parent,
        depth=depth,
        bounds=parse_bounds(raw_bounds, source=source),
        class_name=node.get("class", ""),
        resource_id=node.get("resource-id", ""),
        text=node.get("text", ""),
        content_desc=node.get("content-desc", ""),
        package=node.get("package", ""),
        clickable=_flag(node, "clickable"),
        long_clickable=_flag(node, "long-clickable"),
        scrollable=_flag(node, "scrollable"),
        checkable=_flag(node, "checkable"),
        checked=_flag(node, "checked"),
        enabled=_flag(node, "enabled", True),
        focusable=_flag(node, "focusable"),
        focused=_flag(node, "focused"),
        selected=_flag(node, "selected"),
        password=_flag(node, "password"),
        visible=_flag(node, "visible-to-user", True),
    )
