"""A step's label and its details name the same element: the one under the tap."""

from __future__ import annotations

from graph_builder.io import DemoWriter
from graph_builder.model import Action, Bounds, ElementRef, Task
from recorder_app.qt.demo_browser import DemoBrowser
from tests.recorder_app.helpers import png_bytes

SCREEN = (1080, 2400)
# A toolbar with a "Navigate up" button, then a clickable Wi-Fi row whose switch sits in
# its middle, then a big empty content area.
DUMP = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
  <node class="android.widget.FrameLayout" resource-id="" bounds="[0,0][1080,2400]">
    <node class="android.view.ViewGroup" resource-id="p:id/toolbar" bounds="[0,60][1080,220]">
      <node class="android.widget.ImageButton" content-desc="Navigate up" clickable="true"
            bounds="[0,60][160,220]" />
      <node class="android.widget.TextView" text="Network" bounds="[180,100][600,180]" />
    </node>
    <node class="android.widget.LinearLayout" resource-id="p:id/row" clickable="true"
          bounds="[0,300][1080,700]">
      <node class="android.widget.TextView" text="Wi-Fi" bounds="[40,320][400,380]" />
      <node class="android.widget.Switch" text="ON" clickable="true"
            bounds="[440,450][640,550]" />
    </node>
    <node class="android.widget.LinearLayout" resource-id="p:id/content"
          bounds="[0,700][1080,2400]" />
  </node>
</hierarchy>
"""


def labelled_demo(qtbot, workspace, taps: list[tuple[int, int, Bounds]]) -> DemoBrowser:
    writer = DemoWriter.create(workspace.demos_dir, Task("t", "wifi"), demo_id="d1")
    for x, y, recorded in taps:
        action = Action.tap(x, y, screen=SCREEN, element=ElementRef(recorded))
        writer.add_step(
            png_bytes((90, 90, 90)),
            DUMP,
            action=action,
            activity="p/.Wifi",
            screen=SCREEN,
            time=1.0,
        )
    writer.add_step(
        png_bytes((0, 0, 0)),
        DUMP,
        action=Action.done(),
        activity="p/.Wifi",
        screen=SCREEN,
        time=2.0,
    )
    writer.finish()
    browser = DemoBrowser()
    qtbot.addWidget(browser)
    browser.resize(1200, 800)
    browser.show()
    browser.set_workspace(workspace)
    assert browser.select_demo(workspace.demo_folder("t", "d1"))
    return browser


def element_line(browser: DemoBrowser) -> str:
    return next(
        line for line in browser.detail_label.text().splitlines() if line.startswith("element:")
    )


def test_a_tap_on_empty_space_in_a_container_is_not_named_by_a_button_inside_it(qtbot, workspace):
    toolbar = Bounds(0, 60, 1080, 220)
    row = Bounds(0, 300, 1080, 700)
    browser = labelled_demo(qtbot, workspace, [(900, 140, toolbar), (100, 650, row)])
    # Empty space at the toolbar's right end: the toolbar, not its "Navigate up" button.
    label = browser.step_label.text()
    assert "Navigate up" not in label
    assert label.endswith("tap (900, 140) 'toolbar'")
    assert element_line(browser) == "element: 'toolbar' (ViewGroup [0, 60, 1080, 220])"
    assert browser.hierarchy_view.selected.resource_id == "p:id/toolbar"
    # Empty space in a clickable row: the row, named by its title, in both places; never
    # the switch that sits at the centre of the row's bounds.
    browser.next_button.click()
    label = browser.step_label.text()
    assert label.endswith("tap (100, 650) 'Wi-Fi'")
    assert element_line(browser) == "element: 'Wi-Fi' (LinearLayout [0, 300, 1080, 700])"
    assert browser.hierarchy_view.selected.resource_id == "p:id/row"
