"""A seeded random agent: the floor every real agent must beat."""

from __future__ import annotations

import random
from typing import Any

from evaluator.agents.base import AgentObservation, AgentStep, BaseAgent
from evaluator.agents.families.grammar import swipe_towards
from graph_builder.model import NORMALIZED_SCREEN, Action, InstructionVariant, Task

_TEXTS = ("hello", "settings", "yes", "123")


class RandomAgent(BaseAgent):
    """Random taps, swipes, keys and text in ``[0,1000]`` space; says done with ``p_done``.

    The generator is seeded with ``seed`` and the task id, so a task gets the same actions
    whatever order the suite runs in.
    """

    name = "random"

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__(config)
        self.seed = int(self.config.get("seed", 0))
        self.p_done = float(self.config.get("p_done", 0.1))
        self._rng = random.Random(self.seed)

    def describe(self) -> dict[str, Any]:
        # the seed in force (0 when the config gives none), so the manifest pins it
        return {**super().describe(), "seed": self.seed}

    def reset(self, task: Task, variant: InstructionVariant) -> None:
        super().reset(task, variant)
        self._rng = random.Random(f"{self.seed}:{task.id}")

    def step(self, observation: AgentObservation) -> AgentStep:
        rng = self._rng
        if rng.random() < self.p_done:
            action = Action.done()
        else:
            kind = rng.choices(("tap", "swipe", "back", "type"), weights=(70, 15, 10, 5))[0]
            w, h = NORMALIZED_SCREEN
            if kind == "tap":
                action = Action.tap(rng.uniform(0, w), rng.uniform(0, h), screen=NORMALIZED_SCREEN)
            elif kind == "swipe":
                action = swipe_towards(
                    rng.choice(("up", "down", "left", "right")), NORMALIZED_SCREEN
                )
            elif kind == "back":
                action = Action.back()
            else:
                action = Action.type_text(rng.choice(_TEXTS))
        return AgentStep(action=action, raw_output=action.describe())
