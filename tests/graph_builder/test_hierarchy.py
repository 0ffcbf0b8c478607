"""Parsing uiautomator dumps and finding the element under a point."""

from __future__ import annotations

import gzip

import pytest
from PIL import Image

from graph_builder.errors import FormatError
from graph_builder.hierarchy import load_hierarchy, parse_hierarchy
from tests.shared_fixtures import require_dev_screens, require_llamatouch_trace

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
        (gzip.compress(b"  "), "the hierarchy file is empty"),
        (dump(SCREEN)[:-40], "malformed hierarchy XML: the dump is cut off"),
        (dump(SCREEN)[:-12], "does not end with </hierarchy>"),
        ("UI hierchary dumped to: /dev/tty", "malformed hierarchy XML"),
        (HEAD + "<html><body/></html>", "not a uiautomator dump: the root element is <html>"),
        (dump(node("[0,0][0,0]")), "no element with a non-zero size"),
        (dump(node("[100,100][50,50]")), "no element with a non-zero size"),
        (b"\x1f\x8b not really gzip", "cannot decompress"),
    ],
)
def test_dumps_without_a_usable_hierarchy_raise_format_errors(xml, message):
    with pytest.raises(FormatError, match=message) as info:
        parse_hierarchy(xml, source="demo/steps/0001.xml")
    assert "demo/steps/0001.xml" in str(info.value)


def test_a_clean_dump_needs_no_repair(screen):
    assert screen.repairs == ()


def test_escaped_characters_are_read_back():
    parsed = parse_hierarchy(dump(node("[0,0][10,10]", text="Network &amp; internet &#38; &lt;3")))
    assert parsed.elements[0].text == "Network & internet & <3"


REAL_INVERTED = dump(
    node(
        "[0,0][1080,2400]",
        node("[0,2189][1080,2154]", text="scrolled out"),  # as dumped by Pixel Settings
        node("[0,220][1080,28]", text="also out"),  # as dumped by Chrome
        node("[-20,300][500,400]", text="partly off the left edge", clickable="true"),
        node("[0,500][1080,600]", text="fine"),
    )
)


def test_inverted_and_negative_bounds_are_clamped_not_refused():
    parsed = parse_hierarchy(REAL_INVERTED)
    by_text = {e.text: e for e in parsed}
    assert by_text["scrolled out"].bounds.as_list() == [0, 2189, 1080, 2189]
    assert by_text["also out"].bounds.as_list() == [0, 220, 1080, 220]
    assert by_text["partly off the left edge"].bounds.as_list() == [0, 300, 500, 400]
    assert by_text["fine"].bounds.as_list() == [0, 500, 1080, 600]
    # Collapsed elements are invisible to matching: no tap lands on them.
    assert parsed.element_at(500, 2170).text == ""
    assert parsed.element_at(10, 350).text == "partly off the left edge"
    assert parsed.repairs == (
        "2 nodes with inverted bounds collapsed to zero size (first: node 1 [0,2189][1080,2154])",
        "1 node with negative bounds clamped to 0 (first: node 3 [-20,300][500,400])",
    )


def test_text_around_the_xml_is_cut():
    tail = "UI hierchary dumped to: /dev/tty"
    parsed = parse_hierarchy("WARNING: linker: unused DT entry\n" + dump(SCREEN) + tail + "\n")
    assert len(parsed) == len(parse_hierarchy(dump(SCREEN)))
    assert parsed.repairs == (
        "cut text before the XML: 'WARNING: linker: unused DT entry'",
        f"cut text after the XML: {tail!r}",
    )


def test_several_window_roots_are_one_screen():
    popup = dump(
        node("[100,800][980,1400]", node("[200,1200][500,1300]", text="OK", clickable="true"))
    )
    parsed = parse_hierarchy(dump(SCREEN) + "\n" + popup)
    assert [r.bounds.as_list() for r in parsed.roots()] == [
        [0, 0, 1080, 2400],
        [100, 800, 980, 1400],
    ]
    assert parsed.element_at(300, 1250).text == "OK"
    assert parsed.repairs == ("2 window roots read as one screen",)


def test_nodes_without_or_with_unreadable_bounds_are_kept_zero_sized():
    parsed = parse_hierarchy(
        dump(node("[0,0][1080,2400]", '<node text="no bounds"/>', node("0;0;10;10", text="odd")))
    )
    assert [(e.text, e.bounds.area) for e in parsed][1:] == [("no bounds", 0), ("odd", 0)]
    assert parsed.repairs == (
        "1 node without bounds kept as zero-sized (first: node 1)",
        "1 node with unreadable bounds kept as zero-sized (first: node 2 '0;0;10;10')",
    )


def test_xml_damage_inside_a_complete_dump_is_recovered():
    damaged = dump(node("[0,0][1080,2400]", node("[0,0][10,10]", text="Tom & Jerry")))
    parsed = parse_hierarchy(damaged.replace("Tom &amp; Jerry", "Tom & Jerry"))
    assert parsed.elements[0].bounds.as_list() == [0, 0, 1080, 2400]
    assert len(parsed.repairs) == 1 and "recovering parser" in parsed.repairs[0]


def test_compressed_and_utf16_dumps_read_like_plain_ones(screen):
    plain = dump(SCREEN)
    utf16 = ("\ufeff" + plain.replace("UTF-8", "UTF-16")).encode("utf-16-le")
    for data in (gzip.compress(plain.encode()), utf16):
        parsed = parse_hierarchy(data)
        assert parsed.elements == screen.elements and parsed.repairs == ()


def test_appium_page_source_reads_like_a_uiautomator_dump():
    appium = (
        HEAD + '<hierarchy index="0" class="hierarchy" rotation="0" width="1080" height="2400">'
        '<android.widget.FrameLayout class="android.widget.FrameLayout" bounds="[0,0][1080,2400]"'
        ' displayed="true"><android.widget.Button class="android.widget.Button" text="Log in"'
        ' clickable="true" bounds="[40,900][1040,1000]" displayed="true"/>'
        '<android.view.View bounds="[0,0][10,10]" displayed="false"/>'
        "</android.widget.FrameLayout></hierarchy>"
    )
    parsed = parse_hierarchy(appium)
    assert [e.class_name for e in parsed] == [
        "android.widget.FrameLayout",
        "android.widget.Button",
        "android.view.View",
    ]
    assert parsed.element_at(500, 950).text == "Log in"
    assert [e.visible for e in parsed] == [True, True, False]


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


def test_every_real_development_dump_parses():
    folder = require_dev_screens()
    for xml in sorted(folder.glob("*/*.xml")):
        parsed = load_hierarchy(xml)
        assert sum(e.bounds.area > 0 for e in parsed) > 5, xml
        assert parsed.repairs == (), xml


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
