"""UiSelector matching over a uiautomator hierarchy dump, as the on-device test server does.

A selector arrives as JSON: its set fields (`text`, `resourceId`, `className`, ...), a
`mask` of which are set, and a chain of `child`/`sibling` selectors. Matching follows
Android's UiSelector: exact, `Contains`, `StartsWith` and `Matches` (a Java regular
expression over the whole value) for strings, equality for the boolean properties, the
node's `index` among its siblings, and `instance` counting matches in document order.

>>> xml = ('<hierarchy rotation="0"><node index="0" text="OK" class="android.widget.Button"'
...        ' bounds="[0,0][10,20]" clickable="true"/></hierarchy>')
>>> [n.get("text") for n in match(xml, {"textStartsWith": "O", "clickable": True})]
['OK']
>>> node_info(match(xml, {"text": "OK"})[0])["bounds"]
{'left': 0, 'top': 0, 'right': 10, 'bottom': 20}
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

_META = frozenset(["mask", "childOrSibling", "childOrSiblingSelector"])
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def _text(attribute: str) -> Callable[[ET.Element, Any], bool]:
    return lambda node, value: node.get(attribute, "") == value


def _contains(attribute: str) -> Callable[[ET.Element, Any], bool]:
    return lambda node, value: str(value) in node.get(attribute, "")


def _starts(attribute: str) -> Callable[[ET.Element, Any], bool]:
    return lambda node, value: node.get(attribute, "").startswith(str(value))


def _matches(attribute: str) -> Callable[[ET.Element, Any], bool]:
    return lambda node, value: re.fullmatch(str(value), node.get(attribute, ""), re.S) is not None


def _flag(attribute: str) -> Callable[[ET.Element, Any], bool]:
    return lambda node, value: (node.get(attribute) == "true") == bool(value)


# Each selector field: how a node satisfies it.
FIELDS: dict[str, Callable[[ET.Element, Any], bool]] = {
    "text": _text("text"),
    "textContains": _contains("text"),
    "textMatches": _matches("text"),
    "textStartsWith": _starts("text"),
    "className": _text("class"),
    "classNameMatches": _matches("class"),
    "description": _text("content-desc"),
    "descriptionContains": _contains("content-desc"),
    "descriptionMatches": _matches("content-desc"),
    "descriptionStartsWith": _starts("content-desc"),
    "checkable": _flag("checkable"),
    "checked": _flag("checked"),
    "clickable": _flag("clickable"),
    "longClickable": _flag("long-clickable"),
    "scrollable": _flag("scrollable"),
    "enabled": _flag("enabled"),
    "focusable": _flag("focusable"),
    "focused": _flag("focused"),
    "selected": _flag("selected"),
    "packageName": _text("package"),
    "packageNameMatches": _matches("package"),
    "resourceId": _text("resource-id"),
    "resourceIdMatches": _matches("resource-id"),
    "index": lambda node, value: node.get("index", "") == str(value),
}


class SelectorError(ValueError):
    """A selector field the test server does not know, or a malformed regular expression."""


def _satisfies(node: ET.Element, selector: dict[str, Any]) -> bool:
    for key, value in selector.items():
        if key in _META or key == "instance":
            continue
        test = FIELDS.get(key)
        if test is None:
            raise SelectorError(f"unknown UiSelector field {key!r}")
        try:
            if not test(node, value):
                return False
        except re.error as exc:
            raise SelectorError(f"{key}={value!r} is not a valid regular expression") from exc
    return True


def _pick(nodes: list[ET.Element], selector: dict[str, Any]) -> list[ET.Element]:
    found = [n for n in nodes if _satisfies(n, selector)]
    if "instance" in selector:
        instance = int(selector["instance"])
        return found[instance : instance + 1]
    return found


def _below(roots: list[ET.Element]) -> list[ET.Element]:
    seen: dict[int, ET.Element] = {}
    for root in roots:
        for node in root.iter("node"):
            if node is not root:
                seen.setdefault(id(node), node)
    return list(seen.values())


def _siblings(nodes: list[ET.Element], parents: dict[int, ET.Element]) -> list[ET.Element]:
    around: list[ET.Element] = []
    for node in nodes:
        parent = parents.get(id(node))
        if parent is not None:
            around += [s for s in parent if s is not node]
    return around + _below(around)


def match(xml: str, selector: dict[str, Any]) -> list[ET.Element]:
    """Every node of the dump that the selector (with its child/sibling chain) picks."""
    root = ET.fromstring(xml.encode("utf-8"))
    everything = list(root.iter("node"))
    found = _pick(everything, selector)
    kinds = selector.get("childOrSibling") or []
    inner = selector.get("childOrSiblingSelector") or []
    if kinds:
        parents = {id(child): parent for parent in root.iter() for child in parent}
        for kind, sub in zip(kinds, inner, strict=False):
            pool = _below(found) if kind == "child" else _siblings(found, parents)
            order = {id(n): i for i, n in enumerate(everything)}
            found = _pick(sorted(pool, key=lambda n: order[id(n)]), sub)
    return found


def bounds(node: ET.Element) -> dict[str, int]:
    found = _BOUNDS.fullmatch(node.get("bounds", ""))
    left, top, right, bottom = (int(v) for v in found.groups()) if found else (0, 0, 0, 0)
    return {"left": left, "top": top, "right": right, "bottom": bottom}


def node_info(node: ET.Element) -> dict[str, Any]:
    """The object description the test server answers for a matched node."""
    box = bounds(node)
    return {
        "bounds": box,
        "visibleBounds": dict(box),
        "childCount": len(node.findall("node")),
        "className": node.get("class", ""),
        "contentDescription": node.get("content-desc", ""),
        "packageName": node.get("package", ""),
        "resourceName": node.get("resource-id", ""),
        "text": node.get("text", ""),
        "checkable": node.get("checkable") == "true",
        "checked": node.get("checked") == "true",
        "clickable": node.get("clickable") == "true",
        "enabled": node.get("enabled") == "true",
        "focusable": node.get("focusable") == "true",
        "focused": node.get("focused") == "true",
        "longClickable": node.get("long-clickable") == "true",
        "scrollable": node.get("scrollable") == "true",
        "selected": node.get("selected") == "true",
    }


def describe(selector: dict[str, Any]) -> str:
    """`UiSelector[TEXT=OK, CLICKABLE=true]`, as the exceptions name a selector."""
    parts = [
        f"{re.sub(r'(?<!^)(?=[A-Z])', '_', k).upper()}={v}"
        for k, v in selector.items()
        if k not in _META
    ]
    return f"UiSelector[{', '.join(parts)}]"
