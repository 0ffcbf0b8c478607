"""The studio's Qt widgets, windows and worker threads: the only code that imports PySide6.

The widgets drive the Qt-free core (``recorder_app.recording``, ``evaluator``,
``graph_builder``, ``devices``) and never reimplement it.
"""
