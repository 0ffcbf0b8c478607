"""Where a graph's screens are on disk: node files in the task folder, steps in the demos.

A node's picture is its representative (first member) as recorded, when the
demonstration is at hand, else the node file the builder wrote. After a split the new
node has no file yet, but its members' steps still show it. No Qt here.
"""

from __future__ import annotations

from pathlib import Path

from graph_builder import io
from graph_builder.errors import GraphBuilderError
from graph_builder.model import (
    Demonstration,
    EdgeSupport,
    MemberRef,
    Node,
    Observation,
)
from graph_builder.screen import Screen


class ScreenSources:
    def __init__(self, task_dir: Path, demos_root: Path | None, task_id: str) -> None:
        self.task_dir = Path(task_dir)
        self.demos_root = Path(demos_root) if demos_root is not None else None
        self.task_id = task_id
        self._demos: dict[str, tuple[Path, Demonstration] | None] = {}
        self._states: dict[MemberRef, Screen | None] = {}

    @property
    def demos_dir(self) -> Path | None:
        """The task's folder of demonstrations, when there is one."""
        if self.demos_root is None:
            return None
        folder = self.demos_root / self.task_id
        return folder if folder.is_dir() else None

    def demo(self, demo_id: str) -> tuple[Path, Demonstration] | None:
        """(folder, demo), or None when it is missing or unreadable (cached either way)."""
        if demo_id not in self._demos:
            found: tuple[Path, Demonstration] | None = None
            if self.demos_dir is not None:
                folder = self.demos_dir / demo_id
                try:
                    found = (folder, io.load_demo(folder))
                except GraphBuilderError:
                    found = None
            self._demos[demo_id] = found
        return self._demos[demo_id]

    def member_observation(self, member: MemberRef) -> tuple[Path, Observation] | None:
        found = self.demo(member.demo_id)
        if found is None or not 0 <= member.step < len(found[1].steps):
            return None
        return found[0], found[1].steps[member.step].observation

    def member_state(self, member: MemberRef) -> Screen | None:
        """The recorded screen (cached, so its hierarchy and features load once)."""
        if member not in self._states:
            found = self.member_observation(member)
            self._states[member] = (
                None if found is None else Screen.from_observation(found[1], found[0], member)
            )
        return self._states[member]

    def target_label(self, support: EdgeSupport) -> str:
        """What a demonstrated tap touched, as a person would name it ("" if unknown).

        A tapped row is named by the first text inside it, not by its class.
        """
        action = support.action
        if not action.type.is_pointed:
            return ""
        state = self.member_state(support.member)
        hierarchy = None
        if state is not None:
            try:
                hierarchy = state.hierarchy()
            except GraphBuilderError:
                hierarchy = None
        if state is not None and hierarchy is not None:
            device = action.rescaled(state.size)
            if device.x is not None and device.y is not None:
                element = hierarchy.element_at(device.x, device.y)
                if element is not None:
                    return hierarchy.spoken_label(element)
        return action.element.label() if action.element is not None else ""

    def member_screenshot(self, member: MemberRef) -> Path | None:
        found = self.member_observation(member)
        if found is None:
            return None
        path = found[0] / found[1].screenshot
        return path if path.is_file() else None

    def node_state(self, node: Node) -> Screen | None:
        """The node's representative screen: its first member, else the node's own files."""
        if node.members:
            state = self.member_state(node.members[0])
            if state is not None:
                return state
        if not (self.task_dir / node.screenshot).is_file():
            return None
        hierarchy = (
            node.hierarchy
            if node.hierarchy and (self.task_dir / node.hierarchy).is_file()
            else None
        )
        obs = Observation(
            screenshot=node.screenshot,
            screen=node.screen,
            hierarchy=hierarchy,
            activity=node.activity,
            phash=node.phash,
        )
        return Screen.from_observation(
            obs, self.task_dir, node.members[0] if node.members else None
        )

    def node_screenshot(self, node: Node) -> Path | None:
        state = self.node_state(node)
        return state.screenshot_path if state is not None else None
