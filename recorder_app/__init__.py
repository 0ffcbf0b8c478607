"""The ElderBench Studio desktop app: mirror and recorder, demo browser, later graph editor
and evaluation panel.

This is the only package that imports PySide6, and it does so only inside its Qt modules;
importing ``recorder_app`` itself (or ``recorder_app.cli``, ``recorder_app.workspace``) is
cheap and Qt-free, so the CLI stays fast and headless commands never load Qt.
"""
