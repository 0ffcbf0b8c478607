"""A Mobile-Agent-v2 style multi-role agent over any OpenAI-compatible VLM.

Three roles share one endpoint:

- **reflection** (from the second step): sees the screens before and after the previous
  action and says whether it was correct, wrong (led somewhere wrong) or changed nothing.
  Its verdict is the AgentStep's ``reflection``, scored by the protocols against what
  really happened (reflection accuracy, RA).
- **planning** (text only): keeps a short summary of the task progress from the history of
  actions that reflection did not reject.
- **decision**: sees the screenshot, the instruction, the progress and the memory of focus
  content, and answers our JSON action format with a ``thought`` and an optional
  ``memory`` (content worth keeping for later steps, e.g. a phone number read on screen).

The original system also uses OCR and icon detectors for perception; this one relies on the
VLM alone. Config: the endpoint keys of the ``openai`` agent, plus ``memory_items`` and the
three prompt templates ``planning_prompt``, ``decision_prompt``, ``reflection_prompt``.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from evaluator.agents.base import AgentObservation, AgentStep, ReflectionVerdict
from evaluator.agents.openai_compatible import OpenAICompatibleAgent, history_text, parse_step
from evaluator.prompts import load_prompt, render
from graph_builder.model import InstructionVariant, Task

_LETTERS = {
    "A": ReflectionVerdict.CORRECT,
    "B": ReflectionVerdict.WRONG,
    "C": ReflectionVerdict.NO_CHANGE,
}
_HINTS = {
    ReflectionVerdict.WRONG: "The previous action led to a wrong page; consider going back.",
    ReflectionVerdict.NO_CHANGE: "The previous action changed nothing; try something else.",
}


def parse_reflection(text: str) -> ReflectionVerdict | None:
    """``{"verdict": "wrong"}``, ``Answer: B`` or a bare verdict word; None if unclear."""
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

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        config = {"parser": "json", **(config or {})}
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

    def reset(self, task: Task, variant: InstructionVariant) -> None:
        super().reset(task, variant)
        self._reset_state()

    def step(self, observation: AgentObservation) -> AgentStep:
        image, sent = self.image_content(observation)
        instruction = observation.instruction or self._instruction
        tokens_in = tokens_out = 0
        seconds = 0.0
        extra: dict[str, Any] = {}
        verdict: ReflectionVerdict | None = None

        if self._last_action is not None and self._last_image is not None:
            text = render(
                self.reflection_template,
                instruction=instruction,
                action=self._last_action,
                expectation=self._last_thought,
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
            verdict = parse_reflection(reply.text)
            extra["reflection_output"] = reply.text
            if (
                verdict is not ReflectionVerdict.WRONG
                and verdict is not ReflectionVerdict.NO_CHANGE
            ):
                self._accepted.append(self._last_action)
                text = render(
                    self.planning_template,
                    instruction=instruction,
                    progress=self._progress,
                    history=history_text(self._accepted, self.history_steps),
                )
                reply = self.client.complete([{"role": "user", "content": text}])
                tokens_in += reply.input_tokens
                tokens_out += reply.output_tokens
                seconds += reply.seconds
                self._progress = reply.text.strip() or self._progress
                extra["planning_output"] = reply.text

        text = render(
            self.template,
            instruction=instruction,
            progress=self._progress,
            memory="\n".join(f"- {m}" for m in self._memory) or "(empty)",
            hint=_HINTS.get(verdict, "") if verdict else "",
            history=history_text(self._history, self.history_steps),
            width=sent[0],
            height=sent[1],
            step=observation.step + 1,
        )
        reply = self.client.complete(
            [{"role": "user", "content": [{"type": "text", "text": text}, image]}]
        )
        step = parse_step(reply.text, self.parser, self.space_for(sent))
        memory = step.extra.get("memory")
        if memory:
            self._memory = [*self._memory, memory][-self.memory_items :]
        self._last_action = (
            step.action.normalized().describe() if step.action else "(unparseable answer)"
        )
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
        )
