"""A Mobile-Agent-v2 style multi-role agent over any OpenAI-compatible VLM.

The loop of the original (X-PLUG/MobileAgent Mobile-Agent-v2/run.py), over one endpoint:

- **decision**: sees the screenshot, the instruction, the completed contents and the
  memory, and answers in the paper's format: ``### Thought ###``, ``### Action ###`` (one
  of ``Open app (name)``, ``Tap (x, y)``, ``Swipe (x1, y1), (x2, y2)``, ``Type (text)``,
  ``Back``, ``Home``, ``Stop``, in pixels of the screenshot sent), ``### Operation ###``,
  and optionally ``### Memory ###`` (content worth keeping, which the original asks for in
  a separate memory call). A JSON action is accepted too.
- **reflection** (after every decided action): sees the screens before and after it and
  answers A (as expected), B (a wrong page) or C (nothing changed). Its verdict is the
  step's ``reflection``, scored by the protocols (reflection accuracy, RA). As in the
  original, B makes the agent press Back at once (the step's action is that Back) and
  both B and C tell the next decision that its last operation failed.
- **planning** (text only, after an A): updates the completed contents from the accepted
  operations.

What differs from the paper (docs/agents.md): no OCR, icon detection or keyboard
detection; the VLM alone perceives the screen. Config: the endpoint keys of the
``openai`` agent, plus ``memory_items`` and the prompt templates ``planning_prompt``,
``decision_prompt``, ``reflection_prompt``.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from evaluator.agents.base import AgentObservation, AgentStep, ReflectionVerdict
from evaluator.agents.openai_compatible import OpenAICompatibleAgent, history_text, parse_step
from evaluator.chat_client import ChatReply
from evaluator.errors import AgentError
from evaluator.prompts import load_prompt, render
from graph_builder.model import Action, InstructionVariant, Task

_LETTERS = {
    "A": ReflectionVerdict.CORRECT,
    "B": ReflectionVerdict.WRONG,
    "C": ReflectionVerdict.NO_CHANGE,
}
_HINT = (
    'You previously wanted to do "{thought}" here with the action "{action}", but it did '
    "not meet your expectation. Reflect and revise your operation this time."
)


def parse_reflection(text: str) -> ReflectionVerdict | None:
    """``### Answer ###\nB`` (the paper's format), ``{"verdict": "wrong"}``, ``Answer: B``
    or a bare verdict word; None if unclear."""
    m = re.search(r"###\s*Answer\s*###\s*\(?([ABC])\b", text)
    if m:
        return _LETTERS[m.group(1)]
    for match in re.finditer(r"\{.*?\}", text, re.S):
        try:
            value = json.loads(match.group(0)).get("verdict")
        except (ValueError, AttributeError):
            continue
        if isinstance(value, str):
            key = value.strip().lower().replace(" ", "_")
            if key in {v.value for v in ReflectionVerdict}:
                return ReflectionVerdict(key)
            if value.strip().upper() in _LETTERS:
                return _LETTERS[value.strip().upper()]
    m = re.search(r"Answer\s*[:：]\s*\(?([ABC])\b", text)
    if m:
        return _LETTERS[m.group(1)]
    words = re.findall(r"no[ _]change|correct|wrong", text.lower())
    return ReflectionVerdict(words[-1].replace(" ", "_")) if words else None


class MobileAgentV2(OpenAICompatibleAgent):
    name = "mobile_agent_v2"
    default_family = "mobile-agent-v2"

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        config = dict(config or {})
        super().__init__(
            {**config, "prompt": config.get("decision_prompt", "mobile_agent_v2_decision.md")}
        )
        self.planning_template = load_prompt(
            config.get("planning_prompt", "mobile_agent_v2_planning.md")
        )
        self.reflection_template = load_prompt(
            config.get("reflection_prompt", "mobile_agent_v2_reflection.md")
        )
        self.memory_items = int(self.config.get("memory_items", 5))
        self._reset_state()

    def _reset_state(self) -> None:
        self._progress = "(nothing done yet)"
        self._memory: list[str] = []
        self._accepted: list[str] = []
        self._last_action: str | None = None
        self._last_thought: str = ""
        self._last_image: dict[str, Any] | None = None
        self._failed: tuple[str, str] | None = None  # (thought, action) of a failed operation

    def reset(self, task: Task, variant: InstructionVariant) -> None:
        super().reset(task, variant)
        self._reset_state()

    def _complete(
        self,
        messages: list[dict[str, Any]],
        tokens_in: int,
        tokens_out: int,
        seconds: float,
        retry: float,
    ) -> ChatReply:
        """A later call of the step; when it fails, the error carries what the step's
        earlier calls spent."""
        try:
            return self.client.complete(messages)
        except AgentError as exc:
            raise exc.add_spent(tokens_in, tokens_out, seconds, retry) from None

    def step(self, observation: AgentObservation) -> AgentStep:
        image, sent = self.image_content(observation)
        instruction = observation.instruction or self._instruction
        tokens_in = tokens_out = 0
        seconds = retry = 0.0
        extra: dict[str, Any] = {}
        verdict: ReflectionVerdict | None = None

        if self._last_action is not None and self._last_image is not None:
            text = render(
                self.reflection_template,
                instruction=instruction,
                action=self._last_action,
                expectation=self._last_thought,
                width=sent[0],
                height=sent[1],
            )
            reply = self.client.complete(
                [
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": text}, self._last_image, image],
                    }
                ]
            )
            tokens_in, tokens_out, seconds = reply.input_tokens, reply.output_tokens, reply.seconds
            retry = reply.retry_seconds
            verdict = parse_reflection(reply.text)
            extra["reflection_output"] = reply.text
            failed = verdict in (ReflectionVerdict.WRONG, ReflectionVerdict.NO_CHANGE)
            self._failed = (self._last_thought, self._last_action) if failed else None
            if not failed:
                self._accepted.append(self._last_action)
                text = render(
                    self.planning_template,
                    instruction=instruction,
                    progress=self._progress,
                    history=history_text(self._accepted, self.history_steps),
                )
                reply = self._complete(
                    [{"role": "user", "content": text}], tokens_in, tokens_out, seconds, retry
                )
                tokens_in += reply.input_tokens
                tokens_out += reply.output_tokens
                seconds += reply.seconds
                retry += reply.retry_seconds
                self._progress = reply.text.strip() or self._progress
                extra["planning_output"] = reply.text
            self._last_action = None
            if verdict is ReflectionVerdict.WRONG:
                # The original presses Back at once after a B; the next decision is made
                # on the page it leads to, and the Back itself is not reflected on.
                extra["automatic_back"] = True
                self._history.append("back (after a wrong page)")
                return AgentStep(
                    action=Action.back(),
                    raw_output=reply.text,
                    reasoning="reflection B: the last operation led to a wrong page",
                    reflection=verdict,
                    input_tokens=tokens_in,
                    output_tokens=tokens_out,
                    inference_seconds=seconds,
                    retry_seconds=retry,
                    extra={**extra, "progress": self._progress},
                )

        hint = ""
        if self._failed is not None:
            hint = _HINT.format(thought=self._failed[0], action=self._failed[1])
        text = render(
            self.template,
            instruction=instruction,
            progress=self._progress,
            memory="\n".join(f"- {m}" for m in self._memory) or "(empty)",
            hint=hint,
            history=history_text(self._history, self.history_steps),
            width=sent[0],
            height=sent[1],
            step=observation.step + 1,
        )
        reply = self._complete(
            [{"role": "user", "content": [{"type": "text", "text": text}, image]}],
            tokens_in,
            tokens_out,
            seconds,
            retry,
        )
        step = parse_step(reply.text, self.family, sent)
        memory = step.extra.get("memory")
        if memory:
            self._memory = [*self._memory, memory][-self.memory_items :]
        self._last_action = step.action.describe() if step.action else "(unparseable answer)"
        self._history.append(self._last_action)
        self._last_thought = step.reasoning or ""
        self._last_image = image
        extra.update(step.extra, progress=self._progress)
        return replace(
            step,
            reflection=verdict,
            extra=extra,
            input_tokens=tokens_in + reply.input_tokens,
            output_tokens=tokens_out + reply.output_tokens,
            inference_seconds=seconds + reply.seconds,
            retry_seconds=retry + reply.retry_seconds,
        )
