"""An agent implemented by any program that speaks JSON lines on stdin/stdout.

The protocol is documented in docs/agents.md. In short, the evaluator writes one JSON
object per line: ``reset`` (the task), ``step`` (paths to the screenshot and hierarchy),
and ``close``; the program answers every ``step`` with one line holding an ``action``.
Config: ``command`` (list of arguments, or a string split by shlex), ``cwd``, ``env``
(extra variables), ``timeout`` (seconds per step, default 120), ``model`` (for costs).

The program's stderr is passed on to the evaluator's stderr line by line, with its
secrets masked: the values of its secret-looking flags (``--api-key``), of the
secret-looking variables of its environment, and of the keys this process knows.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import subprocess
import sys
import threading
import time
from typing import IO, Any

from evaluator.agents.base import (
    AgentObservation,
    AgentStep,
    BaseAgent,
    ReflectionVerdict,
    StepOutcome,
)
from evaluator.agents.families.generic import action_from_fields
from evaluator.agents.families.grammar import ActionParseError, InvalidActionError
from evaluator.errors import AgentError, ConfigError
from evaluator.secrets import SECRET_NAME, Secrets
from graph_builder.errors import GraphBuilderError
from graph_builder.model import NORMALIZED_SCREEN, Action, InstructionVariant, Task


def action_from_message(value: Any) -> Action:
    """The on-disk action form (``type`` + ``screen``) or our agent form (``[0,1000]``)."""
    if not isinstance(value, dict):
        raise ActionParseError(f"'action' must be an object, got {value!r}")
    if "type" in value and "screen" in value:
        try:
            return Action.from_json(value)
        except GraphBuilderError as exc:
            raise ActionParseError(str(exc)) from exc
    return action_from_fields(value, NORMALIZED_SCREEN)


class SubprocessAgent(BaseAgent):
    name = "subprocess"

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__(config)
        command = self.config.get("command")
        if isinstance(command, str):
            command = shlex.split(command)
        if not command or not all(isinstance(c, str) for c in command):
            raise ConfigError("the subprocess agent needs 'command': the program and its arguments")
        self.command: list[str] = command
        self.timeout = float(self.config.get("timeout", 120.0))
        self.model = self.config.get("model")
        self._process: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()

    def _start(self) -> subprocess.Popen[str]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        env = {**os.environ, **{k: str(v) for k, v in self.config.get("env", {}).items()}}
        secrets = Secrets.of(
            self.config, {k: v for k, v in env.items() if SECRET_NAME.search(k)}, environ=env
        )
        try:
            process = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",  # a stray byte must not stop the stderr relay
                bufsize=1,
                cwd=self.config.get("cwd"),
                env=env,
                start_new_session=True,  # a Ctrl-C meant for the evaluator must not kill it
            )
        except OSError as exc:
            raise AgentError(f"cannot start agent program {self.command[0]!r}: {exc}") from exc
        self._lines = queue.Queue()
        assert process.stdout is not None
        threading.Thread(
            target=_pump,
            args=(process.stdout, self._lines),
            daemon=True,
            name="subprocess-agent-reader",
        ).start()
        assert process.stderr is not None
        threading.Thread(
            target=_relay_masked,
            args=(process.stderr, secrets),
            daemon=True,
            name="subprocess-agent-stderr",
        ).start()
        self._process = process
        return process

    def _send(self, message: dict[str, Any]) -> None:
        process = self._start()
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
            process.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise AgentError(
                f"agent program {self.command[0]!r} exited (code {process.poll()}) "
                "and cannot take input"
            ) from exc

    def reset(self, task: Task, variant: InstructionVariant) -> None:
        super().reset(task, variant)
        self._send(
            {
                "type": "reset",
                "task": task.to_json(),
                "variant": self.variant.value,
                "instruction": task.instruction_for(self.variant),
            }
        )

    def step(self, observation: AgentObservation) -> AgentStep:
        screen = observation.screen
        self._send(
            {
                "type": "step",
                "task_id": observation.task_id,
                "step": observation.step,
                "instruction": observation.instruction,
                "screenshot": str(screen.screenshot_path) if screen.screenshot_path else None,
                "hierarchy": str(screen.hierarchy_path) if screen.hierarchy_path else None,
                "screen": list(screen.size),
                "activity": screen.activity,
            }
        )
        started = time.perf_counter()
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            self.close(polite=False)
            raise AgentError(
                f"agent program gave no answer within {self.timeout} s at step {observation.step}"
            ) from None
        elapsed = time.perf_counter() - started
        if line is None:
            code = self._process.poll() if self._process else None
            raise AgentError(f"agent program exited (code {code}) before answering")
        return self._read_answer(line, elapsed)

    def _read_answer(self, line: str, elapsed: float) -> AgentStep:
        parsing_started = time.perf_counter()
        try:
            answer = json.loads(line)
            if not isinstance(answer, dict):
                raise ActionParseError("the answer line must be a JSON object")
            action = action_from_message(answer.get("action"))
        except (ValueError, ActionParseError) as exc:
            return AgentStep(
                action=None,
                raw_output=line.rstrip("\n"),
                parse_error=str(exc),
                outcome=(
                    StepOutcome.INVALID_ACTION
                    if isinstance(exc, InvalidActionError)
                    else StepOutcome.PARSE_ERROR
                ),
                inference_seconds=elapsed,
                parsing_seconds=time.perf_counter() - parsing_started,
            )
        reflection = answer.get("reflection")
        try:
            verdict = ReflectionVerdict(reflection) if reflection else None
        except ValueError:
            verdict = None
        return AgentStep(
            action=action,
            raw_output=str(answer.get("raw_output", line.rstrip("\n"))),
            reasoning=answer.get("reasoning") if isinstance(answer.get("reasoning"), str) else None,
            reflection=verdict,
            input_tokens=_count(answer.get("input_tokens")),
            output_tokens=_count(answer.get("output_tokens")),
            inference_seconds=_seconds(answer.get("inference_seconds"), elapsed),
            parsing_seconds=time.perf_counter() - parsing_started,
        )

    def abort(self) -> None:
        """End the program at once (the run was stopped while it was thinking)."""
        self.close(polite=False)

    def close(self, *, polite: bool = True) -> None:
        """Ask the program to exit (``close`` message, 5 s grace), or kill it at once."""
        process, self._process = self._process, None
        if process is None:
            return
        if polite and process.poll() is None:
            try:
                assert process.stdin is not None
                process.stdin.write(json.dumps({"type": "close"}) + "\n")
                process.stdin.close()
                process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None and not stream.closed:
                with contextlib.suppress(OSError):
                    stream.close()


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    try:
        for line in stream:
            if line.strip():
                lines.put(line)
    except (OSError, ValueError):
        pass
    finally:
        lines.put(None)


def _relay_masked(stream: IO[str], secrets: Secrets) -> None:
    """The program's stderr, a line at a time, to ours with its secrets masked."""
    try:
        for line in stream:
            sys.stderr.write(secrets.scrub(line))
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _seconds(value: Any, default: float) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    return float(value) if ok else default
