"""The studio's export button writes an MP4 when the file is named so (real widgets,
offscreen): the save dialog offers both formats and the row says which was written."""

from __future__ import annotations

import av
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from recorder_app.qt.demo_browser import DemoBrowser
from recorder_app.recording.animation import video_frame_count
from tests.recorder_app.helpers import write_demo


def test_the_demo_export_button_writes_an_mp4(qtbot, workspace, tmp_path, monkeypatch):
    write_demo(workspace)
    browser = DemoBrowser()
    qtbot.addWidget(browser)
    browser.show()
    browser.set_workspace(workspace)
    assert browser.select_demo(workspace.demo_folder("wifi", "d1"))
    out = tmp_path / "demo.mp4"
    offered: list[str] = []

    def save_dialog(parent, caption, suggested, filters):
        offered.append(filters)
        return str(out), "MP4 video (*.mp4)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_dialog))
    with qtbot.waitSignal(browser.gif_written, timeout=30_000) as written:
        qtbot.mouseClick(browser.gif_button, Qt.MouseButton.LeftButton)
    assert written.args == [str(out)]
    assert "*.mp4" in offered[0] and "*.gif" in offered[0]
    assert browser.gif_row.label.text() == f"MP4 written to: {out}"
    assert browser.gif_row.open_button.text() == "Open MP4"
    with av.open(str(out)) as container:
        assert container.streams.video[0].codec_context.name == "h264"
        frames = list(container.decode(video=0))
    assert len(frames) == video_frame_count(3, 1200)
    assert frames[0].width % 2 == 0 and frames[0].height % 2 == 0
