"""Fixtures for the studio's Qt tests: offscreen Qt, private settings, a workspace."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")  # never start a real adb server

import pytest  # noqa: E402

from recorder_app.recording.workspace import Workspace  # noqa: E402


@pytest.fixture
def settings(tmp_path):
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "studio.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace.open(tmp_path / "ws")


@pytest.fixture
def studio(qtbot, settings, workspace, virtual_server):
    """Call it to open the main window on the virtual phone (``prefer`` picks the mirror)."""
    from tests.recorder_app.studio_driver import open_studio

    def make(prefer: str = "screencap"):
        return open_studio(qtbot, settings, workspace, virtual_server.port, prefer)

    return make
