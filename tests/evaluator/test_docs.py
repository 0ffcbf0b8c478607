"""docs/evaluation.md stays true: its record examples load with the code and round-trip."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evaluator.agents import AGENTS
from evaluator.agents.families import FAMILIES
from evaluator.records import StepRecord, TaskResult

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXAMPLE = re.compile(r"<!-- record: (\w+) -->\s*```json\n(.*?)```", re.S)
RECORDS = {"result": TaskResult, "step": StepRecord}


@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_record_examples_load_and_round_trip(kind):
    examples = dict(EXAMPLE.findall((DOCS / "evaluation.md").read_text(encoding="utf-8")))
    data = json.loads(examples[kind])
    record = RECORDS[kind].from_json(data)
    assert record.to_json() == data


def test_agents_doc_names_every_agent_and_family():
    text = (DOCS / "agents.md").read_text(encoding="utf-8")
    for name in (*AGENTS, *FAMILIES):
        assert f"`{name}`" in text, name
