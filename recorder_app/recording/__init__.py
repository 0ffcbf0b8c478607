"""The Qt-free recording core: what the studio's recorder, scripts, benchmarks and tests share.

- ``recorder_app.recording.session``: ``RecordingSession``, the settle -> capture ->
  save -> perform protocol that pairs every action with the screen it was taken on.
- ``recorder_app.recording.script``: ``record_script``, a demonstration recorded by a
  program through that same session (the sample generator, benchmarks and tests use it).
- ``recorder_app.recording.workspace``: the studio's workspace folder (demos/, suites/, runs/).
"""
