"""Parsing uiautomator dumps and finding the element under a point."""

from __future__ import annotations

import pytest
from PIL import Image

from graph_builder.errors import FormatError
from graph_builder.hierarchy import load_hierarchy, parse_hierarchy
from tests.shared_fixtures import require_llamatouch_trace

HEAD = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


def node(bounds, *children, **attrs):
    names = {"class_": "class"}
    extra = " ".join(f'{names.get(k, k.replace("_", "-"))}="{v}"' for k, v in attrs.items())
    return f'<node bounds="{bounds}" {extra}>{"".join(children)}</node>'


def dump(*nodes):
    return HEAD + '<hierarchy rotation="0">' + "".join(nodes) + "</hierarchy>"


SCREEN = node(
    "[0,0][1080,2400]",
    node(
        "[0,100][1080,300]",  # a clickable row with a non-clickable label inside
        node("[40,120][600,280]", text="Display", class_="android.widget.TextView"),
        clickable="true",
        resource_id="com.android.settings:id/row",
    ),
    node(
        "[0,300][1080,800]",  # overlapping clickables: the smaller one wins
        node("[100,400][300,600]", clickable="true", content_desc="Star"),
        clickable="true",
        resource_id="big",
    ),
    node("[500,1000][500,1000]", clickable="true", text="zero-size"),
    node("[0,1000][1080,1200]", text="plain text"),
    node("[0,1200][1080,1400]", clickable="true", visible_to_user="false", text="hidden"),
    class_="android.widget.FrameLayout",
)


@pytest.fixture
def screen():
    return parse_hierarchy(dump(SCREEN))


def test_tree_structure(screen):
    root = screen.roots()[0]
    assert root.class_name == "android.widget.FrameLayout"
    assert [c.resource_id or c.text for c in screen.children(root)][:2] == [
        "com.android.settings:id/row",
        "big",
    ]
    label = screen.find(text="Display")[0]
    assert [a.index for a in screen.ancestors(label)] == [1, 0]
    assert label.depth == 2


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ((300, 200), "row"),  # label is not clickable: its clickable parent
        ((200, 500), "Star"),  # nested clickable inside clickable: the smallest
        ((900, 700), "big"),
        ((500, 1000), "plain text"),  # zero-size clickable never matches
        ((500, 1100), "plain text"),  # no clickable: the smallest element
        ((500, 1300), "android.widget.FrameLayout"),  # invisible clickable is skipped
        ((1080, 200), None),  # right edge is exclusive
    ],
)
def test_element_at(screen, point, expected):
    found = screen.element_at(*point)
    assert (found.label() if found else None) == expected


def test_element_summary_keeps_what_an_action_needs(screen):
    ref = screen.find(text="Display")[0].ref()
    assert ref.text == "Display"
    assert ref.bounds.as_list() == [40, 120, 600, 280]
    assert ref.class_name == "android.widget.TextView"


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        ("", "the hierarchy file is empty"),
        (dump(SCREEN)[:-40], "malformed hierarchy XML"),
        (HEAD + "<html><body/></html>", "not a uiautomator dump: the root element is <html>"),
        (dump(node("[0,0][0,0]")), "no element with a non-zero size"),
        (dump(node("[-5,0][100,100]")), "negative or inverted"),
        (dump(node("[100,100][50,50]")), "negative or inverted"),
        (dump(node("0,0,10,10")), "not of the form"),
        (dump('<node text="no bounds"/>'), "has no bounds"),
    ],
)
def test_bad_dumps_raise_format_errors(xml, message):
    with pytest.raises(FormatError, match=message) as info:
        parse_hierarchy(xml, source="demo/steps/0001.xml")
    assert "demo/steps/0001.xml" in str(info.value)


def test_entities_are_not_expanded():
    evil = (
        HEAD
        + '<!DOCTYPE h [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        + dump(node("[0,0][10,10]", text="&x;")).removeprefix(HEAD)
    )
    with pytest.raises(FormatError, match="external entity"):
        parse_hierarchy(evil)


def test_missing_file(tmp_path):
    with pytest.raises(FormatError, match="hierarchy file not found"):
        load_hierarchy(tmp_path / "nope.xml")


# The real LlamaTouch trace: [Home], then three clicks in 320x720 space (see its README).
REAL_CLICKS = {1: (204, 170), 2: (150, 260), 3: (191, 385)}
EXPECTED = {
    1: ("Duolingo", "android.widget.TextView"),  # the launcher icon
    2: ("", "android.widget.LinearLayout"),  # the first lesson bubble on the path
    3: ("START +10 XP", "android.widget.TextView"),  # the start button of the lesson card
}


@pytest.mark.parametrize("index", range(5))
def test_real_dumps_parse(index):
    trace = require_llamatouch_trace()
    parsed = load_hierarchy(trace / f"{index}.xml")
    assert len(parsed) > 20
    assert all(e.bounds.right <= 1080 and e.bounds.bottom <= 2400 for e in parsed)


@pytest.mark.parametrize("index", sorted(REAL_CLICKS))
def test_real_clicks_land_on_the_element_a_human_tapped(index):
    trace = require_llamatouch_trace()
    width, height = Image.open(trace / f"{index}.png").size
    x, y = REAL_CLICKS[index]
    found = load_hierarchy(trace / f"{index}.xml").element_at(x * width / 320, y * height / 720)
    assert found is not None and found.clickable
    assert (found.text, found.class_name) == EXPECTED[index]
