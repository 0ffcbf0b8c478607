"""Prompt templates: text files in resources/prompts/ (or any file), with $placeholders.

Templates use ``string.Template`` syntax (``$instruction``, ``${history}``) so that the JSON
examples inside them need no escaping. Unknown placeholders are left as they are.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from string import Template

from evaluator.errors import ConfigError

# Read as package data, so an installed wheel finds them as a checkout does.
PROMPTS = resources.files("resources").joinpath("prompts")


def load_prompt(name: str | Path) -> str:
    """A template by file name in resources/prompts/ (``agent_json.md``) or by path."""
    path = Path(name)
    if not path.is_absolute():
        shipped = PROMPTS.joinpath(str(name))
        if shipped.is_file():
            return shipped.read_text(encoding="utf-8")
    if path.is_file():
        return path.read_text(encoding="utf-8")
    available = ", ".join(sorted(p.name for p in PROMPTS.iterdir() if p.is_file())) or "none"
    raise ConfigError(f"prompt template {str(name)!r} not found; shipped templates: {available}")


def render(template: str, **values: object) -> str:
    return Template(template).safe_substitute({k: str(v) for k, v in values.items()})
