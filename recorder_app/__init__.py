"""ElderBench Studio, the desktop app: mirror and recorder, demo browser, graph editor and
evaluation panel.

- ``recorder_app.recording``: the Qt-free recording core (the recording session, the
  workspace layout, scripted recording) that scripts, benchmarks and tests use too.
- ``recorder_app.qt``: every Qt widget, window and worker. The only subpackage that
  imports PySide6.
- ``recorder_app.cli`` (the ``elderbench studio`` command), ``recorder_app.connection``
  (which adb server the studio talks to) and ``recorder_app.errors``: Qt-free.

Importing anything outside ``recorder_app.qt`` is cheap and never loads Qt, so the CLI
stays fast and headless commands run without a display.
"""
