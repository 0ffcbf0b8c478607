"""The one captured-screen type: a screenshot, its uiautomator hierarchy and the activity.

A ``Screen`` holds its data in memory (a device capture) or points at files (a recorded
step, a graph node, a trace), or both (a capture whose files were just written). The
PNG is read, the image decoded and the hierarchy parsed on first use only, and each is
kept, so the studio, the graph builder, the agents and the online protocol can pass the
same object around without converting it. Safe to share between threads.

>>> from io import BytesIO
>>> from PIL import Image
>>> buffer = BytesIO()
>>> Image.new("RGB", (270, 600), "white").save(buffer, "PNG")
>>> xml = ('<hierarchy><node class="android.widget.FrameLayout" bounds="[0,0][270,600]">'
...        '<node class="android.widget.TextView" text="Display" bounds="[10,100][260,140]"/>'
...        "</node></hierarchy>")
>>> screen = Screen((270, 600), png=buffer.getvalue(), hierarchy_xml=xml)
>>> screen.image().size, [e.bounds for e in screen.hierarchy().find(text="Display")]
((270, 600), [Bounds(left=10, top=100, right=260, bottom=140)])
"""

from __future__ import annotations

import io
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graph_builder.errors import FormatError, GraphBuilderError
from graph_builder.hierarchy import Hierarchy, load_hierarchy, parse_hierarchy
from graph_builder.io import check_png_file, confined, read_png
from graph_builder.model import Action, MemberRef, Observation, Size

if TYPE_CHECKING:
    from PIL import Image

__all__ = ["Screen"]


class Screen:
    """One observed screen. ``size`` is the screenshot's size in pixels.

    ``stable`` is False when the screen kept changing while it was captured, so the
    hierarchy may not match the screenshot exactly. ``member`` says which demonstration
    step it is (for node members and explanations). ``phash`` is the stored perceptual
    hash, when one was computed at capture.
    """

    __slots__ = (
        "size",
        "activity",
        "time",
        "phash",
        "stable",
        "member",
        "screenshot_path",
        "hierarchy_path",
        "_png",
        "_xml",
        "_image",
        "_hierarchy",
        "_parsed",
        "_derived",
        "_lock",
    )

    def __init__(
        self,
        size: Size,
        *,
        png: bytes | None = None,
        hierarchy_xml: str | None = None,
        screenshot_path: Path | None = None,
        hierarchy_path: Path | None = None,
        activity: str | None = None,
        time: float = 0.0,
        phash: str | None = None,
        stable: bool = True,
        member: MemberRef | None = None,
        image: Image.Image | None = None,
        hierarchy: Hierarchy | None = None,
    ) -> None:
        self.size = size
        self.activity = activity
        self.time = time
        self.phash = phash
        self.stable = stable
        self.member = member
        self.screenshot_path = Path(screenshot_path) if screenshot_path is not None else None
        self.hierarchy_path = Path(hierarchy_path) if hierarchy_path is not None else None
        self._png = png
        self._xml = hierarchy_xml
        self._image = image
        self._hierarchy = hierarchy
        # No hierarchy at all counts as parsed: there is nothing to read.
        self._parsed = hierarchy is not None or (hierarchy_xml is None and hierarchy_path is None)
        self._derived: dict[str, tuple[object, Any]] = {}
        self._lock = threading.RLock()

    @classmethod
    def from_observation(
        cls, observation: Observation, folder: Path, member: MemberRef | None = None
    ) -> Screen:
        """A recorded step's (or a node's) screen, its files read from ``folder`` when used."""
        folder = Path(folder)
        return cls(
            observation.screen,
            # Refused when the stored path leaves the folder (absolute, '..', a symlink out).
            screenshot_path=confined(folder, observation.screenshot),
            hierarchy_path=confined(folder, observation.hierarchy)
            if observation.hierarchy
            else None,
            activity=observation.activity,
            time=observation.time,
            phash=observation.phash,
            member=member,
        )

    def __repr__(self) -> str:
        return f"Screen({self.label!r})"

    @property
    def label(self) -> str:
        """How messages name this screen: its demo step, else its file, else its activity."""
        if self.member is not None:
            return str(self.member)
        if self.screenshot_path is not None:
            return self.screenshot_path.name
        return f"screen of {self.activity}" if self.activity else "captured screen"

    @property
    def package(self) -> str | None:
        return self.activity.partition("/")[0] if self.activity else None

    @property
    def has_hierarchy(self) -> bool:
        """Whether a hierarchy was captured (it may still turn out unreadable)."""
        return self._hierarchy is not None or self._xml is not None or bool(self.hierarchy_path)

    # -- the data, on first use

    def png(self) -> bytes:
        """The screenshot's PNG bytes (read from disk, or encoded from an in-memory image)."""
        with self._lock:
            if self._png is None:
                if self.screenshot_path is not None:
                    self._png = read_png(self.screenshot_path)
                elif self._image is not None:
                    buffer = io.BytesIO()
                    self._image.save(buffer, format="PNG")
                    self._png = buffer.getvalue()
                else:
                    raise FormatError(f"{self.label} has no screenshot")
            return self._png

    def image(self) -> Image.Image:
        """The screenshot as an RGB PIL image, decoded once."""
        with self._lock:
            if self._image is None:
                from PIL import Image

                try:
                    with Image.open(io.BytesIO(self.png())) as opened:
                        self._image = opened.convert("RGB")
                except (OSError, Image.DecompressionBombError) as exc:
                    raise FormatError(
                        f"cannot decode the screenshot: {exc}",
                        source=self.screenshot_path or self.label,
                    ) from exc
            return self._image

    def hierarchy_xml(self) -> str | None:
        """The hierarchy's XML text, or None when no hierarchy was captured."""
        with self._lock:
            if self._xml is None and self.hierarchy_path is not None:
                try:
                    self._xml = self.hierarchy_path.read_text(encoding="utf-8")
                except FileNotFoundError:
                    raise FormatError(
                        "hierarchy file not found", source=self.hierarchy_path
                    ) from None
                except (OSError, UnicodeDecodeError) as exc:
                    raise FormatError(
                        f"cannot read hierarchy: {exc}", source=self.hierarchy_path
                    ) from exc
            return self._xml

    def hierarchy(self) -> Hierarchy | None:
        """The parsed hierarchy, or None when none was captured; FormatError when unreadable."""
        with self._lock:
            if not self._parsed:
                if self._xml is not None:
                    source = self.hierarchy_path or "hierarchy dump"
                    self._hierarchy = parse_hierarchy(self._xml, source=source)
                else:
                    assert self.hierarchy_path is not None
                    self._hierarchy = load_hierarchy(self.hierarchy_path)
                self._parsed = True
            return self._hierarchy

    def describe(self, action: Action) -> str:
        """The action as traces and the studio show it: a tap named by the element it hits
        on this screen (``Hierarchy.describe``); plain ``describe()`` without a hierarchy."""
        try:
            hierarchy = self.hierarchy()
        except (GraphBuilderError, OSError):
            hierarchy = None
        return hierarchy.describe(action, self.size) if hierarchy else action.describe()

    def without_hierarchy(self) -> Screen:
        """The same screen with no hierarchy (shown to agents when the dump is unreadable).

        The screenshot and its decoded image are shared, not copied.
        """
        with self._lock:
            return Screen(
                self.size,
                png=self._png,
                screenshot_path=self.screenshot_path,
                activity=self.activity,
                time=self.time,
                phash=self.phash,
                stable=self.stable,
                member=self.member,
                image=self._image,
            )

    def saved_at(self, screenshot_path: Path, hierarchy_path: Path | None) -> Screen:
        """This screen, also known by the files it was just saved to (a trace step, say).
        The data in memory is shared, not copied."""
        with self._lock:
            screen = Screen(
                self.size,
                png=self._png,
                hierarchy_xml=self._xml,
                screenshot_path=screenshot_path,
                hierarchy_path=hierarchy_path if self.has_hierarchy else None,
                activity=self.activity,
                time=self.time,
                phash=self.phash,
                stable=self.stable,
                member=self.member,
                image=self._image,
                hierarchy=self._hierarchy,
            )
            screen._parsed = self._parsed
            return screen

    def derived[T](self, name: str, key: object, compute: Callable[[], T]) -> T:
        """A value computed from this screen, kept until asked for with another ``key``
        (the similarity features under one set of settings, for instance)."""
        with self._lock:
            kept = self._derived.get(name)
            if kept is not None and kept[0] == key:
                return kept[1]  # type: ignore[no-any-return]
        value = compute()
        with self._lock:
            self._derived[name] = (key, value)
        return value

    # -- files

    def check_screenshot(self) -> None:
        """Raise FormatError when the screenshot file is missing, not a PNG, truncated or a
        decompression bomb (checked without decoding it: a stored hash spares the decode)."""
        if self._image is not None or self._png is not None or self.screenshot_path is None:
            return
        check_png_file(self.screenshot_path)

    def copy_files(self, screenshot: Path, hierarchy: Path | None) -> None:
        """Write the screenshot (and the hierarchy, when both sides have one) to these paths.

        Files on disk are hard-linked when source and target share a file system (step
        files are only ever replaced, never changed in place), else copied; never decoded.
        Data held only in memory is written. Each file lands atomically (a temporary name,
        then renamed).
        """
        sources: list[tuple[Path | bytes, Path]] = []
        if self.screenshot_path is not None and self._png is None and self._image is None:
            sources.append((self.screenshot_path, screenshot))
        else:
            sources.append((self.png(), screenshot))
        if hierarchy is not None:
            if self.hierarchy_path is not None:
                sources.append((self.hierarchy_path, hierarchy))
            elif self._xml is not None:
                sources.append((self._xml.encode("utf-8"), hierarchy))
        for source, target in sources:
            tmp = target.with_name(f".{target.name}.tmp")
            try:
                tmp.unlink(missing_ok=True)
                if isinstance(source, bytes):
                    tmp.write_bytes(source)
                else:
                    _link_or_copy(source, tmp)
                os.replace(tmp, target)
            except OSError as exc:
                tmp.unlink(missing_ok=True)
                raise FormatError(
                    f"cannot copy to {target}: {exc.strerror or exc}",
                    source=source if isinstance(source, Path) else None,
                ) from exc


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or links not supported
        shutil.copyfile(source, target)
