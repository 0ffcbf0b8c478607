"""The evaluator package's exceptions: one root, and specific kinds below it.

A task that raises one of these while it runs is recorded with status ``error`` (not as an
agent failure) and the run goes on with the next task.
"""

from __future__ import annotations


class EvaluatorError(Exception):
    """Root of every error raised by the evaluator."""


class ConfigError(EvaluatorError):
    """A run, agent or judge configuration that cannot work (fix the config and rerun)."""


class AgentError(EvaluatorError):
    """An agent could not produce a step: its program died, its endpoint is down, ...

    The other fields are what the step spent before it failed: tokens and inference of
    calls that were answered, and ``retry_seconds`` of failed attempts and the waits
    between them. The protocols add them to the errored task's result."""

    def __init__(
        self,
        message: str,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        inference_seconds: float = 0.0,
        retry_seconds: float = 0.0,
    ) -> None:
        super().__init__(message)
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.inference_seconds = inference_seconds
        self.retry_seconds = retry_seconds

    def add_spent(
        self, input_tokens: int, output_tokens: int, inference_seconds: float, retry_seconds: float
    ) -> AgentError:
        """Count what earlier calls of the same step spent (returns itself, to re-raise)."""
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.inference_seconds += inference_seconds
        self.retry_seconds += retry_seconds
        return self


class EndpointError(AgentError):
    """A model endpoint failed after all retries, or answered something that is not a reply."""


class JudgeError(EvaluatorError):
    """A judge could not reach a verdict (its endpoint failed, its evidence is missing).

    ``input_tokens``/``output_tokens`` are what a reply without a verdict still cost,
    ``retry_seconds`` the failed attempts and backoff of its call (all of it when the
    endpoint gave up)."""

    def __init__(
        self,
        message: str,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        retry_seconds: float = 0.0,
    ) -> None:
        super().__init__(message)
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.retry_seconds = retry_seconds


class TaskSetupError(EvaluatorError):
    """A task cannot be run under the chosen protocol (no graph, invalid graph, no device)."""


class DeviceLostError(EvaluatorError):
    """The device disconnected; its worker stops and the other devices take the tasks."""


class DeviceActionError(EvaluatorError):
    """The device refused one observation or action (the task errors, the device stays)."""


class RunStoreError(EvaluatorError):
    """A run folder is missing, damaged, or would be overwritten."""


class RunStopped(EvaluatorError):  # noqa: N818 - a signal, not a failure
    """The stop event was set; the unfinished task is left for ``--resume``."""


class RunNotOwnedError(RunStoreError):
    """A session wrote to a run folder after it stopped owning it (it was stopped, and its
    store closed; another session may be running there). Nothing was written."""
