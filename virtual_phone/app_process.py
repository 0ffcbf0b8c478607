"""`app_process`: the Java launcher that clients use to start their on-device servers.

A client pushes a server jar and runs `CLASSPATH=JAR app_process DIR CLASS ARGS...` over a
shell stream it keeps open. The virtual phone has no Java: each server class it knows is
impersonated by a module (`SERVERS`); any other class is not found, as when the jar lacks it.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from typing import TYPE_CHECKING

from virtual_phone import scrcpy_server, u2_server
from virtual_phone.filesystem import FileSystemError
from virtual_phone.shell import Invocation

if TYPE_CHECKING:
    from virtual_phone.filesystem import MemoryFileSystem

ServerMain = Callable[[Invocation, list[str], scrcpy_server.ScrcpyHost], int]

# Each impersonated server: its main class, and the function that runs it with its arguments.
SERVERS: dict[str, ServerMain] = {
    scrcpy_server.SERVER_CLASS: scrcpy_server.main,
    u2_server.SERVER_CLASS: u2_server.main,
}
USAGE = "Usage: app_process [java-options] cmd-dir start-class-name [options]\n"


def _class_not_found(class_name: str, classpath: str) -> str:
    return (
        f'java.lang.ClassNotFoundException: Didn\'t find class "{class_name}" on path: '
        f'DexPathList[[zip file "{classpath}"],nativeLibraryDirectories=[/system/lib64]]\n'
    )


def _jar_present(fs: MemoryFileSystem, classpath: str) -> bool:
    try:
        data = fs.read_bytes(classpath)
    except FileSystemError:
        return False
    return zipfile.is_zipfile(io.BytesIO(data))


def app_process(inv: Invocation, *, host: scrcpy_server.ScrcpyHost) -> int:
    """`app_process [java-options] cmd-dir start-class-name [options]`"""
    args = inv.args[1:]
    while args and args[0].startswith("-"):  # options for the virtual machine
        args = args[1:]
    if len(args) < 2:
        inv.error(USAGE)
        return 1
    class_name, server_args = args[1], args[2:]
    classpath = inv.env.get("CLASSPATH", "")
    main = SERVERS.get(class_name)
    if main is None or not _jar_present(host.fs, inv.path(classpath or "/")):
        inv.error(_class_not_found(class_name, classpath))
        return 1
    return main(inv, server_args, host)
