"""Prompt templates: text files in resources/prompts/ (or any file), with $placeholders.

Templates use ``string.Template`` syntax (``$instruction``, ``${history}``) so that the JSON
examples inside them need no escaping. Unknown placeholders are left as they are.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

from evaluator.errors import ConfigError

PROMPTS_DIR = Path(__file__).resolve().parents[1] / "resources" / "prompts"


def load_prompt(name: str | Path) -> str:
    """A template by file name in resources/prompts/ (``agent_json.md``) or by path."""
    candidates = [Path(name)] if Path(name).is_absolute() else [PROMPTS_DIR / name, Path(name)]
    for path in candidates:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    available = ", ".join(sorted(p.name for p in PROMPTS_DIR.glob("*"))) or "none"
    raise ConfigError(f"prompt template {str(name)!r} not found; shipped templates: {available}")


def render(template: str, **values: object) -> str:
    return Template(template).safe_substitute({k: str(v) for k, v in values.items()})
