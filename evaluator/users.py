"""The user an agent talks to when it asks (``ask_user``): scripted, or a simulated older adult.

- ``scripted`` (the default, deterministic): the task's ``clarifications`` are the replies,
  in order; a question with none left gets no reply, and the episode ends.
- ``simulated`` (``elderbench eval --user-simulator FILE``): a model behind an
  OpenAI-compatible endpoint plays the person who gave the instruction. It is shown the
  task's hidden ``intent`` (else its normalized instruction), the scripted clarifications
  as hints, a persona (brief, indirect, sometimes unsure), the conversation so far and
  the current screenshot, and answers in one or two sentences. It never acts on the
  phone: a reply that is empty, a function call, a JSON object or longer than
  ``max_reply_chars`` is refused.

A simulated user that cannot answer (endpoint down, deadline passed, a refused reply)
raises ``UserSimulatorError``: the harness failed, not the agent, so the protocols record
the episode as an error of kind ``user_simulator`` (outside the SR denominator), with the
tokens every call spent.

>>> from graph_builder.model import Task
>>> task = Task("t", "call my daughter", clarifications=("Emma, the older one.",))
>>> user = ScriptedUser()
>>> user.reply(Question(task, "call my daughter", "Which daughter?", ())).text
'Emma, the older one.'
>>> first = Exchange(0, "Which daughter?", "Emma, the older one.", "scripted")
>>> user.reply(Question(task, "call my daughter", "Emma?", (first,))).text is None
True
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from evaluator.chat_client import ChatClient, EndpointConfig
from evaluator.errors import ConfigError, EndpointError, EvaluatorError
from evaluator.prompts import load_prompt, render
from evaluator.records import TokenUse
from evaluator.request_image import image_part
from graph_builder.model import Task

if TYPE_CHECKING:
    from PIL import Image

DEFAULT_PERSONA = (
    "You are in your seventies. You answer briefly, in plain everyday words, and often "
    "indirectly (you hint rather than spell it out). You are sometimes unsure and say so."
)
# one or two sentences; a longer reply is not the persona talking
DEFAULT_MAX_REPLY_CHARS = 400
# settings of the simulated user itself; the rest of its file is the endpoint's
_OWN_KEYS = frozenset({"persona", "prompt", "max_image_side", "max_reply_chars"})


class UserSimulatorError(EvaluatorError):
    """The simulated user gave no usable reply. ``usage`` is what its calls spent."""

    def __init__(self, message: str, usage: TokenUse | None = None) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass(frozen=True, slots=True)
class Exchange:
    """One question of the agent and the user's reply (None: the user had none)."""

    step: int
    question: str
    reply: str | None
    source: str  # which user answered: scripted or simulated
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "question": self.question,
            "reply": self.reply,
            "source": self.source,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "seconds": self.seconds,
        }


@dataclass(frozen=True, slots=True)
class Question:
    """What the user is asked, with what it may look at. ``screenshot`` loads the current
    screen when a user wants to see it (the scripted one never does)."""

    task: Task
    instruction: str
    text: str
    conversation: tuple[Exchange, ...]
    step: int = 0
    screenshot: Callable[[], Image.Image] | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    text: str | None
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0


class User(Protocol):
    name: str
    model: str | None  # for costs (None: no model)

    def reply(self, question: Question) -> Reply:
        """The user's reply; UserSimulatorError when it cannot give one."""

    def describe(self) -> dict[str, Any]:
        """What run.json records (never secrets)."""


class ScriptedUser:
    """The task's scripted clarifications, one per question, in order."""

    name = "scripted"
    model: str | None = None

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        if config:
            raise ConfigError("the scripted user takes no settings")

    def reply(self, question: Question) -> Reply:
        replies = question.task.clarifications
        asked = len(question.conversation)
        return Reply(replies[asked] if asked < len(replies) else None)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


def hidden_intent(task: Task) -> str:
    """What the simulated user wants: the task's intent, else its normalized rewrite."""
    return task.intent or task.normalized_instruction or task.instruction


def refusal(text: str, max_chars: int) -> str | None:
    """Why ``text`` is not a reply a person would give (None: it is one).

    >>> refusal("The one in Lakewood, I think.", 400) is None
    True
    >>> refusal('{"action": "tap", "x": 3}', 400)
    'the reply is a JSON object, not words'
    """
    said = text.strip()
    if not said:
        return "the reply is empty"
    if "<tool_call>" in said:
        return "the reply calls a function instead of answering"
    if said.startswith("{"):
        try:
            json.loads(said)
        except ValueError:
            pass
        else:
            return "the reply is a JSON object, not words"
    if len(said) > max_chars:
        return f"the reply has {len(said)} characters, more than {max_chars} (one or two sentences)"
    return None


class SimulatedUser:
    """A model that plays the older adult (see the module's docstring)."""

    name = "simulated"

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        settings = dict(config or {})
        endpoint = {k: v for k, v in settings.items() if k not in _OWN_KEYS}
        self.endpoint = EndpointConfig.from_config(endpoint)
        self.model: str | None = self.endpoint.model
        self.client = ChatClient(self.endpoint)
        self.persona = str(settings.get("persona") or DEFAULT_PERSONA)
        self.template = load_prompt(settings.get("prompt", "user_simulator.md"))
        self.max_image_side = int(settings.get("max_image_side", 768))
        self.max_reply_chars = int(settings.get("max_reply_chars", DEFAULT_MAX_REPLY_CHARS))
        if self.max_reply_chars < 1:
            raise ConfigError("max_reply_chars must be at least 1")

    def prompt(self, question: Question) -> str:
        task = question.task
        hints = task.clarifications
        shown = (
            "Things you would say if asked: " + " / ".join(hints)
            if hints
            else "You gave no more details before."
        )
        said = [
            f"Assistant: {e.question}\nYou: {e.reply or '(no reply)'}"
            for e in question.conversation
        ]
        return render(
            self.template,
            persona=self.persona,
            instruction=question.instruction,
            intent=hidden_intent(task),
            clarifications=shown,
            conversation="\n".join(said) or "(nothing yet)",
            question=question.text or "(the assistant asked for help without saying more)",
        )

    def reply(self, question: Question) -> Reply:
        content: list[dict[str, Any]] = [{"type": "text", "text": self.prompt(question)}]
        if question.screenshot is not None:
            content.append(image_part(question.screenshot(), max_side=self.max_image_side)[0])
        started = time.perf_counter()
        try:
            answer = self.client.complete([{"role": "user", "content": content}])
        except EndpointError as exc:
            spent = TokenUse(self.model, exc.input_tokens, exc.output_tokens)
            raise UserSimulatorError(f"the simulated user could not answer: {exc}", spent) from exc
        spent = TokenUse(self.model, answer.input_tokens, answer.output_tokens)
        problem = refusal(answer.text, self.max_reply_chars)
        if problem is not None:
            raise UserSimulatorError(
                f"the simulated user's reply was refused: {problem}: {answer.text[:200]!r}", spent
            )
        return Reply(
            answer.text.strip().strip('"').strip(),
            self.model,
            answer.input_tokens,
            answer.output_tokens,
            time.perf_counter() - started,
        )

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "endpoint": self.endpoint.describe(),
            "persona": self.persona,
            "max_reply_chars": self.max_reply_chars,
        }


USERS: dict[str, Callable[[Mapping[str, Any]], User]] = {
    "scripted": ScriptedUser,
    "simulated": SimulatedUser,
}


def create_user(config: Mapping[str, Any] | None) -> User:
    """The user of a run: a simulated one when ``config`` (the --user-simulator file's
    settings) is given, else the scripted one."""
    return USERS["simulated" if config else "scripted"](dict(config or {}))


def usage(exchanges: Sequence[Exchange]) -> tuple[TokenUse, ...]:
    """The tokens the user's model spent, one entry per exchange that used one."""
    return tuple(
        TokenUse(e.model, e.input_tokens, e.output_tokens)
        for e in exchanges
        if e.model is not None or e.input_tokens or e.output_tokens
    )
