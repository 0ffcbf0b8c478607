"""The scrcpy-server 3.3.4 impersonation, driven by mysc-core's unmodified client and by hand."""

from __future__ import annotations

import re
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

import adbutils
import av
import numpy as np
import pytest
from adbutils import Network
from mysc_core.connection import Connection
from mysc_core.control import ControlAdapter, ControlKwargs
from mysc_core.utils.keys import EnumAction
from mysc_core.video import VideoAdapter, VideoKwargs
from PIL import Image

from virtual_phone import AdbServer, VirtualPhone, fast_phone, running_server

SIZE = (540, 1200)
JAR = "/data/local/tmp/scrcpy-server.jar"


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def mean_difference(a: Image.Image, b: Image.Image) -> float:
    return float(np.abs(np.asarray(a, dtype=int) - np.asarray(b.resize(a.size), dtype=int)).mean())


def labelled_center(xml: str, label: str) -> tuple[int, int]:
    """Center of the clickable node carrying `label` as text or content description."""
    for node in re.finditer(r"<node [^>]*>", xml):
        attributes = node.group()
        if f'"{label}"' in attributes and 'clickable="true"' in attributes:
            bounds = re.search(r'bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', attributes)
            assert bounds is not None
            left, top, right, bottom = map(int, bounds.groups())
            return (left + right) // 2, (top + bottom) // 2
    raise AssertionError(f"no clickable {label!r} on the screen")


@pytest.fixture
def small_server() -> Iterator[AdbServer]:
    with running_server(phones=[fast_phone("virtual-1", size=SIZE)]) as server:
        yield server


def _device(server: AdbServer) -> adbutils.AdbDevice:
    return adbutils.AdbClient(host="127.0.0.1", port=server.port).device("virtual-1")


def test_mysc_core_mirrors_the_screen_and_its_touches_change_it(small_server: AdbServer) -> None:
    phone = small_server.phones[0]
    device = _device(small_server)
    frames: list[av.VideoFrame] = []
    video = VideoAdapter(
        VideoKwargs(max_size=800, max_fps=30), frame_update_callback=lambda n, f: frames.append(f)
    ).connect(device)
    control = ControlAdapter(ControlKwargs()).connect(device)
    try:
        assert wait_for(lambda: bool(frames))
        assert (frames[-1].width, frames[-1].height) == (360, 800)  # 540x1200 within 800
        assert mean_difference(video.get_image(), phone.render()) < 4

        x, y = labelled_center(phone.hierarchy_xml(), "Settings")
        reference = fast_phone("reference", size=SIZE)
        reference.tap(x, y)
        before = phone.ground_truth()
        control.f_touch(EnumAction.DOWN, x, y, *SIZE, 0)
        control.f_touch(EnumAction.UP, x, y, *SIZE, 0)
        assert wait_for(lambda: phone.ground_truth() != before)
        assert phone.ground_truth() == reference.ground_truth()
        # The mirror shows the new screen without waiting for another change.
        assert wait_for(lambda: mean_difference(video.get_image(), phone.render()) < 4)
    finally:
        video.disconnect()
        control.disconnect()


def _push_jar(device: adbutils.AdbDevice) -> None:
    device.sync.push(Connection.PATH_LOCAL_SCRCPY_SERVER_JAR, JAR)


def _server_command(version: str, **options: str) -> str:
    arguments = " ".join(f"{key}={value}" for key, value in options.items())
    return f"CLASSPATH={JAR} app_process / com.genymobile.scrcpy.Server {version} {arguments}"


def test_wrong_version_or_missing_jar_fails_like_the_real_server(small_server: AdbServer) -> None:
    device = _device(small_server)
    missing = device.shell2(_server_command("3.3.4", scid="00000001"), v2=True)
    assert missing.returncode == 1
    assert "ClassNotFoundException" in missing.stderr

    _push_jar(device)
    wrong = device.shell2(_server_command("3.3.3", scid="00000001"), v2=True)
    assert wrong.returncode == 1
    assert "The server version (3.3.4) does not match the client (3.3.3)" in wrong.stderr


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        assert chunk, "the server closed the socket early"
        data += chunk
    return data


def _connect(device: adbutils.AdbDevice, name: str) -> socket.socket:
    deadline = time.monotonic() + 5
    while True:
        try:
            sock = device.create_connection(Network.LOCAL_ABSTRACT, name)
            sock.settimeout(5)
            return sock
        except adbutils.AdbError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def test_frame_meta_stream_and_server_lifetime(small_server: AdbServer) -> None:
    device = _device(small_server)
    _push_jar(device)
    command = _server_command(
        "3.3.4", scid="0badcafe", tunnel_forward="true", audio="false", control="false",
        video_codec="h264", max_size="600", max_fps="30", send_frame_meta="true",
    )  # fmt: skip
    stream = device.shell(command, stream=True)
    video = _connect(device, "scrcpy_0badcafe")
    assert _recv_exact(video, 1) == b"\x00"
    assert _recv_exact(video, 64).rstrip(b"\x00") == b"ElderPhone Virtual"
    assert struct.unpack(">4sII", _recv_exact(video, 12)) == (b"h264", 272, 600)

    decoder = av.CodecContext.create("h264", "r")
    pts, size = struct.unpack(">QI", _recv_exact(video, 12))
    assert pts >> 63 == 1  # the codec config packet comes first
    config = _recv_exact(video, size)
    pts, size = struct.unpack(">QI", _recv_exact(video, 12))
    assert (pts >> 62) & 1 == 1  # then a key frame
    (frame,) = decoder.decode(av.Packet(config + _recv_exact(video, size)))
    assert (frame.width, frame.height) == (272, 600)

    stream.close()  # the server lives as long as the shell stream that started it
    video.settimeout(2)
    deadline = time.monotonic() + 2
    while video.recv(65536):
        assert time.monotonic() < deadline
    video.close()


class _SpyPhone(VirtualPhone):
    """The real phone, also remembering the input scrcpy control messages delivered."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.calls: list[tuple[object, ...]] = []
        self._typing = False  # input_text commits through commit_text: record it once

    def key(self, keycode: int | str) -> None:
        self.calls.append(("key", keycode))
        super().key(keycode)

    def input_text(self, text: str) -> None:
        self.calls.append(("text", text))
        self._typing = True
        try:
            super().input_text(text)
        finally:
            self._typing = False

    def commit_text(self, text: str) -> None:
        if not self._typing:
            self.calls.append(("commit", text))
        super().commit_text(text)

    def touch(self, action: str, x: int, y: int, pointer_id: int = 0) -> None:
        self.calls.append(("touch", action, x, y))
        super().touch(action, x, y, pointer_id)


def test_control_messages_reach_the_phone() -> None:
    phone = _SpyPhone("virtual-1", size=SIZE, settle_ms=(0, 0))
    with running_server(phones=[phone]) as server:
        device = _device(server)
        _push_jar(device)
        command = _server_command(
            "3.3.4", scid="00c0ffee", tunnel_forward="true", video="false", audio="false",
        )  # fmt: skip
        stream = device.shell(command, stream=True)
        control = _connect(device, "scrcpy_00c0ffee")
        assert _recv_exact(control, 65)[0] == 0  # dummy byte, then the device name
        text = "héllo".encode()
        clipboard = "粘贴".encode()
        control.sendall(
            struct.pack(">BBiii", 0, 0, 66, 0, 0)  # ENTER down
            + struct.pack(">BBiii", 0, 1, 66, 0, 0)  # ENTER up: applied once
            + struct.pack(">BI", 1, len(text)) + text  # text: only ASCII is typable
            + struct.pack(">BBQiiHHHii", 2, 0, 7, 1080, 1200, 1080, 2400, 0xFFFF, 1, 1)
            + struct.pack(">BBQiiHHHii", 2, 1, 7, 1080, 1200, 1080, 2400, 0, 1, 1)
            + struct.pack(">BB", 4, 0) + struct.pack(">BB", 4, 1)  # back (or screen on)
            + struct.pack(">BQBI", 9, 5, 1, len(clipboard)) + clipboard  # set clipboard, paste
        )  # fmt: skip
        assert _recv_exact(control, 9) == struct.pack(">BQ", 1, 5)  # clipboard acknowledged
        assert wait_for(lambda: len(phone.calls) >= 6)
        assert phone.calls == [
            ("key", 66),
            ("text", "hllo"),
            ("touch", "down", 540, 600),  # scaled from the 1080x2400 the client assumed
            ("touch", "up", 540, 600),
            ("key", 4),
            ("commit", "粘贴"),
        ]
        stream.close()
        control.close()


def test_a_control_message_announcing_4_gb_of_text_ends_the_session(
    small_server: AdbServer,
) -> None:
    device = _device(small_server)
    _push_jar(device)
    command = _server_command(
        "3.3.4", scid="0badf00d", tunnel_forward="true", video="false", audio="false"
    )
    stream = device.shell(command, stream=True)
    control = _connect(device, "scrcpy_0badf00d")
    assert _recv_exact(control, 65)[0] == 0
    control.sendall(struct.pack(">BI", 1, 0xFFFFFFFF) + b"x" * 1024)  # inject text
    try:
        closed = control.recv(1) == b""  # before, it waited for 4 GB, buffering them
    except ConnectionResetError:
        closed = True
    assert closed
    stream.close()
    control.close()
    assert device.shell("echo still here") == "still here"


def test_reverse_tunnel(small_server: AdbServer) -> None:
    device = _device(small_server)
    _push_jar(device)
    no_tunnel = device.shell2(
        _server_command("3.3.4", scid="00000abd", tunnel_forward="false", audio="false"), v2=True
    )
    assert no_tunnel.returncode == 1
    assert "ECONNREFUSED" in no_tunnel.stderr
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(5)
        device.reverse("localabstract:scrcpy_00000abc", f"tcp:{listener.getsockname()[1]}")
        command = _server_command(
            "3.3.4", scid="00000abc", tunnel_forward="false", audio="false", control="false",
        )  # fmt: skip
        stream = device.shell(command, stream=True)
        video, _ = listener.accept()
        with video:
            video.settimeout(5)
            # No dummy byte in reverse mode: the device name comes first.
            assert _recv_exact(video, 64).rstrip(b"\x00") == b"ElderPhone Virtual"
            assert _recv_exact(video, 4) == b"h264"
        stream.close()


def test_concurrent_sessions_on_two_phones() -> None:
    phones = [fast_phone("virtual-1", size=SIZE), fast_phone("virtual-2", size=SIZE)]
    with running_server(phones=phones) as server:
        client = adbutils.AdbClient(host="127.0.0.1", port=server.port)
        counts = {serial: 0 for serial in ("virtual-1", "virtual-2")}
        lock = threading.Lock()

        def counter(serial: str) -> Callable[[int, av.VideoFrame], None]:
            def count(n: int, frame: av.VideoFrame) -> None:
                with lock:
                    counts[serial] += 1

            return count

        adapters = [
            VideoAdapter(VideoKwargs(max_size=600, max_fps=20), frame_update_callback=counter(s))
            .connect(client.device(s))
            for s in counts
        ]  # fmt: skip
        try:
            assert wait_for(lambda: min(counts.values()) >= 2)
        finally:
            for adapter in adapters:
                adapter.disconnect()
