"""Model proposals for a suite's labels and normalized rewrites, kept apart from task.json.

A model proposes; a person decides. Proposals live in ``<suite>/language/proposals.json``
and never touch a task's own fields. A review writes the person's decision into task.json
and records who decided what. Labels a task already holds count as verified: a proposal
can be compared with them (the agreement ElderBench reports) but never replaces them;
only a person's explicit correction changes them.

    {"schema_version": 1,
     "labels":   {"call_daughter": {"proposed": {"scenario": ..., "syntax": [...], ...},
                                    "model": "m", "time": 1.0, "raw": "...", "error": null,
                                    "review": {"decision": "accepted", "labels": {...},
                                               "annotator": "ann-1", "time": 2.0}}},
     "rewrites": {"call_daughter": {"proposed": "Call Anna in Phone.", ..., "review": null}}}
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from evaluator.agents.families.grammar import json_objects
from evaluator.chat_client import ChatClient
from evaluator.errors import ConfigError, EndpointError
from evaluator.language.definitions import label_definitions
from evaluator.prompts import load_prompt, render
from evaluator.records import stored_text
from evaluator.secrets import mask_json
from evaluator.stats import Kappa, cohen_kappa
from graph_builder.build import suite_lock
from graph_builder.folder_lock import FolderLockedError
from graph_builder.io import atomic_write_json, load_suite, read_json, save_task, suite_task_dirs
from graph_builder.io import load_task as _load_task
from graph_builder.model import Labels, Suite, Task

PROPOSALS_FILE = Path("language") / "proposals.json"
SCHEMA_VERSION = 1
MAX_REWRITE_CHARS = 300


class Kind(StrEnum):
    LABELS = "labels"
    REWRITES = "rewrites"


class Decision(StrEnum):
    ACCEPTED = "accepted"  # the proposal as it was
    CORRECTED = "corrected"  # the person's own version
    REJECTED = "rejected"  # neither: the task keeps what it had


class ReplyError(ValueError):
    """A model reply that is not a usable proposal; the message says why."""


@dataclass(frozen=True, slots=True)
class Review:
    decision: Decision
    value: Any  # Labels JSON or the rewrite text the person settled on
    annotator: str
    time: float

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision.value,
            "value": self.value,
            "annotator": self.annotator,
            "time": self.time,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Review:
        return cls(
            Decision(data["decision"]),
            data.get("value"),
            str(data.get("annotator", "")),
            float(data.get("time", 0.0)),
        )


@dataclass(frozen=True, slots=True)
class Proposal:
    """One model proposal (or the error it gave) for one task, and its review."""

    proposed: Any  # Labels JSON, a rewrite string, or None after an error
    model: str
    time: float
    raw: str = ""
    error: str | None = None
    review: Review | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "proposed": self.proposed,
            "model": self.model,
            "time": self.time,
            "raw": self.raw,
            "error": self.error,
            "review": self.review.to_json() if self.review else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Proposal:
        review = data.get("review")
        return cls(
            data.get("proposed"),
            str(data.get("model", "")),
            float(data.get("time", 0.0)),
            str(data.get("raw", "")),
            data.get("error"),
            Review.from_json(review) if isinstance(review, Mapping) else None,
        )


# How long a writer of the suite's language files waits for the suite's lock (a build or
# another reviewer holds it for a moment) before it gives up, naming the holder.
LOCK_WAIT_S = 30.0


@contextlib.contextmanager
def locked_suite(suite_dir: Path, purpose: str) -> Iterator[None]:
    """Hold the suite's lock (the one builds and the graph editor take) for one
    read-modify-write of task.json or proposals.json; ConfigError naming the holder when it
    stays taken."""
    try:
        with suite_lock(suite_dir, purpose=purpose).acquire(wait=LOCK_WAIT_S):
            yield
    except FolderLockedError as exc:
        raise ConfigError(str(exc)) from exc


class ProposalStore:
    """``<suite>/language/proposals.json``: read whole, written atomically after each item.

    Each ``put``/``remove`` takes the suite's lock and re-reads the file first, so that a
    proposal run (``elderbench label``) and a person reviewing in the studio never write
    over each other's items. A caller that already holds the lock says ``locked=True``.
    """

    def __init__(self, suite_dir: Path, *, locked: bool = False) -> None:
        self.suite_dir = Path(suite_dir)
        self.path = self.suite_dir / PROPOSALS_FILE
        self._locked = locked
        self._data: dict[Kind, dict[str, Proposal]] = {k: {} for k in Kind}
        if self.path.exists():
            self._read()

    @contextlib.contextmanager
    def _fresh(self) -> Iterator[None]:
        """Under the suite's lock, with the file as it is now on disk."""
        if self._locked:
            yield
            return
        with locked_suite(self.suite_dir, "a write of the language proposals"):
            self._data = {k: {} for k in Kind}
            if self.path.exists():
                self._read()
            yield

    def _read(self) -> None:
        data = read_json(self.path)
        if not isinstance(data, dict) or not isinstance(data.get("schema_version"), int):
            raise ConfigError(f"{self.path}: not a proposals file (no schema_version)")
        for kind in Kind:
            section = data.get(kind.value) or {}
            if not isinstance(section, dict):
                raise ConfigError(f"{self.path}: '{kind.value}' must be an object")
            for task_id, value in section.items():
                try:
                    self._data[kind][task_id] = Proposal.from_json(value)
                except (KeyError, TypeError, ValueError, AttributeError) as exc:
                    raise ConfigError(
                        f"{self.path}: the {kind.value} proposal of {task_id!r} is malformed "
                        f"({exc})"
                    ) from exc

    def get(self, kind: Kind, task_id: str) -> Proposal | None:
        return self._data[Kind(kind)].get(task_id)

    def all(self, kind: Kind) -> dict[str, Proposal]:
        return dict(self._data[Kind(kind)])

    def put(self, kind: Kind, task_id: str, proposal: Proposal) -> None:
        with self._fresh():
            self._data[Kind(kind)][task_id] = proposal
            self._save()

    def remove(self, kind: Kind, task_id: str) -> None:
        with self._fresh():
            if self._data[Kind(kind)].pop(task_id, None) is not None:
                self._save()

    def _save(self) -> None:
        # mask_json: a reply that echoed the request must not put its key on disk
        atomic_write_json(
            self.path,
            mask_json(
                {
                    "schema_version": SCHEMA_VERSION,
                    **{
                        k.value: {t: p.to_json() for t, p in sorted(v.items())}
                        for k, v in self._data.items()
                    },
                }
            ),
        )


# --------------------------------------------------------------------------- replies


def parse_label_reply(text: str, vocabularies: Mapping[str, Sequence[str]]) -> Labels:
    """The labels in a model reply: one JSON object with ``scenario`` (one label) and
    ``syntax``/``semantics`` (lists); every label must be in the suite's vocabulary.

    >>> vocab = {"scenario": ["system_settings"], "syntax": ["elliptical"], "semantics": []}
    >>> parse_label_reply('Sure: {"scenario": "system_settings", "syntax": ["elliptical"], '
    ...                   '"semantics": []}', vocab).syntax
    ('elliptical',)
    """
    for obj in reversed(json_objects(text)):
        if "scenario" in obj or "syntax" in obj or "semantics" in obj:
            break
    else:
        raise ReplyError("the reply holds no JSON object with scenario, syntax or semantics")
    scenario = obj.get("scenario")
    if isinstance(scenario, list):
        if len(scenario) > 1:
            raise ReplyError(f"scenario must be one label, the reply gave {scenario}")
        scenario = scenario[0] if scenario else None
    if scenario is not None and not isinstance(scenario, str):
        raise ReplyError(f"scenario must be a label name, got {scenario!r}")
    many: dict[str, tuple[str, ...]] = {}
    for dim in ("syntax", "semantics"):
        value = obj.get(dim) or []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ReplyError(f"{dim} must be a list of label names, got {value!r}")
        many[dim] = tuple(dict.fromkeys(v.strip() for v in value if v.strip()))
    labels = Labels(scenario=(scenario or "").strip() or None, **many)
    unknown = [
        f"{d}={v}" for d, v in labels.items() if v not in vocabularies.get(d, ()) and v != "none"
    ]
    if unknown:
        raise ReplyError("labels outside the suite's vocabulary: " + ", ".join(unknown))
    return labels


def parse_rewrite_reply(text: str) -> str:
    """The rewrite in a reply: ``{"rewrite": "..."}``, or else the first non-empty line.

    >>> parse_rewrite_reply('{"rewrite": "In Settings, open Display."}')
    'In Settings, open Display.'
    >>> parse_rewrite_reply('Rewrite: "Call Anna."')
    'Call Anna.'
    """
    rewrite = next(
        (o["rewrite"] for o in reversed(json_objects(text)) if isinstance(o.get("rewrite"), str)),
        None,
    )
    if rewrite is None:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if not lines or lines[0].startswith(("{", "```")):
            raise ReplyError("the reply holds no rewrite")
        rewrite = lines[0].split(":", 1)[1] if lines[0].lower().startswith("rewrite:") else lines[0]
    rewrite = " ".join(rewrite.strip().strip("\"“”'").split())
    if not rewrite:
        raise ReplyError("the rewrite is empty")
    if len(rewrite) > MAX_REWRITE_CHARS:
        raise ReplyError(f"the rewrite is {len(rewrite)} characters (at most {MAX_REWRITE_CHARS})")
    return rewrite


# --------------------------------------------------------------------------- proposing


@dataclass(frozen=True, slots=True)
class ProposalEvent:
    """Progress of a model pass over tasks (proposals, failure categories): ``done`` of
    ``total``; ``error`` is set when this item's reply was unusable."""

    task_id: str
    done: int
    total: int
    error: str | None = None
    skipped: bool = False


def label_prompt(task: Task, suite: Suite) -> str:
    definitions = label_definitions()
    lines = []
    for dim, names in suite.vocabularies.items():
        lines.append(f"{dim}:")
        lines += [f"- {n}: {definitions.get(n, '(no definition given)')}" for n in names]
    return render(
        load_prompt("label_instruction.md"),
        instruction=task.instruction,
        vocabulary="\n".join(lines),
    )


def rewrite_prompt(task: Task) -> str:
    return render(
        load_prompt("normalize_instruction.md"), instruction=task.instruction, app=task.app
    )


def propose(
    suite_dir: Path,
    kind: Kind,
    client: ChatClient,
    *,
    tasks: Iterable[str] = (),
    force: bool = False,
    on_event: Callable[[ProposalEvent], None] | None = None,
) -> ProposalStore:
    """Ask the model for a proposal for each task; saved after each one.

    Tasks with a proposal already are skipped unless ``force``; those whose last attempt
    failed are tried again. A failing reply is recorded with its error and the run goes on.
    An unreachable endpoint (every retry failed) stops the run; what was saved stays.
    """
    suite_dir = Path(suite_dir)
    suite = load_suite(suite_dir)
    wanted = set(tasks)
    dirs = [d for d in suite_task_dirs(suite_dir) if not wanted or d.name in wanted]
    if wanted - {d.name for d in dirs}:
        raise ConfigError(
            "no such task in the suite: " + ", ".join(sorted(wanted - {d.name for d in dirs}))
        )
    store = ProposalStore(suite_dir)
    for done, folder in enumerate(dirs, 1):
        task = _load_task(folder)
        old = store.get(kind, task.id)
        if old is not None and old.error is None and not force:
            emit(on_event, ProposalEvent(task.id, done, len(dirs), skipped=True))
            continue
        prompt = label_prompt(task, suite) if kind is Kind.LABELS else rewrite_prompt(task)
        try:
            reply = client.complete([{"role": "user", "content": prompt}])
        except EndpointError as exc:
            raise EndpointError(f"{exc} (proposals so far are saved in {store.path})") from exc
        proposed: Any = None
        error = None
        try:
            if kind is Kind.LABELS:
                proposed = parse_label_reply(reply.text, suite.vocabularies).to_json()
            else:
                proposed = parse_rewrite_reply(reply.text)
        except ReplyError as exc:
            error = str(exc)
        review = old.review if old is not None else None
        store.put(
            kind,
            task.id,
            Proposal(
                proposed, client.config.model, time.time(), stored_text(reply.text), error, review
            ),
        )
        emit(on_event, ProposalEvent(task.id, done, len(dirs), error=error))
    return store


def emit(on_event: Callable[[ProposalEvent], None] | None, event: ProposalEvent) -> None:
    """Report progress to ``on_event`` if there is one (labels, rewrites, failures)."""
    if on_event is not None:
        on_event(event)


# --------------------------------------------------------------------------- reviewing


def has_labels(labels: Labels) -> bool:
    return any(True for _ in labels.items())


@dataclass(frozen=True, slots=True)
class ReviewRecord:
    """What one review changed, so that it can be undone (``undo_review``)."""

    kind: Kind
    task_id: str
    before: Any  # the task's Labels or rewrite before the decision
    after: Any  # ... and after it
    proposal_before: Proposal | None
    review: Review


def review(
    suite_dir: Path,
    kind: Kind,
    task_id: str,
    decision: Decision | str,
    *,
    annotator: str,
    value: Any = None,
) -> Task:
    """``decide`` without the record of what changed."""
    return decide(suite_dir, kind, task_id, decision, annotator=annotator, value=value)[0]


def decide(
    suite_dir: Path,
    kind: Kind,
    task_id: str,
    decision: Decision | str,
    *,
    annotator: str,
    value: Any = None,
) -> tuple[Task, ReviewRecord]:
    """Record a person's decision on a proposal and apply it to task.json.

    ``accepted`` takes the proposal as it is and is refused where the task already holds
    labels (or a rewrite): a proposal never replaces what a person wrote. ``corrected``
    writes ``value`` (a Labels or labels JSON, or the rewrite text) whatever was there:
    that is the person's own word. ``rejected`` leaves task.json as it was.
    """
    decision = Decision(decision)
    if not annotator.strip():
        raise ConfigError("a review needs the annotator's id")
    suite_dir = Path(suite_dir)
    with locked_suite(suite_dir, f"a language review ({annotator.strip()})"):
        return _decide(suite_dir, kind, task_id, decision, annotator.strip(), value)


def _decide(
    suite_dir: Path, kind: Kind, task_id: str, decision: Decision, annotator: str, value: Any
) -> tuple[Task, ReviewRecord]:
    store = ProposalStore(suite_dir, locked=True)
    proposal = store.get(kind, task_id)
    folder = suite_dir / task_id
    task = _load_task(folder)
    before = _field(task, kind)
    if decision is Decision.ACCEPTED:
        if proposal is None or proposal.proposed is None:
            raise ConfigError(f"{task_id}: there is no usable {kind.value} proposal to accept")
        if _current(task, kind):
            raise ConfigError(
                f"{task_id}: the task already has {_what(kind)} written by a person; a proposal "
                "never replaces them. Correct them explicitly instead."
            )
        value = proposal.proposed
    elif decision is Decision.CORRECTED:
        if value is None:
            raise ConfigError(f"{task_id}: a correction needs the corrected {_what(kind)}")
        if kind is Kind.LABELS:
            value = (value if isinstance(value, Labels) else labels_from_json(value)).to_json()
        else:
            value = " ".join(str(value).split())
            if not value:
                raise ConfigError(f"{task_id}: the corrected rewrite is empty")
    if decision is not Decision.REJECTED:
        task = _apply(task, kind, value)
        save_task(task, folder)
    base = proposal or Proposal(None, "", time.time(), error="no proposal: reviewed by hand")
    decided = Review(decision, value, annotator, time.time())
    store.put(kind, task_id, replace(base, review=decided))
    return task, ReviewRecord(Kind(kind), task_id, before, _field(task, kind), proposal, decided)


def undo_review(suite_dir: Path, record: ReviewRecord) -> Task:
    """Take a review back: the task's labels (or rewrite) and the proposal as they were.

    Refused, changing nothing, when the task or the proposal changed after the review
    (another person, another studio, the command line): undoing would lose that change.
    """
    suite_dir = Path(suite_dir)
    with locked_suite(suite_dir, "a language review (undo)"):
        return _undo_review(suite_dir, record)


def _undo_review(suite_dir: Path, record: ReviewRecord) -> Task:
    store = ProposalStore(suite_dir, locked=True)
    folder = suite_dir / record.task_id
    task = _load_task(folder)
    current = store.get(record.kind, record.task_id)
    if (
        _field(task, record.kind) != record.after
        or current is None
        or current.review != record.review
    ):
        raise ConfigError(
            f"{record.task_id}: the {record.kind.value} changed after this decision "
            f"({folder / 'task.json'} or {store.path}); it is not undone"
        )
    if _field(task, record.kind) != record.before:
        task = _apply_field(task, record.kind, record.before)
        save_task(task, folder)
    if record.proposal_before is None:
        store.remove(record.kind, record.task_id)
    else:
        store.put(record.kind, record.task_id, record.proposal_before)
    return task


def _field(task: Task, kind: Kind) -> Any:
    return task.labels if kind is Kind.LABELS else task.normalized_instruction


def _apply_field(task: Task, kind: Kind, value: Any) -> Task:
    if kind is Kind.LABELS:
        return replace(task, labels=value)
    return replace(task, normalized_instruction=value)


def _what(kind: Kind) -> str:
    return "labels" if kind is Kind.LABELS else "a normalized instruction"


def _current(task: Task, kind: Kind) -> bool:
    if kind is Kind.LABELS:
        return has_labels(task.labels)
    return bool(task.normalized_instruction)


def _apply(task: Task, kind: Kind, value: Any) -> Task:
    if kind is Kind.LABELS:
        return replace(task, labels=labels_from_json(value))
    return replace(task, normalized_instruction=value)


def labels_from_json(value: Mapping[str, Any]) -> Labels:
    """Labels from a proposal's or a correction's JSON (missing fields are empty)."""
    return Labels(
        scenario=value.get("scenario") or None,
        syntax=tuple(value.get("syntax") or ()),
        semantics=tuple(value.get("semantics") or ()),
    )


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True, slots=True)
class DimensionAgreement:
    """Proposals against verified labels in one dimension.

    ``exact``: share of tasks whose proposed label set equals the verified one.
    ``decisions``: Cohen's kappa over every (task, label) yes/no decision, the per-label
    agreement; for the single-valued scenario it is the kappa of the label itself.
    """

    dimension: str
    tasks: int
    exact: float | None
    decisions: Kappa

    def to_json(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "tasks": self.tasks,
            "exact": self.exact,
            "decisions": self.decisions.n,
            "agreement": self.decisions.observed,
            "kappa": self.decisions.kappa,
        }


def label_agreement(suite_dir: Path) -> list[DimensionAgreement]:
    """Agreement of the label proposals with the verified labels of the same tasks.

    A task counts in a dimension when it has a usable proposal and verified labels in that
    dimension (labels in task.json are a person's: hand-typed, accepted or corrected).
    """
    suite_dir = Path(suite_dir)
    suite = load_suite(suite_dir)
    store = ProposalStore(suite_dir)
    pairs = []
    for folder in suite_task_dirs(suite_dir):
        proposal = store.get(Kind.LABELS, folder.name)
        if proposal is None or proposal.proposed is None:
            continue
        pairs.append((labels_from_json(proposal.proposed), _load_task(folder).labels))
    out = []
    for dim, vocabulary in suite.vocabularies.items():
        rows = [(_values(p, dim), _values(v, dim)) for p, v in pairs if _values(v, dim)]
        first: list[object]
        second: list[object]
        if dim == "scenario":
            first = [next(iter(p), "none") for p, _ in rows]
            second = [next(iter(v)) for _, v in rows]
        else:
            first = [label in p for p, _ in rows for label in vocabulary]
            second = [label in v for _, v in rows for label in vocabulary]
        exact = sum(p == v for p, v in rows) / len(rows) if rows else None
        out.append(DimensionAgreement(dim, len(rows), exact, cohen_kappa(first, second)))
    return out


def _values(labels: Labels, dimension: str) -> frozenset[str]:
    return frozenset(v for d, v in labels.items() if d == dimension)
