"""What `pm install` needs from an APK: the package name and version in its manifest.

An APK is a zip whose AndroidManifest.xml is Android's binary XML: a chunk header, a
string pool, then element chunks whose attributes point into the pool. The layout
followed here is the one in AOSP's frameworks/base/libs/androidfw/ResourceTypes.h
(ResChunk_header, ResStringPool_header, ResXMLTree_attrExt, Res_value).
"""

from __future__ import annotations

import io
import struct
import zipfile
from dataclasses import dataclass

from virtual_phone.errors import VirtualPhoneError

_XML = 0x0003
_STRING_POOL = 0x0001
_START_ELEMENT = 0x0102
_UTF8 = 0x100
_TYPE_STRING = 0x03
_TYPE_INT_DEC = 0x10
_TYPE_INT_HEX = 0x11
_NO_INDEX = 0xFFFFFFFF


class ApkError(VirtualPhoneError):
    """Not an APK the phone can read; the message says why."""


@dataclass(frozen=True, slots=True)
class Manifest:
    package: str
    version_name: str
    version_code: int


def read_manifest(apk: bytes) -> Manifest:
    try:
        with zipfile.ZipFile(io.BytesIO(apk)) as archive:
            data = archive.read("AndroidManifest.xml")
    except (zipfile.BadZipFile, KeyError) as exc:
        raise ApkError("not an APK: no AndroidManifest.xml in a zip archive") from exc
    try:
        return _parse(data)
    except (struct.error, IndexError, UnicodeDecodeError, ValueError) as exc:
        raise ApkError("AndroidManifest.xml is not valid binary XML") from exc


def _parse(data: bytes) -> Manifest:
    kind, header_size, _size = struct.unpack_from("<HHI", data, 0)
    if kind != _XML:
        raise ApkError("AndroidManifest.xml is not binary XML")
    strings: list[str] = []
    offset = header_size
    while offset + 8 <= len(data):
        kind, header_size, size = struct.unpack_from("<HHI", data, offset)
        if size < 8:
            break
        if kind == _STRING_POOL:
            strings = _string_pool(data, offset)
        elif kind == _START_ELEMENT:
            found = _manifest_element(data, offset, strings)
            if found is not None:
                return found
        offset += size
    raise ApkError("AndroidManifest.xml has no <manifest package=...>")


def _string_pool(data: bytes, start: int) -> list[str]:
    count, _styles, flags, strings_start, _styles_start = struct.unpack_from(
        "<IIIII", data, start + 8
    )
    offsets = struct.unpack_from(f"<{count}I", data, start + 28)
    base = start + strings_start
    out = []
    for item in offsets:
        at = base + item
        if flags & _UTF8:
            at += 2 if data[at] & 0x80 else 1  # length in characters
            length = data[at]
            if length & 0x80:
                length = ((length & 0x7F) << 8) | data[at + 1]
                at += 1
            out.append(data[at + 1 : at + 1 + length].decode("utf-8"))
        else:
            length = struct.unpack_from("<H", data, at)[0]
            if length & 0x8000:
                length = ((length & 0x7FFF) << 16) | struct.unpack_from("<H", data, at + 2)[0]
                at += 2
            out.append(data[at + 2 : at + 2 + 2 * length].decode("utf-16-le"))
    return out


def _manifest_element(data: bytes, start: int, strings: list[str]) -> Manifest | None:
    header_size = struct.unpack_from("<H", data, start + 2)[0]
    ext = start + header_size
    _ns, name, attr_start, attr_size, count = struct.unpack_from("<IIHHH", data, ext)
    if name >= len(strings) or strings[name] != "manifest":
        return None
    values: dict[str, str | int] = {}
    for index in range(count):
        at = ext + attr_start + index * attr_size
        _attr_ns, attr_name, raw, _vsize, _res0, kind, value = struct.unpack_from(
            "<IIIHBBI", data, at
        )
        key = strings[attr_name] if attr_name < len(strings) else ""
        if raw != _NO_INDEX:
            values[key] = strings[raw]
        elif kind == _TYPE_STRING:
            values[key] = strings[value]
        elif kind in (_TYPE_INT_DEC, _TYPE_INT_HEX):
            values[key] = value
    package = values.get("package")
    if not isinstance(package, str) or not package:
        return None
    code = values.get("versionCode", 0)
    return Manifest(package, str(values.get("versionName", "null")), int(code))
