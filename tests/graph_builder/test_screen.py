"""The one screen type: data read and parsed once, on first use, and shared, not copied."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from graph_builder.errors import FormatError
from graph_builder.model import MemberRef, Observation
from graph_builder.screen import Screen

XML = (
    "<?xml version='1.0' encoding='UTF-8' ?><hierarchy rotation=\"0\">"
    '<node class="android.widget.Button" text="Display" bounds="[0,0][50,20]" '
    'package="p" clickable="true" /></hierarchy>'
)


def png(color: tuple[int, int, int] = (200, 10, 10)) -> bytes:
    out = io.BytesIO()
    Image.new("RGBA", (50, 100), (*color, 255)).save(out, format="PNG")
    return out.getvalue()


def on_disk(folder: Path) -> Screen:
    (folder / "s.png").write_bytes(png())
    (folder / "s.xml").write_text(XML, encoding="utf-8")
    obs = Observation("s.png", (50, 100), "s.xml", "p/.Main", time=3.0, phash="phash16:00")
    return Screen.from_observation(obs, folder, MemberRef("d1", 2))


def test_files_are_read_on_first_use_and_kept(tmp_path: Path) -> None:
    screen = on_disk(tmp_path)
    assert (screen.activity, screen.time, screen.phash, screen.label) == (
        "p/.Main",
        3.0,
        "phash16:00",
        "d1#2",
    )
    hierarchy = screen.hierarchy()
    image = screen.image()
    (tmp_path / "s.png").unlink()
    (tmp_path / "s.xml").unlink()
    assert screen.hierarchy() is hierarchy and screen.image() is image
    assert image.mode == "RGB" and image.size == (50, 100)
    assert hierarchy is not None and hierarchy.find(text="Display")


def test_a_capture_in_memory_needs_no_files(tmp_path: Path) -> None:
    screen = Screen((50, 100), png=png(), hierarchy_xml=XML, activity="p/.Main")
    assert screen.has_hierarchy and screen.png() == png()
    parsed = screen.hierarchy()
    saved = screen.saved_at(tmp_path / "0000.png", tmp_path / "0000.xml")
    assert saved.hierarchy() is parsed  # parsed once, shared
    assert saved.screenshot_path == tmp_path / "0000.png"
    bare = screen.without_hierarchy()
    assert bare.hierarchy() is None and not bare.has_hierarchy
    assert bare.image() is not None and saved.hierarchy_path == tmp_path / "0000.xml"


def test_unreadable_data_is_a_format_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.png").write_bytes(b"not a png")
    broken = Screen.from_observation(Observation("bad.png", (5, 5), "gone.xml"), tmp_path)
    with pytest.raises(FormatError, match="bad.png"):
        broken.check_screenshot()
    with pytest.raises(FormatError, match="gone.xml.*not found"):
        broken.hierarchy()
    with pytest.raises(FormatError, match="hierarchy dump"):
        Screen((5, 5), png=png(), hierarchy_xml="<hierarchy").hierarchy()
    with pytest.raises(FormatError, match="has no screenshot"):
        Screen((5, 5)).png()


def test_derived_values_are_computed_once_per_key() -> None:
    screen = Screen((5, 5))
    calls: list[str] = []

    def compute(key: str) -> str:
        calls.append(key)
        return key.upper()

    assert screen.derived("f", "a", lambda: compute("a")) == "A"
    assert screen.derived("f", "a", lambda: compute("a")) == "A"
    assert screen.derived("f", "b", lambda: compute("b")) == "B"
    assert calls == ["a", "b"]


def test_copy_files_links_files_and_writes_what_is_in_memory(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    screen = on_disk(source)
    screen.copy_files(tmp_path / "n1.png", tmp_path / "n1.xml")
    assert (tmp_path / "n1.png").read_bytes() == png()
    assert (tmp_path / "n1.xml").read_text(encoding="utf-8") == XML
    Screen((50, 100), png=png((1, 2, 3)), hierarchy_xml=XML).copy_files(
        tmp_path / "n2.png", tmp_path / "n2.xml"
    )
    assert (tmp_path / "n2.png").read_bytes() == png((1, 2, 3))
    assert (tmp_path / "n2.xml").read_text(encoding="utf-8") == XML
    assert not list(tmp_path.glob(".*.tmp"))
