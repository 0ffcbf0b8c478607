"""A small client for OpenAI-compatible chat-completions endpoints (standard library only).

Used by the VLM agents and the VLM judge. The API key is read from an environment variable
whose *name* is configured, at request time; it is never stored on the client's config,
never put into error messages, and never written anywhere.

An endpoint that echoes the last message, to show a round trip:

>>> import threading
>>> from http.server import BaseHTTPRequestHandler, HTTPServer
>>> class Echo(BaseHTTPRequestHandler):
...     def do_POST(self):
...         asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
...         text = "echo: " + asked["messages"][-1]["content"]
...         answer = {"choices": [{"message": {"content": text}}],
...                   "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
...         body = json.dumps(answer).encode()
...         self.send_response(200)
...         self.send_header("Content-Length", str(len(body)))
...         self.end_headers()
...         self.wfile.write(body)
...     def log_message(self, *args):
...         pass
>>> server = HTTPServer(("127.0.0.1", 0), Echo)
>>> threading.Thread(target=server.serve_forever, daemon=True).start()
>>> client = ChatClient(EndpointConfig(f"http://127.0.0.1:{server.server_port}/v1", "m"))
>>> reply = client.complete([{"role": "user", "content": "hi"}])
>>> reply.text, reply.input_tokens, reply.output_tokens, reply.attempts
('echo: hi', 5, 2, 1)
>>> server.shutdown()
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import math
import os
import re
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evaluator import http_call
from evaluator.errors import ConfigError, EndpointError
from evaluator.secrets import SECRET_NAME, Secrets, remember

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
# A chat completion is kilobytes; a reply larger than this is refused unread.
MAX_REPLY_BYTES = 32 * 1024 * 1024
# More tokens than any model's context holds: a usage count above it is not a count.
MAX_TOKENS_PER_CALL = 100_000_000


@dataclass(frozen=True, slots=True)
class EndpointConfig:
    """Where and how to call a model. ``api_key_env`` names the variable holding the key."""

    base_url: str
    model: str
    api_key_env: str | None = None
    timeout: float = 60.0  # one whole attempt: connect, send and every byte of the reply
    # the whole call, every attempt and every wait between them; None: what the attempts
    # and backoffs can take at most
    call_timeout: float | None = None
    retries: int = 3
    backoff: float = 1.0
    max_backoff: float = 30.0
    temperature: float | None = 0.0
    max_tokens: int | None = 1024
    extra_body: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError("base_url must start with http:// or https://")
        _refuse_key_in_url(self.base_url)
        if not self.model:
            raise ConfigError("an endpoint needs a model name ('model' in the agent config)")
        if self.timeout <= 0 or self.retries < 0 or self.backoff < 0:
            raise ConfigError("timeout must be positive; retries and backoff must not be negative")
        if self.call_timeout is not None and not self.call_timeout > 0:
            raise ConfigError("call_timeout must be a positive number of seconds")

    def whole_call_seconds(self) -> float:
        """The deadline of one ``complete`` call, retries and waits included."""
        if self.call_timeout is not None:
            return self.call_timeout
        return (self.retries + 1) * self.timeout + self.retries * self.max_backoff

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> EndpointConfig:
        """Build from an agent/judge config dict; a literal key in it is refused."""
        if "api_key" in config:
            raise ConfigError(
                "do not put the API key in the config; set 'api_key_env' to the name of an "
                "environment variable that holds it"
            )
        if "base_url" not in config or "model" not in config:
            raise ConfigError("an OpenAI-compatible endpoint needs 'base_url' and 'model'")
        names = {f for f in cls.__dataclass_fields__}
        try:
            return cls(**{k: v for k, v in config.items() if k in names})
        except TypeError as exc:
            raise ConfigError(f"bad endpoint config: {exc}") from exc

    @property
    def url(self) -> str:
        base = self.base_url.rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"

    def describe(self) -> dict[str, Any]:
        """What run.json records: everything but the key (only its variable's name)."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "api_key_env": self.api_key_env,
            "timeout": self.timeout,
            "call_timeout": self.whole_call_seconds(),
            "retries": self.retries,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }


# Query parameters that carry credentials on some gateways (?key=, ?api-key=, ?sig=, ...).
_CREDENTIAL_PARAMS = re.compile(r"^(key|code|sig|signature|auth|access[_-]?key)$", re.I)


def _refuse_key_in_url(url: str) -> None:
    """A key inside base_url would be written wherever the URL is (run.json, errors, logs)."""
    parts = urllib.parse.urlsplit(url)
    names = [name for name, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)]
    if (
        parts.username
        or parts.password
        or any(SECRET_NAME.search(n) or _CREDENTIAL_PARAMS.match(n) for n in names)
    ):
        shown = urllib.parse.urlunsplit((parts.scheme, parts.hostname or "", parts.path, "", ""))
        raise ConfigError(
            f"base_url ({shown}) carries a key in its user part or query; take it out of the "
            "URL and set 'api_key_env' to the name of an environment variable that holds it"
        )


@dataclass(frozen=True, slots=True)
class ChatReply:
    text: str
    input_tokens: int
    output_tokens: int
    seconds: float  # the answered request only: model inference as the client saw it
    attempts: int
    retry_seconds: float = 0.0  # failed attempts and the backoff between them


class ChatClient:
    """Posts chat-completions requests with retries (exponential backoff, or the wait a
    server asks for with ``Retry-After``) under two deadlines: ``timeout`` for each whole
    attempt and ``call_timeout`` for the call, waits between attempts included."""

    def __init__(
        self,
        config: EndpointConfig,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.config = config
        self._sleep = sleep
        self._clock = clock

    def _key(self) -> str | None:
        name = self.config.api_key_env
        if not name:
            return None
        key = os.environ.get(name)
        if not key:
            raise EndpointError(f"environment variable {name} is not set; export the API key there")
        remember([key])  # every writer of this process masks it from now on
        return key

    def secrets(self) -> Secrets:
        """The key this client sends (for writers that store what the endpoint said)."""
        key = self._key() if self.config.api_key_env else None
        return Secrets([key] if key else [])

    def complete(self, messages: list[dict[str, Any]]) -> ChatReply:
        """One chat completion. Raises EndpointError when every attempt failed or the
        call's deadline passed (its ``retry_seconds`` is the time the call took). The key
        never appears in the reply or an error."""
        cfg = self.config
        key = self._key()
        secrets = Secrets([key] if key else [])
        body: dict[str, Any] = {"model": cfg.model, "messages": messages, **cfg.extra_body}
        if cfg.temperature is not None:
            body["temperature"] = cfg.temperature
        if cfg.max_tokens is not None:
            body["max_tokens"] = cfg.max_tokens
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        problem = "no attempt made"
        started = self._clock()
        deadline = started + cfg.whole_call_seconds()
        wait = 0.0
        for attempt in range(1, cfg.retries + 2):
            if attempt > 1:
                self._sleep(wait)
            left = deadline - self._clock()
            if left <= 0:
                break
            sent = self._clock()
            try:
                text, tokens_in, tokens_out = self._post(data, headers, min(cfg.timeout, left))
            except _Retryable as exc:
                problem = secrets.scrub(str(exc))
                wait = max(
                    exc.retry_after or 0.0, min(cfg.backoff * 2 ** (attempt - 1), cfg.max_backoff)
                )
                if exc.retry_after is not None and self._clock() + wait > deadline:
                    raise EndpointError(
                        f"{cfg.url} asked to wait {exc.retry_after:g} s before trying again "
                        f"(Retry-After), past this call's deadline "
                        f"of {cfg.whole_call_seconds():g} s; "
                        f"last problem: {problem}",
                        retry_seconds=self._clock() - started,
                    ) from None
                continue
            except _Fatal as exc:
                raise EndpointError(
                    f"{cfg.url} refused the request: {secrets.scrub(str(exc))}",
                    retry_seconds=self._clock() - started,
                ) from None
            answered = self._clock()
            retried = sent - started if attempt > 1 else 0.0
            return ChatReply(
                secrets.scrub(text), tokens_in, tokens_out, answered - sent, attempt, retried
            )
        # every attempt failed: all of the call's time is failed attempts and backoff
        raise EndpointError(
            f"{cfg.url} failed {attempt} time(s) within {cfg.whole_call_seconds():g} s; "
            f"last problem: {problem}. Check that the server is up and the model name is right.",
            retry_seconds=self._clock() - started,
        )

    def _post(self, data: bytes, headers: dict[str, str], seconds: float) -> tuple[str, int, int]:
        try:
            answer = http_call.post(
                self.config.url, data, headers, seconds=seconds, max_bytes=MAX_REPLY_BYTES
            )
        except http_call.CallTimeout:
            raise _Retryable(f"no answer within {seconds:g} s") from None
        except http_call.HttpCallError as exc:
            raise _Retryable(str(exc)) from None
        if answer.status >= 400:
            detail = answer.body[:300].decode("utf-8", "replace")
            message = f"HTTP {answer.status}: {detail}"
            if answer.status in _RETRY_STATUS:
                raise _Retryable(message, retry_after(answer.headers.get("retry-after"))) from None
            raise _Fatal(message) from None
        return _read_completion(answer.body)


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Fatal(Exception):
    pass


def retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: a number of seconds or an HTTP date.

    >>> retry_after("7")
    7.0
    >>> retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0)
    10.0
    >>> retry_after("soon") is None
    True
    """
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _read_completion(raw: bytes) -> tuple[str, int, int]:
    """(text, prompt tokens, completion tokens) from a chat-completions response body."""
    try:
        payload = json.loads(raw)
        message = payload["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise _Retryable(f"the answer is not a chat completion: {raw[:200]!r}") from None
    if not isinstance(message, dict):
        raise _Retryable("the answer's message is not an object")
    content = message.get("content")
    if isinstance(content, list):  # some servers answer with content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    text = content if isinstance(content, str) else ""
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        args = function.get("arguments", "{}")
        with contextlib.suppress(ValueError):
            args = json.loads(args) if isinstance(args, str) else args
        text += (
            "<tool_call>"
            + json.dumps({"name": function.get("name"), "arguments": args})
            + "</tool_call>"
        )
    usage = payload.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    return text, _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")


def _count(usage: Mapping[str, Any], name: str) -> int:
    """A token count from ``usage``; a count no call can reach is the reply's garbage."""
    value = usage.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return 0
    if value > MAX_TOKENS_PER_CALL:
        raise _Retryable(
            f"the answer's usage claims {name} = {value:.3g}, more than any call can use "
            f"(at most {MAX_TOKENS_PER_CALL}); it is not a real count"
        )
    return value
