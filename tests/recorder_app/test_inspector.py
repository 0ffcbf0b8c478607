"""The hierarchy view is an inspector: properties with an XPath, search, Ctrl+F."""

from __future__ import annotations

from pathlib import Path

from lxml import etree
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from graph_builder.hierarchy import load_hierarchy
from recorder_app.qt.demo_browser import DemoBrowser
from recorder_app.qt.hierarchy_view import HierarchyInspector
from tests.recorder_app.helpers import write_demo
from tests.recorder_app.test_main_window import make_window

SAMPLE_STEP = (
    Path(__file__).resolve().parents[2]
    / "task_graphs/sample/demos/letters_biggest/d1/steps/0004.xml"
)


def browser_on_demo(qtbot, workspace) -> DemoBrowser:
    write_demo(workspace)
    browser = DemoBrowser()
    qtbot.addWidget(browser)
    browser.resize(1200, 800)
    browser.show()
    browser.set_workspace(workspace)
    assert browser.select_demo(workspace.demo_folder("wifi", "d1"))
    browser.view_tabs.setCurrentWidget(browser.hierarchy_view)
    return browser


def test_properties_show_every_attribute_and_an_xpath_that_finds_the_element(qtbot, workspace):
    browser = browser_on_demo(qtbot, workspace)
    view = browser.hierarchy_view
    props = view.properties
    # The step's tap hit the Wi-Fi row: its attributes are listed.
    assert props.value("resource-id") == "p:id/wifi"
    assert props.value("text") == "Wi-Fi"
    assert props.value("class") == "android.widget.TextView"
    assert props.value("bounds") == "[0,300][1080,500]"
    assert props.value("size") == "1080 × 200"
    assert props.value("clickable") == "true" and props.value("package") == "p"
    dump = etree.parse(str(workspace.demo_folder("wifi", "d1") / "steps" / "0000.xml"))
    (found,) = dump.xpath(props.xpath.text())
    assert found.get("resource-id") == "p:id/wifi"
    # The container, chosen in the tree, gets its own XPath.
    view.tree.setCurrentItem(view.tree.topLevelItem(0))
    assert props.value("class") == "android.widget.FrameLayout"
    (found,) = dump.xpath(props.xpath.text())
    assert found.get("class") == "android.widget.FrameLayout"
    qtbot.mouseClick(props.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == props.xpath.text()


def test_search_filters_by_text_id_or_class_and_enter_walks_the_matches(qtbot):
    view = HierarchyInspector()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    hierarchy = load_hierarchy(SAMPLE_STEP)
    view.show_screen(None, (1080, 2400), hierarchy)
    texts = [e for e in hierarchy if "TextView" in e.class_name]
    assert len(texts) >= 3
    qtbot.keyClicks(view.search, "textview")
    assert view.match_indices == [e.index for e in texts]
    assert view.match_label.text() == f"{len(texts)} matches"
    items = {e.index: view.row(e.index) for e in hierarchy}
    shown = {i for i, item in items.items() if not item.isHidden()}
    assert set(view.match_indices) <= shown
    ancestors = {a.index for e in texts for a in hierarchy.ancestors(e)}
    assert shown == set(view.match_indices) | ancestors
    # Enter goes to the first match, then the next.
    qtbot.keyClick(view.search, Qt.Key.Key_Return)
    assert view.selected == texts[0]
    qtbot.keyClick(view.search, Qt.Key.Key_Return)
    assert view.selected == texts[1]
    assert view.match_label.text() == f"2 of {len(texts)} matches"
    # By text (case-insensitive) and by resource-id.
    title = texts[0]
    view.search.setText(title.text.upper())
    assert title.index in view.match_indices
    with_id = next(e for e in hierarchy if e.resource_id)
    view.search.setText(with_id.resource_id.rpartition("/")[2])
    assert with_id.index in view.match_indices
    view.search.setText("no such element anywhere")
    assert view.match_indices == [] and view.match_label.text() == "0 matches"
    assert all(item.isHidden() for item in items.values())
    view.search.clear()
    assert not any(item.isHidden() for item in items.values())


def test_ctrl_f_focuses_the_search_of_the_visible_inspector(qtbot, settings, workspace):
    write_demo(workspace)
    window = make_window(qtbot, settings)
    window.open_workspace(workspace.root)
    window.resize(1400, 900)
    window.show()
    window.show_page("demos")
    browser = window.demo_browser
    assert browser.select_demo(workspace.demo_folder("wifi", "d1"))
    browser.view_tabs.setCurrentWidget(browser.hierarchy_view)
    window.activateWindow()
    qtbot.waitUntil(lambda: QGuiApplication.focusWindow() is not None)
    browser.tree.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: browser.hierarchy_view.search.hasFocus())
