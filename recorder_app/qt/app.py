"""Starting the studio: QApplication, style, error dialog hook, optional virtual phone."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSettings
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QWidget

from devices.errors import DeviceError
from devices.hierarchy import DEFAULT_HIERARCHY, check_hierarchy
from recorder_app.connection import HIERARCHY_SETTING, DeviceConnection
from recorder_app.qt.dialogs import show_problem

if TYPE_CHECKING:
    from virtual_phone import AdbServer, VirtualPhone

log = logging.getLogger(__name__)

ORGANIZATION = "ElderBench"
APPLICATION = "ElderBench Studio"
# Package data, so an installed wheel finds them as a checkout does.
RESOURCES = resources.files("resources")


def create_application(argv: list[str] | None = None) -> QApplication:
    """The QApplication (reused when one exists, as under pytest-qt), styled."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(argv if argv is not None else sys.argv[:1])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setStyle("Fusion")
    style = RESOURCES.joinpath("style.qss")
    if style.is_file():
        app.setStyleSheet(style.read_text(encoding="utf-8"))
    icon = RESOURCES.joinpath("icons", "studio.svg")
    if icon.is_file():
        with resources.as_file(icon) as icon_file:  # QIcon reads the file at once
            app.setWindowIcon(QIcon(str(icon_file)))
    return app


def studio_settings() -> QSettings:
    """The user's settings (window layout, last workspace) in an INI file."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, "studio")


def install_excepthook(parent: QWidget | None) -> None:
    """Show unexpected errors in a dialog instead of killing the studio.

    Saved work is never at risk here: every step is on disk before the next input.
    """

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        details = "".join(traceback.format_exception(kind, exc, tb))
        log.error("unexpected error\n%s", details)
        if QApplication.instance() is not None:
            show_problem(
                parent,  # type: ignore[arg-type]
                "Unexpected error",
                f"{kind.__name__}: {exc}\n\nThe studio keeps running and recorded steps are "
                "saved. Please report this with the details below.",
                details,
            )

    sys.excepthook = hook


class BuiltInPhone:
    """The studio's own virtual phone: an adb server in this process, restartable on its
    port (a fresh phone, its saved snapshots kept) while the studio keeps running."""

    def __init__(self, make_phones: Callable[[], Sequence[VirtualPhone]] | None = None) -> None:
        self._make_phones = make_phones
        self._lock = threading.Lock()
        self._server: AdbServer | None = None
        self.port = 0

    def start(self) -> BuiltInPhone:
        from virtual_phone import AdbServer, VirtualPhone

        with self._lock:
            phones = self._make_phones() if self._make_phones else [VirtualPhone("virtual-1")]
            self._server = AdbServer(phones, port=self.port).start()
            self.port = self._server.port
        return self

    def restart(self) -> None:
        """Close the server (clients see the phone go) and serve fresh phones on its port;
        the whole-phone snapshots saved on them are kept, so reset recipes still load."""
        server = self._server
        kept = {}
        if server is not None:
            kept = {p.serial: server.device(p.serial).snapshots.saved() for p in server.phones}
        self.close()
        self.start()
        assert self._server is not None
        for phone in self._server.phones:
            self._server.device(phone.serial).snapshots.adopt(kept.get(phone.serial, {}))

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.close()

    @property
    def server(self) -> AdbServer | None:
        return self._server

    def connection(self, **options: Any) -> DeviceConnection:
        """How the studio reaches this phone, with Restart phone wired to ``restart``."""
        return DeviceConnection(
            port=self.port, label="virtual phone", restart_server=self.restart, **options
        )


@contextlib.contextmanager
def serve_virtual_phone() -> Iterator[DeviceConnection]:
    """Run the virtual phone's adb server in this process for the studio's lifetime."""
    phone = BuiltInPhone().start()
    try:
        # Child processes (and anything reading the environment) use the same server.
        os.environ["ANDROID_ADB_SERVER_PORT"] = str(phone.port)
        yield phone.connection()
    finally:
        phone.close()


def studio_hierarchy(settings: QSettings, chosen: str | None) -> str:
    """The hierarchy tool: ``chosen`` on the command line (kept for the next sessions), else
    the one kept in the settings, else the default."""
    if chosen:
        choice = check_hierarchy(chosen)
        settings.setValue(HIERARCHY_SETTING, choice)
        return choice
    try:
        return check_hierarchy(str(settings.value(HIERARCHY_SETTING, DEFAULT_HIERARCHY)))
    except DeviceError:
        return DEFAULT_HIERARCHY  # a settings file edited by hand: the default


def run_studio(
    *,
    workspace: Path | None = None,
    virtual_phone_enabled: bool = False,
    hierarchy: str | None = None,
) -> int:
    from recorder_app.qt.main_window import StudioMainWindow, initial_workspace_path

    app = create_application()
    settings = studio_settings()
    with contextlib.ExitStack() as stack:
        connection = (
            stack.enter_context(serve_virtual_phone())
            if virtual_phone_enabled
            else DeviceConnection()
        )
        connection = replace(connection, hierarchy=studio_hierarchy(settings, hierarchy))
        window = StudioMainWindow(settings, connection)
        install_excepthook(window)
        window.show()
        window.open_workspace(initial_workspace_path(settings, workspace))
        window.record_page.start()
        return app.exec()
