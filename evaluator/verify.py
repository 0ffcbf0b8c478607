"""``elderbench verify RUN``: does the run still say what it said?

It checks the suite against the hashes in ``manifest.json`` (naming each file added,
removed or changed), every result line against its trace (the counts a result takes from
its steps, and a success or termination that the last step must show), the prompt texts
against their hashes (a template the run's secret masking changed is stored masked and
not checked), and recomputes the report's numbers (``run_summary.summarize``)
against ``report.json`` when the run has one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.errors import ConfigError, EvaluatorError
from evaluator.manifest import (
    MANIFEST_FILE,
    ManifestError,
    changed_files,
    read_manifest,
    suite_record,
    text_hash,
)
from evaluator.prices import PriceTable, load_prices, prices_from_json
from evaluator.records import StepRecord, TaskResult, TaskStatus
from evaluator.report import REPORT_JSON
from evaluator.run_store import RESULTS_FILE, RunStore
from evaluator.run_summary import DEFAULT_RESAMPLES, DEFAULT_SEED, summarize
from evaluator.secrets import MASK

# Fields of a summary that name the run rather than measure it.
_NOT_NUMBERS = ("run",)


@dataclass(frozen=True, slots=True)
class Verification:
    run_dir: Path
    tasks: int
    suite_hash: str | None
    mismatches: tuple[str, ...]
    basis: str | None = None  # the prices and seed the report's numbers were recomputed with

    @property
    def ok(self) -> bool:
        return not self.mismatches


def _step_counts(steps: list[StepRecord]) -> dict[str, int]:
    """What a result counts from its steps (records.episode_result)."""
    scored = [s for s in steps if s.decision_correct is not None]
    return {
        "steps": len(steps),
        "decisions": len(scored),
        "correct_decisions": sum(1 for s in scored if s.decision_correct),
        "parse_failures": sum(1 for s in steps if s.parse_error is not None),
        "input_tokens": sum(s.input_tokens for s in steps),
        "output_tokens": sum(s.output_tokens for s in steps),
    }


def result_mismatches(result: TaskResult, steps: list[StepRecord], where: str) -> list[str]:
    """How a result line disagrees with its trace (empty: it agrees)."""
    if result.status is TaskStatus.ERROR:
        # an error keeps only what the agent spent and the steps it took
        checked: tuple[str, ...] = ("steps", "parse_failures", "input_tokens", "output_tokens")
    else:
        checked = tuple(_step_counts([]))
    counts = _step_counts(steps)
    out = [
        f"{where}: task {result.task_id}: {name} is {getattr(result, name)} in "
        f"{RESULTS_FILE} but {counts[name]} in its trace"
        for name in checked
        if getattr(result, name) != counts[name]
    ]
    last = steps[-1].action or {} if steps else {}
    if (result.terminated or result.success) and last.get("type") != "done":
        said = "a success" if result.success else "terminated"
        out.append(
            f"{where}: task {result.task_id} is {said} in {RESULTS_FILE} but the last step of "
            f"its trace is {last.get('type') or 'missing'}, not done"
        )
    return out


def _json_diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Where the stored numbers ``a`` and the fresh ones ``b`` differ. A number the stored
    report did not have yet (made by an older version) is not a difference; one it had
    and the fresh summary lacks is."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(a, key=str):
            if path == "" and key in _NOT_NUMBERS:
                continue
            out.extend(_json_diff(a.get(key), b.get(key), f"{path}.{key}" if path else key))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _json_diff(x, y, f"{path}[{i}]")
        ]
    if isinstance(a, float) and isinstance(b, float) and abs(a - b) <= 1e-12 * max(1.0, abs(a)):
        return []
    return [] if a == b else [path]


@dataclass(frozen=True, slots=True)
class _Basis:
    prices: PriceTable
    seed: int
    resamples: int
    said: str


def _recorded_basis(stored: dict[str, Any], stored_path: Path) -> _Basis:
    """The prices, seed and resamples the report says it was computed with (a report of an
    older version records none: the defaults)."""
    basis = stored.get("basis")
    if not isinstance(basis, dict):
        prices = load_prices()
        said = f"the default prices ({prices.source}) and seed {DEFAULT_SEED}"
        return _Basis(prices, DEFAULT_SEED, DEFAULT_RESAMPLES, f"{said}: the report records none")
    prices = prices_from_json(basis.get("prices"), f"{stored_path}: basis.prices")
    seed, resamples = basis.get("seed"), basis.get("resamples")
    if not isinstance(seed, int) or not isinstance(resamples, int) or resamples < 1:
        raise ConfigError(f"{stored_path}: basis needs an integer seed and resamples")
    source = basis["prices"].get("file") or "no file"
    said = f"the prices recorded in {stored_path} (read from {source}), seed {seed}"
    return _Basis(prices, seed, resamples, said)


def _summary_mismatches(run_dir: Path) -> tuple[list[str], str | None]:
    """The report's numbers that no longer recompute, and what they were recomputed with."""
    stored_path = run_dir / REPORT_JSON
    if not stored_path.exists():
        return [], None
    try:
        stored = json.loads(stored_path.read_text(encoding="utf-8"))
        basis = _recorded_basis(stored, stored_path)
    except (OSError, ValueError) as exc:
        return [f"{stored_path} cannot be read ({exc})"], None
    except ConfigError as exc:
        return [f"its numbers cannot be recomputed: {exc}"], None
    # the report's own comparison and agreement runs, prices and seed
    other = (stored.get("comparison") or {}).get("other_run")
    online = (stored.get("agreement") or {}).get("online_run")
    try:
        summary = summarize(
            run_dir,
            compare=Path(other) if other else None,
            agreement_with=Path(online) if online else None,
            prices=basis.prices,
            seed=basis.seed,
            resamples=basis.resamples,
        )
    except EvaluatorError as exc:
        return [f"{stored_path}: its numbers cannot be recomputed: {exc}"], basis.said
    fresh = json.loads(json.dumps(summary.to_json()))
    # the stored basis is what was used; only the numbers are compared
    fresh["basis"] = stored.get("basis")
    # headline numbers (sr, counts.success) before the breakdowns' depths
    differ = sorted(_json_diff(stored, fresh), key=lambda p: p.count(".") + p.count("["))
    out = [
        f"{stored_path}: {name} no longer recomputes from the results "
        f"(stored {_pick(stored, name)!r}, now {_pick(fresh, name)!r})"
        for name in differ[:20]
    ] + ([f"{stored_path}: and {len(differ) - 20} more numbers"] if len(differ) > 20 else [])
    return out, basis.said


def _pick(data: Any, path: str) -> Any:
    for part in path.replace("[", ".[").split("."):
        if part.startswith("["):
            data = data[int(part[1:-1])] if isinstance(data, list) else None
        else:
            data = data.get(part) if isinstance(data, dict) else None
    return data


def _suite_mismatches(recorded: dict[str, Any], suite: Path) -> list[str]:
    if not suite.is_dir():
        return [f"the suite {suite} the run was made on is not there"]
    now = suite_record(suite)
    if now["hash"] == recorded.get("hash"):
        return []
    files = changed_files(recorded, now)
    return [f"suite file {suite / name} {how} since the run" for name, how in files] or [
        f"the suite {suite} changed since the run (its hash differs)"
    ]


def _manifest_mismatches(run_dir: Path, manifest: dict[str, Any], store: RunStore) -> list[str]:
    recorded = manifest.get("suite", {})
    suite = Path(recorded.get("path") or store.info().get("suite", {}).get("path", ""))
    out = _suite_mismatches(recorded, suite)
    for name, prompt in manifest.get("prompts", {}).items():
        text = str(prompt.get("text", ""))
        if MASK not in text and text_hash(text) != prompt.get("hash"):
            out.append(f"{run_dir / MANIFEST_FILE}: prompt {name} does not match its hash")
    return out


def verify_run(run_dir: Path) -> Verification:
    """Every mismatch between the run folder, its manifest, its traces and the suite."""
    run_dir = Path(run_dir)
    store = RunStore.open(run_dir)
    mismatches: list[str] = []
    manifest = None
    try:
        manifest = read_manifest(run_dir)
    except ManifestError as exc:
        mismatches.append(str(exc))
    else:
        if manifest is None:
            mismatches.append(f"{run_dir}: no {MANIFEST_FILE} (a run of an older version)")
        else:
            mismatches.extend(_manifest_mismatches(run_dir, manifest, store))
    results = store.results()
    if store.skipped_lines:
        mismatches.append(f"{run_dir / RESULTS_FILE}: {store.skipped_lines} line(s) cannot be read")
    for result in results:
        steps = store.read_steps(result.task_id)
        mismatches.extend(result_mismatches(result, steps, str(run_dir / RESULTS_FILE)))
    numbers, basis = _summary_mismatches(run_dir)
    mismatches.extend(numbers)
    suite_hash = manifest.get("suite", {}).get("hash") if manifest else None
    return Verification(run_dir, len(results), suite_hash, tuple(mismatches), basis)
