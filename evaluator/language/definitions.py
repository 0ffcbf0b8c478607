"""What each label means, for prompts and tooltips (resources/language/label_definitions.json)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


@cache
def label_definitions() -> dict[str, str]:
    """Label name -> one-sentence definition, for ElderBench's default vocabularies."""
    path = resources.files("resources").joinpath("language", "label_definitions.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    return dict(data["definitions"])
