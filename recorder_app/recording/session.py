"""The recording protocol, without Qt: settle -> capture -> accept one input -> save -> perform.

A ``RecordingSession`` is driven from one worker thread. It guarantees the property that
makes recorded data usable: every step pairs an action with the screen the user saw when
choosing it. The pre-action observation is captured only after the screen has settled,
and an action is accepted only while such an observation is pending, so input can never
be recorded against the wrong screen.

The step is written to disk *before* the action is performed, marked not yet performed,
and marked performed once the action returned. A full disk therefore refuses the action
while the phone is still on the same screen (free space and do it again), a failed
perform removes the step it had just written, and a crash in between leaves a step that
``resume`` drops (the phone may never have seen its action).

>>> import tempfile
>>> from devices.android import AndroidDevice, adb_client
>>> from virtual_phone import running_server
>>> tmp = tempfile.TemporaryDirectory()
>>> task = Task("open_settings", "open the settings", app="com.android.settings")
>>> with running_server() as server:
...     device = AndroidDevice("virtual-1", client=adb_client(port=server.port))
...     session = RecordingSession.start(device, Path(tmp.name) / "demos", task)
...     pending = session.capture()
...     step = session.act(Action.tap(540, 1200, screen=pending.screen.size))
...     _ = session.capture()
...     demo = session.complete()
>>> demo.status.value, [s.action.type.value for s in demo.steps]
('complete', ['tap', 'done'])
>>> tmp.cleanup()
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from devices.device import Device
from graph_builder.errors import GraphBuilderError
from graph_builder.hierarchy import Hierarchy
from graph_builder.io import STEPS_DIR, DemoWriter, atomic_write_bytes, atomic_write_json, read_json
from graph_builder.model import Action, ActionType, Demonstration, ResetRecipe, Step, Task
from graph_builder.screen import Screen
from recorder_app.errors import RecordingError, explain_os_error

log = logging.getLogger(__name__)

SETTLE_TIMEOUT_S = 3.0
# The last screen captured but not yet acted on, so a resume can check the phone still
# shows it (docs/formats.md, "Demonstration").
PENDING_STEM = f"{STEPS_DIR}/pending"
PENDING_SCHEMA_VERSION = 1


class SessionState(StrEnum):
    PREPARING = "preparing"  # resetting the app before the first step
    CAPTURING = "capturing"  # waiting for the screen to settle, then observing it
    READY = "ready"  # an observation is pending: exactly one input is accepted
    PERFORMING = "performing"  # saving the step and sending the action to the phone
    FINISHED = "finished"  # the demo ended with 'done'
    INTERRUPTED = "interrupted"  # a fault stopped the demo; it is saved as incomplete

    @property
    def busy(self) -> bool:
        return self in (SessionState.PREPARING, SessionState.CAPTURING, SessionState.PERFORMING)


@dataclass(frozen=True, slots=True)
class ResumeCheck:
    """Whether the phone shows the screen an incomplete demonstration stopped on."""

    same: bool | None  # None: nothing to compare with (no screen was kept after the last step)
    message: str
    expected_png: bytes | None = None


@dataclass(frozen=True, slots=True)
class PendingStep:
    """A settled pre-action observation, waiting for the user's input.

    ``hierarchy_problem`` says why the captured hierarchy cannot be used (its XML is
    still saved with the step); ``phash`` is filled in by ``hash_pending``.
    """

    step_index: int
    screen: Screen
    settled: bool
    capture_ms: float
    phash: str | None = None
    hierarchy_problem: str | None = None

    @property
    def hierarchy(self) -> Hierarchy | None:
        """The parsed hierarchy, or None when there is no usable one."""
        return None if self.hierarchy_problem else self.screen.hierarchy()


def _phash(png: bytes, hierarchy: Hierarchy | None) -> str | None:
    from graph_builder.phash import compute_phash

    try:
        return compute_phash(png, hierarchy)
    except GraphBuilderError as exc:  # an undecodable screenshot is still worth keeping
        log.warning("no perceptual hash for this screen: %s", exc)
        return None


class RecordingSession:
    """One demonstration being recorded on one device. Not thread-safe: use one thread."""

    def __init__(
        self,
        device: Device,
        writer: DemoWriter,
        *,
        settle_timeout: float = SETTLE_TIMEOUT_S,
    ) -> None:
        self.device = device
        self.writer = writer
        self.settle_timeout = settle_timeout
        self.state = SessionState.CAPTURING
        self._pending: PendingStep | None = None
        # The saved step whose action never returned, dropped by ``resume``.
        self.dropped_step: Step | None = None

    @classmethod
    def start(
        cls,
        device: Device,
        demos_root: Path,
        task: Task,
        *,
        annotator: str = "",
        reset: ResetRecipe | None = None,
        settle_timeout: float = SETTLE_TIMEOUT_S,
        demo_id: str | None = None,
        source: str = "recorded",
        clock: Callable[[], float] = time.time,
    ) -> RecordingSession:
        """Reset the app (when a recipe is given) and create the demo folder.

        ``demo_id``, ``source`` and ``clock`` (the demo's creation time) go to
        ``DemoWriter.create``; scripts set them to make their output reproducible.
        """
        info = device.info()
        if reset is not None:
            device.reset_app(reset)
        try:
            writer = DemoWriter.create(
                demos_root,
                task,
                device=info,
                annotator=annotator,
                demo_id=demo_id,
                source=source,
                clock=clock,
            )
        except OSError as exc:
            raise RecordingError(
                f"Could not create the demonstration folder. {explain_os_error(exc)}"
            ) from exc
        return cls(device, writer, settle_timeout=settle_timeout)

    @classmethod
    def resume(
        cls, device: Device, folder: Path, *, settle_timeout: float = SETTLE_TIMEOUT_S
    ) -> RecordingSession:
        """Continue an incomplete demo; the next capture becomes its next step.

        A last step saved but never marked performed (the studio died while sending its
        action) is dropped first, and kept in ``dropped_step``: the phone may never have
        seen it, and the resume check compares the phone with the screen it was taken on.
        """
        try:
            writer = DemoWriter.resume(folder)
            steps = writer.demo.steps
            dropped = writer.drop_last_step() if steps and not steps[-1].performed else None
        except GraphBuilderError as exc:
            raise RecordingError(f"Cannot resume {folder}: {exc}") from exc
        except OSError as exc:
            raise RecordingError(
                f"Cannot resume {folder}: its unperformed last step could not be removed. "
                f"{explain_os_error(exc)}"
            ) from exc
        if dropped is not None:
            log.warning(
                "%s: step %d (%s) was saved but never performed; it is dropped",
                folder,
                dropped.index,
                dropped.action.describe(),
            )
        try:
            kept = read_json((folder / PENDING_STEM).with_suffix(".json"))
        except (GraphBuilderError, OSError):
            kept = None
        fresh = isinstance(kept, dict) and kept.get("after_step") == len(writer.demo.steps)
        if fresh and isinstance(kept, dict) and kept.get("jumped") is True:
            writer.mark_jump()
        session = cls(device, writer, settle_timeout=settle_timeout)
        session.dropped_step = dropped
        return session

    @property
    def demo(self) -> Demonstration:
        return self.writer.demo

    @property
    def folder(self) -> Path:
        return self.writer.folder

    @property
    def pending(self) -> PendingStep | None:
        return self._pending

    def capture(self, *, keep: bool = True) -> PendingStep:
        """Wait for the screen to settle, then take the pre-action observation.

        ``keep`` writes it beside the steps (``keep_pending``) for a later resume check.
        """
        self._pending = None
        self.state = SessionState.CAPTURING
        started = time.perf_counter()
        settled = self.device.wait_until_settled(self.settle_timeout)
        from devices.errors import HierarchyDumpError

        try:
            observed = self.device.observe()  # the device layer already retries the dump
        except HierarchyDumpError as exc:
            raise RecordingError(
                f"The phone did not return its screen layout: {exc} Then choose Retry capture."
            ) from exc
        self._pending = PendingStep(
            step_index=len(self.writer.demo.steps),
            screen=observed,
            settled=settled,
            capture_ms=(time.perf_counter() - started) * 1000,
            phash=None,  # see hash_pending(): the user need not wait for it
            hierarchy_problem=self._hierarchy_problem(observed),
        )
        self.state = SessionState.READY
        if keep:
            self.keep_pending()
        return self._pending

    def keep_pending(self) -> None:
        """Write the pending screen beside the steps; a failure only costs the resume check."""
        pending = self._pending
        if pending is None:
            return
        screen, stem = pending.screen, self.folder / PENDING_STEM
        try:
            atomic_write_bytes(stem.with_suffix(".png"), screen.png())
            xml = screen.hierarchy_xml()
            if xml:
                atomic_write_bytes(stem.with_suffix(".xml"), xml.encode("utf-8"))
            else:
                stem.with_suffix(".xml").unlink(missing_ok=True)
            atomic_write_json(
                stem.with_suffix(".json"),
                {
                    "schema_version": PENDING_SCHEMA_VERSION,
                    "after_step": pending.step_index,
                    "activity": screen.activity,
                    "screen": list(screen.size),
                    "time": screen.time,
                    # a jump survives a stop: the resumed demo's next step is still one
                    **({"jumped": True} if self.writer.jump_pending else {}),
                },
            )
        except (OSError, GraphBuilderError) as exc:
            log.warning("cannot keep the pending screen of %s: %s", self.folder, exc)

    def check_resume(self, pending: PendingStep) -> ResumeCheck:
        """Compare the live screen with the last one captured before the demo stopped."""
        from graph_builder.settings import SimilaritySettings
        from graph_builder.similarity import compare

        steps = self.demo.steps
        where = f"after step {len(steps)}" if steps else "before its first step"
        if self.dropped_step is not None:
            where += (
                f"; its step {self.dropped_step.index + 1} "
                f"({self.dropped_step.action.describe()}) was saved but the studio stopped "
                "before performing it, so it was dropped"
            )
        stem = self.folder / PENDING_STEM
        try:
            meta = read_json(stem.with_suffix(".json"))
            fresh = isinstance(meta, dict) and meta.get("after_step") == len(steps)
            expected_png = stem.with_suffix(".png").read_bytes() if fresh else None
        except (GraphBuilderError, OSError):
            expected_png = None
        if expected_png is None or not isinstance(meta, dict):
            return ResumeCheck(
                None,
                f"The screen the demonstration stopped on ({where}) was not kept, so the "
                "studio cannot check that the phone still shows it. Look at the mirror "
                "before the next input.",
            )
        activity = meta.get("activity")
        xml_path = stem.with_suffix(".xml")
        expected = Screen(
            pending.screen.size,
            png=expected_png,
            hierarchy_path=xml_path if xml_path.is_file() else None,
            activity=activity if isinstance(activity, str) else None,
        )
        live = (
            pending.screen
            if pending.hierarchy_problem is None
            else pending.screen.without_hierarchy()
        )
        try:
            verdict = compare(expected, live, settings=SimilaritySettings())
        except GraphBuilderError as exc:
            return ResumeCheck(None, f"The screens could not be compared: {exc}", expected_png)
        if verdict.same:
            return ResumeCheck(
                True,
                f"The phone shows the screen the demonstration stopped on ({where}).",
                expected_png,
            )
        return ResumeCheck(
            False,
            f"The phone does not show the screen the demonstration stopped on ({where}): "
            f"{verdict.describe()}.",
            expected_png,
        )

    def mark_jump(self) -> None:
        """The user continues a resumed demo from another screen than where it stopped:
        the next step is saved as a jump, so no transition is built into it."""
        self.writer.mark_jump()

    def hash_pending(self) -> None:
        """Compute the pending observation's perceptual hash (about 0.1 s).

        The worker calls this right after announcing that it is ready, so the hash is
        computed while the user decides; an action that arrives meanwhile waits for it.
        """
        pending = self._pending
        if pending is not None and pending.phash is None:
            self._pending = replace(pending, phash=_phash(pending.screen.png(), pending.hierarchy))

    @staticmethod
    def _hierarchy_problem(screen: Screen) -> str | None:
        if not screen.hierarchy_xml():
            return "the phone returned an empty hierarchy"
        try:
            screen.hierarchy()
        except GraphBuilderError as exc:
            return str(exc)
        return None

    def with_element(self, action: Action) -> Action:
        """The action with its target element from the pending hierarchy (taps only)."""
        pending = self._pending
        if (
            pending is None
            or pending.hierarchy is None
            or action.element is not None
            or not action.type.is_pointed
            or action.point is None
        ):
            return action
        device_action = action.to_device(pending.screen.size)
        assert device_action.x is not None and device_action.y is not None
        element = pending.hierarchy.element_at(device_action.x, device_action.y)
        return replace(device_action, element=element.ref() if element else None)

    def act(self, action: Action) -> Step:
        """Save the pending observation with ``action``, then perform the action."""
        pending = self._require_ready(action)
        if action.type is ActionType.DONE:
            raise RecordingError("use complete() to end the demonstration")
        if action.screen is not None:
            action = action.to_device(pending.screen.size)
        action = self.with_element(action)
        self.state = SessionState.PERFORMING
        step = self._save(pending, action, performed=False)
        try:
            self.device.perform(action)
        except Exception:
            self._unsave(step)
            raise
        self._pending = None
        try:
            step = self.writer.mark_performed()
        except OSError as exc:
            # The action happened; the next step's write marks this one (add_step).
            log.warning("cannot mark step %d of %s performed: %s", step.index, self.folder, exc)
        return step

    def complete(self) -> Demonstration:
        """End the demonstration on the pending observation with a 'done' step."""
        pending = self._require_ready(Action.done())
        self.state = SessionState.PERFORMING
        step = self._save(pending, Action.done())
        try:
            demo = self.writer.finish()
        except OSError as exc:
            self._unsave(step)
            raise RecordingError(
                f"Could not finish the demonstration. {explain_os_error(exc)}"
            ) from exc
        self._pending = None
        self.state = SessionState.FINISHED
        self._drop_kept_pending()  # a finished demo is never resumed
        return demo

    def _drop_kept_pending(self) -> None:
        for suffix in (".png", ".xml", ".json"):
            try:
                (self.folder / PENDING_STEM).with_suffix(suffix).unlink(missing_ok=True)
            except OSError as exc:
                log.warning("cannot remove the kept pending screen of %s: %s", self.folder, exc)

    def interrupt(self) -> None:
        """Mark the session as stopped by a fault; the demo stays incomplete on disk."""
        self._pending = None
        self.state = SessionState.INTERRUPTED

    def _require_ready(self, action: Action) -> PendingStep:
        if self.state is not SessionState.READY or self._pending is None:
            raise RecordingError(
                f"{action.describe()} was not recorded: the screen is not captured yet "
                f"(the recorder is {self.state.value})"
            )
        return self._pending

    def _save(self, pending: PendingStep, action: Action, *, performed: bool = True) -> Step:
        if pending.phash is None:
            self.hash_pending()
            pending = self._pending or pending
        try:
            screen = pending.screen
            return self.writer.add_step(
                screen.png(),
                screen.hierarchy_xml(),
                action=action,
                activity=screen.activity,
                screen=screen.size,
                time=screen.time,
                phash=pending.phash,
                performed=performed,
            )
        except OSError as exc:
            self.state = SessionState.READY  # nothing was performed; the same screen waits
            raise RecordingError(
                f"{action.describe()} was not performed, because the step could not be "
                f"saved. {explain_os_error(exc)}"
            ) from exc

    def _unsave(self, step: Step) -> None:
        try:
            if self.writer.demo.steps and self.writer.demo.steps[-1].index == step.index:
                self.writer.drop_last_step()
        except OSError:
            log.exception("could not remove step %d after a failed action", step.index)
