"""An evaluation run holds its devices from start to end, and refuses a device held elsewhere."""

from __future__ import annotations

from importlib.resources import files

import pytest

from devices.android import AndroidDevice, adb_client
from devices.device_lock import DeviceLock, device_holder
from evaluator.errors import ConfigError
from evaluator.runner import RunConfig, RunStarted, run_suite

SAMPLE = files("task_graphs") / "sample"


def test_a_run_holds_its_phone_and_refuses_one_held_by_a_demonstration(
    tmp_path, virtual_server
) -> None:
    def open_phone(address: str) -> AndroidDevice:
        return AndroidDevice(address, client=adb_client(port=virtual_server.port))

    config = RunConfig(
        suite=SAMPLE,
        out=tmp_path / "run",
        agent="replay",
        tasks=("wifi_off",),
        devices=("virtual-1",),
    )
    demo = DeviceLock("virtual-1", owner="the Record tab", command="demonstration of t")
    with demo, pytest.raises(ConfigError, match="the Record tab"):
        run_suite(config, device_factory=open_phone)
    assert not (tmp_path / "run").exists()  # refused before anything was written

    owners: list[str | None] = []

    def seen(event: object) -> None:
        if isinstance(event, RunStarted):
            holder = device_holder("virtual-1")
            owners.append(holder.owner if holder else None)

    finished = run_suite(config, device_factory=open_phone, progress=seen)
    assert finished.finished == 1
    assert owners == ["elderbench eval"]
    assert device_holder("virtual-1") is None  # let go at the end
