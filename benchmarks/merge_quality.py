"""How well the graph builder decides "same screen": scored against the virtual phone's truth.

    .venv/bin/python benchmarks/merge_quality.py [--keep DIR | --reuse DIR] [--settings FILE]

Records with the studio's recording session (``recorder_app.recording.script``), through
the device layer (``devices.android.AndroidDevice`` against
``virtual_phone.launch.running_server``), several demonstrations of each task below on
a virtual phone whose real-time clock runs, every demonstration by a different path (detours,
going back, scrolling, searching). At every step it also reads the phone's ground truth
(``getprop debug.virtualphone.screen``: the logical screen and a digest of what the app
shows, the clock left out), which nothing else may use.

Then, per task, every pair of recorded screens is a "same node?" decision: predicted by
``merge_demonstrations``, and by an exact-hierarchy-hash baseline (DroidBot style: the
activity plus the set of every element's class, resource id, text and state). It prints
pairwise precision and recall of "same", pooled over tasks, and every wrong pair.

It also checks the real LlamaTouch trace (when the shared fixtures are there): its five
screens are all different, so nothing may be merged.

Targets: precision >= 0.99, recall >= 0.95, and recall above the baseline's.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

# Never let adbutils start a real adb server: the virtual phone is the only server here.
os.environ.setdefault("ADBUTILS_ADB_PATH", "/bin/false")

from devices.android import AndroidDevice, adb_client  # noqa: E402
from graph_builder.hierarchy import parse_hierarchy  # noqa: E402
from graph_builder.importers.llamatouch import import_llamatouch  # noqa: E402
from graph_builder.io import load_demo  # noqa: E402
from graph_builder.merge import DemoInput, merge_demonstrations  # noqa: E402
from graph_builder.model import Action, MemberRef, ResetRecipe, Task  # noqa: E402
from graph_builder.screen import Screen  # noqa: E402
from graph_builder.similarity import SimilaritySettings, load_settings  # noqa: E402
from recorder_app.recording.script import record_script  # noqa: E402
from recorder_app.recording.session import PendingStep  # noqa: E402
from virtual_phone import (
    VirtualPhone,  # noqa: E402
    running_server,  # noqa: E402
)

SCREEN_PROP = "debug.virtualphone.screen"
FIXTURE = Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "real"

# Each task: the app it starts in (data cleared), then demonstrations as step lists.
# A step is the text or content description of the element to tap, or BACK, HOME,
# SWIPEUP / SWIPEDOWN (scroll the content), TYPE:<text>, WAIT:<seconds>.
TASKS: dict[str, tuple[str, list[list[str]]]] = {
    "settings_dark_theme": (
        "com.android.settings",
        [
            ["Display", "Dark theme"],
            ["SWIPEUP", "Display", "Dark theme"],
            ["Display", "Navigate up", "Display", "Dark theme"],
            ["Search Settings", "Navigate up", "Display", "Dark theme"],
        ],
    ),
    "settings_font_size": (
        "com.android.settings",
        [
            ["Display", "Font size", "Make larger"],
            ["SWIPEUP", "SWIPEDOWN", "Display", "Font size", "Make larger"],
            ["Display", "Dark theme", "Dark theme", "Font size", "Make larger"],
        ],
    ),
    "clock_add_alarm": (
        "com.android.deskclock",
        [
            ["Add alarm", "Increase hour", "OK"],
            ["Clock", "Alarm", "Add alarm", "Increase hour", "OK"],
            ["Add alarm", "Cancel", "Add alarm", "Increase hour", "OK"],
        ],
    ),
    "clock_world_time": (
        "com.android.deskclock",
        [
            ["Clock", "WAIT:20"],
            ["Add alarm", "Cancel", "Clock"],
            ["Clock", "Alarm", "WAIT:25", "Clock"],
        ],
    ),
    "weather_change_city": (
        "com.elderphone.weather",
        [
            ["Change city", "Riverside"],
            ["Settings", "Navigate up", "Change city", "Riverside"],
            ["Change city", "BACK", "Change city", "Riverside"],
        ],
    ),
    "weather_fahrenheit": (
        "com.elderphone.weather",
        [
            ["Settings", "Use Fahrenheit (°F)"],
            ["Change city", "Navigate up", "Settings", "Use Fahrenheit (°F)"],
            ["SWIPEUP", "SWIPEDOWN", "Settings", "Use Fahrenheit (°F)"],
        ],
    ),
    "pharmacy_refill": (
        "com.elderphone.pharmacy",
        [
            ["Refill Lisinopril 10 mg", "Cart, 1 item"],
            ["My orders", "BACK", "Refill Lisinopril 10 mg", "Cart, 1 item"],
            ["Search medicines", "BACK", "Refill Lisinopril 10 mg", "Cart, 1 item"],
        ],
    ),
    "pharmacy_search": (
        "com.elderphone.pharmacy",
        [
            ["Search medicines", "TYPE:vitamin", "Vitamin D3 1000 IU"],
            ["My orders", "BACK", "Search medicines", "TYPE:vitamin", "Vitamin D3 1000 IU"],
            ["SWIPEUP", "Vitamin D3 1000 IU"],
        ],
    ),
    "dialer_call_emma": (
        "com.android.dialer",
        [
            ["Call Daughter (Emma)"],
            ["Recents", "Favorites", "Call Daughter (Emma)"],
            ["Contacts", "Favorites", "Call Daughter (Emma)"],
        ],
    ),
    "messages_open_emma": (
        "com.android.messaging",
        [
            ["Daughter (Emma)"],
            ["Start chat", "Navigate up", "Daughter (Emma)"],
            ["Dr. Lee", "Navigate up", "Daughter (Emma)"],
        ],
    ),
    "contacts_dr_lee": (
        "com.android.contacts",
        [
            ["Dr. Lee"],
            ["Search contacts", "TYPE:lee", "Dr. Lee"],
            ["Alice Brown", "Navigate up", "Dr. Lee"],
        ],
    ),
    "contacts_call_dr_lee": (
        "com.android.contacts",
        [
            ["Dr. Lee", "Call"],
            ["Betty Carter", "BACK", "Dr. Lee", "Call"],
            ["Search contacts", "TYPE:lee", "Dr. Lee", "Call"],
        ],
    ),
    "messages_send_ok": (
        "com.android.messaging",
        [
            ["Daughter (Emma)", "Text message", "TYPE:OK", "Send SMS"],
            ["Start chat", "Navigate up", "Daughter (Emma)", "Text message", "TYPE:OK", "Send SMS"],
            ["Dr. Lee", "Navigate up", "Daughter (Emma)", "Text message", "TYPE:OK", "Send SMS"],
        ],
    ),
    "dialer_open_emma": (
        "com.android.dialer",
        [
            ["Contacts", "Daughter (Emma)"],
            ["Recents", "Contacts", "Daughter (Emma)"],
            ["Contacts", "Favorites", "Contacts", "Daughter (Emma)"],
        ],
    ),
    "clock_delete_alarm": (
        "com.android.deskclock",
        [
            ["Delete"],
            ["Clock", "Alarm", "Delete"],
            ["Add alarm", "Cancel", "Delete"],
        ],
    ),
}


class ScriptError(Exception):
    """A scripted step did not find its element (the app changed): that demo is dropped."""


def _element_action(screen: Screen, label: str) -> Action:
    hierarchy = screen.hierarchy()
    if hierarchy is None:
        raise ScriptError("the screen has no hierarchy")
    matches = [e for e in hierarchy.visible() if label in (e.text, e.content_desc)]
    if not matches:
        raise ScriptError(f"no element {label!r} on the screen")
    element = matches[0]
    x, y = element.bounds.center
    return Action.tap(x, y, screen=screen.size, element=element.ref())


def _action(step: str, screen: Screen) -> Action:
    w, h = screen.size
    keys: dict[str, Callable[[], Action]] = {
        "BACK": Action.back,
        "HOME": Action.home,
        "SWIPEUP": lambda: Action.swipe(w / 2, h * 0.7, w / 2, h * 0.35, screen=(w, h)),
        "SWIPEDOWN": lambda: Action.swipe(w / 2, h * 0.35, w / 2, h * 0.7, screen=(w, h)),
    }
    if step in keys:
        return keys[step]()
    if step.startswith("TYPE:"):
        return Action.type_text(step[5:])
    if step.startswith("WAIT:"):
        return Action.wait(int(float(step[5:]) * 1000))
    return _element_action(screen, step)


@dataclass
class Recording:
    demos_root: Path
    truth: dict[tuple[str, MemberRef], str]
    dropped: list[str]


def record(demos_root: Path, tasks: dict[str, tuple[str, list[list[str]]]]) -> Recording:
    truth: dict[tuple[str, MemberRef], str] = {}
    dropped: list[str] = []
    phone = VirtualPhone("virtual-1", settle_ms=(0, 120))  # the real clock runs
    with running_server([phone]) as server:
        device = AndroidDevice("virtual-1", client=adb_client(port=server.port))
        for task_id, (package, paths) in tasks.items():
            task = Task(id=task_id, instruction=task_id.replace("_", " "), app=package)
            for n, path in enumerate(paths, start=1):
                demo_id = f"d{n}"
                try:
                    _record_demo(device, demos_root, task, demo_id, package, path, truth)
                except ScriptError as exc:
                    dropped.append(f"{task_id}/{demo_id}: {exc}")
            print(f"  recorded {task_id}: {len(paths)} demonstrations", flush=True)
    return Recording(demos_root, truth, dropped)


def _record_demo(
    device: AndroidDevice,
    demos_root: Path,
    task: Task,
    demo_id: str,
    package: str,
    path: list[str],
    truth: dict[tuple[str, MemberRef], str],
) -> None:
    steps = iter([*path, "DONE"])

    def script(pending: PendingStep) -> Action:
        member = MemberRef(demo_id, pending.step_index)
        truth[(task.id, member)] = device.shell(f"getprop {SCREEN_PROP}").strip()
        step = next(steps)
        return Action.done() if step == "DONE" else _action(step, pending.screen)

    record_script(
        device,
        demos_root,
        task,
        script,
        reset=ResetRecipe(package, clear_data=True),
        demo_id=demo_id,
        source="benchmark",
    )


TRUTH_FILE = "ground_truth.json"


def save_recording(recording: Recording) -> None:
    rows = [[task, m.demo_id, m.step, t] for (task, m), t in recording.truth.items()]
    (recording.demos_root / TRUTH_FILE).write_text(json.dumps(rows, indent=1))


def load_recording(root: Path) -> Recording:
    rows = json.loads((root / TRUTH_FILE).read_text())
    return Recording(root, {(task, MemberRef(d, i)): t for task, d, i, t in rows}, [])


# --------------------------------------------------------------------------- scoring


def exact_hierarchy_key(xml: str, activity: str | None) -> str:
    """DroidBot-style state string: the activity and the set of every element's signature."""
    hierarchy = parse_hierarchy(xml)
    views = sorted(
        {
            f"[class]{e.class_name}[resource_id]{e.resource_id}[text]{e.text}"
            f"[enabled,{e.enabled}][checked,{e.checked}][selected,{e.selected}]"
            for e in hierarchy.elements
        }
    )
    return hashlib.sha256(f"{activity}{{{','.join(views)}}}".encode()).hexdigest()


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    def __str__(self) -> str:
        return (
            f"precision {self.precision:.4f}  recall {self.recall:.4f}  "
            f"(pairs: {self.tp} right merges, {self.fp} wrong merges, {self.fn} missed)"
        )


def score_pairs(
    members: Iterable[MemberRef],
    predicted: dict[MemberRef, str],
    truth: dict[MemberRef, str],
    score: Score,
    errors: list[str],
    task_id: str,
) -> None:
    for a, b in itertools.combinations(sorted(members), 2):
        same_pred, same_true = predicted[a] == predicted[b], truth[a] == truth[b]
        if same_pred and same_true:
            score.tp += 1
        elif same_pred:
            score.fp += 1
            errors.append(f"{task_id}: merged {a} [{truth[a]}] with {b} [{truth[b]}]")
        elif same_true:
            score.fn += 1
            errors.append(f"{task_id}: kept apart {a} and {b} [{truth[a]}]")


def evaluate(recording: Recording, settings: SimilaritySettings, verbose: bool) -> None:
    ours, baseline = Score(), Score()
    our_errors: list[str] = []
    base_errors: list[str] = []
    started = time.perf_counter()
    tasks = sorted({task for task, _ in recording.truth})
    for task_id in tasks:
        folders = sorted(p.parent for p in (recording.demos_root / task_id).glob("*/demo.json"))
        inputs = [DemoInput.from_folder(f) for f in folders]
        result = merge_demonstrations(inputs, settings=settings, task_id=task_id)
        predicted = {m: n.id for n in result.graph.nodes for m in n.members}
        truth = {m: t for (task, m), t in recording.truth.items() if task == task_id}
        members = [m for m in truth if m in predicted]
        score_pairs(members, predicted, truth, ours, our_errors, task_id)
        exact: dict[MemberRef, str] = {}
        for folder in folders:
            demo = load_demo(folder)
            for step in demo.steps:
                obs = step.observation
                xml = (folder / (obs.hierarchy or "")).read_text(encoding="utf-8")
                exact[MemberRef(demo.id, step.index)] = exact_hierarchy_key(xml, obs.activity)
        score_pairs(members, exact, truth, baseline, base_errors, task_id)
        print(
            f"  {task_id}: {len(folders)} demos, {len(members)} screens, "
            f"{len(set(truth.values()))} true states, {len(result.graph.nodes)} nodes"
        )
    print(f"merged {len(tasks)} tasks in {time.perf_counter() - started:.2f} s")
    print(f"graph builder:        {ours}")
    print(f"exact hierarchy hash: {baseline}")
    for line in our_errors:
        print(f"  builder error: {line}")
    for line in base_errors if verbose else ():
        print(f"  baseline error: {line}")


def check_real_fixture(settings: SimilaritySettings) -> None:
    trace = FIXTURE / "llamatouch_trace_18"
    if not (trace / "0.xml").exists():
        print(f"real fixture: skipped ({trace} not found)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        result = import_llamatouch(trace, task_id="real", demos_root=Path(tmp))
        graph = merge_demonstrations(
            [DemoInput.from_folder(result.folder)], settings=settings
        ).graph
    merged = [n.id for n in graph.nodes if len(n.members) > 1]
    verdict = "OK" if not merged else f"FAILED: merged {merged}"
    print(f"real fixture: 5 distinct screens -> {len(graph.nodes)} nodes ({verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="record into this folder and keep it")
    parser.add_argument("--reuse", type=Path, help="score a folder recorded with --keep again")
    parser.add_argument("--settings", type=Path, help="similarity settings JSON")
    parser.add_argument("--verbose", action="store_true", help="list the baseline's errors too")
    args = parser.parse_args()
    settings = load_settings(args.settings) if args.settings else SimilaritySettings()
    if args.reuse:
        evaluate(load_recording(args.reuse), settings, args.verbose)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            root = args.keep or Path(tmp) / "demos"
            started = time.perf_counter()
            recording = record(root, TASKS)
            print(f"recorded {len(TASKS)} tasks in {time.perf_counter() - started:.0f} s")
            for line in recording.dropped:
                print(f"  dropped {line}")
            save_recording(recording)
            evaluate(recording, settings, args.verbose)
    check_real_fixture(settings)


if __name__ == "__main__":
    main()
