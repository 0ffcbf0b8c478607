"""Demonstrations and traces as animated GIFs, from the command line (no Qt)."""

from __future__ import annotations

from PIL import Image

from elderbench.cli import main
from evaluator.runner import RunConfig, run_suite
from evaluator.synthetic import write_suite
from recorder_app.recording.animation import Frame, render
from tests.recorder_app.helpers import png_bytes, write_demo


def frames_of(path) -> list[Image.Image]:
    with Image.open(path) as gif:
        frames = []
        for i in range(gif.n_frames):
            gif.seek(i)
            frames.append(gif.convert("RGB").copy())
        return frames


def test_a_demo_becomes_a_gif_with_one_frame_per_step(workspace, tmp_path, capsys):
    write_demo(workspace)
    out = tmp_path / "demo.gif"
    folder = workspace.demo_folder("wifi", "d1")
    assert main(["animate", str(folder), "-o", str(out), "--width", "216"]) == 0
    assert "3 steps" in capsys.readouterr().out
    frames = frames_of(out)
    assert len(frames) == 3 and frames[0].size[0] == 216
    # The tap on the Wi-Fi row is drawn in the action colour where it landed (540, 400).
    x, y = 540 * 216 / 1080, 400 * 216 / 1080
    red = frames[0].getpixel((round(x), round(y)))
    assert red[0] > 150 and red[1] < 150  # the ring's fill over a red screenshot stays red
    assert frames[0].getpixel((round(x), round(y))) != frames[2].getpixel((round(x), round(y)))


def test_a_run_task_becomes_a_gif(tmp_path):
    suite = tmp_path / "suite"
    write_suite(suite, 2, size=(270, 600))
    run = tmp_path / "run"
    run_suite(RunConfig(suite=suite, out=run, agent="replay"))
    out = tmp_path / "trace.gif"
    assert main(["animate", str(run), "--task", "task001", "-o", str(out)]) == 0
    assert len(frames_of(out)) >= 2


def test_a_missing_task_is_a_clear_error(tmp_path, capsys):
    suite = tmp_path / "suite"
    write_suite(suite, 1, size=(270, 600))
    run = tmp_path / "run"
    run_suite(RunConfig(suite=suite, out=run, agent="replay"))
    assert main(["animate", str(run), "--task", "nope", "-o", str(tmp_path / "x.gif")]) == 1
    assert "nope has no result" in capsys.readouterr().err
    assert not (tmp_path / "x.gif").exists()


def test_every_action_kind_renders(tmp_path):
    from graph_builder.model import Action

    screen = (1080, 2400)
    for action in (
        Action.long_press(500, 500, screen=screen),
        Action.swipe(540, 1800, 540, 600, screen=screen),
        Action.type_text("hello"),
        Action.back(),
        Action.done(),
    ):
        image = render(Frame(png_bytes((250, 250, 250)), screen, action, action.describe()), 200)
        assert image.size == (200, round(240 * 200 / 108) + 44)  # screen, then caption


def decoded_video(path) -> tuple[str, list[Image.Image], str]:
    import av

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = list(container.decode(video=0))
        return (
            stream.codec_context.name,
            [frame.to_image() for frame in frames],
            frames[0].format.name,
        )


def test_a_demo_becomes_an_mp4_with_the_actions_drawn(workspace, tmp_path, capsys):
    from recorder_app.recording.animation import video_frame_count

    write_demo(workspace)
    out = tmp_path / "demo.mp4"
    folder = workspace.demo_folder("wifi", "d1")
    # An odd width still gives an H.264 frame of even size.
    command = ["animate", str(folder), "-o", str(out), "--width", "215", "--ms", "500"]
    assert main(command) == 0
    assert "3 steps" in capsys.readouterr().out
    codec, frames, pixel_format = decoded_video(out)
    assert (codec, pixel_format) == ("h264", "yuv420p")
    assert len(frames) == video_frame_count(3, 500) == 20  # 5 a step, the last twice as long
    width, height = frames[0].size
    assert width == 216 and width % 2 == 0 and height % 2 == 0
    x, y = round(540 * 215 / 1080), round(400 * 215 / 1080)
    first, last = frames[0].convert("RGB").getpixel((x, y)), frames[-1].getpixel((x, y))
    assert first[0] > 150 and first[1] < 150  # the tap's ring, through the H.264 encoding
    assert first != last


def test_a_run_task_becomes_an_mp4_and_other_names_are_refused(tmp_path, capsys):
    suite = tmp_path / "suite"
    write_suite(suite, 2, size=(270, 600))
    run = tmp_path / "run"
    run_suite(RunConfig(suite=suite, out=run, agent="replay"))
    out = tmp_path / "trace.mp4"
    assert main(["animate", str(run), "--task", "task001", "-o", str(out), "--ms", "200"]) == 0
    steps = int(capsys.readouterr().out.split(": ")[1].split()[0])
    codec, frames, _ = decoded_video(out)
    assert codec == "h264" and len(frames) == 2 * (steps + 1)
    assert main(["animate", str(run), "--task", "task001", "-o", str(tmp_path / "t.avi")]) == 1
    assert "name it .gif or .mp4" in capsys.readouterr().err
    assert not (tmp_path / "t.avi").exists()
