"""Per-step harness overhead of an OpenAI-compatible agent, apart from the model call.

    .venv/bin/python benchmarks/bench_agent_overhead.py [--tasks 20] [--repeats 3]

An offline run of the ``openai`` agent (the JSON family) on a synthetic suite with
phone-sized screenshots (1080x2400), against a local OpenAI-compatible endpoint that
answers at once with the demonstrated action of the step it is asked about, so that
every step moves to a new screen as a real episode does. For every step within a task,
the time from the agent's step to its next step, minus the model call as the client
measured it (the HTTP exchange with the endpoint) and minus the preparation of the
model's image (the family's resize and encoding of the screenshot, which its own
reference runner does as well), is the harness overhead: rendering the prompt, building
and sending the request body, reading the reply, matching the action, scoring the step,
writing its trace line and live-view event.

Target: median under 5 ms. The image preparation is printed apart (it is paid once per
screen: offline, a node seen again reuses it), and so is the overhead with it.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.agents import AGENTS  # noqa: E402
from evaluator.agents.base import AgentObservation, AgentStep  # noqa: E402
from evaluator.agents.openai_compatible import OpenAICompatibleAgent  # noqa: E402
from evaluator.run_store import RunStore  # noqa: E402
from evaluator.runner import RunConfig, run_suite  # noqa: E402
from evaluator.synthetic import write_suite  # noqa: E402
from graph_builder.io import iter_demos  # noqa: E402
from graph_builder.model import Action, ActionType, InstructionVariant, Task  # noqa: E402

SIZE = (1080, 2400)
_STEP = re.compile(r"\(step (\d+)\)")

_current = [""]  # the task the agent runs now
# (task id, step index, entered, model call seconds, image preparation seconds) per step
_steps: list[tuple[str, int, float, float, float]] = []


class TimedAgent(OpenAICompatibleAgent):
    """The OpenAI-compatible agent, noting when each step starts, its model call time and
    the time its screenshot took to become the request's image."""

    name = "timed_openai"

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__(config)
        self._image_seconds = 0.0

    def reset(self, task: Task, variant: InstructionVariant) -> None:
        super().reset(task, variant)
        _current[0] = task.id  # which task the endpoint answers for (one worker)

    def image_content(self, observation: AgentObservation) -> tuple[dict[str, Any], Any]:
        started = time.perf_counter()
        try:
            return super().image_content(observation)
        finally:
            self._image_seconds = time.perf_counter() - started

    def step(self, observation: AgentObservation) -> AgentStep:
        entered = time.perf_counter()
        step = super().step(observation)
        _steps.append(
            (
                observation.task_id,
                observation.step,
                entered,
                step.inference_seconds,
                self._image_seconds,
            )
        )
        return step


def reply_for(action: Action) -> dict[str, Any]:
    """The JSON family's reply that means ``action``."""
    if action.type is ActionType.SWIPE:
        direction = action.direction()
        return {"action": "swipe", "direction": direction.value if direction else "up"}
    if action.type is ActionType.TYPE:
        return {"action": "type", "text": action.text or ""}
    if action.x is not None and action.y is not None:
        norm = action.normalized()
        return {"action": action.type.value, "x": norm.x, "y": norm.y}
    return {"action": action.type.value}


class Oracle:
    """An endpoint that answers at once with the demonstration's action for the task the
    agent runs and the step the request names."""

    def __init__(self, suite: Path, demos: Path) -> None:
        self.replies: dict[str, list[str]] = {}
        from graph_builder.io import load_task

        for folder in sorted(p for p in suite.iterdir() if (p / "task.json").is_file()):
            task = load_task(folder)
            demo = next(d for _, d in iter_demos(demos, task.id))
            self.replies[task.id] = [json.dumps(reply_for(s.action)) for s in demo.steps]
        oracle = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = asked["messages"][0]["content"][0]["text"]
                body = json.dumps(
                    {
                        "choices": [{"message": {"content": oracle.answer(text)}}],
                        "usage": {"prompt_tokens": 1000, "completion_tokens": 20},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, prompt: str) -> str:
        step = _STEP.search(prompt)
        replies = self.replies.get(_current[0], [])
        index = int(step.group(1)) - 1 if step else 0
        return replies[index] if index < len(replies) else '{"action": "done"}'

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def overheads() -> tuple[list[float], list[float]]:
    """(every step's overhead, every step's image preparation) in seconds."""
    every, images = [], []
    for (task, _, entered, inference, image), (next_task, _, next_entered, _, _) in zip(
        _steps, _steps[1:], strict=False
    ):
        if task != next_task:
            continue  # the next task's setup is not a step's overhead
        every.append(next_entered - entered - inference - image)
        images.append(image)
    return every, images


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    AGENTS["timed_openai"] = TimedAgent
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_suite(root / "suite", args.tasks, demos=root / "demos", size=SIZE)
        oracle = Oracle(root / "suite", root / "demos")
        try:
            every: list[float] = []
            images: list[float] = []
            successes = 0
            for repeat in range(args.repeats):
                _steps.clear()
                config = RunConfig(
                    suite=root / "suite",
                    out=root / f"run{repeat}",
                    agent="timed_openai",
                    agent_config={"base_url": oracle.base_url, "model": "fake", "retries": 0},
                    demos=root / "demos",
                )
                run_suite(config)
                results = RunStore.open(config.out).results()
                successes = sum(1 for r in results if r.success)
                steps, prepared = overheads()
                every += steps
                images += prepared
        finally:
            oracle.close()
    median = statistics.median(every) * 1000
    print(
        f"{len(every)} steps of {args.tasks} tasks x {args.repeats} runs ({successes} of "
        f"{args.tasks} tasks succeeded in the last run), screens {SIZE[0]}x{SIZE[1]}"
    )
    print(
        f"harness overhead per step, model call and image preparation excluded: "
        f"median {median:.2f} ms (p90 {statistics.quantiles(every, n=10)[-1] * 1000:.2f} ms)"
    )
    with_images = [o + i for o, i in zip(every, images, strict=True)]
    print(
        f"  image preparation (the family's resize and encoding): median "
        f"{statistics.median(images) * 1000:.1f} ms; overhead with it: median "
        f"{statistics.median(with_images) * 1000:.1f} ms"
    )
    target = 5.0
    print(f"target: median under {target:g} ms -> {'met' if median < target else 'NOT met'}")
    return 0 if median < target else 1


if __name__ == "__main__":
    raise SystemExit(main())
