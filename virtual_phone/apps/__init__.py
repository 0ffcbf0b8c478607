"""The simulated apps of the virtual phone.

- ``base``: ``App``, ``Screen``, ``Dialog`` and the ``Ui`` handle screens build with.
- ``kit``: Material-style widgets (rows, buttons, switches, sliders, lists, dialogs).
- ``registry``: the installed apps, in launcher order; add a new app there.
- ``launcher``, ``settings``, ``dialer``, ``contacts``, ``messages``, ``clock``,
  ``weather``, ``pharmacy``: the apps; ``people`` is the shared address book and call UI.
- ``system`` and ``shade``: status bar, navigation bar, keyboards, toast, volume panel,
  notification shade.

A screen's ``screen_id`` (with ``/dialog_id`` while a dialog is open) is the logical id
that ``VirtualPhone.ground_truth()`` reports.
"""
