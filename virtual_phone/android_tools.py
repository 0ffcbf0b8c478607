"""Android's own shell commands on the virtual phone: getprop, wm, dumpsys, input, am, ...

Their output follows what real devices print where ADB clients parse it (adbutils reads
`wm size`, `dumpsys window`, `dumpsys display` and `uiautomator dump`'s message).
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from collections.abc import Callable

from virtual_phone.apk import ApkError, read_manifest
from virtual_phone.errors import PhoneCommandError
from virtual_phone.filesystem import FileSystemError
from virtual_phone.jobs import SIGNALS
from virtual_phone.logs import LogEntry
from virtual_phone.phone import SYSTEM_SERVER, InstalledPackage, app_uid, process_id
from virtual_phone.shell import Command, CommandFailed, Invocation, signal_number

ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
SETTINGS_PACKAGE = "com.android.settings"
LAUNCHER_PACKAGE = "com.android.launcher3"
SCREEN_PROP = "debug.virtualphone.screen"
DEFAULT_DUMP_PATH = "/sdcard/window_dump.xml"
DEFAULT_SWIPE_MS = 300
KEYCODE_ENTER = 66
_RAW_SCREENCAP_FORMAT_RGBA_8888 = 1


def _component(package: str, activity: str) -> str:
    """`package/activity`, shortened to `package/.Rest` like ComponentName's short form."""
    if activity.startswith(package + "."):
        activity = activity[len(package) :]
    return f"{package}/{activity}"


def _token(text: str) -> str:
    """A stable fake object hash, like the hex ids in dumpsys output."""
    return f"{zlib.crc32(text.encode()):08x}"[:7]


def _task_id(package: str) -> int:
    return 10 + zlib.crc32(package.encode()) % 90


# ---------------------------------------------------------------- properties


def getprop(inv: Invocation) -> int:
    phone = inv.device.phone
    if len(inv.args) == 1:
        props = {**phone.props, SCREEN_PROP: phone.ground_truth()}
        inv.write("".join(f"[{key}]: [{value}]\n" for key, value in sorted(props.items())))
        return 0
    key = inv.args[1]
    default = inv.args[2] if len(inv.args) > 2 else ""
    value = phone.ground_truth() if key == SCREEN_PROP else phone.props.get(key, default)
    inv.write(value + "\n")
    return 0


def setprop(inv: Invocation) -> int:
    if len(inv.args) != 3:
        raise CommandFailed("usage: setprop NAME VALUE")
    inv.device.phone.props[inv.args[1]] = inv.args[2]
    return 0


def settings(inv: Invocation) -> int:
    args = inv.args[1:]
    if args[:1] == ["--user"]:
        args = args[2:]
    if len(args) < 2:
        raise CommandFailed("usage: settings get|put|delete|list NAMESPACE [KEY [VALUE]]")
    verb, namespace, rest = args[0], args[1], args[2:]
    table = inv.device.phone.settings.get(namespace)
    if table is None:
        raise CommandFailed(f"Invalid namespace '{namespace}'", 255)
    if verb == "list":
        inv.write("".join(f"{key}={value}\n" for key, value in sorted(table.items())))
    elif verb == "get" and len(rest) == 1:
        inv.write(table.get(rest[0], "null") + "\n")
    elif verb == "put" and len(rest) >= 2:
        table[rest[0]] = rest[1]
    elif verb == "delete" and len(rest) == 1:
        inv.write(f"Deleted {int(table.pop(rest[0], None) is not None)} rows\n")
    else:
        raise CommandFailed(f"Invalid command: settings {' '.join(args)}", 255)
    return 0


# ---------------------------------------------------------------- window manager and dumpsys


def wm(inv: Invocation) -> int:
    phone = inv.device.phone
    sub = inv.args[1:]
    if sub == ["size"]:
        inv.write(f"Physical size: {phone.width}x{phone.height}\n")
    elif sub == ["density"]:
        inv.write(f"Physical density: {phone.density}\n")
    elif sub[:1] in (["size"], ["density"]):
        raise CommandFailed("Error: the virtual phone's display size and density are fixed")
    else:
        raise CommandFailed("usage: wm size|density", 255)
    return 0


def _dump_window(inv: Invocation) -> str:
    phone = inv.device.phone
    package, activity = phone.focus()
    component = _component(package, activity)
    token = _token(component)
    return (
        "WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
        f"  Window #0 Window{{{token} u0 {component}}}:\n"
        f"    mDisplayId=0 rootTaskId={_task_id(package)} mViewVisibility=0x0\n"
        f"    mFrame=[0,0][{phone.width},{phone.height}]\n"
        "\n"
        f"  mCurrentFocus=Window{{{token} u0 {component}}}\n"
        f"  mFocusedApp=ActivityRecord{{{_token(token)} u0 {component} t{_task_id(package)}}}\n"
        "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n"
        "  Display: mDisplayId=0 rootTasks=1\n"
        f"    init={phone.width}x{phone.height} {phone.density}dpi "
        f"base={phone.width}x{phone.height} cur={phone.width}x{phone.height} "
        f"app={phone.width}x{phone.height}\n"
        "    mRotation=0\n"
    )


def _dump_activity(inv: Invocation) -> str:
    package, activity = inv.device.phone.focus()
    component = _component(package, activity)
    record = f"ActivityRecord{{{_token(component)} u0 {component} t{_task_id(package)}}}"
    return (
        "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
        "Display #0 (activities from top to bottom):\n"
        f"  * Task{{{_token(package)} #{_task_id(package)} type=standard A=10123:{package}}}\n"
        f"    topResumedActivity={record}\n"
        f"  mResumedActivity: {record}\n"
        f"TASK 10123:{package} id={_task_id(package)} userId=0\n"
        f"  ACTIVITY {component} {_token(component)} pid={process_id(package)}\n"
    )


def _dump_display(inv: Invocation) -> str:
    phone = inv.device.phone
    w, h = phone.width, phone.height
    return (
        "DISPLAY MANAGER (dumpsys display)\n"
        "  mDefaultViewport=DisplayViewport{type=INTERNAL, valid=true, isActive=true, "
        f"displayId=0, uniqueId='local:0', orientation=0, deviceWidth={w}, deviceHeight={h}}}\n"
        "Display Devices: size=1\n"
        f'  DisplayDeviceInfo{{"Built-in Screen": uniqueId="local:0", {w} x {h}, modeId 1, '
        f"density {phone.density}, rotation 0, type INTERNAL, state ON}}\n"
    )


def _dump_power(inv: Invocation) -> str:
    on = inv.device.phone.screen_on
    return (
        "POWER MANAGER (dumpsys power)\n"
        f"  mWakefulness={'Awake' if on else 'Asleep'}\n"
        f"  mHoldingDisplaySuspendBlocker={str(on).lower()}\n"
        f"Display Power: state={'ON' if on else 'OFF'}\n"
    )


def _dump_deviceidle(inv: Invocation) -> str:
    return f"  mScreenOn={str(inv.device.phone.screen_on).lower()}\n  mScreenLocked=false\n"


def _dump_battery(inv: Invocation) -> str:
    return (
        "Current Battery Service state:\n"
        "  AC powered: false\n  USB powered: true\n  Wireless powered: false\n"
        "  Max charging current: 500000\n  status: 2\n  health: 2\n  present: true\n"
        "  level: 100\n  scale: 100\n  voltage: 4200\n  temperature: 250\n"
        "  technology: Li-ion\n"
    )


def _dump_input_method(inv: Invocation) -> str:
    return f"  mCurMethodId={inv.device.phone.ime}\n  mInputShown=false\n"


def _dump_surface_flinger(inv: Invocation) -> str:
    return 'Display 4619827259835644672 (HWC display 0): port=0 pnpId=GGL displayName="Virtual"\n'


def _dump_package(inv: Invocation) -> str:
    phone = inv.device.phone
    wanted = [a for a in inv.args[2:] if not a.startswith("-")]
    packages = [p for p in phone.packages() if not wanted or p in wanted]
    if wanted and not packages:
        return f"Unable to find package: {wanted[0]}\n"
    stamp = phone.now().strftime("%Y-%m-%d %H:%M:%S")
    out = ["Packages:\n"]
    for package in packages:
        installed = phone.installed(package)
        update = phone.app_versions.get(package, 1)  # an app update the phone plays
        version_name = installed.version_name if installed else phone.android_version
        version_code = installed.version_code if installed else phone.sdk
        if not installed and update > 1:
            version_name, version_code = f"{version_name}.{update}", version_code * 100 + update
        first = installed.installed.strftime("%Y-%m-%d %H:%M:%S") if installed else stamp
        flags = "HAS_CODE ALLOW_CLEAR_USER_DATA" + ("" if installed else " SYSTEM")
        token = _token(package)
        out.append(
            f"  Package [{package}] ({token}):\n"
            f"    userId={app_uid(package)}\n"
            f"    pkg=Package{{{token} {package}}}\n"
            f"    codePath=/data/app/{package}\n"
            f"    versionCode={version_code} minSdk=24 targetSdk={phone.sdk}\n"
            f"    versionName={version_name}\n"
            f"    pkgFlags=[ {flags} ]\n"
            f"    timeStamp={first}\n"
            f"    firstInstallTime={first}\n"
            f"    lastUpdateTime={first}\n"
            f"    signatures=PackageSignatures{{{token} version:3, "
            f"signatures:[{_token('sig:' + package)}], past signatures:[]}}\n"
            "    User 0: ceDataInode=0 installed=true hidden=false suspended=false "
            "stopped=false notLaunched=false enabled=0\n"
        )
    return "".join(out)


_DUMPSYS: dict[str, Callable[[Invocation], str]] = {
    "package": _dump_package,
    "window": _dump_window,
    "activity": _dump_activity,
    "display": _dump_display,
    "power": _dump_power,
    "deviceidle": _dump_deviceidle,
    "battery": _dump_battery,
    "input_method": _dump_input_method,
    "SurfaceFlinger": _dump_surface_flinger,
}


def dumpsys(inv: Invocation) -> int:
    if len(inv.args) == 1:
        inv.write("Currently running services:\n" + "".join(f"  {n}\n" for n in sorted(_DUMPSYS)))
        return 0
    service = _DUMPSYS.get(inv.args[1])
    if service is None:
        inv.write(f"Can't find service: {inv.args[1]}\n")
        return 0
    inv.write(service(inv))
    return 0


# ---------------------------------------------------------------- screen capture and hierarchy


def screencap(inv: Invocation) -> int:
    args = inv.args[1:]
    png = "-p" in args
    operands = [
        arg
        for index, arg in enumerate(args)
        if not arg.startswith("-") and (index == 0 or args[index - 1] != "-d")
    ]
    phone = inv.device.phone
    path = operands[0] if operands else None
    if path is not None and path.endswith(".png"):
        png = True
    if png:
        data = phone.screencap_png()
    else:
        image = phone.render().convert("RGBA")
        header = struct.pack("<4I", image.width, image.height, _RAW_SCREENCAP_FORMAT_RGBA_8888, 0)
        data = header + image.tobytes()
    if path is None:
        inv.write(data)
    else:
        inv.device.fs.write_bytes(inv.path(path), data)
    return 0


def uiautomator(inv: Invocation) -> int:
    args = inv.args[1:]
    if not args or args[0] != "dump":
        raise CommandFailed(
            "Usage: uiautomator <subcommand> [options]\n\n"
            "Available subcommands:\n\n"
            "dump: creates an XML dump of current UI hierarchy"
        )
    operands = [a for a in args[1:] if not a.startswith("--")]
    path = operands[0] if operands else DEFAULT_DUMP_PATH
    xml = inv.device.phone.hierarchy_xml()
    if path == "/dev/tty":
        inv.write(xml)
    else:
        inv.device.fs.write_bytes(inv.path(path), xml.encode("utf-8"))
    inv.write(f"UI hierchary dumped to: {path}\n")
    return 0


# ---------------------------------------------------------------- input


_INPUT_SOURCES = frozenset(
    [
        "keyboard",
        "mouse",
        "joystick",
        "touchnavigation",
        "touchpad",
        "trackball",
        "stylus",
        "dpad",
        "gesture",
        "touchscreen",
        "gamepad",
    ]
)


def _coordinates(values: list[str], count: int, usage: str) -> list[int]:
    if len(values) < count:
        raise CommandFailed(f"Error: {usage}")
    try:
        return [int(float(v)) for v in values[:count]]
    except ValueError as exc:
        raise CommandFailed(f"Error: {usage}") from exc


def _android_text(text: str) -> str:
    """`input text` turns `%s` into a space, scanning left to right like Android does."""
    chars = list(text)
    index = 0
    escape = False
    while index < len(chars):
        if escape:
            escape = False
            if chars[index] == "s":
                chars[index] = " "
                del chars[index - 1]
                index -= 1
        if chars[index] == "%":
            escape = True
        index += 1
    return "".join(chars)


def _keycode(value: str) -> int | str:
    return int(value) if value.isdigit() else value


def input_(inv: Invocation) -> int:
    args = inv.args[1:]
    if args and args[0] in _INPUT_SOURCES:
        args = args[1:]
    if args[:1] == ["-d"]:
        args = args[2:]
    if not args:
        raise CommandFailed("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]")
    phone = inv.device.phone
    command, rest = args[0], args[1:]
    if command == "tap":
        x, y = _coordinates(rest, 2, "input tap <x> <y>")
        phone.tap(x, y)
    elif command in ("swipe", "draganddrop"):
        # The virtual apps have no drag-and-drop targets, so a drag is a swipe to them.
        x1, y1, x2, y2 = _coordinates(rest, 4, f"input {command} <x1> <y1> <x2> <y2> [ms]")
        duration = int(rest[4]) if len(rest) > 4 and rest[4].isdigit() else DEFAULT_SWIPE_MS
        phone.swipe(x1, y1, x2, y2, duration)
    elif command == "text":
        if not rest:
            raise CommandFailed("Error: input text <string>")
        text = _android_text(rest[0])
        if not text.isascii():
            raise CommandFailed(
                "Exception occurred while executing 'text':\n"
                "java.lang.NullPointerException: Attempt to get length of null array",
                255,
            )
        phone.input_text(text)
    elif command == "keyevent":
        codes = [c for c in rest if not c.startswith("--")]
        if not codes:
            raise CommandFailed("Error: input keyevent [--longpress] <key code number or name> ...")
        for code in codes:
            phone.key(_keycode(code))
    elif command == "motionevent":
        if len(rest) < 3 or rest[0].upper() not in ("DOWN", "MOVE", "UP"):
            raise CommandFailed("Error: input motionevent <DOWN|UP|MOVE> <x> <y>")
        x, y = _coordinates(rest[1:], 2, "input motionevent <DOWN|UP|MOVE> <x> <y>")
        phone.touch(rest[0].lower(), x, y, 0)
    else:
        raise CommandFailed(f"Error: Unknown command: {command}", 255)
    return 0


# ---------------------------------------------------------------- activity and package managers


def _intent_options(args: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Split `am` arguments into intent flags (-a, -n, ...) and extras (--es k v, ...)."""
    options: dict[str, str] = {}
    extras: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("--es", "--ei", "--ez", "--el", "--ef", "--eu") and index + 2 < len(args):
            extras[args[index + 1]] = args[index + 2]
            index += 3
        elif arg in ("-a", "-d", "-t", "-n", "-c", "-f", "-p", "--user", "--display"):
            options[arg] = args[index + 1] if index + 1 < len(args) else ""
            index += 2
        else:  # other flags (-W, -S, ...) and a trailing data URI
            options[arg] = ""
            index += 1
    return options, extras


def _describe_intent(options: dict[str, str], extras: dict[str, str]) -> str:
    fields = []
    if "-a" in options:
        fields.append(f"act={options['-a']}")
    if "-d" in options:
        fields.append(f"dat={options['-d']}")
    if "-n" in options:
        fields.append(f"cmp={options['-n']}")
    if extras:
        fields.append("(has extras)")
    return "Intent { " + " ".join(fields) + " }"


def _resolve_activity(options: dict[str, str]) -> tuple[str, str]:
    """(package, activity) an intent starts: explicit, by package, or by a known action."""
    if "-n" in options:
        package, _, activity = options["-n"].partition("/")
        return package, activity
    if "-p" in options:
        return options["-p"], ""
    action = options.get("-a", "")
    if action.startswith("android.settings."):
        return SETTINGS_PACKAGE, ""
    if options.get("-c") == "android.intent.category.HOME":
        return LAUNCHER_PACKAGE, ""
    return "", ""


def _start(inv: Invocation, args: list[str]) -> int:
    phone = inv.device.phone
    options, extras = _intent_options(args)
    inv.write(f"Starting: {_describe_intent(options, extras)}\n")
    package, activity = _resolve_activity(options)
    if not package:
        raise CommandFailed(
            f"Error: Activity not started, unable to resolve {_describe_intent(options, extras)}"
        )
    if "-S" in options:
        phone.force_stop(package)
    phone.start(package, activity or None)
    if "-W" in options:
        current = _component(*phone.focus())
        inv.write(f"Status: ok\nLaunchState: COLD\nActivity: {current}\nComplete\n")
    return 0


def _adb_keyboard(inv: Invocation, action: str, extras: dict[str, str]) -> None:
    """What the ADB Keyboard IME does with its broadcasts while it is the current IME."""
    phone = inv.device.phone
    if phone.ime != ADB_KEYBOARD_IME:
        return
    if action == "ADB_INPUT_TEXT" and "msg" in extras:
        phone.commit_text(extras["msg"])
    elif action == "ADB_INPUT_B64" and "msg" in extras:
        try:
            text = base64.b64decode(extras["msg"], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return
        phone.commit_text(text)
    elif action == "ADB_INPUT_CODE" and extras.get("code", "").isdigit():
        phone.key(int(extras["code"]))
    elif action == "ADB_EDITOR_CODE":
        phone.key(KEYCODE_ENTER)


def _broadcast(inv: Invocation, args: list[str]) -> int:
    options, extras = _intent_options(args)
    inv.write(f"Broadcasting: {_describe_intent(options, extras)}\n")
    _adb_keyboard(inv, options.get("-a", ""), extras)
    inv.write("Broadcast completed: result=0\n")
    return 0


def am(inv: Invocation) -> int:
    sub, args = (inv.args[1], inv.args[2:]) if len(inv.args) > 1 else ("", [])
    phone = inv.device.phone
    if sub in ("start", "start-activity"):
        return _start(inv, args)
    if sub == "force-stop" and args:
        phone.force_stop(args[-1])
        return 0
    if sub == "broadcast":
        return _broadcast(inv, args)
    raise CommandFailed(f"Unknown command: {sub}" if sub else "usage: am start|broadcast|...")


def pm(inv: Invocation) -> int:
    sub, args = (inv.args[1], inv.args[2:]) if len(inv.args) > 1 else ("", [])
    phone = inv.device.phone
    packages = sorted(phone.packages())
    if sub == "list" and args[:1] == ["packages"]:
        operands = [a for a in args[1:] if not a.startswith("-")]
        wanted = operands[0] if operands else ""
        show_path = "-f" in args
        for package in packages:
            if wanted in package:
                path = f"/data/app/{package}/base.apk=" if show_path else ""
                inv.write(f"package:{path}{package}\n")
        return 0
    if sub == "path" and args:
        if args[-1] not in packages:
            return 1
        inv.write(f"package:/data/app/{args[-1]}/base.apk\n")
        return 0
    if sub == "clear" and args:
        if args[-1] not in packages:
            inv.write("Failed\n")
            return 1
        phone.clear_data(args[-1])
        inv.write("Success\n")
        return 0
    if sub == "install":
        return _pm_install(inv, args)
    if sub == "uninstall":
        return _pm_uninstall(inv, args)
    usage = "usage: pm list|path|clear|install|uninstall"
    raise CommandFailed(f"Unknown command: {sub}" if sub else usage)


def _pm_install(inv: Invocation, args: list[str]) -> int:
    paths = [a for a in args if not a.startswith("-")]
    if not paths:
        raise CommandFailed("Error: no package specified")
    path = paths[-1]
    try:
        data = inv.device.fs.read_bytes(inv.path(path))
    except FileSystemError:
        raise CommandFailed(
            f"Error: Unable to open file: {path}\nConsider using a file under /data/local/tmp/"
        ) from None
    try:
        manifest = read_manifest(data)
    except ApkError as exc:
        inv.write(f"Failure [INSTALL_PARSE_FAILED_NOT_APK: {exc}]\n")
        return 1
    phone = inv.device.phone
    if manifest.package in phone.packages() and "-r" not in args:
        inv.write(
            "Failure [INSTALL_FAILED_ALREADY_EXISTS: Attempt to re-install "
            f"{manifest.package} without first uninstalling.]\n"
        )
        return 1
    phone.install(
        InstalledPackage(
            manifest.package, manifest.version_name, manifest.version_code, phone.now()
        )
    )
    inv.write("Success\n")
    return 0


def _pm_uninstall(inv: Invocation, args: list[str]) -> int:
    operands = [a for a in args if not a.startswith("-") and not a.isdigit()]
    if not operands:
        raise CommandFailed("Error: package name not specified")
    if not inv.device.phone.uninstall(operands[-1]):
        inv.write("Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
        return 1
    inv.write("Success\n")
    return 0


# ---------------------------------------------------------------- processes and the log


_SYSTEM_PROCESSES = (
    ("root", "init", 0),
    ("root", "zygote64", 1),
    ("system", SYSTEM_SERVER, 2),
)


def _process_rows(inv: Invocation, every: bool) -> list[tuple[str, int, int, str]]:
    """(user, pid, ppid, name) of the processes `ps` shows."""
    zygote = process_id("zygote64")
    parents = {0: 0, 1: 1, 2: zygote}
    rows = [(user, process_id(name), parents[p], name) for user, name, p in _SYSTEM_PROCESSES]
    for package in inv.device.phone.running():
        rows.append((f"u0_a{app_uid(package) - 10000}", process_id(package), zygote, package))
    shell = process_id("sh")
    mine = [("shell", shell, 1, "sh"), ("shell", shell + 1, shell, "ps")]
    mine += [("shell", job.pid, 1, job.name) for job in inv.device.jobs.running()]
    return rows + mine if every else mine


def pkill(inv: Invocation) -> int:
    """toybox `pkill [-SIGNAL] NAME`: signal the background jobs of that name."""
    args, signal = inv.args[1:], SIGNALS["TERM"]
    if args[:1] == ["-l"]:
        raise CommandFailed("pkill: -l: unsupported option", 1)
    if args and args[0].startswith("-"):
        found = signal_number(args[0][1:])
        if found is None:
            raise CommandFailed(f"pkill: unknown signal '{args[0][1:]}'", 1)
        signal, args = found, args[1:]
    if not args:
        raise CommandFailed("usage: pkill [-SIGNAL] NAME", 2)
    matched = [job for job in inv.device.jobs.running() if job.name in args]
    for job in matched if signal else ():
        inv.device.jobs.send(job, signal)
    return 0 if matched else 1


def ps(inv: Invocation) -> int:
    """toybox `ps`: only the shell's own processes; `-A` (or `-e`) every process."""
    flags = {a for a in inv.args[1:] if a.startswith("-")}
    names = [a for a in inv.args[1:] if not a.startswith("-")]
    every = bool(flags & {"-A", "-e", "-ef", "-Af"}) or bool(names)
    rows = _process_rows(inv, every)
    if names:
        rows = [row for row in rows if row[3] in names or str(row[1]) in names]
    inv.write("USER           PID  PPID        VSZ    RSS WCHAN            ADDR S NAME\n")
    for user, pid, ppid, name in rows:
        sizes = f"{10485760:>10} {98304:>6}"
        inv.write(f"{user:<10} {pid:>7} {ppid:>5} {sizes} do_epoll_wait       0 S {name}\n")
    return 0 if rows else 1


def pidof(inv: Invocation) -> int:
    names = [a for a in inv.args[1:] if not a.startswith("-")]
    running = {name: pid for _user, pid, _ppid, name in _process_rows(inv, every=True)}
    found = [str(running[name]) for name in names if name in running]
    if found:
        inv.write(" ".join(found) + "\n")
    return 0 if found else 1


_LOG_PRIORITIES = "VDIWEFS"


def _log_line(entry: LogEntry, style: str) -> str:
    stamp = entry.time.strftime("%m-%d %H:%M:%S.") + f"{entry.time.microsecond // 1000:03d}"
    p, tag, msg = entry.priority, entry.tag, entry.message
    formats = {
        "brief": f"{p}/{tag}({entry.pid:5d}): {msg}",
        "tag": f"{p}/{tag}: {msg}",
        "process": f"{p}({entry.pid:5d}) {msg}  ({tag})",
        "raw": msg,
        "time": f"{stamp} {p}/{tag}({entry.pid:5d}): {msg}",
        "threadtime": f"{stamp} {entry.pid:5d} {entry.tid:5d} {p} {tag:<8}: {msg}",
        "long": f"[ {stamp} {entry.pid:5d}:{entry.tid:5d} {p}/{tag} ]\n{msg}\n",
    }
    return formats[style] + "\n"


def _log_filter(specs: list[str], silent: bool) -> Callable[[LogEntry], bool]:
    """`TAG:PRIORITY` specs, `*` for the rest; `-s` makes the rest silent."""
    levels: dict[str, int] = {"*": 7 if silent else 0}
    for spec in specs:
        tag, _, level = spec.partition(":")
        levels[tag] = _LOG_PRIORITIES.find((level or "V").upper()[:1])
    return lambda entry: _LOG_PRIORITIES.find(entry.priority) >= levels.get(entry.tag, levels["*"])


def logcat(inv: Invocation) -> int:
    """`logcat [-d] [-c] [-v FORMAT] [-t N] [-s] [-b BUFFER] [TAG:PRIORITY ...]`.

    Without -d (or -t) it keeps printing new lines until the client disconnects."""
    args = inv.args[1:]
    log = inv.device.phone.log
    style, tail, dump, silent, specs = "threadtime", None, False, False, []
    index = 0
    while index < len(args):
        arg = args[index]
        value = args[index + 1] if index + 1 < len(args) else ""
        if arg in ("-c", "--clear"):
            log.clear()
            return 0
        if arg == "-d":
            dump = True
        elif arg == "-s":
            silent = True
        elif arg in ("-v", "-b", "-t", "-T", "--format", "--buffer") and value:
            if arg in ("-v", "--format"):
                if value not in ("brief", "tag", "process", "raw", "time", "threadtime", "long"):
                    raise CommandFailed(f"logcat: Unknown format '{value}'")
                style = value
            elif arg in ("-t", "-T"):
                if not value.isdigit():
                    raise CommandFailed(f"logcat: bad line count '{value}'")
                tail, dump = int(value), dump or arg == "-t"
            index += 1
        elif arg.startswith("-"):
            raise CommandFailed(f"logcat: unsupported option '{arg}'", 2)
        else:
            specs.append(arg)
        index += 1
    keep = _log_filter(specs, silent)
    entries = [entry for entry in log.entries() if keep(entry)]
    shown = entries[-tail:] if tail is not None and tail else ([] if tail == 0 else entries)
    inv.write("".join(_log_line(entry, style) for entry in shown))
    if dump:
        return 0
    last = log.entries()[-1].index if log.entries() else -1
    while not inv.cancelled.is_set():
        inv.streams.flush()
        log.wait(last, timeout=0.5)
        log.heartbeat(pid=process_id(SYSTEM_SERVER))
        fresh = log.entries(after=last)
        if fresh:
            last = fresh[-1].index
            inv.write("".join(_log_line(entry, style) for entry in fresh if keep(entry)))
    return 0


_LOG_PRIORITY_NAMES = {"v": "V", "d": "D", "i": "I", "w": "W", "e": "E", "f": "F",
                       "verbose": "V", "debug": "D", "info": "I", "warn": "W", "error": "E",
                       "fatal": "F"}  # fmt: skip


def log(inv: Invocation) -> int:
    """`log [-p PRIORITY] [-t TAG] [MESSAGE...]`: one line into the log buffer; without a
    message, each line of stdin."""
    args = inv.args[1:]
    priority, tag = "I", "log"
    while len(args) >= 2 and args[0] in ("-p", "-t"):
        option, value, args = args[0], args[1], args[2:]
        if option == "-t":
            tag = value
        elif value.lower() in _LOG_PRIORITY_NAMES:
            priority = _LOG_PRIORITY_NAMES[value.lower()]
        else:
            raise CommandFailed(f"log: unknown priority '{value}'", 2)
    if args[:1] and args[0].startswith("-") and args[0] != "--":
        raise CommandFailed(
            "usage: log [-p PRIORITY] [-t TAG] [MESSAGE...]\n"
            "PRIORITY is one of v, d, i, w, e, f (default i); TAG defaults to 'log'", 2
        )  # fmt: skip
    lines = [" ".join(args[1:] if args[:1] == ["--"] else args)] if args else [
        line for line in inv.stdin.decode("utf-8", "replace").splitlines() if line
    ]  # fmt: skip
    pid = process_id("log")
    for line in lines:
        inv.device.phone.log.write(priority, tag, line, pid=pid)
    return 0


def monkey(inv: Invocation) -> int:
    args = inv.args[1:]
    package = args[args.index("-p") + 1] if "-p" in args[:-1] else None
    phone = inv.device.phone
    try:
        if package is None:
            raise PhoneCommandError("no package given")
        phone.start(package)
    except PhoneCommandError as exc:
        raise CommandFailed("** No activities found to run, monkey aborted.") from exc
    inv.write(
        "Events injected: 1\n"
        "## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n"
    )
    return 0


def ime(inv: Invocation) -> int:
    sub, args = (inv.args[1], inv.args[2:]) if len(inv.args) > 1 else ("", [])
    phone = inv.device.phone
    available = phone.ime_list()
    if sub == "list":
        if "-s" in args:
            inv.write("".join(f"{ime_id}\n" for ime_id in available))
        else:
            package = {ime_id: ime_id.partition("/")[0] for ime_id in available}
            inv.write(
                "".join(
                    f"{ime_id}:\n  mId={ime_id} mSettingsActivityName=null\n"
                    f"  mIsDefaultResId=0x0\n  Service:\n    packageName={package[ime_id]}\n"
                    for ime_id in available
                )
            )
        return 0
    if sub == "set" and args:
        phone.ime = args[-1]
        inv.write(f"Input method {args[-1]} selected for user #0\n")
        return 0
    if sub == "enable" and args:
        if args[-1] not in available:
            raise CommandFailed(f"Unknown input method {args[-1]} cannot be enabled for user #0")
        inv.write(f"Input method {args[-1]}: already enabled for user #0\n")
        return 0
    raise CommandFailed(f"Unknown command: {sub}" if sub else "usage: ime list|set|enable")


COMMANDS: dict[str, Command] = {
    "getprop": getprop,
    "setprop": setprop,
    "settings": settings,
    "wm": wm,
    "dumpsys": dumpsys,
    "screencap": screencap,
    "uiautomator": uiautomator,
    "input": input_,
    "am": am,
    "pm": pm,
    "monkey": monkey,
    "ime": ime,
    "ps": ps,
    "pidof": pidof,
    "pkill": pkill,
    "logcat": logcat,
    "log": log,
}
