"""Help > About (the version, where the studio runs from) and Help > Documentation."""

from __future__ import annotations

import platform
from pathlib import Path

from PySide6 import __version__ as qt_binding_version
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox, QWidget

from elderbench import __version__

# docs/ sits beside the packages in a source checkout; a wheel does not carry it.
DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"


def about_text() -> str:
    return (
        f"<h3>ElderBench Studio {__version__}</h3>"
        "<p>Record demonstrations of mobile tasks, build and edit their task graphs, and "
        "evaluate GUI agents offline and on live phones.</p>"
        f"<p>Python {platform.python_version()} · Qt binding {qt_binding_version}<br>"
        f"Running from {Path(__file__).resolve().parents[2]}<br>"
        f"Documentation: {DOCS_DIR if DOCS_DIR.is_dir() else 'not installed (see the README)'}"
        "</p>"
    )


def show_about(parent: QWidget) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.Information, "About ElderBench Studio", "", parent=parent)
    box.setObjectName("aboutBox")
    box.setText(about_text())
    box.open()
    return box


def open_documentation(docs: Path = DOCS_DIR) -> str:
    """Open the docs folder in the desktop's file browser; says what happened, in words."""
    if not docs.is_dir():
        return (
            f"The documentation is not installed here ({docs} does not exist): it is the "
            "docs/ folder of the source repository."
        )
    if QDesktopServices.openUrl(QUrl.fromLocalFile(str(docs))):
        return f"Opened {docs}"
    return f"No program here opens folders; the documentation is in {docs}"
