"""Scaled screenshots, decoded once per file version and width."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPixmap


class PictureCache:
    def __init__(self, limit: int = 600) -> None:
        self._cache: dict[tuple[str, int, int], QPixmap] = {}
        self._limit = limit

    def thumbnail(self, path: Path | None, width: int) -> QPixmap | None:
        """``path`` scaled to ``width`` pixels wide, or None when it is missing or unreadable."""
        if path is None:
            return None
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            return None
        key = (str(path), stamp, width)
        found = self._cache.get(key)
        if found is None:
            image = QImage(str(path))
            if image.isNull():
                return None
            scaled = image.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
            found = QPixmap.fromImage(scaled)
            if len(self._cache) >= self._limit:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = found
        return found

    def full(self, path: Path | None) -> QImage | None:
        if path is None:
            return None
        image = QImage(str(path))
        return None if image.isNull() else image
