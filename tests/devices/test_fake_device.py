"""The in-memory FakeDevice keeps the Device contract that the recorder and the online
protocol rely on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from devices.device import Device
from devices.errors import DeviceDisconnectedError, DeviceError, HierarchyDumpError
from devices.fake import FakeDevice
from graph_builder.model import Action, ResetRecipe
from graph_builder.screen import Screen

HOME = Screen((100, 200), png=b"home", activity="launcher/.Home")
APP = Screen((100, 200), png=b"app", activity="app/.Main")


def phone() -> FakeDevice:
    return FakeDevice({"home": HOME, "app": APP}, "home", lambda at, action: "app")


def test_actions_follow_the_script_and_are_recorded() -> None:
    fake = phone()
    device: Device = fake  # it keeps the protocol the recorder and the online runner use
    assert device.observe() is HOME
    device.perform(Action.tap(10, 10, screen=(100, 200)))
    assert device.observe() is APP
    device.perform(Action.done())  # done changes nothing
    assert device.observe() is APP
    assert [a.type.value for a in fake.performed] == ["tap", "done"]


def test_reset_returns_to_the_start_screen() -> None:
    device = phone()
    device.perform(Action.back())
    device.reset_app(ResetRecipe("app"))
    assert device.observe() is HOME and device.resets == [ResetRecipe("app")]
    assert device.info().width == 100 and device.wait_until_settled()


def test_a_fault_is_raised_once_where_it_was_set() -> None:
    device = phone()
    device.fail_next("perform")
    with pytest.raises(DeviceDisconnectedError, match="unplugged"):
        device.perform(Action.back())
    assert device.observe() is HOME and device.performed == []
    device.fail_next("observe", HierarchyDumpError("still animating"))
    with pytest.raises(HierarchyDumpError):
        device.observe()
    assert device.observe() is HOME


def test_a_closed_device_and_a_bad_script_raise_device_errors() -> None:
    lost = FakeDevice({"home": HOME}, "home", lambda at, action: "nowhere")
    with pytest.raises(DeviceError, match="unknown 'nowhere'"):
        lost.perform(Action.back())
    lost.close()
    with pytest.raises(DeviceDisconnectedError):
        lost.observe()
    with pytest.raises(ValueError, match="start screen"):
        FakeDevice({"home": HOME}, "app", lambda at, action: "home")


def test_the_architecture_doc_lists_the_device_protocol_as_it_is() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    listed = re.findall(r"^    def (\w+)\(", doc, re.MULTILINE)
    members = [name for name in vars(Device) if not name.startswith("_")]
    assert sorted(listed + ["serial"]) == sorted(members)
