"""Ambient variation: content that changes between visits of one screen, when switched on.

Real phones never show a screen twice the same: notification badges come and go, the
clock moves, lists refresh, the launcher predicts other apps. With
``VirtualPhone(ambient_variation=True)`` the apps draw such content from the phone's
visit counter (``Host.ambient_visit``: how many times a screen came to the front), so
tests can check that two visits of one screen are one state. Off by default: the sample
suite and every other test see the same screens as before.

>>> badge_description("Messages", 1)
'Messages has 1 notifications'
>>> badge_description("Messages", 4), badge_description("Phone", 4)
('Messages', 'Phone has 3 notifications')
>>> predicted_labels(["A", "B", "C", "D", "E"], 2)
['C', 'D', 'E', 'A']
"""

from __future__ import annotations

from collections.abc import Sequence

PREDICTED = 4  # apps in the launcher's prediction row
# Conversations a refreshed inbox shows on top, one per visit, in turn.
REFRESHED = (
    ("Pharmacy", "Your refill is ready for pick-up"),
    ("Library", "The book you reserved has arrived"),
    ("Bank", "Your statement is available"),
)


def badge_description(label: str, visit: int) -> str:
    """An icon's description with a notification count that changes every visit, and
    differs between apps (no badge on one visit in four)."""
    count = (visit + 8 - len(label)) % 4
    return f"{label} has {count} notifications" if count else label


def predicted_labels(labels: Sequence[str], visit: int) -> list[str]:
    """The apps the launcher predicts on this visit: a window over ``labels`` that turns."""
    if not labels:
        return []
    shown = min(PREDICTED, len(labels))
    return [labels[(visit + i) % len(labels)] for i in range(shown)]


def refreshed_conversation(visit: int) -> tuple[str, str] | None:
    """A conversation the inbox shows on top on this visit, or None (every other visit)."""
    if visit % 2 == 0:
        return None
    return REFRESHED[(visit // 2) % len(REFRESHED)]
