"""Keeping API keys and other secrets out of everything the program writes.

Two layers. ``redact`` blanks the values of secret-looking *keys* in a configuration
(what run.json records). ``Secrets`` knows secret *values* (the values of the environment
variables a config names with ``*_env`` keys, of secret-looking keys, of secret-looking
command-line flags, and credentials written inline such as ``Authorization: Bearer ...``
in a command) and scrubs them out of any text or JSON before it reaches a file, a report,
stderr or a log: an endpoint that echoes its request, or an agent that prints its
environment, must not put a key on disk.

Every secret value the process learns (``Secrets.of``, the chat client's key) is also
remembered process-wide, and every ``scrub`` masks those too: a writer holding the
``Secrets`` of its own run still masks the key a judge or a language tool read. The one
masking step is ``Secrets.scrub``; writers call ``mask``/``mask_json`` when they hold no
``Secrets`` of their own.

>>> secrets = Secrets.of({"api_key_env": "LAB_KEY"}, environ={"LAB_KEY": "sk-12345678"})
>>> secrets.scrub("echo: Bearer sk-12345678")
'echo: Bearer ***'
>>> mask("restart with Authorization: Bearer sk-12345678 now")
'restart with Authorization: Bearer *** now'
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shlex
import threading
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "***"
# Shorter values would be scrubbed out of ordinary text ("1", "true"): no real key is this short.
MIN_SECRET_LENGTH = 6

SECRET_NAME = re.compile(
    r"(api[_-]?key|secret|token|password|passwd|authorization|bearer|credential)", re.I
)


# A credential written inside a string: "Bearer <token>", "Authorization: <value>",
# "token=<value>" in a URL or a command. Only values that look like credentials (long,
# or holding a digit) count, so ordinary words after "token" are left alone.
_INLINE = re.compile(
    r"(?:\b(?:bearer|basic)\s+|(?:authorization|api[_-]?key|access[_-]?token|token|secret|"
    r"password|passwd)[\"']?\s*[=:]\s*[\"']?(?:bearer\s+|basic\s+)?)([^\s\"'&;,]{8,})",
    re.I,
)


def _looks_like_credential(value: str) -> bool:
    return value != MASK and (len(value) >= 20 or any(c.isdigit() for c in value))


def inline_credentials(text: str) -> list[str]:
    """Credentials written inside ``text``.

    >>> inline_credentials("curl -H 'Authorization: Bearer abc123def456' http://h/?token=zz99zz99")
    ['abc123def456', 'zz99zz99']
    >>> inline_credentials("count the tokens: done")
    []
    """
    return [v for v in _INLINE.findall(text) if _looks_like_credential(v)]


_remembered: set[str] = set()
_remembered_lock = threading.Lock()
_generation = [0]  # bumped when a value is remembered: Secrets recompute their list


def remember(values: Iterable[str]) -> None:
    """Add secret values to those every ``scrub`` in this process masks."""
    fresh = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH}
    with _remembered_lock:
        if fresh - _remembered:
            _remembered.update(fresh)
            _generation[0] += 1


def mask(text: str) -> str:
    """``text`` with every secret value this process knows replaced by ``***``."""
    return _NONE.scrub(text)


def mask_json(data: Any) -> Any:
    """A copy of a JSON-like value with every secret value this process knows masked."""
    return _NONE.scrub_json(data)


def _keeps(key: str) -> bool:
    # api_key_env holds the *name* of a variable; token counts are numbers, not tokens.
    return key.endswith("_env") or key.endswith("tokens")


def redact(config: Any) -> Any:
    """A copy of ``config`` with values of secret-looking keys replaced by ``"***"``.

    ``api_key_env`` (the *name* of a variable) and token counts are kept.
    """
    if isinstance(config, Mapping):
        out = {}
        for k, v in config.items():
            secret = SECRET_NAME.search(str(k)) and not _keeps(str(k)) and v
            out[k] = MASK if secret else redact(v)
        return out
    if isinstance(config, list | tuple):
        return [redact(v) for v in config]
    return config


class Secrets:
    """The secret values of one run; ``scrub`` replaces each of them, and every value the
    process remembers, by ``***``."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        unique = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH}
        # Longest first, so a key that contains another one is masked whole.
        self.values: tuple[str, ...] = tuple(sorted(unique, key=len, reverse=True))
        self._all: tuple[int, tuple[str, ...]] = (-1, ())

    def _masked(self) -> tuple[str, ...]:
        generation, values = self._all
        if generation != _generation[0]:
            with _remembered_lock:
                generation, every = _generation[0], {*self.values, *_remembered}
            values = tuple(sorted(every, key=len, reverse=True))
            self._all = (generation, values)
        return values

    @classmethod
    def of(cls, *configs: Any, environ: Mapping[str, str] | None = None) -> Secrets:
        """Every secret value found in ``configs`` (agent and judge settings)."""
        environ = os.environ if environ is None else environ
        found: list[str] = []
        for config in configs:
            _collect(config, environ, found)
        remember(found)
        return cls(found)

    def __bool__(self) -> bool:
        return bool(self._masked())

    def scrub(self, text: str) -> str:
        for value in self._masked():
            if value in text:
                text = text.replace(value, MASK)
        return text

    def scrub_json(self, data: Any) -> Any:
        """A copy of a JSON-like value with every string (keys too) scrubbed."""
        if not self._masked():
            return data
        if isinstance(data, str):
            return self.scrub(data)
        if isinstance(data, Mapping):
            return {self.scrub(str(k)): self.scrub_json(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.scrub_json(v) for v in data]
        return data


_NONE = Secrets()


def _collect(value: Any, environ: Mapping[str, str], found: list[str]) -> None:
    if isinstance(value, str):
        found.extend(inline_credentials(value))
        if " " in value and "-" in value:  # a command line: look at its flags too
            with contextlib.suppress(ValueError):  # unbalanced quotes: not a command
                _collect(shlex.split(value), environ, found)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            key = str(key)
            if key.endswith("_env") and isinstance(item, str) and environ.get(item):
                found.append(environ[item])
            elif SECRET_NAME.search(key) and not _keeps(key) and isinstance(item, str):
                found.append(item)
            _collect(item, environ, found)
    elif isinstance(value, list | tuple):
        flag = False
        for item in value:
            if isinstance(item, str):
                found.extend(inline_credentials(item))
                name, eq, inline = item.partition("=")
                secret_flag = item.startswith("-") and bool(SECRET_NAME.search(name))
                if flag and not item.startswith("-"):
                    found.append(item)  # the value after --api-key
                elif secret_flag and eq:
                    found.append(inline)  # --api-key=VALUE
                flag = secret_flag and not eq
            else:
                flag = False
                _collect(item, environ, found)


class SecretFilter(logging.Filter):
    """Scrubs a run's secrets out of log records (messages and tracebacks) on a handler."""

    def __init__(self, secrets: Secrets) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            record.msg = self.secrets.scrub(record.getMessage())
            record.args = None
            if record.exc_info:
                text = logging.Formatter().formatException(record.exc_info)
                record.exc_text = self.secrets.scrub(text)
        return True
