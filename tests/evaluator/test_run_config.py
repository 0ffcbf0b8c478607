"""RunConfig's one table of fields (evaluator.run_config.FIELDS) agrees with the dataclass,
run.json, the resume check and ``elderbench eval``'s options: a field added in one place
and forgotten in another fails here instead of vanishing from run.json."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from elderbench.cli import build_parser
from evaluator.errors import ConfigError
from evaluator.farm.executors import EXECUTORS
from evaluator.farm.pool import FarmSettings
from evaluator.run_config import FIELDS, NOT_RECORDED, RunConfig, resume_changes
from graph_builder.model import EvalProtocol, InstructionVariant

# A value other than the default for every recorded field; a new field needs one here.
CHANGED = {
    "suite": Path("/elsewhere/suite"),
    "out": Path("/elsewhere/run"),
    "agent": "random",
    "agent_config": {"seed": 3},
    "protocol": EvalProtocol.ONLINE,
    "tasks": ("a", "b"),
    "variant": InstructionVariant.NORMALIZED,
    "demos": Path("/elsewhere/demos"),
    "mode": "tolerant",
    "max_steps": 9,
    "devices": ("emulator-5554",),
    "workers": 3,
    "judges": ("rule", "vlm"),
    "judge_config": {"vlm": {"model": "judge"}},
    "settle_timeout": 1.5,
    "judge_frames": 5,
    "matching": "aitw",
    "farm": FarmSettings(task_retries=0),
    "max_wait": 2.0,
    "record_screen": True,
    "hierarchy": "u2",
    "user_simulator": {"base_url": "http://127.0.0.1:9/v1", "model": "older-adult"},
}
BASE = {"suite": Path("suite"), "out": Path("run"), "agent": "replay"}


def _eval_options(capsys: pytest.CaptureFixture[str]) -> set[str]:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "--help"])
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", capsys.readouterr().out))


def test_every_run_config_field_has_a_row_in_the_table():
    assert set(FIELDS) | NOT_RECORDED == {f.name for f in fields(RunConfig)}
    assert set(CHANGED) == set(FIELDS)


def test_every_option_the_table_names_is_an_eval_option(capsys):
    options = _eval_options(capsys)
    assert {"--suite", "--out", "--executor"} <= options
    named = {option for spec in FIELDS.values() for option in spec.options}
    assert named <= options, named - options


def test_every_recorded_field_survives_run_json_and_a_change_is_named_by_resume():
    for name, value in CHANGED.items():
        config = RunConfig(**{**BASE, name: value})
        again = RunConfig.from_json(config.to_json())
        assert getattr(again, name) == getattr(config, name), name
        if name not in ("out", "workers", "devices", "hierarchy"):  # where and how it runs
            changes = resume_changes(RunConfig(**BASE).to_json(), config)
            assert any(c.startswith(FIELDS[name].name(name) + " ") for c in changes), changes


def test_an_unknown_executor_is_refused_naming_the_registered_ones():
    with pytest.raises(ConfigError, match=" or ".join(EXECUTORS)):
        FarmSettings(executor="cluster")
