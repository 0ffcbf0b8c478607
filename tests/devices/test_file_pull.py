"""Pulling a file from the phone has a deadline for the whole call, also when the phone
trickles: every read arrives in time, the transfer would take far longer than allowed."""

from __future__ import annotations

import logging
import os
import time

import pytest

from devices.android import AndroidDevice, adb_client
from devices.errors import DeviceCommandError, DeviceTimeoutError
from devices.screen_recording import recording
from tests.devices.trickle_proxy import trickle_proxy
from virtual_phone import AdbServer

REMOTE = "/data/local/tmp/big.bin"
DATA = os.urandom(200 * 1024)


def test_a_trickling_pull_ends_at_its_deadline_and_leaves_nothing(
    virtual_server: AdbServer, tmp_path
):
    virtual_server.device("virtual-1").fs.write_bytes(REMOTE, DATA)
    with trickle_proxy(virtual_server.port) as proxy:
        phone = AndroidDevice("virtual-1", client=adb_client(port=proxy.port), timeout=5.0)
        out = tmp_path / "big.bin"
        assert phone.pull(REMOTE, out, timeout=5.0) == len(DATA)
        assert out.read_bytes() == DATA
        with pytest.raises(DeviceCommandError, match="cannot pull /data/local/tmp/none"):
            phone.pull("/data/local/tmp/none", tmp_path / "none", timeout=5.0)

        # 16 bytes every 0.1 s: each read comes well within the 5 s read timeout, the
        # whole file would take over three hours
        proxy.trickling.set()
        again = tmp_path / "again.bin"
        started = time.monotonic()
        with pytest.raises(DeviceTimeoutError, match=f"sending {REMOTE} within 1 s"):
            phone.pull(REMOTE, again, timeout=1.0)
        assert 0.9 <= time.monotonic() - started < 3.0
    assert not again.exists() and not again.with_name("again.bin.part").exists()


def test_a_screen_video_that_trickles_is_given_up_at_its_pull_deadline(
    virtual_server: AdbServer, tmp_path, caplog
):
    with trickle_proxy(virtual_server.port) as proxy:
        phone = AndroidDevice("virtual-1", client=adb_client(port=proxy.port), timeout=5.0)
        out = tmp_path / "screen.mp4"
        with caplog.at_level(logging.WARNING), recording(phone, out, pull_timeout=1.0) as running:
            assert running is not None
            phone.shell("am start -n com.android.settings/.Settings")
            time.sleep(0.3)
            proxy.trickling.set()
            stopping = time.monotonic()
        took = time.monotonic() - stopping
        proxy.trickling.clear()
        assert not virtual_server.device("virtual-1").fs.exists(running.remote)
    assert "within 1 s" in caplog.text and "no screen recording" in caplog.text
    assert took < 8.0  # the pull's 1 s, and the small stop and clean-up calls
    assert not out.exists() and not out.with_name("screen.mp4.part").exists()
