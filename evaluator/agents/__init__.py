"""GUI agents, found by name through the ``AGENTS`` registry.

>>> agent = create_agent("random", {"seed": 3})
>>> agent.name
'random'
"""

from __future__ import annotations

from typing import Any

from evaluator.agents.base import (
    Agent,
    AgentObservation,
    AgentStep,
    BaseAgent,
    ReflectionVerdict,
    StepOutcome,
)
from evaluator.agents.heuristic import HeuristicAgent
from evaluator.agents.mobile_agent_v2 import MobileAgentV2
from evaluator.agents.openai_compatible import OpenAICompatibleAgent
from evaluator.agents.random_agent import RandomAgent
from evaluator.agents.replay import ReplayAgent
from evaluator.agents.subprocess_agent import SubprocessAgent
from evaluator.errors import ConfigError

AGENTS: dict[str, type[BaseAgent]] = {
    "replay": ReplayAgent,
    "random": RandomAgent,
    "heuristic": HeuristicAgent,
    "openai": OpenAICompatibleAgent,
    "mobile_agent_v2": MobileAgentV2,
    "subprocess": SubprocessAgent,
}


def create_agent(name: str, config: dict[str, Any] | None = None) -> Agent:
    """A fresh agent instance (agents keep per-task state: one per worker thread)."""
    try:
        cls = AGENTS[name]
    except KeyError:
        raise ConfigError(
            f"unknown agent {name!r}; choose one of: {', '.join(sorted(AGENTS))}"
        ) from None
    return cls(dict(config or {}))


__all__ = [
    "AGENTS",
    "Agent",
    "AgentObservation",
    "AgentStep",
    "BaseAgent",
    "ReflectionVerdict",
    "StepOutcome",
    "create_agent",
]
