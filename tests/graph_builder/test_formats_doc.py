"""docs/formats.md stays true: its JSON examples load with the code and round-trip."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from graph_builder.model import (
    ConstraintSet,
    Demonstration,
    GraphLayout,
    Suite,
    Task,
    TaskGraph,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "formats.md"
PARSERS = {
    "demonstration": Demonstration,
    "suite": Suite,
    "task": Task,
    "graph": TaskGraph,
    "constraints": ConstraintSet,
    "layout": GraphLayout,
}
EXAMPLE = re.compile(r"<!-- format: (\w+) -->\s*```json\n(.*?)```", re.S)


def examples() -> dict[str, str]:
    return dict(EXAMPLE.findall(DOC.read_text(encoding="utf-8")))


def test_every_document_type_has_an_example():
    assert set(examples()) == set(PARSERS)


@pytest.mark.parametrize("kind", sorted(PARSERS))
def test_example_parses_and_round_trips(kind):
    data = json.loads(examples()[kind])
    record = PARSERS[kind].from_json(data, source=f"docs/formats.md ({kind})")
    assert record.to_json() == json.loads(json.dumps(record.to_json()))
    assert PARSERS[kind].from_json(record.to_json()) == record
