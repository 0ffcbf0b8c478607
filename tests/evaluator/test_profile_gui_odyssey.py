"""The ``gui_odyssey`` profile gives the verdicts of the benchmark's own evaluation.

Each verdict below was written down from running ``action_matching`` of
``src/eval_mm/GUIOdyssey_action_matching.py``, after ``simple_decode`` of
``src/eval_mm/evaluate_GUIOdyssey.py`` and ``decode_action`` of ``data/format_converter.py``
(OpenGVLab/GUI-Odyssey at fefcbe9d76e2f010c68225ae7f378c4c550a89c1) on the same step,
through the adaptor of benchmarks/matching_references.py (the edge's element is the
step's ``sam2_bbox``); every disagreement class of issue 29 has a case. The screen is
1080x2400; agent points are in ``[0,1000]``.
"""

from __future__ import annotations

from graph_builder.model import Action, ActionType, Bounds
from tests.evaluator.profile_steps import (
    DOWN,
    RIGHT,
    N,
    agent_swipe,
    agent_tap,
    judged,
    keyed,
    pointed,
    swiped,
    typed,
    verdict_cases,
)

WIDE = Bounds(108, 960, 972, 1200)  # [100,400]-[900,500] in [0,1000]

CASES = [
    # a click inside the step's box matches however far from the point
    ("inside the box, far", pointed(agent_tap(850, 450), (162, 1080), element=WIDE), True),
    ("on the box's edge", pointed(agent_tap(900, 500), (162, 1080), element=WIDE), True),
    ("just past the edge", pointed(agent_tap(900.5, 450), (162, 1080), element=WIDE), False),
    ("within 0.14 of the point", pointed(agent_tap(500, 639), (540, 1200)), True),
    ("beyond 0.14", pointed(agent_tap(500, 641), (540, 1200)), False),
    (
        "long press is not a click",
        pointed(Action.long_press(500, 500, screen=N), (540, 1200)),
        False,
    ),
    (
        "long press on a long press",
        pointed(
            Action.long_press(850, 450, screen=N),
            (162, 1080),
            element=WIDE,
            kind=ActionType.LONG_PRESS,
        ),
        True,
    ),
    # the direction is decided in [0,1000]: 300 right, 250 down is right (down on the glass)
    ("direction in [0,1000]", swiped(agent_swipe(200, 500, 500, 750), RIGHT), True),
    ("not down in [0,1000]", swiped(agent_swipe(200, 500, 500, 750), DOWN), False),
    # no minimum length; a swipe that does not move is down
    ("3 units right is right", swiped(agent_swipe(500, 500, 503, 500), RIGHT), True),
    ("a still swipe is down", swiped(agent_swipe(500, 500, 500, 500), DOWN), True),
    ("an exact diagonal is vertical", swiped(agent_swipe(300, 300, 500, 500), DOWN), True),
    # texts: containment or 1 - edit distance / length >= 0.5, case-sensitive
    ("contained", typed("Paris France", "Paris"), True),
    ("containing", typed("Par", "Paris"), True),
    ("case counts", typed("PARIS", "paris"), False),
    ("one edit", typed("hello wrld", "hello world"), True),
    ("three edits of five", typed("Pxyzs", "Paris"), False),
    # the text after the first colon is cut off
    ("cut at the colon: 10:30 is 10:45", typed("10:45", "10:30"), True),
    ("cut at the colon: a label", typed("note: Paris", "Paris"), False),
    ("back", keyed(Action.back(), Action.back()), True),
    ("back is not home", keyed(Action.back(), Action.home()), False),
]


@verdict_cases(CASES)
def test_the_gui_odyssey_profile_gives_the_benchmarks_verdict(case, verdict):
    assert judged("gui_odyssey", case) is verdict
