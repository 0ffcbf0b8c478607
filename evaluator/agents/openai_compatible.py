"""A single-prompt VLM agent for any OpenAI-compatible chat-completions endpoint.

Config keys (see docs/agents.md): ``base_url``, ``model``, ``api_key_env`` (the *name* of
the environment variable holding the key), ``family`` and optional ``version`` (the model
family whose reply grammar, coordinate space and image pre-processing apply: see
``evaluator.agents.families``), ``prompt`` (template in resources/prompts/ or a path),
``max_image_side`` and ``image_format`` (default: the family's), ``history_steps``,
``include_hierarchy``, ``timeout``, ``retries``, ``backoff``, ``temperature``,
``max_tokens``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from evaluator.agents.base import AgentObservation, AgentStep, BaseAgent, StepOutcome
from evaluator.agents.families import (
    ActionParseError,
    Family,
    InvalidActionError,
    Parsed,
    get_family,
)
from evaluator.chat_client import ChatClient, ChatReply, EndpointConfig
from evaluator.errors import AgentError, ConfigError
from evaluator.prompts import load_prompt, render
from evaluator.request_image import screen_part
from graph_builder.errors import FormatError
from graph_builder.model import InstructionVariant, Size, Task


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
    default_family = "json"

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__(config)
        self.endpoint = EndpointConfig.from_config(self.config)
        self.model = self.endpoint.model
        self.client = ChatClient(self.endpoint)
        for old in ("parser", "coordinates"):
            if old in self.config:
                raise ConfigError(
                    f"the agent config key {old!r} is gone: name the model family instead, "
                    'e.g. "family": "ui-tars-1.5" (see docs/agents.md)'
                )
        self.family: Family = get_family(
            str(self.config.get("family", self.default_family)), self.config.get("version")
        ).with_pixels(self.config.get("min_pixels"), self.config.get("max_pixels"))
        self.template = load_prompt(self.config.get("prompt", self.family.prompt))
        side = self.config.get("max_image_side", self.family.max_image_side)
        self.max_image_side = int(side) if side else None
        self.image_format = str(self.config.get("image_format", self.family.image_format))
        self.history_steps = int(self.config.get("history_steps", 8))
        self.include_hierarchy = bool(self.config.get("include_hierarchy", False))
        self._history: list[str] = []
        self._instruction = ""

    def remember(self, observation: AgentObservation, step: AgentStep) -> None:
        """Add the step to the history the prompt lists (with the user's reply, if any)."""
        if observation.user_reply and self._history:
            self._history[-1] += f" -> the user replied {observation.user_reply!r}"
        self._history.append(step.action.describe() if step.action else "(unparseable answer)")

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

    def image_request(self) -> tuple[int | None, str]:
        return self.max_image_side, self.image_format

    def image_content(self, observation: AgentObservation) -> tuple[dict[str, Any], Size]:
        try:
            return screen_part(
                observation.screen, max_side=self.max_image_side, fmt=self.image_format
            )
        except FormatError as exc:
            raise AgentError(
                f"step {observation.step} of {observation.task_id} has no usable screenshot: {exc}"
            ) from exc

    def step(self, observation: AgentObservation) -> AgentStep:
        image, sent = self.image_content(observation)
        space = self.family.space_size(sent)
        text = render(
            self.template,
            instruction=observation.instruction or self._instruction,
            history=history_text(self._history, self.history_steps),
            width=space[0],
            height=space[1],
            step=observation.step + 1,
            elements=screen_elements_text(observation) if self.include_hierarchy else "",
            user_reply=(
                f"The user answered your question: {observation.user_reply}"
                if observation.user_reply
                else ""
            ),
        )
        messages = [{"role": "user", "content": [{"type": "text", "text": text}, image]}]
        reply = self.client.complete(messages)
        step = parse_step(reply.text, self.family, sent)
        step = _with_usage(step, reply)
        self.remember(observation, step)
        return step


def parse_step(text: str, family: Family, sent: Size) -> AgentStep:
    """Parse a reply to an image sent at ``sent`` into an AgentStep, timing the parsing.

    A reply that cannot be read is a ``parse_error`` step, an action that cannot be
    carried out an ``invalid_action`` step: both are the agent's failures, recorded with
    the raw text. Every step records the family, the sent size and the coordinate space.
    """
    started = time.perf_counter()
    space = family.space_size(sent)
    trace = {
        "family": family.name,
        "sent_size": list(sent),
        "coordinate_space": family.space.describe(sent),
        "space_size": list(space),
    }
    if family.convention:
        trace["convention"] = family.convention
    try:
        parsed: Parsed = family.read(text, sent)
    except (ActionParseError, ValueError) as exc:
        return AgentStep(
            action=None,
            raw_output=text,
            parse_error=str(exc),
            outcome=(
                StepOutcome.INVALID_ACTION
                if isinstance(exc, InvalidActionError)
                else StepOutcome.PARSE_ERROR
            ),
            parsing_seconds=time.perf_counter() - started,
            extra=trace,
        )
    extra: dict[str, Any] = dict(trace)
    if parsed.memory:
        extra["memory"] = parsed.memory
    return AgentStep(
        action=parsed.action,
        raw_output=text,
        reasoning=parsed.reasoning,
        parsing_seconds=time.perf_counter() - started,
        extra=extra,
    )


def _with_usage(step: AgentStep, reply: ChatReply) -> AgentStep:
    return replace(
        step,
        input_tokens=step.input_tokens + reply.input_tokens,
        output_tokens=step.output_tokens + reply.output_tokens,
        inference_seconds=step.inference_seconds + reply.seconds,
        retry_seconds=step.retry_seconds + reply.retry_seconds,
    )
