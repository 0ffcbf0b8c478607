"""One owner of each device at a time, across processes: the lock file names its holder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from devices.android import AndroidDevice, adb_client
from devices.device_lock import (
    DeviceBusyError,
    DeviceLock,
    DeviceLocks,
    device_holder,
    lock_address,
    lock_name,
    runtime_dir,
)
from virtual_phone import fast_phone, running_server

HOLD = """
import sys
from pathlib import Path
from devices.device_lock import DeviceLock
lock = DeviceLock("virtual-1", owner="elderbench eval", command="online run -> runs/x",
                  folder=Path(sys.argv[1])).acquire()
print("held", flush=True)
sys.stdin.read()  # hold until the test closes our stdin
"""


def test_a_device_held_by_another_process_is_refused_naming_the_holder(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(DeviceBusyError) as refused:
            DeviceLock(
                "virtual-1", owner="the Record tab", command="demo", folder=tmp_path
            ).acquire()
        who = refused.value.holder
        assert (who.pid, who.owner, who.command) == (
            holder.pid,
            "elderbench eval",
            "online run -> runs/x",
        )
        assert not who.in_this_process
        assert f"pid {holder.pid}" in str(refused.value)
        # Another device is free meanwhile.
        DeviceLock(
            "virtual-2", owner="the Record tab", command="demo", folder=tmp_path
        ).acquire().release()
    finally:
        holder.stdin.close()  # type: ignore[union-attr]
        holder.wait(timeout=30)
    # The holder is gone: the kernel freed its lock, the stale file is harmless.
    assert device_holder("virtual-1", folder=tmp_path) is None
    with DeviceLock("virtual-1", owner="the Record tab", command="demo", folder=tmp_path):
        assert device_holder("virtual-1", folder=tmp_path).owner == "the Record tab"  # type: ignore[union-attr]


def test_several_devices_are_taken_all_together_or_not_at_all(tmp_path: Path) -> None:
    with DeviceLock("b", owner="the Record tab", command="demo", folder=tmp_path):
        with pytest.raises(DeviceBusyError, match="the Record tab"):
            DeviceLocks.take(["a", "b"], owner="elderbench eval", command="run", folder=tmp_path)
        assert device_holder("a", folder=tmp_path) is None  # a was let go again
    locks = DeviceLocks.take(
        ["a", "b", "a"], owner="elderbench eval", command="run", folder=tmp_path
    )
    assert device_holder("b", folder=tmp_path).owner == "elderbench eval"  # type: ignore[union-attr]
    locks.release()
    assert device_holder("a", folder=tmp_path) is None


def test_lock_files_are_per_serial_and_per_adb_server(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ANDROID_ADB_SERVER_PORT")
    assert lock_name("virtual-1") == "device-virtual-1@127.0.0.1_5037.lock"
    assert lock_name("192.168.1.20:5555") == "device-192.168.1.20_5555@127.0.0.1_5037.lock"
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "5038")
    assert lock_name("virtual-1") == "device-virtual-1@127.0.0.1_5038.lock"
    assert lock_name("emulator-5554@farm-2:5037") != lock_name("emulator-5554@farm-3:5037")
    monkeypatch.setenv("ELDERBENCH_RUNTIME_DIR", str(tmp_path / "rt"))
    assert runtime_dir() == tmp_path / "rt"


def test_one_serial_on_two_adb_servers_is_two_devices_and_one_server_one(
    monkeypatch, tmp_path: Path
) -> None:
    """Two virtual phone servers on two ports, each with its "virtual-1": two phones, each
    with its own lock; the same phone written as a bare serial (the local server is the
    one ANDROID_ADB_SERVER_PORT names), as localhost or as 127.0.0.1 is one."""
    with (
        running_server(phones=[fast_phone("virtual-1")]) as a,
        running_server(phones=[fast_phone("virtual-1")]) as b,
    ):
        on_a = AndroidDevice("virtual-1", client=adb_client(port=a.port))
        on_b = AndroidDevice("virtual-1", client=adb_client(port=b.port))
        assert lock_address(on_a) == f"virtual-1@127.0.0.1:{a.port}"
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(a.port))
        with DeviceLock("virtual-1", owner="the Record tab", command="demo", folder=tmp_path):
            for same in (lock_address(on_a), f"virtual-1@localhost:{a.port}"):
                with pytest.raises(DeviceBusyError, match="in use by the Record tab"):
                    DeviceLock(
                        same, owner="elderbench eval", command="run", folder=tmp_path
                    ).acquire()
            # the phone of the other server is free, under either way of writing it
            assert device_holder(lock_address(on_b), folder=tmp_path) is None
            locks = DeviceLocks.take(
                [lock_address(on_b)], owner="elderbench eval", command="run", folder=tmp_path
            )
            monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(b.port))
            held = device_holder("virtual-1", folder=tmp_path)
            assert held is not None and held.owner == "elderbench eval"
            locks.release()
            with DeviceLock("virtual-1", owner="another studio", command="demo", folder=tmp_path):
                monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(a.port))
                held = device_holder("virtual-1", folder=tmp_path)
                assert held is not None and held.owner == "the Record tab"
