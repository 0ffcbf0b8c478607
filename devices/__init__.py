"""Everything that speaks ADB: Android devices, the screen mirror, and the virtual phone.

- ``devices.android``: ``AndroidDevice`` (observe, perform, settle, reset apps),
  ``list_devices`` and ``adb_client``, over adbutils, for real and virtual phones alike.
- ``devices.mirror``: live frames through scrcpy, or screencap polling as a fallback.
- ``devices.text_input``: typing any text literally (`input text` or the ADB Keyboard).
- ``devices.settle``: when a screen has stopped changing.
- ``devices.errors``: ``DeviceError`` and its kinds.
- ``virtual_phone``: the simulated phone behind a Python ADB server, for tests and demos.

Importing this package imports nothing heavy; each module pulls in what it needs.
"""
