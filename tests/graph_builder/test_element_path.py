"""The inspector's XPath selects exactly its element, on the dump, evaluated by lxml."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from graph_builder.element_path import element_xpath, literal
from graph_builder.hierarchy import load_hierarchy
from tests.shared_fixtures import require_llamatouch_trace

SAMPLE_DEMOS = Path(__file__).resolve().parents[2] / "task_graphs" / "sample" / "demos"


def ui_nodes(path: Path) -> list[etree._Element]:
    """The dump's UI elements in document order, as the parser counts them."""
    tree = etree.parse(str(path), etree.XMLParser(recover=True, huge_tree=True))
    return [
        e
        for e in tree.iter()
        if isinstance(e.tag, str) and (e.tag == "node" or e.get("bounds") is not None)
    ]


def assert_every_xpath_is_exact(paths: list[Path]) -> int:
    checked = 0
    for path in paths:
        hierarchy = load_hierarchy(path)
        nodes = ui_nodes(path)
        assert len(nodes) == len(hierarchy), path
        root = nodes[0].getroottree()
        for element in hierarchy:
            xpath = element_xpath(hierarchy, element)
            assert root.xpath(xpath) == [nodes[element.index]], (path, element.index, xpath)
            checked += 1
    return checked


def test_every_element_of_the_sample_demos_has_an_exact_xpath():
    paths = sorted(SAMPLE_DEMOS.glob("*/d1/steps/*.xml"))[:40]
    assert paths
    assert assert_every_xpath_is_exact(paths) > 500


def test_every_element_of_a_real_trace_has_an_exact_xpath():
    trace = require_llamatouch_trace()
    assert assert_every_xpath_is_exact(sorted(trace.glob("*.xml"))) > 100


@pytest.mark.parametrize("value", ["plain", "it's", 'say "hi"', 'it\'s "quoted"'])
def test_literals_survive_quotes(value):
    tree = etree.fromstring(b"<a/>")
    assert tree.xpath(f"string({literal(value)})") == value
