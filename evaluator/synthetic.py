"""Synthetic suites for tests, benchmarks and demos of the evaluator.

Each task is a chain of screens drawn with Pillow, whose uiautomator XML agrees with the
pixels: on every screen one button leads on, the others are distractors. Some tasks end
by typing a quoted text into a field. Every task has a hand-built graph (node images, tap
edges with element bounds and demonstrated points, a type edge) and, on request, two
demonstrations, so graphs can also be rebuilt from them: ``demo1`` goes straight,
``demo2`` first taps a wrong button and goes back (a loop at START).

Instructions come in two variants: the normalized one names the buttons ("Open Display,
then tap Font size."), the original one says what an older adult might say instead.

>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> tasks = write_suite(Path(tmp.name) / "suite", count=3, demos=Path(tmp.name) / "demos")
>>> [t.id for t in tasks]
['task000', 'task001', 'task002']
>>> sorted(p.name for p in (Path(tmp.name) / "demos" / "task000").iterdir())
['demo1', 'demo2']
>>> tmp.cleanup()
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from PIL import Image, ImageDraw

from graph_builder.io import DemoWriter, atomic_write_bytes, save_graph, save_suite, save_task
from graph_builder.model import (
    SCENARIOS,
    SEMANTICS,
    SYNTAX,
    Action,
    ActionType,
    Bounds,
    DemoStatus,
    DeviceInfo,
    Edge,
    EdgeSupport,
    ElementRef,
    EvalProtocol,
    Labels,
    MatchRule,
    MemberRef,
    Node,
    NodeKind,
    ResetRecipe,
    Size,
    SuccessCriteria,
    Suite,
    Task,
    TaskGraph,
)

SCREEN: Size = (540, 1200)
DEMO_ID = "demo1"  # the straight path
DETOUR_DEMO_ID = "demo2"  # taps a wrong button first, goes back, then the straight path
_LABELS = (
    "Settings",
    "Display",
    "Font size",
    "Contacts",
    "Messages",
    "Camera",
    "Clock",
    "Alarm",
    "Wi-Fi",
    "Bluetooth",
    "Battery",
    "Sound",
    "Volume",
    "Calendar",
    "Gallery",
    "Weather",
    "Maps",
    "Phone",
    "Notes",
    "Calculator",
    "Flashlight",
    "Accessibility",
    "Language",
    "Wallpaper",
)
_ORIGINAL = (
    "Oh dear, my grandson set this up and now I can't find that thing again, could you help?",
    "The phone is being difficult today, I just want it to do what it did yesterday.",
    "Um, I wanted to, no wait, the other one, you know, the one I always use.",
    "My eyes are tired and the phone is confusing, please sort it out for me.",
)
_TEXTS = ("hello dear", "call me back", "see you on Sunday", "buy milk")
_BUTTON_H = 110
_TOP = 260


@dataclass(frozen=True, slots=True)
class DrawnScreen:
    """One synthetic screen: its picture, its hierarchy and where its buttons are."""

    png: bytes
    xml: str
    buttons: dict[str, Bounds]
    field: Bounds | None
    activity: str


def _button_bounds(i: int, size: Size) -> Bounds:
    w, _ = size
    top = _TOP * size[1] // 1200 + i * (_BUTTON_H * size[1] // 1200 + 20)
    return Bounds(w // 12, top, w - w // 12, top + _BUTTON_H * size[1] // 1200)


def _node_xml(
    bounds: Bounds,
    *,
    cls: str,
    text: str = "",
    rid: str = "",
    clickable: bool,
    focused: bool = False,
    package: str,
    inner: str = "",
) -> str:
    b = f"[{int(bounds.left)},{int(bounds.top)}][{int(bounds.right)},{int(bounds.bottom)}]"
    flag = "true" if clickable else "false"
    return (
        f'<node index="0" text={quoteattr(text)} resource-id={quoteattr(rid)} '
        f'class="{cls}" package="{package}" content-desc="" checkable="false" checked="false" '
        f'clickable="{flag}" enabled="true" focusable="{flag}" '
        f'focused="{"true" if focused else "false"}" scrollable="false" long-clickable="false" '
        f'password="false" selected="false" visible-to-user="true" bounds="{b}">{inner}</node>'
    )


def render_screen(
    title: str,
    buttons: list[str],
    *,
    app: str,
    activity: str,
    size: Size = SCREEN,
    field: bool = False,
    hue: int = 0,
) -> DrawnScreen:
    """Draw a screen with a title, buttons (top to bottom) and optionally a focused field."""
    w, h = size
    image = Image.new("RGB", size, (235 - hue % 60, 240, 225 + hue % 30))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, w, 80 * h // 1200), fill=(40 + hue % 120, 90, 160))
    draw.text((20, 30 * h // 1200), title, fill=(255, 255, 255))
    root = Bounds(0, 0, w, h)
    children = [
        _node_xml(
            Bounds(0, 0, w, 80 * h // 1200),
            cls="android.widget.TextView",
            text=title,
            rid=f"{app}:id/title",
            clickable=False,
            package=app,
        )
    ]
    bounds: dict[str, Bounds] = {}
    for i, label in enumerate(buttons):
        b = _button_bounds(i, size)
        bounds[label] = b
        shade = (70 * (i + 1) + hue) % 200
        draw.rectangle(
            (b.left, b.top, b.right - 1, b.bottom - 1),
            fill=(shade, 150, 220 - shade // 2),
            outline=(20, 20, 20),
        )
        draw.text((b.left + 16, b.top + 12), label, fill=(0, 0, 0))
        children.append(
            _node_xml(
                b,
                cls="android.widget.Button",
                text=label,
                rid=f"{app}:id/button{i}",
                clickable=True,
                package=app,
            )
        )
    field_bounds = None
    if field:
        field_bounds = _button_bounds(len(buttons) + 1, size)
        draw.rectangle(
            (field_bounds.left, field_bounds.top, field_bounds.right - 1, field_bounds.bottom - 1),
            fill=(255, 255, 255),
            outline=(0, 0, 0),
            width=3,
        )
        children.append(
            _node_xml(
                field_bounds,
                cls="android.widget.EditText",
                rid=f"{app}:id/input",
                clickable=True,
                focused=True,
                package=app,
            )
        )
    frame = _node_xml(
        root,
        cls="android.widget.FrameLayout",
        clickable=False,
        package=app,
        inner="".join(children),
    )
    xml = f"<?xml version='1.0' encoding='UTF-8' ?><hierarchy rotation=\"0\">{frame}</hierarchy>"
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return DrawnScreen(buffer.getvalue(), xml, bounds, field_bounds, activity)


@dataclass(frozen=True, slots=True)
class _Plan:
    task: Task
    screens: list[DrawnScreen]
    actions: list[Action]  # actions[i] leads from screens[i] to screens[i + 1]
    size: Size
    detour: DrawnScreen  # where a distractor on the first screen leads
    detour_tap: Action


def _plan(index: int, rng: random.Random, size: Size) -> _Plan:
    app = f"com.example.app{index % 5}"
    taps = 1 + index % 4
    typing = index % 5 == 4
    labels = rng.sample(_LABELS, taps + 3 * (taps + 1))
    path, distractors = labels[:taps], labels[taps:]
    text = _TEXTS[index % len(_TEXTS)]
    screens: list[DrawnScreen] = []
    actions: list[Action] = []
    for j in range(taps + 1):
        buttons = distractors[3 * j : 3 * j + 3]
        if j < taps:
            buttons.insert(rng.randrange(len(buttons) + 1), path[j])
        last = j == taps
        screens.append(
            render_screen(
                f"{app} screen {j}",
                buttons,
                app=app,
                activity=f"{app}/.Screen{j}",
                size=size,
                field=last and typing,
                hue=index * 7 + j * 31,
            )
        )
        if not last:
            b = screens[-1].buttons[path[j]]
            x, y = b.center
            element = ElementRef(
                bounds=b,
                resource_id=f"{app}:id/button{buttons.index(path[j])}",
                text=path[j],
                class_name="android.widget.Button",
            )
            actions.append(Action.tap(x, y, screen=size, element=element))
    steps_text = ", then ".join(f"tap {p}" for p in path)
    normalized = f"Open {app.rsplit('.', 1)[1]}: {steps_text}."
    original = _ORIGINAL[index % len(_ORIGINAL)]
    final_title = f"{app} screen {taps}"
    if typing:
        actions.append(Action.type_text(text))
        final_title = f"{app} sent"
        screens.append(
            render_screen(
                final_title,
                ["OK"],
                app=app,
                activity=f"{app}/.Sent",
                size=size,
                hue=index * 7 + 200,
            )
        )
        normalized += f' Then type "{text}".'
        original += f' Tell them "{text}".'
    task = Task(
        id=f"task{index:03d}",
        instruction=original,
        normalized_instruction=normalized,
        app=app,
        protocol=EvalProtocol.OFFLINE,
        max_steps=len(actions) + 4,
        labels=Labels(
            scenario=SCENARIOS[index % len(SCENARIOS)],
            syntax=(SYNTAX[index % len(SYNTAX)],),
            semantics=(SEMANTICS[index % len(SEMANTICS)],) if index % 3 else (),
        ),
        reset=ResetRecipe(app),
        success=SuccessCriteria(activity=screens[-1].activity, must_contain=(final_title,)),
    )
    wrong = next(label for label in screens[0].buttons if label != path[0])
    bounds = screens[0].buttons[wrong]
    detour_tap = Action.tap(
        *bounds.center,
        screen=size,
        element=ElementRef(bounds=bounds, text=wrong, class_name="android.widget.Button"),
    )
    detour = render_screen(
        f"{app} {wrong}",
        ["Nothing to do here"],
        app=app,
        activity=f"{app}/.Other",
        size=size,
        hue=index * 7 + 120,
    )
    return _Plan(task, screens, actions, size, detour, detour_tap)


def _rule(action: Action) -> MatchRule:
    n = action.normalized()
    if n.type.is_pointed:
        assert n.element is not None and n.x is not None and n.y is not None
        return MatchRule(n.type, bounds=n.element.bounds, points=((n.x, n.y),))
    assert n.text is not None
    return MatchRule(n.type, texts=(n.text,))


def _graph(plan: _Plan) -> tuple[TaskGraph, list[DrawnScreen]]:
    """The graph both demonstrations support, and each node's screen."""
    last = len(plan.screens) - 1
    nodes = []
    for j, screen in enumerate(plan.screens):
        node_id = "start" if j == 0 else "done" if j == last else f"n{j}"
        kind = NodeKind.START if j == 0 else NodeKind.DONE if j == last else NodeKind.STATE
        members = [MemberRef(DEMO_ID, j), MemberRef(DETOUR_DEMO_ID, j + 2)]
        if j == 0:
            members.append(MemberRef(DETOUR_DEMO_ID, 0))
        nodes.append(
            Node(
                node_id,
                kind,
                f"nodes/{node_id}.png",
                plan.size,
                members=tuple(sorted(members)),
                hierarchy=f"nodes/{node_id}.xml",
                activity=screen.activity,
            )
        )
    nodes.append(
        Node(
            "detour",
            NodeKind.STATE,
            "nodes/detour.png",
            plan.size,
            members=(MemberRef(DETOUR_DEMO_ID, 1),),
            hierarchy="nodes/detour.xml",
            activity=plan.detour.activity,
        )
    )
    edges = [
        Edge(
            f"e{j}",
            nodes[j].id,
            nodes[j + 1].id,
            _rule(a),
            (
                EdgeSupport(MemberRef(DEMO_ID, j), a),
                EdgeSupport(MemberRef(DETOUR_DEMO_ID, j + 2), a),
            ),
        )
        for j, a in enumerate(plan.actions)
    ]
    edges += [
        Edge(
            "wrong",
            "start",
            "detour",
            _rule(plan.detour_tap),
            (EdgeSupport(MemberRef(DETOUR_DEMO_ID, 0), plan.detour_tap),),
        ),
        Edge(
            "back",
            "detour",
            "start",
            MatchRule(ActionType.BACK),
            (EdgeSupport(MemberRef(DETOUR_DEMO_ID, 1), Action.back()),),
        ),
    ]
    return TaskGraph(plan.task.id, tuple(nodes), tuple(edges)), [*plan.screens, plan.detour]


def write_suite(
    root: Path,
    count: int = 10,
    *,
    seed: int = 0,
    demos: Path | None = None,
    graphs: bool = True,
    size: Size = SCREEN,
) -> list[Task]:
    """Write ``count`` synthetic tasks into the suite folder ``root`` (and their
    demonstrations under ``demos``); returns the tasks."""
    root = Path(root)
    save_suite(Suite(name=root.name, description="synthetic evaluator suite"), root)
    rng = random.Random(seed)
    tasks = []
    for index in range(count):
        plan = _plan(index, rng, size)
        task_dir = root / plan.task.id
        save_task(plan.task, task_dir)
        if graphs:
            graph, node_screens = _graph(plan)
            for node, screen in zip(graph.nodes, node_screens, strict=True):
                atomic_write_bytes(task_dir / node.screenshot, screen.png)
                assert node.hierarchy is not None
                atomic_write_bytes(task_dir / node.hierarchy, screen.xml.encode("utf-8"))
            save_graph(graph, task_dir)
        if demos is not None:
            write_demos(demos, plan)
        tasks.append(plan.task)
    return tasks


def write_demos(demos_root: Path, plan: _Plan) -> list[Path]:
    """The straight demonstration and the one with a detour, as recorded demo folders."""
    straight = list(zip(plan.screens, [*plan.actions, Action.done()], strict=True))
    detour = [(plan.screens[0], plan.detour_tap), (plan.detour, Action.back()), *straight]
    folders = []
    for demo_id, steps in ((DEMO_ID, straight), (DETOUR_DEMO_ID, detour)):
        writer = DemoWriter.create(
            demos_root,
            plan.task,
            device=DeviceInfo("synthetic", width=plan.size[0], height=plan.size[1]),
            demo_id=demo_id,
            clock=lambda: 0.0,
        )
        for j, (screen, action) in enumerate(steps):
            writer.add_step(
                screen.png,
                screen.xml,
                action=action,
                activity=screen.activity,
                screen=plan.size,
                time=float(j),
            )
        writer.finish(DemoStatus.COMPLETE)
        folders.append(writer.folder)
    return folders
