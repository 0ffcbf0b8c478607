"""A demonstration or an evaluation trace as an animated GIF or an MP4 video (H.264,
yuv420p, even dimensions: what sites that share video take), each step's action drawn on
its screenshot (for papers, talks and bug reports). No Qt: the studio and
``elderbench animate`` both call it; ``write_animation`` picks the format by the suffix.

Each frame is the screen before a step, scaled to ``width``, with the action on top: a
ring for a tap (two for a long press), an arrow for a swipe, a banner for typing, keys,
waits and done, and the step's line (``3/7 tap (615, 2059) 'Display'``) below.

>>> import tempfile
>>> sample = Path(__file__).resolve().parents[2] / "task_graphs" / "sample"
>>> frames = demo_frames(sample / "demos" / "font_bigger" / "d1")
>>> len(frames), frames[0].caption
(4, "1/4 tap (617, 2060) 'Display'")
>>> with tempfile.TemporaryDirectory() as tmp:
...     gif = write_gif(frames, Path(tmp) / "font_bigger.gif")
...     gif.read_bytes()[:6]
b'GIF89a'

"""

from __future__ import annotations

import contextlib
import io
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import av
from PIL import Image, ImageDraw, ImageFont

from evaluator.errors import EvaluatorError
from evaluator.run_store import RunStore
from graph_builder import io as gb_io
from graph_builder.errors import GraphBuilderError
from graph_builder.hierarchy import load_hierarchy
from graph_builder.model import Action, ActionType
from recorder_app.errors import StudioError

ACTION_RGB = (230, 57, 70)
ELEMENT_RGB = (255, 196, 0)
CAPTION_HEIGHT = 44
VIDEO_FPS = 10  # an MP4 shows each step for ms_per_step at this constant rate
Font = ImageFont.ImageFont | ImageFont.FreeTypeFont


@dataclass(frozen=True, slots=True)
class Frame:
    """One step: the screenshot before it, the action taken there, and its line of text."""

    png: bytes
    screen: tuple[int, int]
    action: Action | None
    caption: str


def demo_frames(folder: Path) -> list[Frame]:
    """The frames of a recorded demonstration (each step named as the recorder names it)."""
    try:
        demo = gb_io.load_demo(folder)
    except GraphBuilderError as exc:
        raise StudioError(f"Cannot read the demonstration: {exc}") from exc
    frames = []
    total = len(demo.steps)
    for step in demo.steps:
        obs = step.observation
        try:
            png = gb_io.read_png(folder / obs.screenshot)
        except GraphBuilderError as exc:
            raise StudioError(f"Cannot read step {step.index + 1}'s screenshot: {exc}") from exc
        text = step.action.describe()
        if obs.hierarchy:
            with contextlib.suppress(GraphBuilderError):  # else the plain description
                text = load_hierarchy(folder / obs.hierarchy).describe(step.action, obs.screen)
        frames.append(Frame(png, obs.screen, step.action, f"{step.index + 1}/{total} {text}"))
    return frames


def trace_frames(run_dir: Path, task_id: str) -> list[Frame]:
    """The frames of one task of an evaluation run (online or offline)."""
    try:
        store = RunStore.open(run_dir)
        result = next((r for r in store.results() if r.task_id == task_id), None)
        if result is None:
            raise StudioError(f"{task_id} has no result in {run_dir}")
        records = store.read_steps(task_id)
    except EvaluatorError as exc:
        raise StudioError(f"Cannot read the run: {exc}") from exc
    frames = []
    for record in records:
        try:
            path = store.step_file(result.protocol, record.screenshot)
            png = path.read_bytes() if path is not None else None
        except (EvaluatorError, OSError):
            png = None
        if png is None:
            continue  # a step without a screenshot (a parse failure before the first)
        size = _size(png)
        action = None
        if record.action:
            try:
                action = Action.from_json(record.action)
            except GraphBuilderError:
                action = None
        caption = f"{record.index + 1}/{len(records)} {record.action_text or '(no action)'}"
        frames.append(Frame(png, size, action, caption))
    if not frames:
        raise StudioError(f"{task_id} in {run_dir.name} has no step with a screenshot")
    return frames


def _size(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as image:
        return image.size


def render(frame: Frame, width: int = 360) -> Image.Image:
    """One frame as an RGB image ``width`` pixels wide, the caption below the screen."""
    try:
        shot = Image.open(io.BytesIO(frame.png)).convert("RGB")
    except (OSError, Image.DecompressionBombError) as exc:
        raise StudioError(f"A screenshot cannot be decoded: {exc}") from exc
    scale = width / shot.width
    height = round(shot.height * scale)
    canvas = Image.new("RGB", (width, height + CAPTION_HEIGHT), (30, 33, 39))
    canvas.paste(shot.resize((width, height), Image.Resampling.LANCZOS), (0, 0))
    draw = ImageDraw.Draw(canvas, "RGBA")
    font = ImageFont.load_default(size=max(11, width // 28))
    if frame.action is not None:
        _draw_action(draw, frame.action, frame.screen, width / frame.screen[0], font, height)
    draw.text((8, height + 8), _fit(draw, frame.caption, font, width - 16), fill="white", font=font)
    return canvas


def _fit(
    draw: ImageDraw.ImageDraw,
    text: str,
    font: Font,
    width: int,
) -> str:
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "…", font=font) > width:
        text = text[:-1]
    return text + "…"


def _draw_action(
    draw: ImageDraw.ImageDraw,
    action: Action,
    screen: tuple[int, int],
    scale: float,
    font: Font,
    height: int,
) -> None:
    device = action.to_device(screen)
    radius = max(8.0, 34 * scale * 2)

    def at(x: float, y: float) -> tuple[float, float]:
        return x * scale, y * scale

    if device.element is not None:
        b = device.element.bounds
        draw.rectangle(
            (*at(b.left, b.top), *at(b.right, b.bottom)),
            outline=ELEMENT_RGB,
            fill=(*ELEMENT_RGB, 50),
            width=2,
        )
    kind = device.type
    if kind.is_pointed and device.point is not None:
        cx, cy = at(*device.point)
        box = (cx - radius, cy - radius, cx + radius, cy + radius)
        draw.ellipse(box, outline=ACTION_RGB, fill=(*ACTION_RGB, 80), width=3)
        if kind is ActionType.LONG_PRESS:
            r2 = radius * 1.7
            draw.ellipse((cx - r2, cy - r2, cx + r2, cy + r2), outline=ACTION_RGB, width=3)
    elif kind is ActionType.SWIPE and device.point is not None and device.end_point is not None:
        (x1, y1), (x2, y2) = at(*device.point), at(*device.end_point)
        draw.line((x1, y1, x2, y2), fill=ACTION_RGB, width=4)
        angle = math.atan2(y2 - y1, x2 - x1)
        for side in (-1, 1):
            a = angle + math.pi + side * math.radians(28)
            tip = (x2 + math.cos(a) * radius * 1.4, y2 + math.sin(a) * radius * 1.4)
            draw.line((x2, y2, *tip), fill=ACTION_RGB, width=4)
    else:
        label = {
            ActionType.TYPE: f"type “{device.text}”",
            ActionType.WAIT: f"wait {device.duration_ms or 0} ms",
        }.get(kind, kind.value.replace("_", " "))
        text_width = draw.textlength(label, font=font)
        left = max(4.0, (screen[0] * scale - text_width) / 2 - 12)
        top = height * 0.42
        draw.rounded_rectangle(
            (left, top, left + text_width + 24, top + 34), radius=8, fill=(20, 22, 26, 210)
        )
        draw.text((left + 12, top + 8), label, fill="white", font=font)


def write_gif(frames: list[Frame], out: Path, *, width: int = 360, ms_per_step: int = 1200) -> Path:
    """Write the frames as a looping GIF, atomically; the last frame stays twice as long."""
    if not frames:
        raise StudioError("There are no steps to animate.")
    images = [render(f, width) for f in frames]
    durations = [ms_per_step] * len(images)
    durations[-1] = ms_per_step * 2
    buffer = io.BytesIO()
    images[0].save(
        buffer,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=durations,
        loop=0,
        optimize=True,
    )
    try:
        gb_io.atomic_write_bytes(Path(out), buffer.getvalue())
    except OSError as exc:
        raise StudioError(f"Cannot write {out}: {exc.strerror or exc}") from exc
    return Path(out)


def video_frame_count(steps: int, ms_per_step: int) -> int:
    """How many frames `write_mp4` writes: each step ms_per_step long, the last twice."""
    per_step = max(1, round(ms_per_step * VIDEO_FPS / 1000))
    return per_step * (steps + 1) if steps else 0


def _even(image: Image.Image) -> Image.Image:
    """The image padded by a pixel where needed: H.264 in yuv420p wants even sizes."""
    width, height = image.width + image.width % 2, image.height + image.height % 2
    if (width, height) == image.size:
        return image
    padded = Image.new("RGB", (width, height), (30, 33, 39))
    padded.paste(image, (0, 0))
    return padded


def write_mp4(frames: list[Frame], out: Path, *, width: int = 360, ms_per_step: int = 1200) -> Path:
    """Write the frames as an H.264 MP4 at VIDEO_FPS, atomically; the last step stays twice
    as long, as in the GIF."""
    if not frames:
        raise StudioError("There are no steps to animate.")
    per_step = max(1, round(ms_per_step * VIDEO_FPS / 1000))
    images = [_even(render(f, width)) for f in frames]
    with tempfile.TemporaryDirectory(prefix="elderbench-mp4-") as scratch:
        encoded = Path(scratch) / "video.mp4"
        _encode(images, per_step, encoded)
        data = encoded.read_bytes()
    try:
        gb_io.atomic_write_bytes(Path(out), data)
    except OSError as exc:
        raise StudioError(f"Cannot write {out}: {exc.strerror or exc}") from exc
    return Path(out)


def _encode(images: list[Image.Image], per_step: int, path: Path) -> None:
    # faststart puts the index first, so a browser plays the video while it downloads; it
    # rewrites the file at the end, hence a real (scratch) file rather than memory.
    with av.open(str(path), mode="w", format="mp4", options={"movflags": "faststart"}) as container:
        stream = container.add_stream("libx264", rate=VIDEO_FPS)
        stream.width, stream.height = images[0].size
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": "23", "preset": "veryfast"}
        pts = 0
        for index, image in enumerate(images):
            for _ in range(per_step * (2 if index == len(images) - 1 else 1)):
                frame = av.VideoFrame.from_image(image)
                frame.pts, pts = pts, pts + 1
                for packet in stream.encode(frame):
                    container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


Writer = Callable[..., Path]
WRITERS: dict[str, Writer] = {".gif": write_gif, ".mp4": write_mp4}
ANIMATION_FILTER = "GIF (*.gif);;MP4 video (*.mp4)"  # for a save dialog


def write_animation(
    frames: list[Frame], out: Path, *, width: int = 360, ms_per_step: int = 1200
) -> Path:
    """Write a GIF or an MP4, as the file's name says."""
    writer = WRITERS.get(Path(out).suffix.lower())
    if writer is None:
        raise StudioError(f"Cannot tell what to write as {Path(out).name}: name it .gif or .mp4")
    return writer(frames, out, width=width, ms_per_step=ms_per_step)
