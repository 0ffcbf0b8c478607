"""`elderbench eval --record-screen` on the virtual phone: each online episode is recorded
with the phone's screenrecord into its trace folder; a phone that cannot record leaves a
warning, never an error of the episode."""

from __future__ import annotations

import io
import logging

import av
import numpy as np
from PIL import Image

from elderbench.cli import main as elderbench_main
from evaluator.run_store import SCREEN_VIDEO_FILE, RunStore
from tests.evaluator.test_online import phone_port, recorded  # noqa: F401  (pytest fixtures)


def eval_command(suite, demos, out, *more: str) -> list[str]:
    return [
        "eval", "--suite", str(suite), "--agent", "replay", "--demos", str(demos),
        "--device", "virtual-1", "--protocol", "online", "--tasks", "font",
        "--out", str(out), "--no-report", *more,
    ]  # fmt: skip


def test_record_screen_puts_a_video_of_the_episode_beside_its_trace(
    recorded,  # noqa: F811
    phone_port,  # noqa: F811
    virtual_server,
    tmp_path,
):
    suite, demos = recorded
    assert elderbench_main(eval_command(suite, demos, tmp_path / "run", "--record-screen")) == 0
    store = RunStore.open(tmp_path / "run")
    assert store.results()[0].success
    trace = store.trace_dir("font")
    video = trace / SCREEN_VIDEO_FILE
    with av.open(str(video)) as container:
        assert container.streams.video[0].codec_context.name == "h264"
        frames = list(container.decode(video=0))
    assert (frames[0].width, frames[0].height) == (1080, 2400)
    assert len(frames) >= 4  # the screens of the episode, each as it came
    last_step = Image.open(io.BytesIO((trace / "0003.png").read_bytes())).convert("RGB")
    shown = np.asarray(frames[-1].to_image().convert("RGB"), dtype=np.int16)
    assert float(np.abs(shown - np.asarray(last_step, dtype=np.int16)).mean()) < 6
    device = virtual_server.device("virtual-1")
    assert device.jobs.running() == []  # stopped, not left running until its time limit
    assert not [n for n, _ in device.fs.listdir("/data/local/tmp") if n.endswith(".mp4")]


def test_a_phone_that_cannot_record_only_warns(
    recorded,  # noqa: F811
    phone_port,  # noqa: F811
    virtual_server,
    tmp_path,
    caplog,
):
    suite, demos = recorded
    del virtual_server.device("virtual-1").commands["screenrecord"]  # as on some builds
    with caplog.at_level(logging.WARNING):
        code = elderbench_main(eval_command(suite, demos, tmp_path / "run", "--record-screen"))
    assert code == 0
    store = RunStore.open(tmp_path / "run")
    assert store.results()[0].success
    assert not (store.trace_dir("font") / SCREEN_VIDEO_FILE).exists()
    assert "no screen recording" in caplog.text and "wrote no video" in caplog.text
