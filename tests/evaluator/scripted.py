"""A test agent that answers from a script of AgentSteps (then says done)."""

from __future__ import annotations

from collections.abc import Sequence

from evaluator.agents.base import AgentObservation, AgentStep, BaseAgent
from graph_builder.model import Action, InstructionVariant, Task


class ScriptedAgent(BaseAgent):
    name = "scripted"

    def __init__(self, steps: Sequence[AgentStep | Action]) -> None:
        super().__init__({})
        self.script = [s if isinstance(s, AgentStep) else AgentStep(action=s) for s in steps]
        self.seen: list[AgentObservation] = []

    def reset(self, task: Task, variant: InstructionVariant) -> None:
        super().reset(task, variant)
        self.seen = []

    def step(self, observation: AgentObservation) -> AgentStep:
        self.seen.append(observation)
        i = len(self.seen) - 1
        return self.script[i] if i < len(self.script) else AgentStep(action=Action.done())
