"""Everything that speaks ADB to a phone: the Device seam, Android devices, the mirror.

- ``devices.device``: ``Device``, the protocol the recorder and the online protocol use.
- ``devices.fake``: ``FakeDevice``, an in-memory Device for tests (no ADB).
- ``devices.clock``: ``DeviceClock``, where a device reads the time and waits.
- ``devices.android``: ``AndroidDevice`` (observe, perform, settle, reset apps),
  ``list_devices`` and ``adb_client``, over adbutils, for real and virtual phones alike.
- ``devices.mirror``: live frames through scrcpy, or screencap polling as a fallback.
- ``devices.text_input``: typing any text literally (`input text` or the ADB Keyboard).
- ``devices.settle``: when a screen has stopped changing.
- ``devices.errors``: ``DeviceError`` and its kinds.

Importing this package imports nothing heavy; each module pulls in what it needs.
"""
