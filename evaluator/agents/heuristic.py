"""A model-free baseline: tap the clickable element whose text best matches the instruction.

It reads the instruction literally, so it does well on canonical phrasing ("open Display
and tap Font size") and poorly on how older adults often speak ("the letters are too small
for me"): comparing original and normalized instructions with it shows that gap cheaply.
"""

from __future__ import annotations

import re
from typing import Any

from rapidfuzz import fuzz

from evaluator.agents.base import AgentObservation, AgentStep, BaseAgent
from graph_builder.hierarchy import UIElement
from graph_builder.model import Action, InstructionVariant, Task

_QUOTED = re.compile(r"[\"“”'‘’「」]([^\"“”'‘’「」]{1,200})[\"“”'‘’「」]")


def quoted_texts(instruction: str) -> list[str]:
    """Text the user asked to enter: whatever stands between quotes."""
    return [m.strip() for m in _QUOTED.findall(instruction) if m.strip()]


def label_score(label: str, instruction: str) -> float:
    """How well an element's label appears in the instruction (0-100)."""
    label = label.strip().lower()
    if len(label) < 2:
        return 0.0
    return float(fuzz.partial_ratio(label, instruction.lower()))


class HeuristicAgent(BaseAgent):
    """Types quoted text into a focused field, else taps the best-matching label (text or
    content description of an element that is, or sits inside, a clickable element) it has
    not tapped yet, else says done (nothing on screen matches any more)."""

    name = "heuristic"

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__(config)
        self.threshold = float(self.config.get("threshold", 80.0))
        self._tapped: set[str] = set()
        self._typed: set[str] = set()
        self._field_tapped = False
        self._instruction = ""

    def reset(self, task: Task, variant: InstructionVariant) -> None:
        super().reset(task, variant)
        self._tapped.clear()
        self._typed.clear()
        self._field_tapped = False
        self._instruction = task.instruction_for(variant)

    def step(self, observation: AgentObservation) -> AgentStep:
        instruction = observation.instruction or self._instruction
        hierarchy = observation.screen.hierarchy()
        if hierarchy is None:
            return AgentStep(
                action=Action.done(),
                raw_output="no hierarchy: done",
                reasoning="nothing to read on this screen",
            )
        screen = observation.screen.size
        pending = [t for t in quoted_texts(instruction) if t not in self._typed]
        fields = [e for e in hierarchy.visible() if "EditText" in e.class_name and e.enabled]
        if pending and fields:
            if self._field_tapped or any(e.focused for e in fields):
                self._typed.add(pending[0])
                return AgentStep(
                    action=Action.type_text(pending[0]),
                    raw_output=f"type {pending[0]!r}",
                    reasoning="quoted text",
                )
            self._field_tapped = True
            return self._tap(fields[0], screen, "focus the text field")
        best: tuple[float, int, UIElement, str] | None = None
        for e in hierarchy.visible():
            label = e.text or e.content_desc
            if not label or label in self._tapped or not e.enabled:
                continue
            if not e.interactive and not any(a.interactive for a in hierarchy.ancestors(e)):
                continue  # a text no tap reaches
            score = label_score(label, instruction)
            if score >= self.threshold and (best is None or (score, len(label)) > best[:2]):
                best = (score, len(label), e, label)
        if best is None:
            return AgentStep(
                action=Action.done(),
                raw_output="done",
                reasoning="no untapped element matches the instruction",
            )
        score, _, element, label = best
        self._tapped.add(label)
        return self._tap(element, screen, f"label {label!r} scores {score:.0f}")

    def _tap(self, element: UIElement, screen: tuple[int, int], why: str) -> AgentStep:
        x, y = element.bounds.center
        action = Action.tap(x, y, screen=screen, element=element.ref())
        return AgentStep(action=action, raw_output=action.describe(), reasoning=why)
