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
