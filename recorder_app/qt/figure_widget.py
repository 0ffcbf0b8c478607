"""A figure of ``evaluator.plots`` (an SVG measured in points) as a widget at its printed
size on this screen: one column of a paper is 3.4 inches here too."""

from __future__ import annotations

from PySide6.QtSvgWidgets import QSvgWidget


def figure_widget(svg: bytes, title: str, dpi: float) -> QSvgWidget:
    widget = QSvgWidget()
    widget.load(svg)
    widget.setFixedSize(widget.renderer().defaultSize() * (dpi / 72))
    widget.setToolTip(title)
    widget.setAccessibleName(title)
    return widget
