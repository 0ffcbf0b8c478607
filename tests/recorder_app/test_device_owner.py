"""The studio locks a phone on its own adb server, not the one ANDROID_ADB_SERVER_PORT
names: a DeviceConnection with an explicit port locks ``SERIAL@HOST:PORT`` of it."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QWidget

from devices.device_lock import DeviceLock, device_holder
from recorder_app.connection import DeviceConnection
from recorder_app.qt.device_owner import DeviceOwner

STUDIO_PORT = 47_123  # the studio's adb server; the environment names another


@pytest.fixture
def owner(qtbot, monkeypatch) -> DeviceOwner:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "47124")
    parent = QWidget()
    qtbot.addWidget(parent)
    connection = DeviceConnection(port=STUDIO_PORT)
    made = DeviceOwner("the Record tab", parent, connection.lock_address)
    yield made
    made.shutdown()


def test_the_connection_names_its_own_server():
    connection = DeviceConnection(host="localhost", port=STUDIO_PORT)
    assert connection.lock_address("virtual-1") == f"virtual-1@localhost:{STUDIO_PORT}"
    assert connection.lock_address("R58M@farm-2:5037") == "R58M@farm-2:5037"  # kept


def test_the_lock_names_the_studio_s_server_not_the_environment_s(owner):
    assert owner.take("virtual-1", "free drive", lambda: None)
    assert owner.held == f"virtual-1@127.0.0.1:{STUDIO_PORT}"
    holder = device_holder(f"virtual-1@localhost:{STUDIO_PORT}")
    assert holder is not None and holder.owner == "the Record tab"
    assert device_holder("virtual-1") is None  # the phone of that serial on the other server
    owner.release()
    assert device_holder(f"virtual-1@127.0.0.1:{STUDIO_PORT}") is None


def test_a_holder_on_the_studio_s_server_refuses_and_one_elsewhere_does_not(owner):
    elsewhere = DeviceLock("virtual-1", owner="a terminal", command="elderbench eval")
    with elsewhere:  # the same serial on the server ANDROID_ADB_SERVER_PORT names
        assert owner.when_free(["virtual-1"], lambda: None)
        assert owner.take("virtual-1", "free drive", lambda: None)
    owner.release()
    here = DeviceLock(
        f"virtual-1@127.0.0.1:{STUDIO_PORT}", owner="a terminal", command="elderbench eval"
    )
    with here:
        assert not owner.when_free(["virtual-1"], lambda: None)
        assert not owner.take("virtual-1", "free drive", lambda: None)
        assert owner.busy_dialog is not None
        assert "a terminal" in owner.busy_dialog.text.text()
