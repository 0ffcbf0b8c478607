"""Failure analysis: why agents fail, as shares of the failures a person analysed.

ElderBench sorts failures into four categories (its section 5): intent understanding and
capability boundary; long-horizon planning and state tracking; device-environment
awareness; visual grounding and action execution. A failure is *analysed* once a person
has tagged it (``tags.json``, written by the trace viewer). Each analysed failure counts
once, under its first tag (the primary cause); further tags are counted apart, so the
primary shares add up to 100%. Tags on tasks that did not fail (successes, harness
errors) are not failures and are reported as set aside.

A model can make a first pass: ``propose_failures`` reads each failed task's trace
(instruction, actions, reasons, the final screenshot) and proposes one category with a
reason, stored in ``failure_proposals.json`` beside the run. Proposals count for nothing
until a person confirms one (``confirm_failure``), which writes the tag.
"""

from __future__ import annotations

import io
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from PIL import Image

from evaluator.agents.families.grammar import json_objects
from evaluator.chat_client import ChatClient
from evaluator.errors import ConfigError, EndpointError
from evaluator.language.proposals import ProposalEvent, emit
from evaluator.metrics import effective_status
from evaluator.prompts import load_prompt, render
from evaluator.records import TaskStatus, stored_text
from evaluator.request_image import image_part
from evaluator.run_store import (
    CATEGORY_TITLES,
    FailureCategory,
    FailureTag,
    RunStore,
)
from evaluator.secrets import mask_json
from graph_builder.io import atomic_write_json, read_json

PROPOSALS_FILE = "failure_proposals.json"
TAXONOMY = tuple(c for c in FailureCategory if c is not FailureCategory.CUSTOM)


@dataclass(frozen=True, slots=True)
class CategoryShare:
    title: str
    primary: int
    share: float | None  # of analysed failures, by primary tag
    any_tag: int  # failures carrying this category at all

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.title,
            "primary": self.primary,
            "share": self.share,
            "any": self.any_tag,
        }


@dataclass(frozen=True, slots=True)
class FailureAnalysis:
    failures: int  # failed tasks in the run
    analysed: int  # of which a person tagged
    categories: tuple[CategoryShare, ...]
    set_aside: int  # tags on tasks that did not fail
    proposals_pending: int  # model proposals not yet confirmed

    def to_json(self) -> dict[str, Any]:
        return {
            "failures": self.failures,
            "analysed": self.analysed,
            "categories": [c.to_json() for c in self.categories],
            "tags_on_non_failures": self.set_aside,
            "proposals_pending": self.proposals_pending,
        }


def failure_analysis(store: RunStore) -> FailureAnalysis:
    overrides = store.overrides()
    results = store.results()
    failed = {r.task_id for r in results if effective_status(r, overrides) is TaskStatus.FAILURE}
    tags = store.tags()
    analysed = {t: v for t, v in tags.items() if t in failed and v}
    primary = Counter(v[0].title for v in analysed.values())
    anywhere = Counter(title for v in analysed.values() for title in {t.title for t in v})
    titles = [CATEGORY_TITLES[c] for c in TAXONOMY]
    titles += sorted((set(primary) | set(anywhere)) - set(titles))
    n = len(analysed)
    shares = tuple(
        CategoryShare(t, primary[t], primary[t] / n if n else None, anywhere[t]) for t in titles
    )
    pending = sum(
        1
        for task_id, p in read_failure_proposals(store).items()
        if task_id in failed and task_id not in analysed and p.get("category")
    )
    return FailureAnalysis(
        len(failed),
        n,
        shares,
        sum(1 for t, v in tags.items() if v and t not in failed),
        pending,
    )


# --------------------------------------------------------------------------- model first pass


def read_failure_proposals(store: RunStore) -> dict[str, dict[str, Any]]:
    path = store.run_dir / PROPOSALS_FILE
    if not path.exists():
        return {}
    data = read_json(path)
    tasks = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(tasks, dict):
        raise ConfigError(f"{path}: expected an object with 'tasks'")
    return {k: v for k, v in tasks.items() if isinstance(v, dict)}


def _write_failure_proposals(store: RunStore, tasks: Mapping[str, Any]) -> None:
    data = {"schema_version": 1, "tasks": dict(sorted(tasks.items()))}
    atomic_write_json(store.run_dir / PROPOSALS_FILE, mask_json(data))


def parse_failure_reply(text: str) -> tuple[FailureCategory, str]:
    """``{"category": "<one of the taxonomy>", "reason": "..."}`` -> (category, reason).

    >>> parse_failure_reply('{"category": "visual_grounding", "reason": "tapped beside it"}')
    (<FailureCategory.GROUNDING: 'visual_grounding'>, 'tapped beside it')
    """
    names = {c.value: c for c in TAXONOMY}
    for obj in reversed(json_objects(text)):
        value = str(obj.get("category", "")).strip().lower()
        if value in names:
            return names[value], str(obj.get("reason", "")).strip()
        if value:
            raise ValueError(f"category {value!r} is not one of " + ", ".join(sorted(names)))
    raise ValueError("the reply holds no JSON object with a category")


def failure_prompt(store: RunStore, task_id: str) -> tuple[str, bytes | None]:
    """The text of a task's trace for the model, and its final screenshot if there is one."""
    result = next(r for r in store.results() if r.task_id == task_id)
    steps = store.read_steps(task_id)
    lines = []
    for s in steps:
        line = f"{s.index}. {s.action_text or s.action or '(no action)'}"
        if s.parse_error:
            line += f" [reply not understood: {s.parse_error}]"
        if s.reasoning:
            line += f" (reason given: {s.reasoning[:200]})"
        lines.append(line)
    final: bytes | None = None
    for s in reversed(steps):
        path = store.step_file(result.protocol, s.screenshot)
        if path is not None and path.is_file():
            final = path.read_bytes()
            break
    taxonomy = "\n".join(f"- {c.value}: {CATEGORY_TITLES[c]}" for c in TAXONOMY)
    text = render(
        load_prompt("failure_category.md"),
        instruction=result.instruction,
        outcome=result.reason or "failed",
        steps="\n".join(lines) or "(no steps)",
        taxonomy=taxonomy,
    )
    return text, final


def propose_failures(
    store: RunStore,
    client: ChatClient,
    *,
    force: bool = False,
    on_event: Callable[[ProposalEvent], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Propose a category for each failed, untagged task; saved after each one, under the
    run's annotation lock and over a fresh read, so a review written meanwhile stays."""
    overrides = store.overrides()
    tagged = {t for t, v in store.tags().items() if v}
    failed = [
        r.task_id
        for r in store.results()
        if effective_status(r, overrides) is TaskStatus.FAILURE and r.task_id not in tagged
    ]
    proposals = read_failure_proposals(store)
    for done, task_id in enumerate(failed, 1):
        old = proposals.get(task_id)
        if old and old.get("category") and not force:
            emit(on_event, ProposalEvent(task_id, done, len(failed), skipped=True))
            continue
        text, final = failure_prompt(store, task_id)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if final is not None:
            try:
                with Image.open(io.BytesIO(final)) as img:
                    content.append(image_part(img)[0])
            except (OSError, ValueError):
                pass  # a damaged screenshot: the model gets the text alone
        try:
            reply = client.complete([{"role": "user", "content": content}])
        except EndpointError as exc:
            raise EndpointError(f"{exc} (proposals so far are saved in {PROPOSALS_FILE})") from exc
        entry: dict[str, Any] = {
            "model": client.config.model,
            "time": time.time(),
            "raw": stored_text(reply.text),
        }
        try:
            category, reason = parse_failure_reply(reply.text)
            entry.update(category=category.value, reason=reason, error=None)
        except ValueError as exc:
            entry.update(category=None, reason="", error=str(exc))
        with store.annotation_lock():  # re-read: a reviewer may have confirmed meanwhile
            proposals = read_failure_proposals(store)
            proposals[task_id] = entry
            _write_failure_proposals(store, proposals)
        emit(on_event, ProposalEvent(task_id, done, len(failed), error=entry["error"]))
    return proposals


def confirm_failure(
    store: RunStore, task_id: str, *, annotator: str, category: FailureCategory | str | None = None
) -> FailureTag:
    """A person confirms the proposal (or names another category): the tag is written."""
    proposals = read_failure_proposals(store)
    proposal = proposals.get(task_id) or {}
    chosen = category or proposal.get("category")
    if not chosen:
        raise ConfigError(f"{task_id}: no proposal to confirm; name the category")
    if not annotator.strip():
        raise ConfigError("a confirmation needs the annotator's id")
    decided = FailureCategory(chosen)
    agreed = proposal.get("category") == decided.value
    note = f"{'confirmed' if agreed else 'chosen over the model proposal'} by {annotator.strip()}"
    if proposal.get("reason"):
        note += f"; model: {proposal['reason']}"
    tag = FailureTag(decided, None, note)
    store.add_tag(task_id, tag)
    if proposal:
        with store.annotation_lock():  # re-read: another reviewer may have written meanwhile
            proposals = read_failure_proposals(store)
            current = proposals.get(task_id) or proposal
            review = {"annotator": annotator, "agreed": agreed}
            proposals[task_id] = {**current, "review": review}
            _write_failure_proposals(store, proposals)
    return tag
