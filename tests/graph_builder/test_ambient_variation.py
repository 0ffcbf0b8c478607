"""Two visits of one screen with other ambient content are one state; typed text is not.

Recorded on the virtual phone with ambient variation on (badges that come and go, a
clock in the launcher's date widget, a prediction row that turns, an inbox that
refreshes), through adb and the studio's own recording session, then built.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from devices.android import AndroidDevice, adb_client
from graph_builder.merge import DemoInput, merge_demonstrations
from graph_builder.model import Action, MemberRef, Task
from graph_builder.similarity import SimilaritySettings
from recorder_app.recording.script import record_script
from recorder_app.recording.session import PendingStep
from virtual_phone import fast_phone, running_server

MESSAGES = "com.android.messaging"
TASK = Task("write_emma", "write to Emma", app=MESSAGES)

# Each step: the label of the element to tap, BACK, HOME, TYPE:<text>, or DONE.
D1 = ["Messages", "Daughter (Emma)", "Text message", "TYPE:See you at noon", "DONE"]
D2 = [
    "Messages",
    "BACK",  # back on the launcher: a later visit, other badges and predictions
    "Messages",  # the inbox again, now refreshed
    "Daughter (Emma)",
    "Text message",
    "TYPE:Running late",
    "DONE",
]


def _script(path: list[str]) -> Callable[[PendingStep], Action]:
    steps = iter(path)

    def next_action(pending: PendingStep) -> Action:
        step = next(steps)
        if step == "DONE":
            return Action.done()
        if step == "BACK":
            return Action.back()
        if step.startswith("TYPE:"):
            return Action.type_text(step[5:])
        hierarchy = pending.screen.hierarchy()
        assert hierarchy is not None
        element = next(e for e in hierarchy.visible() if step in (e.text, e.content_desc))
        return Action.tap(*element.bounds.center, screen=pending.screen.size)

    return next_action


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> list[DemoInput]:
    root = tmp_path_factory.mktemp("demos")
    phone = fast_phone("virtual-1", ambient_variation=True)
    with running_server([phone]) as server:
        device = AndroidDevice("virtual-1", client=adb_client(port=server.port))
        for demo_id, path in (("d1", D1), ("d2", D2)):
            device.shell(f"am force-stop {MESSAGES}")
            device.shell("input keyevent KEYCODE_HOME")
            record_script(device, root, TASK, _script(path), demo_id=demo_id)
    return [DemoInput.from_folder(root / TASK.id / d) for d in ("d1", "d2")]


def _texts(demo: DemoInput, step: int) -> set[str]:
    hierarchy = demo.states[step].hierarchy()
    assert hierarchy is not None
    return set(hierarchy.texts())


def test_the_ambient_content_really_differs_between_visits(recorded: list[DemoInput]) -> None:
    d1, d2 = recorded
    homes = [_texts(d1, 0), _texts(d2, 0), _texts(d2, 2)]
    assert len({frozenset(t) for t in homes}) == 3  # badges, clock, predictions moved
    assert any("notifications" in t for t in homes[1] | homes[2])
    inboxes = [_texts(d1, 1), _texts(d2, 1), _texts(d2, 3)]
    assert len({frozenset(t) for t in inboxes}) >= 2  # a refreshed conversation came


def test_visits_with_other_ambient_content_merge_and_typed_text_stays_apart(
    recorded: list[DemoInput],
) -> None:
    result = merge_demonstrations(recorded, settings=SimilaritySettings())
    node_of = {m: n.id for n in result.graph.nodes for m in n.members}

    def same(*members: str) -> bool:
        ids = {node_of[MemberRef(m.split("#")[0], int(m.split("#")[1]))] for m in members}
        return len(ids) == 1

    assert same("d1#0", "d2#0", "d2#2"), "the launcher's three visits are one state"
    assert same("d1#1", "d2#1", "d2#3"), "the inbox before and after a refresh is one state"
    # The conversation with the keyboard shown or hidden is one state.
    assert same("d1#2", "d1#3", "d2#4", "d2#5")
    # Different typed messages are different states, and neither is the empty form.
    assert not same("d1#4", "d2#6")
    assert not same("d1#4", "d1#3") and not same("d2#6", "d2#5")
    # Different screens stay apart.
    assert not same("d1#0", "d1#1") and not same("d1#1", "d1#2")
    assert len(result.graph.nodes) == 5
    assert [w for w in result.warnings if "does not look like" in w] == []
