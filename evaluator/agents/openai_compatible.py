"""A single-prompt VLM agent for any OpenAI-compatible chat-completions endpoint.

Config keys (see docs/agents.md): ``base_url``, ``model``, ``api_key_env`` (the *name* of
the environment variable holding the key), ``parser`` (json | autoglm | uitars |
qwen_mobile_use), ``coordinates`` (normalized | image; default from the parser),
``prompt`` (template in resources/prompts/ or a path), ``max_image_side``,
``image_format``, ``history_steps``, ``include_hierarchy``, ``timeout``, ``retries``,
``backoff``, ``temperature``, ``max_tokens``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from evaluator.agents.base import AgentObservation, AgentStep, BaseAgent
from evaluator.agents.parsers import DEFAULT_SPACES, ActionParseError, Parsed, get_parser
from evaluator.chat_client import ChatClient, EndpointConfig, image_part
from evaluator.errors import AgentError, ConfigError
from evaluator.prompts import load_prompt, render
from graph_builder.model import NORMALIZED_SCREEN, InstructionVariant, Size, Task


def screen_elements_text(observation: AgentObservation, limit: int = 60) -> str:
    """A compact list of the visible labelled elements, for prompts that want the hierarchy."""
    hierarchy = observation.screen.hierarchy()
    if hierarchy is None:
        return "(no hierarchy)"
    w, h = observation.screen.size
    lines = []
    for e in hierarchy.visible():
        label = e.text or e.content_desc
        if not label:
            continue
        cx, cy = e.bounds.center
        flag = " clickable" if e.interactive else ""
        lines.append(f"- {label!r} at ({cx * 1000 / w:.0f}, {cy * 1000 / h:.0f}){flag}")
        if len(lines) >= limit:
            break
    return "\n".join(lines) or "(no labelled elements)"


def history_text(actions: list[str], limit: int) -> str:
    recent = actions[-limit:] if limit > 0 else []
    if not recent:
        return "(none yet)"
    start = len(actions) - len(recent)
    return "\n".join(f"{start + i + 1}. {a}" for i, a in enumerate(recent))


class OpenAICompatibleAgent(BaseAgent):
    """Sends the instruction, the recent actions and the screenshot; parses one action."""

    name = "openai"

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__(config)
        self.endpoint = EndpointConfig.from_config(self.config)
        self.model = self.endpoint.model
        self.client = ChatClient(self.endpoint)
        self.parser_name = str(self.config.get("parser", "json"))
        self.parser = get_parser(self.parser_name)
        self.coordinates = str(self.config.get("coordinates", DEFAULT_SPACES[self.parser_name]))
        if self.coordinates not in ("normalized", "image"):
            raise ConfigError("'coordinates' must be 'normalized' ([0,1000]) or 'image' (pixels)")
        self.template = load_prompt(self.config.get("prompt", f"agent_{self.parser_name}.md"))
        self.max_image_side = int(self.config.get("max_image_side", 1024))
        self.image_format = str(self.config.get("image_format", "PNG"))
        self.history_steps = int(self.config.get("history_steps", 8))
        self.include_hierarchy = bool(self.config.get("include_hierarchy", False))
        self._history: list[str] = []
        self._instruction = ""

    def reset(self, task: Task, variant: InstructionVariant) -> None:
        super().reset(task, variant)
        self._history = []
        self._instruction = task.instruction_for(variant)

    def describe(self) -> dict[str, Any]:
        public = {k: v for k, v in self.config.items() if k not in ("api_key",)}
        return {
            "name": self.name,
            "model": self.model,
            "config": public,
            "endpoint": self.endpoint.describe(),
        }

    def image_content(self, observation: AgentObservation) -> tuple[dict[str, Any], Size]:
        image = observation.screen.image()
        if image is None:
            raise AgentError(f"step {observation.step} of {observation.task_id} has no screenshot")
        return image_part(image, max_side=self.max_image_side, fmt=self.image_format)

    def space_for(self, sent: Size) -> Size:
        return NORMALIZED_SCREEN if self.coordinates == "normalized" else sent

    def step(self, observation: AgentObservation) -> AgentStep:
        image, sent = self.image_content(observation)
        text = render(
            self.template,
            instruction=observation.instruction or self._instruction,
            history=history_text(self._history, self.history_steps),
            width=sent[0],
            height=sent[1],
            step=observation.step + 1,
            elements=screen_elements_text(observation) if self.include_hierarchy else "",
        )
        messages = [{"role": "user", "content": [{"type": "text", "text": text}, image]}]
        reply = self.client.complete(messages)
        step = parse_step(reply.text, self.parser, self.space_for(sent))
        step = _with_usage(step, reply.input_tokens, reply.output_tokens, reply.seconds)
        self._history.append(
            step.action.normalized().describe() if step.action else "(unparseable answer)"
        )
        return step


def parse_step(text: str, parser: Any, space: Size) -> AgentStep:
    """Parse a model answer into an AgentStep, timing the parsing; failures are recorded."""
    started = time.perf_counter()
    try:
        parsed: Parsed = parser(text, space)
    except (ActionParseError, ValueError) as exc:
        return AgentStep(
            action=None,
            raw_output=text,
            parse_error=str(exc),
            parsing_seconds=time.perf_counter() - started,
        )
    return AgentStep(
        action=parsed.action,
        raw_output=text,
        reasoning=parsed.reasoning,
        parsing_seconds=time.perf_counter() - started,
        extra={"memory": parsed.memory} if parsed.memory else {},
    )


def _with_usage(step: AgentStep, tokens_in: int, tokens_out: int, seconds: float) -> AgentStep:
    return replace(
        step,
        input_tokens=step.input_tokens + tokens_in,
        output_tokens=step.output_tokens + tokens_out,
        inference_seconds=step.inference_seconds + seconds,
    )
