"""Importing foreign trajectories: LlamaTouch on the real trace, and bad trace folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PIL import Image

from elderbench.cli import main
from graph_builder.errors import FormatError, GraphBuilderError
from graph_builder.hierarchy import load_hierarchy
from graph_builder.importers import IMPORTERS
from graph_builder.importers.appagent import parse_record_line
from graph_builder.importers.colorbench import import_colorbench
from graph_builder.importers.droidbot import parse_event as parse_droidbot_event
from graph_builder.importers.llamatouch import import_llamatouch, parse_event
from graph_builder.io import load_demo, load_graph, load_task
from graph_builder.merge import DemoInput, merge_demonstrations
from graph_builder.model import ActionType, DemoStatus, SwipeDirection
from graph_builder.phash import compute_phash
from graph_builder.similarity import SimilaritySettings
from graph_builder.validate import has_errors, validate_graph
from tests.graph_builder.gb_synthetic import Sketch, render
from tests.shared_fixtures import require_llamatouch_trace


def test_registry_offers_llamatouch() -> None:
    assert IMPORTERS["llamatouch"] is import_llamatouch


def test_real_trace_becomes_a_complete_five_step_demo(tmp_path: Path) -> None:
    trace = require_llamatouch_trace()
    result = import_llamatouch(trace, task_id="duolingo_fr", demos_root=tmp_path)
    demo = load_demo(result.folder)
    assert result.folder == tmp_path / "duolingo_fr" / "llamatouch_trace_18"
    assert demo.status is DemoStatus.COMPLETE and demo.source == "llamatouch"
    assert demo.instruction == "Practice pronunciation in French in Duolingo."
    actions = [s.action for s in demo.steps]
    assert [a.type for a in actions] == [ActionType.HOME, *[ActionType.TAP] * 3, ActionType.DONE]
    # (204, 170) in 320x720 is (688.5, 566.7) on the 1080x2400 screenshot.
    assert actions[1].screen == (1080, 2400)
    assert actions[1].x == pytest.approx(688.5) and actions[1].y == pytest.approx(566.67, abs=0.01)
    labels = [a.element.label() if a.element else None for a in actions[1:4]]
    assert labels == ["Duolingo", "oval", "START +10 XP"]
    assert all(a.element is not None and a.element.bounds.contains(a.x, a.y) for a in actions[1:4])
    obs = [s.observation for s in demo.steps]
    assert obs[2].activity == "com.duolingo/com.duolingo.app.LoginActivity"
    assert all(o.phash and o.phash.startswith("phash16:") for o in obs)
    assert (result.folder / obs[4].screenshot).read_bytes() == (trace / "4.png").read_bytes()
    task = load_task(result.task_file)
    assert task.instruction == demo.instruction and task.app == "com.duolingo"
    assert task.protocol.value == "offline"


def test_second_import_keeps_the_task_and_refuses_the_same_demo_id(tmp_path: Path) -> None:
    trace = require_llamatouch_trace()
    import_llamatouch(trace, task_id="t", demos_root=tmp_path)
    again = import_llamatouch(trace, task_id="t", demos_root=tmp_path, demo_id="second")
    assert again.folder.name == "second" and again.notes == ()
    with pytest.raises(GraphBuilderError, match="already exists"):
        import_llamatouch(trace, task_id="t", demos_root=tmp_path, demo_id="second")


def _trace(tmp_path: Path, events: str, screens: int = 2) -> Path:
    folder = tmp_path / "trace"
    folder.mkdir()
    for i in range(screens):
        image, xml = render(Sketch(f"S{i}", ("One", "Two")))
        image.save(folder / f"{i}.png")
        (folder / f"{i}.xml").write_text(xml)
        (folder / f"{i}.activity").write_text("null" if i else "com.example.app/.Main\n")
    (folder / "eventStructs.txt").write_text(events)
    (folder / "instruction.txt").write_text("Open two\n")
    return folder


def test_synthetic_trace_with_swipe_and_type(tmp_path: Path) -> None:
    events = (
        "[Swipe] Screen Resolution (270, 600), Start Position (100, 500), "
        "End Position (100, 100)\n[Type] hello world\n"
    )
    result = import_llamatouch(_trace(tmp_path, events, 3), task_id="t", demos_root=tmp_path / "d")
    steps = result.demo.steps
    assert steps[0].action.direction is SwipeDirection.UP
    assert steps[1].action.text == "hello world"
    assert steps[0].observation.activity == "com.example.app/.Main"
    assert steps[1].observation.activity is None  # "null"
    image, xml = render(Sketch("S0", ("One", "Two")))
    from graph_builder.hierarchy import parse_hierarchy

    assert steps[0].observation.phash == compute_phash(image, parse_hierarchy(xml))


@pytest.mark.parametrize(
    ("events", "screens", "match"),
    [
        ("[Home]\n[Back]\n", 2, "need 1 events"),
        ("[Fly] away\n", 2, "unknown event"),
        ("[Click] Click Position (1, 2)\n", 2, "Screen Resolution"),
        ("Home\n", 2, "expected '\\[Kind\\]"),
    ],
)
def test_bad_traces_are_refused_and_leave_nothing_behind(
    tmp_path: Path, events: str, screens: int, match: str
) -> None:
    with pytest.raises(FormatError, match=match):
        import_llamatouch(_trace(tmp_path, events, screens), task_id="t", demos_root=tmp_path / "d")
    assert not list((tmp_path / "d").glob("t/*/demo.json"))


def test_missing_files_are_named(tmp_path: Path) -> None:
    folder = _trace(tmp_path, "[Home]\n")
    (folder / "1.png").unlink()
    shutil.copy(folder / "0.png", folder / "2.png")
    with pytest.raises(FormatError, match="without gaps"):
        import_llamatouch(folder, task_id="t", demos_root=tmp_path / "d")
    (folder / "2.png").rename(folder / "1.png")
    (folder / "instruction.txt").write_text("42\n")
    with pytest.raises(FormatError, match="instruction.txt is missing or empty"):
        import_llamatouch(folder, task_id="t", demos_root=tmp_path / "d")


def test_parse_event_scales_from_the_given_resolution() -> None:
    tap = parse_event(
        "[Click] Screen Resolution (320, 720), Click Position (160, 360)", (1080, 2400)
    )
    assert (tap.x, tap.y) == (540, 1200)
    press = parse_event("[LongClick] Screen Resolution (100, 100), Position (10, 10)", (1000, 1000))
    assert press.type is ActionType.LONG_PRESS and press.x == 100
    assert parse_event("[Back]", (1, 1)).type is ActionType.BACK


DROIDBOT = Path(__file__).resolve().parents[1] / "fixtures" / "droidbot_qqmusic"


def test_a_real_droidbot_run_imports_as_a_demonstration(tmp_path: Path) -> None:
    result = IMPORTERS["droidbot"](DROIDBOT, task_id="qqmusic_start", demos_root=tmp_path)
    demo = load_demo(result.folder)
    assert demo.status is DemoStatus.COMPLETE and len(demo.steps) == 2
    first, last = demo.steps
    assert first.observation.activity == (
        "com.android.permissioncontroller/.permission.ui.GrantPermissionsActivity"
    )
    assert last.observation.activity == "com.tencent.qqmusic/.activity.AppStarterActivity"
    assert first.observation.screen == (1080, 2280)
    # DroidBot touched the dialog's container view: its centre, with the element attached.
    tap = first.action
    assert (tap.type, tap.x, tap.y) == (ActionType.TAP, 540.0, 1159.5)
    assert tap.element is not None and tap.element.resource_id.endswith(":id/grant_singleton")
    assert last.action.type is ActionType.DONE
    # The views became a uiautomator dump the builder reads like a recording.
    dump = load_hierarchy(result.folder / (first.observation.hierarchy or ""))
    assert dump.repairs == () and any(e.resource_id.endswith("grant_dialog") for e in dump)
    assert (result.folder / first.observation.screenshot).read_bytes().startswith(b"\x89PNG")
    assert first.observation.phash
    assert any("no instruction.txt" in n for n in result.notes)
    graph = merge_demonstrations(
        [DemoInput.from_folder(result.folder)], settings=SimilaritySettings()
    ).graph
    assert [n.kind.value for n in graph.nodes] == ["start", "done"]


def test_droidbot_events_become_actions() -> None:
    view = {"bounds": [[0, 200], [1000, 1200]]}
    screen = (1080, 2280)
    scroll = parse_droidbot_event({"event_type": "scroll", "direction": "UP", "view": view}, screen)
    assert (scroll.y, scroll.y2) == (300.0, 1100.0)  # DroidBot's UP drags the finger down
    typed = parse_droidbot_event({"event_type": "set_text", "text": "hello"}, screen)
    assert typed.text == "hello"
    assert parse_droidbot_event({"event_type": "key", "name": "BACK"}, screen).type.value == "back"
    with pytest.raises(ValueError, match="not a screen input"):
        parse_droidbot_event({"event_type": "intent"}, screen)


def test_a_folder_that_is_not_droidbot_output_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="not a DroidBot output folder"):
        IMPORTERS["droidbot"](tmp_path, task_id="t", demos_root=tmp_path / "demos")


COLORBENCH = Path(__file__).resolve().parents[1] / "fixtures" / "colorbench_graph"
CB_START = "aiagent2_Screenshot_2025-07-15-17-29-51-83_4fbb30eb7b7166119bd25e41eddeee2f.jpg"
CB_DONE = "aiagent2_Screenshot_2025-07-15-17-30-07-43_4fbb30eb7b7166119bd25e41eddeee2f.jpg"


def _colorbench_images(folder: Path) -> Path:
    graph = json.loads((COLORBENCH / "graph.json").read_text(encoding="utf-8"))
    folder.mkdir()
    for name in {*graph, *(t for targets in graph.values() for t in targets)}:
        Image.new("RGB", (1080, 2400), (200, 200, 200)).save(folder / name, format="JPEG")
    return folder


def test_a_real_colorbench_graph_imports_as_a_task_graph_with_bounds_rules(
    tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    images = _colorbench_images(tmp_path / "images")
    suite = tmp_path / "suite"
    argv = ["import", "colorbench", str(COLORBENCH / "graph.json"), "--task", "cb_search"]
    argv += ["-o", str(suite), "--images", str(images), "--start", CB_START, "--done", CB_DONE]
    assert main([*argv, "--instruction", "Search for face towels"]) == 0
    assert "imported 7 nodes and 10 edges" in capsys.readouterr().out
    graph = load_graph(suite / "cb_search")
    assert graph.start is not None and [n.id for n in graph.done_nodes] == ["done"]
    assert not has_errors(validate_graph(graph))
    typed = [e for e in graph.edges if e.source == "start"]
    assert sorted(t for e in typed for t in e.rule.texts) == ["洗脸巾", "牙刷"]
    # A tap's rule is its bbox and point in [0,1000] space (the bbox clipped to the screen).
    tap = next(e for e in graph.edges if e.rule.bounds and e.rule.points == ((974.074, 335.0),))
    assert tap.rule.bounds.as_list() == [927.778, 306.667, 1000, 363.333]
    done_out = [e.rule.action_type.value for e in graph.edges if e.source == "done"]
    assert sorted(done_out) == ["long_press", "tap", "tap"]
    assert graph.meta["colorbench_images"]["start"] == CB_START
    for node in graph.nodes:
        assert (suite / "cb_search" / node.screenshot).read_bytes().startswith(b"\x89PNG")
    assert load_task(suite / "cb_search").instruction == "Search for face towels"


def test_colorbench_missing_screenshots_and_unknown_starts_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="not in the images folder"):
        import_colorbench(
            COLORBENCH / "graph.json",
            task_id="t",
            suite_dir=tmp_path / "s",
            images=tmp_path,
            start=CB_START,
            done=[CB_DONE],
            instruction="x",
        )
    with pytest.raises(FormatError, match="is not a screenshot of the graph"):
        import_colorbench(
            COLORBENCH / "graph.json",
            task_id="t",
            suite_dir=tmp_path / "s",
            images=tmp_path,
            start="nope.jpg",
            done=[CB_DONE],
            instruction="x",
        )


# A real AppAgent record line: geekan/MetaGPT at 48348a37b4582e493a1f193fe18254558c9f1ff5,
# tests/data/andriod_assistant/demo_Contacts/record.txt (AppAgent demonstration output; that
# folder has no raw screenshots or dumps, so the demonstration below is made by the
# documented format).
REAL_RECORD = "tap(9):::android.view.ViewGroup_1067_236_android.widget.TextView_183_204_Apps_2"


def test_appagent_record_lines_parse() -> None:
    assert parse_record_line(REAL_RECORD) == (
        "tap",
        9,
        "",
        "android.view.ViewGroup_1067_236_android.widget.TextView_183_204_Apps_2",
    )
    assert parse_record_line('text(2:sep:"see you, Sunday"):::x') == (
        "text",
        2,
        "see you, Sunday",
        "x",
    )
    assert parse_record_line("swipe(1:sep:up):::list")[2] == "up"
    with pytest.raises(ValueError, match="expected tap"):
        parse_record_line("click(3)")


def _appagent_demo(root: Path) -> Path:
    demo = root / "demo_Contacts_2024-01-01_10-00-00"
    for sub in ("raw_screenshots", "xml"):
        (demo / sub).mkdir(parents=True)
    home = Sketch("Contacts", ("Alice Brown", "Dr. Lee"))
    detail = Sketch("Dr. Lee", ("Call", "Message"))
    for k, screen in enumerate((home, detail), start=1):
        image, xml = render(screen)
        image.save(demo / "raw_screenshots" / f"{demo.name}_{k}.png")
        (demo / "xml" / f"{demo.name}_{k}.xml").write_text(xml, encoding="utf-8")
    # The "Dr. Lee" row is the second clickable element; its id as AppAgent makes it.
    (demo / "record.txt").write_text(
        "tap(2):::com.example.app.id_list_com.example.app.id_row_1\nstop\n"
    )
    (demo / "task_desc.txt").write_text("Open Dr. Lee's contact card")
    return demo


def test_an_appagent_demonstration_imports_with_its_tapped_element(tmp_path: Path) -> None:
    folder = _appagent_demo(tmp_path / "apps")
    result = IMPORTERS["appagent"](folder, task_id="open_lee", demos_root=tmp_path / "demos")
    demo = load_demo(result.folder)
    assert demo.instruction == "Open Dr. Lee's contact card" and len(demo.steps) == 2
    tap = demo.steps[0].action
    x, y = Sketch("Contacts", ("Alice Brown", "Dr. Lee")).row_center("Dr. Lee")
    assert tap.type is ActionType.TAP and abs(tap.x - x) <= 1 and abs(tap.y - y) <= 1
    assert tap.element is not None and tap.element.resource_id.endswith(":id/row")
    # Found by its id even when the number is off (another AppAgent version's tagging).
    (folder / "record.txt").write_text(
        "tap(1):::com.example.app.id_list_com.example.app.id_row_1\nstop\n"
    )
    again = IMPORTERS["appagent"](folder, task_id="open_lee", demos_root=tmp_path / "d1")
    assert load_demo(again.folder).steps[0].action.y == tap.y
    assert demo.steps[1].action.type is ActionType.DONE
    (folder / "record.txt").write_text("tap(7):::nothing_like_it\nstop\n")
    with pytest.raises(FormatError, match="no element 'nothing_like_it' \\(number 7\\)"):
        IMPORTERS["appagent"](folder, task_id="open_lee", demos_root=tmp_path / "d2")
