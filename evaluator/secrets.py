"""Keeping API keys and other secrets out of everything a run writes.

Two layers. ``redact`` blanks the values of secret-looking *keys* in a configuration
(what run.json records). ``Secrets`` knows the secret *values* of one run (the values of
the environment variables its configs name with ``*_env`` keys, of secret-looking keys,
and of secret-looking command-line flags) and scrubs them out of any text or JSON before
it reaches a file, a report, stderr or a log: an endpoint that echoes its request, or an
agent that prints its environment, must not put a key on disk.

>>> secrets = Secrets.of({"api_key_env": "LAB_KEY"}, environ={"LAB_KEY": "sk-12345678"})
>>> secrets.scrub("echo: Bearer sk-12345678")
'echo: Bearer ***'
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "***"
# Shorter values would be scrubbed out of ordinary text ("1", "true"): no real key is this short.
MIN_SECRET_LENGTH = 6

SECRET_NAME = re.compile(
    r"(api[_-]?key|secret|token|password|passwd|authorization|bearer|credential)", re.I
)


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
    """The secret values of one run; ``scrub`` replaces each of them by ``***``."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        unique = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH}
        # Longest first, so a key that contains another one is masked whole.
        self.values: tuple[str, ...] = tuple(sorted(unique, key=len, reverse=True))

    @classmethod
    def of(cls, *configs: Any, environ: Mapping[str, str] | None = None) -> Secrets:
        """Every secret value found in ``configs`` (agent and judge settings)."""
        environ = os.environ if environ is None else environ
        found: list[str] = []
        for config in configs:
            _collect(config, environ, found)
        return cls(found)

    def __bool__(self) -> bool:
        return bool(self.values)

    def scrub(self, text: str) -> str:
        for value in self.values:
            if value in text:
                text = text.replace(value, MASK)
        return text

    def scrub_json(self, data: Any) -> Any:
        """A copy of a JSON-like value with every string (keys too) scrubbed."""
        if not self.values:
            return data
        if isinstance(data, str):
            return self.scrub(data)
        if isinstance(data, Mapping):
            return {self.scrub(str(k)): self.scrub_json(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.scrub_json(v) for v in data]
        return data


def _collect(value: Any, environ: Mapping[str, str], found: list[str]) -> None:
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
