"""Judges verify online episodes; found by name through the ``JUDGES`` registry.

- ``rule``: the task's SuccessCriteria on the final screen: expected activity, texts that
  must and must not appear in the final hierarchy.
- ``vlm``: an OpenAI-compatible model sees the instruction, the task's rubric, the final
  screenshot, a few sampled intermediate frames and the final activity, and answers
  ``{"verdict": "success" | "failure", "reason": "..."}``.

A judge answers ``passed=None`` when it does not apply (no criteria, no rubric), and raises
JudgeError when it cannot answer; ``run_judges`` records that as an ``error`` verdict and
``task_verdict`` turns it into a task error of kind ``judge`` (never a silent failure). A human
verdict (``RunStore.set_override``) overrides every judge, not termination; ``metrics``
reports agreement.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from evaluator.chat_client import ChatClient, EndpointConfig
from evaluator.errors import ConfigError, EndpointError, JudgeError
from evaluator.prompts import load_prompt, render
from evaluator.records import ErrorKind, TaskStatus, TokenUse, Verdict
from evaluator.request_image import image_part
from graph_builder.errors import FormatError
from graph_builder.hierarchy import parse_hierarchy
from graph_builder.model import Task


@dataclass(frozen=True, slots=True)
class JudgeEvidence:
    """What a judge may look at: the end of the episode and a few frames before it."""

    task: Task
    instruction: str
    final_png: bytes
    final_hierarchy_xml: str | None
    final_activity: str | None
    frames: tuple[bytes, ...] = ()
    actions: tuple[str, ...] = ()


class Judge(Protocol):
    name: str
    model: str | None  # for costs (None: no model)

    def judge(self, evidence: JudgeEvidence) -> Verdict:
        """A verdict on the episode; raises JudgeError when it cannot reach one."""


def sample_frames(frames: Sequence[bytes], count: int) -> tuple[bytes, ...]:
    """Up to ``count`` frames spread evenly over ``frames`` (the final one excluded)."""
    if count <= 0 or not frames:
        return ()
    if len(frames) <= count:
        return tuple(frames)
    step = len(frames) / count
    return tuple(frames[int(i * step)] for i in range(count))


def activity_matches(expected: str, actual: str | None) -> bool:
    """``pkg/.Main`` equals ``pkg/pkg.Main``; an expected bare package matches any of its
    activities; an expected bare class name matches by suffix."""
    if not actual:
        return False

    def full(name: str) -> tuple[str, str]:
        package, _, cls = name.partition("/")
        return package, package + cls if cls.startswith(".") else cls

    if "/" not in expected:
        package, cls = full(actual)
        return expected == package or cls.endswith(expected.lstrip("."))
    return full(expected) == full(actual)


class RuleJudge:
    name = "rule"
    model: str | None = None

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.case_sensitive = bool((config or {}).get("case_sensitive", False))

    def judge(self, evidence: JudgeEvidence) -> Verdict:
        criteria = evidence.task.success
        if criteria is None or not (
            criteria.activity or criteria.must_contain or criteria.must_not_contain
        ):
            return Verdict(self.name, None, "the task has no rule criteria")
        problems: list[str] = []
        if criteria.activity and not activity_matches(criteria.activity, evidence.final_activity):
            problems.append(
                f"activity is {evidence.final_activity!r}, expected {criteria.activity!r}"
            )
        if criteria.must_contain or criteria.must_not_contain:
            texts = self._texts(evidence)
            problems += [
                f"missing text {t!r}" for t in criteria.must_contain if not self._present(t, texts)
            ]
            problems += [
                f"forbidden text {t!r} present"
                for t in criteria.must_not_contain
                if self._present(t, texts)
            ]
        if problems:
            return Verdict(self.name, False, "; ".join(problems))
        return Verdict(self.name, True, "final screen meets every rule")

    def _texts(self, evidence: JudgeEvidence) -> list[str]:
        if evidence.final_hierarchy_xml is None:
            raise JudgeError("the rule judge needs the final hierarchy, and there is none")
        try:
            texts = parse_hierarchy(evidence.final_hierarchy_xml).texts()
        except FormatError as exc:
            raise JudgeError(f"cannot read the final hierarchy: {exc}") from exc
        return texts if self.case_sensitive else [t.casefold() for t in texts]

    def _present(self, wanted: str, texts: list[str]) -> bool:
        needle = wanted if self.case_sensitive else wanted.casefold()
        return any(needle in t for t in texts)


def parse_judge_reply(text: str) -> tuple[bool, str] | None:
    """(passed, reason) from ``{"verdict": ..., "reason": ...}`` or a clear word; else None."""
    for match in re.finditer(r"\{.*?\}", text, re.S):
        try:
            data = json.loads(match.group(0))
        except ValueError:
            continue
        verdict = str(data.get("verdict", "")).strip().lower() if isinstance(data, dict) else ""
        if verdict in ("success", "failure", "yes", "no", "pass", "fail"):
            return verdict in ("success", "yes", "pass"), str(data.get("reason", ""))
    m = re.search(r"verdict\s*[:：]\s*\**\s*(success|failure)", text, re.I)
    if m:
        return m.group(1).lower() == "success", text.strip()[:500]
    return None


class VlmJudge:
    name = "vlm"

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        config = dict(config or {})
        self.endpoint = EndpointConfig.from_config(config)
        self.model: str | None = self.endpoint.model
        self.client = ChatClient(self.endpoint)
        self.template = load_prompt(config.get("prompt", "judge_vlm.md"))
        self.max_image_side = int(config.get("max_image_side", 768))
        self.frames = int(config.get("frames", 3))

    def judge(self, evidence: JudgeEvidence) -> Verdict:
        from PIL import Image

        task = evidence.task
        rubric = (
            task.success.rubric
            if task.success and task.success.rubric
            else ("The task succeeded if the final screen shows that the request was carried out.")
        )
        text = render(
            self.template,
            instruction=evidence.instruction,
            rubric=rubric,
            activity=evidence.final_activity or "unknown",
            actions="\n".join(f"{i + 1}. {a}" for i, a in enumerate(evidence.actions)) or "(none)",
            frames=min(self.frames, len(evidence.frames)),
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        for png in (*sample_frames(evidence.frames, self.frames), evidence.final_png):
            image = Image.open(io.BytesIO(png)).convert("RGB")
            content.append(image_part(image, max_side=self.max_image_side)[0])
        try:
            reply = self.client.complete([{"role": "user", "content": content}])
        except EndpointError as exc:
            raise JudgeError(
                f"the VLM judge could not answer: {exc}", retry_seconds=exc.retry_seconds
            ) from exc
        parsed = parse_judge_reply(reply.text)
        if parsed is None:
            raise JudgeError(
                f"the VLM judge's answer has no verdict: {reply.text[:200]!r}",
                input_tokens=reply.input_tokens,
                output_tokens=reply.output_tokens,
                retry_seconds=reply.retry_seconds,
            )
        return Verdict(
            self.name,
            parsed[0],
            parsed[1],
            raw=reply.text,
            model=self.model,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            retry_seconds=reply.retry_seconds,
        )


JUDGES: dict[str, type[RuleJudge] | type[VlmJudge]] = {"rule": RuleJudge, "vlm": VlmJudge}


def create_judge(name: str, config: Mapping[str, Any] | None = None) -> Judge:
    try:
        cls = JUDGES[name]
    except KeyError:
        raise ConfigError(
            f"unknown judge {name!r}; choose from: {', '.join(sorted(JUDGES))}"
        ) from None
    return cls(config)


def combine(verdicts: Sequence[Verdict]) -> bool | None:
    """False when an applicable judge failed; True when every applicable judge passed and
    none errored; None when none applied or one errored (see ``task_verdict``)."""
    applicable = [v.passed for v in verdicts if v.passed is not None]
    if not all(applicable):
        return False
    if any(v.error for v in verdicts):
        return None
    return True if applicable else None


def run_judges(judges: Sequence[Judge], evidence: JudgeEvidence) -> tuple[Verdict, ...]:
    """Every judge's verdict; one that cannot answer gives an ``error`` verdict."""
    verdicts = []
    for judge in judges:
        try:
            verdicts.append(judge.judge(evidence))
        except JudgeError as exc:
            verdicts.append(
                Verdict(
                    judge.name,
                    None,
                    f"error: {exc}",
                    error=True,
                    model=judge.model,
                    input_tokens=exc.input_tokens,
                    output_tokens=exc.output_tokens,
                    retry_seconds=exc.retry_seconds,
                )
            )
    return tuple(verdicts)


def usage(verdicts: Sequence[Verdict]) -> tuple[TokenUse, ...]:
    """The tokens and retry time the judges spent, one entry per judge that used a model."""
    return tuple(
        TokenUse(v.model, v.input_tokens, v.output_tokens, v.retry_seconds)
        for v in verdicts
        if v.model is not None or v.input_tokens or v.output_tokens or v.retry_seconds
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    status: TaskStatus
    reason: str | None
    error_kind: ErrorKind | None = None


def task_verdict(terminated: bool, verdicts: Sequence[Verdict], max_steps: int) -> Outcome:
    """Success is terminated AND verified. A failed judge makes the task an error of kind
    ``judge`` unless another judge already failed it."""
    if not terminated:
        return Outcome(TaskStatus.FAILURE, f"did not say done within max_steps ({max_steps})")
    verified = combine(verdicts)
    if verified is True:
        return Outcome(TaskStatus.SUCCESS, None)
    if verified is False:
        return Outcome(
            TaskStatus.FAILURE,
            "verification failed: "
            + "; ".join(f"{v.judge}: {v.reason}" for v in verdicts if v.passed is False),
        )
    errors = [v for v in verdicts if v.error]
    if errors:
        return Outcome(
            TaskStatus.ERROR,
            "judge error: " + "; ".join(f"{v.judge}: {v.reason}" for v in errors),
            ErrorKind.JUDGE,
        )
    return Outcome(
        TaskStatus.FAILURE,
        "unverified: no judge applies; add success criteria or a rubric, or a human verdict",
    )
