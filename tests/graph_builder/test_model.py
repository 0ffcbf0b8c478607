"""The data model: validation, coordinate conversion and JSON round trips."""

from __future__ import annotations

import json

import pytest

from graph_builder.errors import FormatError, InvalidIdError
from graph_builder.model import (
    Action,
    ActionType,
    Bounds,
    Demonstration,
    DemoStatus,
    DeviceInfo,
    Edge,
    EdgeSupport,
    ElementRef,
    Labels,
    MatchRule,
    MemberRef,
    Node,
    NodeKind,
    Observation,
    Pin,
    PinKind,
    ResetRecipe,
    SettingValue,
    Step,
    SuccessCriteria,
    Suite,
    SwipeDirection,
    Task,
    TaskGraph,
    rescale_point,
    validate_id,
)

SCREEN = (1080, 2400)
ELEMENT = ElementRef(
    Bounds(40, 300, 1040, 420),
    "com.android.settings:id/title",
    "Display",
    "",
    "android.widget.TextView",
)

ACTIONS = [
    Action.tap(540, 360, screen=SCREEN, element=ELEMENT),
    Action.long_press(100, 200, screen=SCREEN, duration_ms=900),
    Action.swipe(540, 2000, 540, 600, screen=SCREEN, duration_ms=250),
    Action.type_text("我想给女儿打电话 'quoted' $(reboot)"),
    Action.back(),
    Action.home(),
    Action.wait(1500),
    Action.done(),
]


def _json_round_trip(value):
    """Through real JSON text, as on disk."""
    return json.loads(json.dumps(value.to_json()))


@pytest.mark.parametrize("action", ACTIONS, ids=lambda a: a.type.value)
def test_action_round_trips_through_json(action):
    assert Action.from_json(_json_round_trip(action)) == action


def test_swipe_json_uses_x1_y1_x2_y2():
    data = Action.swipe(1, 2, 3, 4, screen=SCREEN).to_json()
    assert (data["x1"], data["y1"], data["x2"], data["y2"]) == (1, 2, 3, 4)
    assert "x" not in data


def test_normalized_space_conversion_is_exact_and_reversible():
    tap = Action.tap(540, 1200, screen=SCREEN, element=ELEMENT)
    norm = tap.normalized()
    assert (norm.x, norm.y, norm.screen) == (500.0, 500.0, (1000, 1000))
    assert norm.element.bounds == Bounds(40 / 1.08, 125.0, 1040 / 1.08, 175.0)
    back = norm.to_device(SCREEN)
    assert (back.x, back.y) == (540, 1200)
    assert rescale_point(1000, 1000, (1000, 1000), SCREEN) == (1080, 2400)


@pytest.mark.parametrize(
    ("end", "direction"),
    [((540, 600), "up"), ((540, 2300), "down"), ((100, 1950), "left"), ((1000, 2050), "right")],
)
def test_swipe_direction_follows_the_finger(end, direction):
    swipe = Action.swipe(540, 2000, *end, screen=SCREEN)
    assert swipe.direction is SwipeDirection(direction)


def test_direction_is_judged_in_the_actions_own_pixels():
    # 300 px right and 400 px down on a tall screen is down on the glass, though it is
    # further right than down in [0,1000] (the matcher decides in pixels too).
    swipe = Action.swipe(100, 100, 400, 500, screen=SCREEN)
    assert swipe.direction is SwipeDirection.DOWN
    assert swipe.normalized().direction is SwipeDirection.RIGHT
    # an exact diagonal is vertical
    assert Action.swipe(100, 100, 500, 500, screen=SCREEN).direction is SwipeDirection.DOWN


@pytest.mark.parametrize(
    "kwargs",
    [
        {"type": "tap", "x": 1},
        {"type": "swipe", "x": 1, "y": 2, "screen": SCREEN},
        {"type": "type", "text": ""},
        {"type": "tap", "x": 1, "y": 1, "screen": (0, 10)},
        {"type": "wait", "duration_ms": -5},
    ],
)
def test_action_rejects_incomplete_specs(kwargs):
    with pytest.raises(ValueError):
        Action(**kwargs)


def test_unknown_action_type_names_the_allowed_ones():
    with pytest.raises(FormatError, match="expected one of: tap, double_tap, long_press"):
        Action.from_json({"type": "pinch"})


def test_describe_reads_like_a_person_would_say_it():
    assert ACTIONS[0].describe() == "tap (540, 360) 'Display'"
    assert ACTIONS[2].describe().startswith("swipe up")
    assert Action.wait(200).describe() == "wait 200 ms"


def _demo() -> Demonstration:
    obs = Observation(
        "steps/0000.png",
        SCREEN,
        "steps/0000.xml",
        "com.android.settings/.Settings",
        1.5e9,
        "c3c3c3c3c3c3c3c3",
    )
    steps = tuple(Step(i, obs, a) for i, a in enumerate(ACTIONS))
    return Demonstration(
        id="20261129-120000",
        task_id="font_size",
        instruction="the words are too small",
        steps=steps,
        app="com.android.settings",
        device=DeviceInfo("virtual-1", "ElderPhone", "14", 1080, 2400, 440),
        annotator="ann1",
        status=DemoStatus.COMPLETE,
        created=1.5e9,
    )


def _task() -> Task:
    return Task(
        id="font_size",
        instruction="the words are too small",
        normalized_instruction="Increase the font size in Settings",
        app="com.android.settings",
        protocol="online",
        max_steps=12,
        labels=Labels("system_settings", ("elliptical",), ("indirect_speech",)),
        reset=ResetRecipe(
            "com.android.settings",
            ".Settings",
            clear_data=True,
            settings=(SettingValue("system", "font_scale", "1.0"),),
        ),
        success=SuccessCriteria(".Settings", ("Font size",), ("Error",), "Font is larger"),
    )


def _graph() -> TaskGraph:
    nodes = (
        Node(
            "start",
            NodeKind.START,
            "nodes/start.png",
            SCREEN,
            (MemberRef("d1", 0),),
            "nodes/start.xml",
            "pkg/.A",
            "ff00ff00ff00ff00",
        ),
        Node(
            "done",
            NodeKind.DONE,
            "nodes/done.png",
            SCREEN,
            (MemberRef("d1", 1), MemberRef("d2", 3)),
        ),
    )
    rule = MatchRule(ActionType.TAP, Bounds(10, 20, 300, 80), ((100.5, 50),), 50, None, (), 80)
    edges = (
        Edge("e1", "start", "done", rule, (EdgeSupport(MemberRef("d1", 0), ACTIONS[0]),)),
        Edge("e2", "start", "done", MatchRule("swipe", direction="up")),
        Edge("e3", "start", "done", MatchRule("type", texts=("hello", "hi"), text_threshold=85)),
    )
    pins = (Pin(PinKind.APART, (MemberRef("d1", 1),), (MemberRef("d2", 3),)),)
    return TaskGraph("font_size", nodes, edges, pins, {"built_by": "test"})


@pytest.mark.parametrize(
    "record",
    [_demo(), _task(), Suite("sample", "demo suite"), _graph()],
    ids=["demonstration", "task", "suite", "graph"],
)
def test_documents_round_trip_through_json(record):
    data = _json_round_trip(record)
    assert data["schema_version"] == 1
    assert type(record).from_json(data) == record


def test_normalized_instruction_falls_back_to_the_original():
    task = Task(id="t", instruction="call my daughter")
    assert task.instruction_for("normalized") == "call my daughter"
    assert _task().instruction_for("normalized") == "Increase the font size in Settings"


def test_graph_lookups():
    graph = _graph()
    assert graph.start.id == "start"
    assert [n.id for n in graph.done_nodes] == ["done"]
    assert [e.id for e in graph.out_edges("start")] == ["e1", "e2", "e3"]
    with pytest.raises(KeyError, match="no node 'x'"):
        graph.node("x")


def test_duplicate_node_ids_are_refused():
    node = _graph().nodes[0]
    with pytest.raises(ValueError, match="duplicate node ids: start"):
        TaskGraph("t", (node, node))


def test_match_rule_problems_name_what_is_missing():
    assert MatchRule("tap").problems() == ["a tap rule needs element bounds or at least one point"]
    assert MatchRule("swipe").problems() == ["a swipe rule needs a direction"]
    assert MatchRule("type").problems() == ["a type rule needs at least one accepted text"]
    assert MatchRule("back").problems() == []


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "../etc",
        "a/b",
        "a\\b",
        "..",
        "x..y",
        "tab\there",
        "new\nline",
        ".hidden",
        "é",
        "a" * 129,
    ],
)
def test_unsafe_ids_are_refused(bad):
    with pytest.raises(InvalidIdError):
        validate_id(bad)


def test_task_with_unsafe_id_in_json_is_a_format_error():
    data = _task().to_json() | {"id": "../../outside"}
    with pytest.raises(FormatError, match="task id '../../outside' is not allowed"):
        Task.from_json(data, source="x/task.json")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("instruction"), "field 'instruction' is missing"),
        (lambda d: d.update(max_steps="ten"), "field 'max_steps' must be an integer, not str"),
        (lambda d: d.update(max_steps=True), "must be an integer, not a boolean"),
        (lambda d: d.update(labels=[]), "field 'labels' must be an object"),
        (lambda d: d["labels"].update(syntax=[1]), "field 'syntax' must be a list of strings"),
        (lambda d: d.update(protocol="sometimes"), "expected one of: online, offline"),
    ],
)
def test_wrong_task_fields_name_the_field(mutate, message):
    data = _task().to_json()
    mutate(data)
    with pytest.raises(FormatError, match=message) as info:
        Task.from_json(data, source="suite/t/task.json")
    assert "suite/t/task.json" in str(info.value)


def test_step_indices_must_be_consecutive():
    demo = _demo()
    data = demo.to_json()
    data["steps"][1]["index"] = 7
    with pytest.raises(FormatError, match="step 1 has index 7"):
        Demonstration.from_json(data)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"namespace": "vendor", "key": "x", "value": "1"}, "must be one of system, secure"),
        ({"namespace": "system", "key": "a b; reboot", "value": "1"}, "must be letters, digits"),
        ({"namespace": "system", "key": "font_scale"}, "field 'value' is missing"),
    ],
)
def test_reset_settings_are_checked(setting, message):
    data = _task().to_json()
    data["reset"]["settings"] = [setting]
    with pytest.raises(FormatError, match=message):
        Task.from_json(data)


def test_graph_meta_is_a_frozen_copy_and_thaws_to_the_same_json():
    source_meta = {"demos": ["d1", "d2"], "settings": {"volatile_regions": [[0, 0, 1000, 40]]}}
    graph = TaskGraph("t", _graph().nodes, meta=source_meta)
    source_meta["demos"].append("d3")  # the caller's dict is not shared
    assert graph.meta["demos"] == ("d1", "d2")
    with pytest.raises(TypeError):
        graph.meta["demos"] = ()  # type: ignore[index]
    with pytest.raises(TypeError):
        graph.meta["settings"]["volatile_regions"] = []
    data = _json_round_trip(graph)
    assert data["meta"] == {
        "demos": ["d1", "d2"],
        "settings": {"volatile_regions": [[0, 0, 1000, 40]]},
    }
    assert TaskGraph.from_json(data) == graph


def test_suite_vocabularies_are_read_only():
    suite = Suite("s", vocabularies={"scenario": ["a", "b"]})
    assert suite.vocabularies["scenario"] == ("a", "b")
    with pytest.raises(TypeError):
        suite.vocabularies["syntax"] = ("x",)  # type: ignore[index]
    assert Suite.from_json(_json_round_trip(suite)) == suite


@pytest.mark.parametrize(
    ("record", "where"),
    [
        (Action.tap(1, 2, screen=SCREEN), "action"),
        (ElementRef(Bounds(0, 0, 10, 10), text="OK"), "element"),
        (Labels("system_settings", ("elliptical",)), "labels"),
        (MemberRef("d1", 0), "member"),
        (MatchRule("back"), "rule"),
    ],
)
def test_every_record_reads_json_the_same_way(record, where):
    data = _json_round_trip(record)
    assert type(record).from_json(data, where="x", source="f.json") == record
    with pytest.raises(FormatError, match=rf"^f\.json: {where}\b"):
        type(record).from_json(True, source="f.json")


def test_nested_errors_name_their_place_in_the_document():
    data = _graph().to_json()
    data["edges"][1]["rule"]["radius"] = "far"
    with pytest.raises(FormatError, match=r"graph\.edges\[1\]\.rule: field 'radius'"):
        TaskGraph.from_json(data, source="g.json")


def test_record_rules_raise_the_package_error_which_is_a_value_error():
    from graph_builder.errors import GraphBuilderError, RecordError

    with pytest.raises(RecordError, match="needs x, y and screen") as info:
        Action(ActionType.TAP)
    assert isinstance(info.value, GraphBuilderError) and isinstance(info.value, ValueError)
