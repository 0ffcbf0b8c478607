"""``elderbench drift`` on the virtual phone, through real adbutils on a random port.

Version 1 of the apps is what the sample suite was recorded on: every walked task is
``unchanged``. Version 2 of Settings and Pharmacy (renamed, moved, one-time dialog)
drifts exactly the tasks whose paths cross a change, each at the node where it shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path

import pytest

from devices.android import AndroidDevice, adb_client
from devices.errors import DeviceDisconnectedError
from elderbench.cli import main
from evaluator.drift import DriftReason, TaskDrift, TaskStatus, check_suite, demonstrated_paths
from evaluator.drift.locate import locate, target_in
from graph_builder.hierarchy import Hierarchy, parse_hierarchy
from graph_builder.io import load_graph, load_task
from virtual_phone import fast_phone, running_server

SUITE = Path(str(files("task_graphs") / "sample"))
UPDATED = {"com.android.settings": 2, "com.elderphone.pharmacy": 2}
# Sample tasks with a graph that run in Settings or Pharmacy (refill_my_pills and
# my_phone_number repeat the paths of bp_pills_out and my_number, and are left out).
ON_UPDATED_APPS = (
    "bp_pills_out",
    "font_bigger",
    "hearing_aid",
    "my_number",
    "screen_brighter",
    "vitamins_again",
)


@contextmanager
def phone(versions: dict[str, int]) -> Iterator[tuple[AndroidDevice, int]]:
    with running_server([fast_phone("virtual-1", app_versions=versions)]) as server:
        device = AndroidDevice("virtual-1", client=adb_client(port=server.port))
        yield device, server.port


def drift_of(tasks: tuple[str, ...], versions: dict[str, int]) -> dict[str, TaskDrift]:
    with phone(versions) as (device, _port):
        results = check_suite([(load_task(SUITE / t), SUITE / t) for t in tasks], device)
    return {r.task_id: r for r in results}


def test_demonstrated_paths_are_the_distinct_edge_sequences_of_the_demonstrations() -> None:
    paths, notes = demonstrated_paths(load_graph(SUITE / "font_bigger"))
    assert notes == []
    assert [(p.demos, p.edge_ids) for p in paths] == [
        (("d1",), ("e1", "e2", "e3")),
        (("d2",), ("e4", "e5", "e6", "e3")),
        (("d3",), ("e7", "e8", "e9", "e3")),
    ]


def test_on_version_1_every_task_on_the_updated_apps_is_unchanged() -> None:
    results = drift_of(ON_UPDATED_APPS, {})
    assert {t: r.headline() for t, r in results.items()} == dict.fromkeys(
        ON_UPDATED_APPS, "unchanged"
    )
    # every demonstrated path was walked to its DONE node
    for task, result in results.items():
        paths, _notes = demonstrated_paths(load_graph(SUITE / task))
        assert [w.steps for w in result.walks] == [len(p.steps) for p in paths]


def test_on_version_2_the_affected_tasks_drift_at_the_node_where_the_change_shows() -> None:
    results = drift_of(ON_UPDATED_APPS, UPDATED)
    found = {
        t: (r.status, r.drift.node, r.drift.reason) if r.drift else (r.status,)
        for t, r in results.items()
    }
    assert found == {
        # About phone was renamed About device: the tap on it finds nothing
        "my_number": (TaskStatus.DRIFTED, "n2", DriftReason.ELEMENT_GONE),
        # the brightness slider moved below Adaptive brightness
        "screen_brighter": (TaskStatus.DRIFTED, "n2", DriftReason.ELEMENT_MOVED),
        # Connected devices and the cart greet with a one-time dialog
        "hearing_aid": (TaskStatus.DRIFTED, "n1", DriftReason.UNEXPECTED_DIALOG),
        "bp_pills_out": (TaskStatus.DRIFTED, "n2", DriftReason.UNEXPECTED_DIALOG),
        # Vitamin D3 moved below Acetaminophen in the product list
        "vitamins_again": (TaskStatus.DRIFTED, "start", DriftReason.ELEMENT_MOVED),
        # Display and Font size did not change
        "font_bigger": (TaskStatus.UNCHANGED,),
    }
    assert "no element titled 'About phone'" in results["my_number"].headline()
    assert "'New: Fast Pair'" in results["hearing_aid"].headline()
    # Each path stops at its own first drift: bp_pills_out's d2 meets the renamed button
    # on the product page before it ever reaches the cart.
    by_demo = {w.path.demos: w.drift for w in results["bp_pills_out"].walks}
    renamed = by_demo[("d2",)]
    assert renamed is not None and (renamed.node, renamed.reason) == (
        "n4",
        DriftReason.ELEMENT_GONE,
    )
    assert "now reads 'Add to basket'" in renamed.detail
    # The explanation is the builder's similarity verdict; both screens are kept.
    dialog = results["hearing_aid"].drift
    assert dialog is not None and dialog.similarity.startswith("DIFFERENT")
    assert dialog.expected.size == dialog.live.size == (1080, 2400)


def test_the_command_writes_the_sheet_and_exits_1_on_drift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    with phone(UPDATED) as (_device, port):
        address = f"virtual-1@127.0.0.1:{port}"
        code = main(
            ["drift", str(SUITE), "--device", address, "--tasks", "hearing_aid", "font_bigger"]
            + ["--json", "--out", str(out)]
        )
    captured = capsys.readouterr()
    assert code == 1
    data = json.loads(captured.out)
    assert data == json.loads((out / "drift.json").read_text(encoding="utf-8"))
    tasks = {t["task"]: t for t in data["tasks"]}
    assert (tasks["font_bigger"]["status"], tasks["hearing_aid"]["status"]) == (
        "unchanged",
        "drifted",
    )
    assert (tasks["hearing_aid"]["node"], tasks["hearing_aid"]["reason"]) == (
        "n1",
        "unexpected dialog",
    )
    first = tasks["hearing_aid"]["paths"][0]["drift"]
    for name in (first["expected_screenshot"], first["live_screenshot"]):
        assert (out / name).read_bytes().startswith(b"\x89PNG")
    assert (out / first["live_screenshot"]).read_bytes() != (
        out / first["expected_screenshot"]
    ).read_bytes()
    sheet = (out / "drift.html").read_text(encoding="utf-8")
    assert first["live_screenshot"] in sheet and "New: Fast Pair" in sheet
    assert "| hearing_aid | drifted | n1 | unexpected dialog |" in (out / "drift.md").read_text(
        encoding="utf-8"
    )
    assert "hearing_aid path d1" in captured.err  # progress on stderr


def test_the_command_exits_0_when_nothing_drifted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with phone({}) as (_device, port):
        code = main(
            ["drift", str(SUITE), "--device", f"virtual-1@127.0.0.1:{port}"]
            + ["--tasks", "hearing_aid", "--out", str(tmp_path)]
        )
    assert code == 0
    assert capsys.readouterr().out.startswith("hearing_aid: unchanged\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tasks", "no_such_task"], "no task no_such_task in"),
        (["--tasks", "airplane_on"], "airplane_on has no graph.json to walk"),
        (["--device", "virtual-9"], "cannot open virtual-9"),
    ],
)
def test_bad_input_exits_2_with_a_plain_message(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with phone({}) as (_device, port):
        device = ["--device", f"virtual-1@127.0.0.1:{port}"]
        if "--device" in args:
            device, args = [args[0], f"{args[1]}@127.0.0.1:{port}"], args[2:]
        code = main(["drift", str(SUITE), *device, *args, "--out", str(tmp_path)])
    assert code == 2
    assert message in capsys.readouterr().err


def test_a_missing_suite_folder_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["drift", str(tmp_path / "nowhere"), "--device", "virtual-1"])
    assert code == 2
    assert "is not a folder" in capsys.readouterr().err


class LosesTheDevice:
    """An AndroidDevice that fails every observation after the first ``works``."""

    def __init__(self, device: AndroidDevice, works: int) -> None:
        self._device = device
        self._left = works

    def __getattr__(self, name: str) -> object:
        return getattr(self._device, name)

    def observe(self) -> object:
        if self._left <= 0:
            raise DeviceDisconnectedError("virtual-1 went away")
        self._left -= 1
        return self._device.observe()


def test_a_device_lost_mid_walk_leaves_the_task_unchecked_not_drifted() -> None:
    with phone({}) as (device, _port):
        flaky = LosesTheDevice(device, works=2)
        results = check_suite([(load_task(SUITE / "hearing_aid"), SUITE / "hearing_aid")], flaky)  # type: ignore[list-item, arg-type]
    (result,) = results
    assert (result.status, result.drift) == (TaskStatus.ERROR, None)
    assert result.headline() == "not checked: virtual-1 went away"


def test_an_element_is_found_by_its_texts_not_its_place_and_a_renamed_one_is_named() -> None:
    def screen(*buttons: tuple[str, str]) -> Hierarchy:
        nodes = "".join(
            f'<node class="B" clickable="true" resource-id="{rid}" text="{label}" '
            f'bounds="[0,{200 * i}][1080,{200 * i + 150}]"/>'
            for i, (rid, label) in enumerate(buttons)
        )
        return parse_hierarchy(f"<hierarchy>{nodes}</hierarchy>")

    before = screen(("app:id/help", "Help"), ("app:id/add", "Add to cart"))
    target = target_in(before, (540, 275), None)
    assert target.known_by == "id add, text 'Add to cart'"
    moved = locate(target, screen(("app:id/add", "Add to cart"), ("app:id/help", "Help")))
    assert moved.element is not None and moved.element.bounds.top == 0
    renamed = locate(target, screen(("app:id/help", "Help"), ("app:id/add", "Add to basket")))
    assert renamed.element is None
    assert renamed.note == (
        "no element 'Add to cart'; the element with id add now reads 'Add to basket'"
    )
    # Nothing to know it by: the demonstrated point is all there is.
    bare = parse_hierarchy('<hierarchy><node class="V" bounds="[0,0][1080,500]"/></hierarchy>')
    anonymous = target_in(bare, (540, 250), None)
    assert anonymous.known_by == "its position alone"
    assert locate(anonymous, bare).how == "at the demonstrated point"


def test_the_phone_is_left_in_its_clean_state_after_the_walk() -> None:
    with phone({}) as (device, _port):
        before = device.shell("settings get system font_scale").strip()
        (result,) = check_suite([(load_task(SUITE / "font_bigger"), SUITE / "font_bigger")], device)
        after = device.shell("settings get system font_scale").strip()
    assert result.status is TaskStatus.UNCHANGED  # its walks tapped "Make larger" three times
    assert after == before
