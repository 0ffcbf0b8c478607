"""Parse uiautomator dumps into UI elements, and find the element under a point.

Real dumps are messy, so one bad node never costs the whole screen. The parser reads the
classic ``uiautomator dump`` file (``<node>`` elements) and Appium's page source (each
element's tag is its class name): every element with a ``bounds`` attribute is a UI
element; other elements (the ``<hierarchy>`` root, window wrappers) only group them. It
repairs, and lists in ``Hierarchy.repairs``:

- negative bounds (clamped to 0) and inverted ones such as ``[0,2189][1080,2154]``
  (collapsed to zero size: Android reports them for views scrolled out of their parent);
- a ``<node>`` without bounds, or with unreadable ones (kept, zero-sized);
- text before or after the XML, such as uiautomator's own ``UI hierchary dumped to:
  /dev/tty`` line;
- several window roots in one file (read as one screen, each window a root);
- other XML damage inside a complete dump (read by lxml's recovering parser).

Gzip-compressed and UTF-16 dumps are read as they are. A file with no usable hierarchy
(empty, cut off before its end, no element with a size) is a FormatError naming it.

>>> h = parse_hierarchy(
...     '<hierarchy rotation="0"><node class="android.widget.FrameLayout" '
...     'bounds="[0,0][1080,2400]"><node text="Display" class="android.widget.TextView" '
...     'clickable="true" bounds="[0,1100][1080,1300]"/></node></hierarchy>'
... )
>>> h.element_at(540, 1200).label()
'Display'
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from lxml import etree

from graph_builder.errors import FormatError
from graph_builder.model import Action, Bounds, ElementRef, Size

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_MAX_XML_BYTES = 64 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_DECLARATION = re.compile(rb"<\?xml[^>]*\?>")
_WRAPPER = b"dump-windows"


class UIElement(NamedTuple):
    """One element of a uiautomator dump. ``index`` is its pre-order position.

    A named tuple rather than a frozen dataclass: a dump holds hundreds of elements and a
    tuple is several times cheaper to build, which is most of the parse.
    """

    index: int  # type: ignore[assignment]  # shadows tuple.index, on purpose
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

    __slots__ = ("elements", "rotation", "repairs", "_children")

    def __init__(
        self, elements: list[UIElement], rotation: int = 0, repairs: tuple[str, ...] = ()
    ) -> None:
        self.elements: tuple[UIElement, ...] = tuple(elements)
        self.rotation = rotation
        self.repairs = repairs  # what the parser had to fix, in words
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

    def spoken_label(self, element: UIElement) -> str:
        """What a person would call ``element``: its text or description; for a row (an
        interactive element without text) the first text inside it that is not a target
        of its own; else its id or class, short. A container that takes no input is never
        named by something inside it: a tap on its empty space did not hit that.

        The one naming of elements: the recorder's step list, the demo viewer, the graph
        editor and evaluation traces all use it.
        """
        if element.text or element.content_desc:
            return element.text or element.content_desc
        pending = list(self.children(element)) if element.interactive else []
        while pending:
            current = pending.pop(0)
            if current.interactive:
                continue  # a button inside a row is another target
            if current.text or current.content_desc:
                return current.text or current.content_desc
            pending[:0] = self.children(current)
        return element.resource_id.rpartition("/")[2] or element.class_name.rpartition(".")[2]

    def hit(self, action: Action, screen: Size | None = None) -> UIElement | None:
        """The element a tap or long press landed on (``element_at`` its point), or None.

        ``screen`` is this hierarchy's device size, for actions in another coordinate
        space. Step labels and the details beside them both name this element.
        """
        if not action.type.is_pointed or action.x is None or action.y is None:
            return None
        device = action.to_device(screen) if screen is not None else action
        if device.x is None or device.y is None:
            return None
        return self.element_at(device.x, device.y)

    def describe(self, action: Action, screen: Size | None = None) -> str:
        """``action.describe()``, with a tap or long press named by the element it hit.

        ``screen`` is this hierarchy's device size, for actions in another coordinate
        space (agents speak [0,1000]); the line keeps the action's own coordinates.

        >>> hierarchy = parse_hierarchy(
        ...     '<hierarchy><node class="android.widget.LinearLayout" bounds="[0,500][1080,700]">'
        ...     '<node text="Display" class="android.widget.TextView" bounds="[40,560][400,640]"/>'
        ...     "</node></hierarchy>"
        ... )
        >>> hierarchy.describe(Action.tap(540, 596, screen=(1080, 2400)))
        "tap (540, 596) 'LinearLayout'"
        >>> hierarchy.describe(Action.tap(100, 596, screen=(1080, 2400)))
        "tap (100, 596) 'Display'"
        """
        element = self.hit(action, screen)
        if element is None:
            return action.describe()
        label = self.spoken_label(element)
        return f"{action.type.value.replace('_', ' ')} ({action.x:.0f}, {action.y:.0f}) {label!r}"

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


class _Collector:
    """An lxml parser target: builds the elements in one pass, without building a tree."""

    def __init__(self) -> None:
        self.elements: list[UIElement] = []
        self.parents: list[int] = []  # indices of the open UI elements
        self.open: list[bool] = []  # per open XML element: is it a UI element?
        self.root_tag: str | None = None
        self.rotation: int | None = None
        self.wrapped = False  # under the wrapper added for several roots
        self.windows = 0  # roots directly under that wrapper
        self.fixes: Counter[str] = Counter()
        self.first_fix: dict[str, str] = {}

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        get = attrib.get
        raw = get("bounds")
        if tag == _WRAPPER_TAG and not self.open:
            self.wrapped = True
            self.open.append(False)
            return
        if self.wrapped and len(self.open) == 1:
            self.windows += 1
        if self.root_tag is None:
            self.root_tag = tag
        if raw is None and tag != "node":  # the <hierarchy> root, window wrappers
            if self.rotation is None and get("rotation") is not None:
                self.rotation = _int(get("rotation"))
            self.open.append(False)
            return
        index = len(self.elements)
        self.elements.append(
            UIElement(
                index,
                self.parents[-1] if self.parents else None,
                len(self.parents),
                self._bounds(raw, index),
                get("class") or ("" if tag == "node" else tag),
                get("resource-id", ""),
                get("text", ""),
                get("content-desc", ""),
                get("package", ""),
                get("clickable") == "true",
                get("long-clickable") == "true",
                get("scrollable") == "true",
                get("checkable") == "true",
                get("checked") == "true",
                get("enabled") != "false",
                get("focusable") == "true",
                get("focused") == "true",
                get("selected") == "true",
                get("password") == "true",
                # Appium's page source says "displayed" where uiautomator says nothing.
                (get("visible-to-user") or get("displayed")) != "false",
            )
        )
        self.parents.append(index)
        self.open.append(True)

    def end(self, tag: str) -> None:
        if self.open.pop():
            self.parents.pop()

    def close(self) -> _Collector:
        return self

    def _fix(self, kind: str, example: str) -> None:
        self.fixes[kind] += 1
        self.first_fix.setdefault(kind, example)

    def _bounds(self, raw: str | None, index: int) -> Bounds:
        try:  # "[l,t][r,b]"; a split is cheaper than the regex
            left, top, right, bottom = map(int, raw[1:-1].replace("][", ",").split(","))  # type: ignore[index]
        except (TypeError, ValueError):
            m = _BOUNDS.search(raw) if raw is not None else None
            if m is None:
                kind = "without bounds" if raw is None else "with unreadable bounds"
                self._fix(kind, f"node {index}" + (f" {raw!r}" if raw is not None else ""))
                return _NO_BOUNDS
            left, top, right, bottom = (int(v) for v in m.groups())
        if min(left, top, right, bottom) < 0:
            self._fix("with negative bounds", f"node {index} {raw}")
            left, top, right, bottom = (max(v, 0) for v in (left, top, right, bottom))
        if right < left or bottom < top:
            self._fix("with inverted bounds", f"node {index} {raw}")
            right, bottom = max(right, left), max(bottom, top)
        return Bounds(left, top, right, bottom)

    def repairs(self) -> list[str]:
        what = {
            "without bounds": "kept as zero-sized",
            "with unreadable bounds": "kept as zero-sized",
            "with negative bounds": "clamped to 0",
            "with inverted bounds": "collapsed to zero size",
        }
        return [
            f"{n} node{'s' if n > 1 else ''} {kind} {what[kind]} (first: {self.first_fix[kind]})"
            for kind, n in self.fixes.items()
        ]


_WRAPPER_TAG = _WRAPPER.decode()
_NO_BOUNDS = Bounds(0, 0, 0, 0)


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _run(data: bytes, *, recover: bool = False) -> _Collector:
    parser = etree.XMLParser(
        target=_Collector(),
        # Character references and the five XML entities only; a DOCTYPE is refused before.
        # (False would leave "&#38;" in the texts of a target parser.)
        resolve_entities="internal",
        no_network=True,
        huge_tree=False,
        recover=recover,
    )
    result: _Collector = etree.fromstring(data, parser)
    return result


def _decoded(data: bytes, source: str | Path | None) -> bytes:
    """Gzip and UTF-16 dumps as UTF-8 bytes."""
    if data.startswith(_GZIP_MAGIC):
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = inflater.decompress(data, _MAX_XML_BYTES + 1)
        except zlib.error as exc:
            raise FormatError(
                f"cannot decompress the gzip hierarchy: {exc}", source=source
            ) from exc
        if len(data) > _MAX_XML_BYTES:
            raise FormatError(
                f"hierarchy is larger than {_MAX_XML_BYTES} bytes uncompressed", source=source
            )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise FormatError(f"cannot decode the UTF-16 hierarchy: {exc}", source=source) from exc
        # The declaration still says UTF-16; the bytes are UTF-8 now.
        data = _DECLARATION.sub(b"", text.lstrip("\ufeff").encode("utf-8"), count=1)
    return data


def _snippet(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _repaired(
    data: bytes, error: etree.XMLSyntaxError, source: str | Path | None
) -> tuple[_Collector, list[str]]:
    """Parse a dump the strict parser refused, saying what was repaired (or raise)."""
    repairs: list[str] = []
    first, last = data.find(b"<"), data.rfind(b">")
    if first < 0 or last < first:
        raise FormatError(f"malformed hierarchy XML: {error}", source=source) from error
    lead = data[:first].removeprefix(b"\xef\xbb\xbf").strip()
    trail = data[last + 1 :].strip()
    if lead:
        repairs.append(f"cut text before the XML: {_snippet(lead)}")
    if trail:
        repairs.append(f"cut text after the XML: {_snippet(trail)}")
    body = _DECLARATION.sub(b"", data[first : last + 1])
    root = re.search(rb"<([A-Za-z_][\w.:-]*)", body)
    if root is None or not re.search(rb"</" + re.escape(root.group(1)) + rb"\s*>\s*$", body):
        raise FormatError(
            f"malformed hierarchy XML: the dump is cut off (it does not end with "
            f"</{(root.group(1) if root else b'hierarchy').decode()}>): {error}",
            source=source,
        ) from error
    wrapped = b"<" + _WRAPPER + b">" + body + b"</" + _WRAPPER + b">"
    for candidate in (body, wrapped):
        try:
            collector = _run(candidate)
        except etree.XMLSyntaxError:
            continue
        if collector.windows > 1:
            repairs.append(f"{collector.windows} window roots read as one screen")
        return collector, repairs
    try:
        collector = _run(wrapped, recover=True)
    except etree.XMLSyntaxError as exc:
        raise FormatError(f"malformed hierarchy XML: {exc}", source=source) from exc
    repairs.append(f"XML damage skipped by the recovering parser: {error}")
    return collector, repairs


def parse_hierarchy(xml: str | bytes, *, source: str | Path | None = None) -> Hierarchy:
    """Parse a uiautomator dump, repairing what can be repaired (see the module docstring).

    A file with no usable hierarchy raises FormatError naming ``source``.
    """
    data = xml.encode("utf-8") if isinstance(xml, str) else bytes(xml)
    data = _decoded(data, source)
    if not data.strip():
        raise FormatError("the hierarchy file is empty", source=source)
    if len(data) > _MAX_XML_BYTES:
        raise FormatError(f"hierarchy is larger than {_MAX_XML_BYTES} bytes", source=source)
    if b"<!DOCTYPE" in data:
        raise FormatError(
            "the file declares a DOCTYPE (entities, perhaps an external entity); "
            "uiautomator dumps have none, so it is not read",
            source=source,
        )
    repairs: list[str] = []
    try:
        collector = _run(data)
    except etree.XMLSyntaxError as exc:
        collector, repairs = _repaired(data, exc, source)
    elements = collector.elements
    if not elements:
        raise FormatError(
            f"not a uiautomator dump: the root element is <{collector.root_tag}> "
            "and no element has bounds",
            source=source,
        )
    if not any(e.bounds.area > 0 for e in elements):
        raise FormatError(
            "the dump has no element with a non-zero size (all bounds like [0,0][0,0]); "
            "it was probably taken while the screen was off or changing",
            source=source,
        )
    return Hierarchy(elements, collector.rotation or 0, (*repairs, *collector.repairs()))


def load_hierarchy(path: str | Path) -> Hierarchy:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FormatError("hierarchy file not found", source=path) from None
    except OSError as exc:
        raise FormatError(f"cannot read hierarchy: {exc.strerror}", source=path) from exc
    return parse_hierarchy(data, source=path)
