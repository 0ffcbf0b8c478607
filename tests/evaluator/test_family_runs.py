"""End to end, per model family: the agent talks to the local OpenAI-compatible server,
whose replies are written in that family's real format and follow the sample suite's
demonstrations. Every family scores a replay-level 100% offline on every offline task,
and online on the virtual phone on two tasks (kept to two per family for speed).

The server plays the model: it finds the task by its instruction in the prompt, the
state by the screenshot it was sent (nearest thumbnail among the steps of the task's
shortest demonstration), and answers that step's demonstrated action with the family's
own coordinate rule for the size of the image it received. On a task that ends in an
answer it says the task's answer the way its family can: with its done, or as an answer
action before it; the two families whose grammar has no answer fail exactly those tasks.
The images are sent shrunk to 600 px (not the families' default full size) so the runs
stay quick, which also checks that every family's resize rule follows the size actually
sent.
"""

from __future__ import annotations

import base64
import functools
import io
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageStat

from devices.android import AndroidDevice, adb_client
from evaluator.agents.families import get_family
from evaluator.records import TaskStatus
from evaluator.run_store import RunStore
from evaluator.runner import RunConfig, run_suite
from graph_builder.io import SUITE_DEMOS_DIR, iter_demos, load_suite_tasks
from graph_builder.model import Action, ActionType, EvalProtocol
from task_graphs.generate import SUITE_DIR
from tests.evaluator.fake_llm_server import Answer, FakeLLMServer, Received, reply
from tests.evaluator.family_replies import reply_for

TASKS = load_suite_tasks(SUITE_DIR)
OFFLINE = [t.id for t in TASKS if t.protocol is EvalProtocol.OFFLINE]
ONLINE = ["phone_tom", "airplane_on"]
FAMILIES = ["ui-tars-1.0", "ui-tars-1.5", "autoglm", "qwen2.5-vl", "qwen3-vl", "gui-owl", "json"]
FAMILIES += ["gui-owl-1.5", "mai-ui", "gemini-computer-use", "open-autoglm", "gelab-zero"]
FAMILIES += ["ui-venus-1.5", "agentcpm-gui"]
THUMB = (27, 60)
# families whose done carries the answer (finished(content), finish(message), ...)
ANSWER_IN_DONE = {"ui-tars-1.0", "ui-tars-1.5", "autoglm", "json", "gui-owl-1.5"}
ANSWER_IN_DONE |= {"open-autoglm", "gelab-zero", "ui-venus-1.5"}
NO_ANSWER = {"agentcpm-gui", "mobile-agent-v2"}  # their grammars have no answer at all
ANSWERED = [t.id for t in TASKS if t.protocol is EvalProtocol.OFFLINE and t.answers]


def _thumb(image: Image.Image) -> Image.Image:
    return image.convert("L").resize(THUMB)


@functools.cache
def _shortest_demo(task_id: str) -> tuple[tuple[Image.Image, Action], ...]:
    """The task's shortest demonstration: each step's screen thumbnail and action."""
    found = list(iter_demos(SUITE_DIR / SUITE_DEMOS_DIR, task_id))
    folder, demo = min(found, key=lambda fd: len(fd[1].steps))
    return tuple(
        (_thumb(Image.open(folder / s.observation.screenshot)), s.action) for s in demo.steps
    )


@dataclass
class _Demo:
    steps: tuple[tuple[Image.Image, Action], ...]
    cursor: int = 0
    answered: bool = False


@dataclass
class FamilyModel:
    """The stand-in model for one family, over the suite's demonstrations."""

    family: str
    demos: dict[str, _Demo] = field(default_factory=dict)

    def demo(self, task_id: str) -> _Demo:
        if task_id not in self.demos:
            self.demos[task_id] = _Demo(_shortest_demo(task_id))
        return self.demos[task_id]

    def _task(self, text: str) -> str:
        hits = [t for t in TASKS if t.instruction in text]
        return max(hits, key=lambda t: len(t.instruction)).id

    def __call__(self, request: Received) -> Answer:
        text = request.text()
        if "taken before and after one operation" in text:  # Mobile-Agent-v2 reflection
            return reply("### Thought ###\nAs expected.\n### Answer ###\nA")
        if "keep track of progress" in text:  # Mobile-Agent-v2 planning
            return reply("Progress noted.")
        task = next(t for t in TASKS if t.id == self._task(text))
        demo = self.demo(task.id)
        image = _sent_image(request)
        thumb = _thumb(image)
        # the nearest demonstrated screen after the one answered last (demos never go back,
        # and each answer is one step: tapping a field leaves the node as it was, since the
        # keyboard is not a new state, so the screen alone cannot say the step was taken)
        index = min(
            range(demo.cursor, len(demo.steps)),
            key=lambda i: ImageStat.Stat(ImageChops.difference(thumb, demo.steps[i][0])).sum[0],
        )
        demo.cursor = min(index + 1, len(demo.steps) - 1)
        action = demo.steps[index][1]
        if action.type is ActionType.DONE and task.answers and self.family not in NO_ANSWER:
            said = task.answers[0]
            if self.family in ANSWER_IN_DONE:
                action = replace(action, text=said)
            elif not demo.answered:  # the answer first, then done on the same screen
                demo.answered, demo.cursor = True, index
                action = Action.answer(said)
        return reply(reply_for(self.family, action, image.size))


def _sent_image(request: Received) -> Image.Image:
    for message in request.body["messages"]:
        for part in message.get("content") or []:
            if isinstance(part, dict) and part.get("type") == "image_url":
                data = part["image_url"]["url"].split("base64,", 1)[1]
                return Image.open(io.BytesIO(base64.b64decode(data)))
    raise AssertionError("the request holds no image")


def _config(family: str, tasks: list[str], out: Path, base_url: str, **more: object) -> RunConfig:
    return RunConfig(
        suite=SUITE_DIR,
        out=out,
        agent="mobile_agent_v2" if family == "mobile-agent-v2" else "openai",
        agent_config={
            "base_url": base_url,
            "model": family,
            "family": family,
            "max_image_side": 600,
            "retries": 0,
            "timeout": 20,
        },
        tasks=tuple(tasks),
        **more,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("family", [*FAMILIES, "mobile-agent-v2"])
def test_every_family_scores_every_offline_task(tmp_path, family):
    with FakeLLMServer(FamilyModel(family)) as server:
        run_suite(_config(family, OFFLINE, tmp_path / family, server.base_url, protocol="offline"))
    store = RunStore.open(tmp_path / family)
    results = {r.task_id: r for r in store.results()}
    failed = {t: r.reason for t, r in results.items() if r.status is not TaskStatus.SUCCESS}
    unanswered = ANSWERED if family in NO_ANSWER else []
    assert failed == dict.fromkeys(unanswered, "gave no answer to the question")
    assert len(results) == len(OFFLINE) and len(ANSWERED) >= 2
    step = store.read_steps(OFFLINE[0])[0]
    assert step.extra["family"] == get_family(family).name and step.extra["sent_size"] == [270, 600]


@pytest.mark.parametrize("family", [*FAMILIES, "mobile-agent-v2"])
def test_every_family_passes_online_tasks_on_the_virtual_phone(tmp_path, family, virtual_server):
    def device(serial: str) -> AndroidDevice:
        return AndroidDevice(serial, client=adb_client(port=virtual_server.port))

    out = tmp_path / family
    with FakeLLMServer(FamilyModel(family)) as server:
        config = _config(
            family, ONLINE, out, server.base_url, protocol="online", devices=("virtual-1",)
        )
        run_suite(config, device_factory=device)
    results = {r.task_id: r for r in RunStore.open(out).results()}
    assert {t: (r.status, r.reason) for t, r in results.items()} == {
        t: (TaskStatus.SUCCESS, None) for t in ONLINE
    }
