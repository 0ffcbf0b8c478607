"""The properties of one UI element, as the hierarchy inspector shows them: every
attribute of the dump, its bounds and size, and an XPath that finds it (with Copy)."""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from graph_builder.element_path import bounds_attribute, element_xpath
from graph_builder.hierarchy import Hierarchy, UIElement

# (row name, how to read it); flags are written as the dump writes them
_ATTRIBUTES = (
    ("class", lambda e: e.class_name),
    ("resource-id", lambda e: e.resource_id),
    ("text", lambda e: e.text),
    ("content-desc", lambda e: e.content_desc),
    ("package", lambda e: e.package),
    ("bounds", lambda e: bounds_attribute(e.bounds)),
    ("size", lambda e: f"{e.bounds.width:.0f} × {e.bounds.height:.0f}"),
    ("clickable", lambda e: _flag(e.clickable)),
    ("long-clickable", lambda e: _flag(e.long_clickable)),
    ("scrollable", lambda e: _flag(e.scrollable)),
    ("checkable", lambda e: _flag(e.checkable)),
    ("checked", lambda e: _flag(e.checked)),
    ("enabled", lambda e: _flag(e.enabled)),
    ("focusable", lambda e: _flag(e.focusable)),
    ("focused", lambda e: _flag(e.focused)),
    ("selected", lambda e: _flag(e.selected)),
    ("password", lambda e: _flag(e.password)),
    ("visible-to-user", lambda e: _flag(e.visible)),
    ("index", lambda e: str(e.index)),
    ("depth", lambda e: str(e.depth)),
)


def _flag(value: bool) -> str:
    return "true" if value else "false"


class ElementProperties(QWidget):
    """``show_element(hierarchy, element)``; ``xpath`` holds the element's XPath."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("elementProperties")
        self.table = QTreeWidget()
        self.table.setObjectName("propertiesTable")
        self.table.setRootIsDecorated(False)
        self.table.setHeaderLabels(["Property", "Value"])
        self.table.setToolTip("Every attribute of the selected element, as the dump has it")
        self.xpath = QLineEdit()
        self.xpath.setObjectName("xpathField")
        self.xpath.setReadOnly(True)
        self.xpath.setPlaceholderText("Select an element to see an XPath that finds it")
        self.xpath.setToolTip("An XPath that selects this element and nothing else in the dump")
        self.copy_button = QPushButton("Copy XPath")
        self.copy_button.setObjectName("copyXPathButton")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy_xpath)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.xpath, 1)
        row.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.table, 1)

    def show_element(self, hierarchy: Hierarchy | None, element: UIElement | None) -> None:
        self.table.clear()
        if hierarchy is None or element is None:
            self.xpath.clear()
            self.copy_button.setEnabled(False)
            return
        for name, read in _ATTRIBUTES:
            value = read(element)
            item = QTreeWidgetItem([name, value])
            item.setToolTip(1, value)
            self.table.addTopLevelItem(item)
        self.table.resizeColumnToContents(0)
        self.xpath.setText(element_xpath(hierarchy, element))
        self.xpath.setCursorPosition(0)
        self.copy_button.setEnabled(True)

    def value(self, name: str) -> str | None:
        """The shown value of property ``name`` (None when no element is shown)."""
        for i in range(self.table.topLevelItemCount()):
            item = self.table.topLevelItem(i)
            if item is not None and item.text(0) == name:
                return item.text(1)
        return None

    @Slot()
    def copy_xpath(self) -> None:
        if self.xpath.text():
            QGuiApplication.clipboard().setText(self.xpath.text())
