"""An XPath that finds one element of a uiautomator dump, as short as it can be.

The inspector shows it so a researcher can paste it into a test script or a task's rule.
It is built from the parsed ``Hierarchy`` alone: an element is a UI element exactly when
it has a ``bounds`` attribute or is a ``<node>`` (see ``graph_builder.hierarchy``), so the
hierarchy knows how many elements of the dump carry a given id, text or bounds.

Readable forms come first: a unique resource-id, text or content-desc, then a pair of
them, then bounds with them. Otherwise the element is counted among the UI elements
inside its nearest ancestor that has such a form, or among all of them: exact for every
dump the parser reads, since the parser counts UI elements the same way.

>>> from graph_builder.hierarchy import parse_hierarchy
>>> h = parse_hierarchy(
...     '<hierarchy><node class="a.Frame" bounds="[0,0][100,100]">'
...     '<node text="Display" resource-id="p:id/title" bounds="[0,0][100,50]"/>'
...     '<node text="Display" bounds="[0,50][100,100]"/></node></hierarchy>'
... )
>>> for e in h:
...     print(element_xpath(h, e))
//*[@bounds='[0,0][100,100]']
//*[@resource-id='p:id/title']
//*[@text='Display' and @bounds='[0,50][100,100]']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from graph_builder.hierarchy import Hierarchy, UIElement
from graph_builder.model import Bounds

# (attribute in the dump, how to read it from a UIElement)
_KEYS = (
    ("resource-id", lambda e: e.resource_id),
    ("text", lambda e: e.text),
    ("content-desc", lambda e: e.content_desc),
)


def bounds_attribute(bounds: Bounds) -> str:
    """Bounds written as the dump writes them: ``[left,top][right,bottom]``."""
    left, top, right, bottom = (f"{v:.0f}" for v in bounds.as_list())
    return f"[{left},{top}][{right},{bottom}]"


def literal(value: str) -> str:
    """``value`` as an XPath 1.0 string literal (which has no escapes)."""
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    parts = value.split("'")
    return "concat(" + ', "\'", '.join(f"'{p}'" for p in parts) + ")"


def element_xpath(hierarchy: Hierarchy, element: UIElement) -> str:
    """An XPath that selects ``element`` and nothing else in the dump it was parsed from."""
    found = _unique(hierarchy, element)
    if found is not None:
        return found
    # Counted from the nearest ancestor that has a readable XPath, else from the top.
    for ancestor in hierarchy.ancestors(element):
        anchor = _unique(hierarchy, ancestor)
        if anchor is not None:
            # Pre-order: an element's descendants directly follow it.
            return f"({anchor}//*[@bounds or self::node])[{element.index - ancestor.index}]"
    return f"(//*[@bounds or self::node])[{element.index + 1}]"


def _unique(hierarchy: Hierarchy, element: UIElement) -> str | None:
    """The shortest attribute test that only ``element`` passes, as an XPath, or None."""
    pairs = [(name, read(element)) for name, read in _KEYS if read(element)]
    # Repaired bounds no longer read as they were written, so they cannot be matched.
    if not hierarchy.repairs:
        pairs.append(("bounds", bounds_attribute(element.bounds)))
    for chosen in _candidates(pairs):
        if _count(hierarchy, chosen) == 1:
            return "//*[" + " and ".join(f"@{n}={literal(v)}" for n, v in chosen) + "]"
    return None


def _candidates(
    pairs: list[tuple[str, str]],
) -> Iterable[tuple[tuple[str, str], ...]]:
    identifying = [p for p in pairs if p[0] != "bounds"]
    for pair in identifying:
        yield (pair,)
    for i, first in enumerate(identifying):
        for second in identifying[i + 1 :]:
            yield first, second
    bounds = [p for p in pairs if p[0] == "bounds"]
    if bounds:
        for pair in identifying:
            yield pair, bounds[0]
        yield (*identifying, bounds[0])


def _value(element: UIElement, name: str) -> str:
    if name == "bounds":
        return bounds_attribute(element.bounds)
    return next(read(element) for key, read in _KEYS if key == name)


def _count(hierarchy: Hierarchy, chosen: tuple[tuple[str, str], ...]) -> int:
    matches: Counter[bool] = Counter(
        all(_value(e, name) == value for name, value in chosen) for e in hierarchy
    )
    return matches[True]
