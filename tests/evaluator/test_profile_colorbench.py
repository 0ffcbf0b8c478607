"""The ``colorbench`` profile gives the verdicts of the benchmark's own graph walk.

Each verdict below was written down from running ``Graph_DataSet.check_jump_condition`` of
``src/test/graph_tools.py`` (MadeAgents/ColorBench at
1f26a84230d26f99d84eab97d05032582b39018e) on the same step, a node with one outgoing edge,
through the adaptor of benchmarks/matching_references.py (the edge's element is the
click's ``bbox``, in pixels); every disagreement class of issue 29 has a case. The screen
is 1080x2400 unless said; agent points are in ``[0,1000]``.
"""

from __future__ import annotations

from benchmarks.matching_cases import Case
from evaluator.matching import PROFILES, match_edges
from graph_builder.model import Action, ActionType, Bounds, Edge, MatchRule
from tests.evaluator.profile_steps import (
    DOWN,
    PHONE,
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

BOX = Bounds(100, 1000, 300, 1100)  # pixels; the gold taps its middle, (200, 1050)
SMALL = (720, 1280)


def at_pixel(x: float) -> Case:
    """A tap ``x`` px across, 1050 px down (the middle of BOX's height)."""
    return pointed(agent_tap(x / 1.08, 437.5), (200, 1050), element=BOX)


CASES = [
    ("inside the bbox", pointed(agent_tap(250, 450), (200, 1050), element=BOX), True),
    # only the bbox counts: 124 px from the point, outside the box
    ("near but outside the bbox", pointed(agent_tap(300, 437.5), (200, 1050), element=BOX), False),
    ("on its right edge", pointed(agent_tap(300 / 1.08, 437.5), (200, 1050), element=BOX), True),
    # the point is cut to whole pixels: 300.99 px is 300, on the edge; 301.5 is past it
    ("300.99 px is 300", pointed(agent_tap(300.99 / 1.08, 437.5), (200, 1050), element=BOX), True),
    (
        "past its right edge",
        pointed(agent_tap(301.5 / 1.08, 437.5), (200, 1050), element=BOX),
        False,
    ),
    (
        "long press in the bbox",
        pointed(
            Action.long_press(250, 450, screen=N),
            (200, 1050),
            element=BOX,
            kind=ActionType.LONG_PRESS,
        ),
        True,
    ),
    (
        "a tap is not a long press",
        pointed(agent_tap(250, 450), (200, 1050), element=BOX, kind=ActionType.LONG_PRESS),
        False,
    ),
    # a point-only click: strictly under 1080 * 0.14 px, whatever the screen's width
    (
        "150 px on a 720 px screen",
        pointed(agent_tap(510 / 0.72, 500), (360, 640), screen=SMALL, with_bounds=False),
        True,
    ),
    (
        "152 px on a 720 px screen",
        pointed(agent_tap(512 / 0.72, 500), (360, 640), screen=SMALL, with_bounds=False),
        False,
    ),
    # swipes: no minimum length; an exact diagonal on the glass is vertical
    ("2 units down is down", swiped(agent_swipe(500, 500, 500, 502), DOWN), True),
    ("a still swipe matches nothing", swiped(agent_swipe(500, 500, 500, 500), DOWN), False),
    ("a glass diagonal is down", swiped(agent_swipe(100, 100, 200, 145), DOWN), True),
    ("so it is not right", swiped(agent_swipe(100, 100, 200, 145), RIGHT), False),
    # texts: its normalization (spaces out, punctuation to commas) and containment
    ("spaces removed", typed("helloworld", "hello world"), True),
    ("case", typed("hello world", "Hello World"), True),
    ("contained", typed("Hello", "Hello World"), True),
    ("an edit", typed("Helo", "Hello World"), False),
    ("comma pieces", typed("buy milk", "buy milk, eggs"), True),
    ("punctuation", typed("Paris?", "Paris"), True),
    ("upper case typed", typed("PARIS", "paris"), True),
    ("another text", typed("London", "Paris"), False),
    ("wait", keyed(Action.wait(), Action.wait()), True),
]


@verdict_cases(CASES)
def test_the_colorbench_profile_gives_the_benchmarks_verdict(case, verdict):
    assert judged("colorbench", case) is verdict


def test_an_action_no_edge_takes_follows_the_wait_edge():
    # its walk: "no matching action condition, choose wait automatically"
    tap = Edge("t", "here", "there", MatchRule("tap", bounds=Bounds(100, 400, 300, 450)))
    wait = Edge("w", "here", "later", MatchRule("wait"))
    far = agent_tap(900, 900)
    m = match_edges([tap, wait], far, screen=PHONE, profile=PROFILES["colorbench"])
    assert m.edge is wait and m.reason == "no edge accepts it; follows wait edge w"
    assert match_edges([tap, wait], agent_tap(200, 420), profile=PROFILES["colorbench"]).edge is tap
    assert not match_edges([tap, wait], far, screen=PHONE).matched  # not ours
