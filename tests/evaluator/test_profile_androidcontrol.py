"""The ``androidcontrol`` profile gives the verdicts of the evaluator papers share.

Each verdict below was written down from running ``ActionEvaluator`` (in its
AndroidControl mode) of ``eval/utils/evaluator.py`` (OpenBMB/AgentCPM-GUI at
acbaf509b8afb3f58b782486f4e8c0e33d8a486b) on the same step, through the adaptor of
benchmarks/matching_references.py (the screen's elements are its ``ui_positions``);
every disagreement class of issue 29 has a case. The screen is 1080x2400; agent points
are in ``[0,1000]``; ``box`` takes ``[0,1000]`` corners to pixels.
"""

from __future__ import annotations

from benchmarks.matching_cases import Case
from graph_builder.model import NORMALIZED_SCREEN, Action, Bounds
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


def box(left: float, top: float, right: float, bottom: float) -> Bounds:
    return Bounds(left, top, right, bottom).rescaled(NORMALIZED_SCREEN, PHONE)


# elements nearer a gold than the screen's centre (the whole screen is an element too)
BUTTON = box(400, 125, 600, 175)  # centre 500,150: gold (540, 360) px
AROUND_BUTTON = (
    box(450, 30, 550, 60),
    box(450, 220, 550, 250),
    box(250, 130, 300, 170),
    box(250, 200, 300, 240),
)
AT_EDGE = box(0, 500, 200, 550)  # touches the left side; centre 100,525: gold (108, 1260) px
AROUND_EDGE = (
    box(0, 400, 100, 440),
    box(0, 600, 100, 640),
    box(100, 440, 200, 480),
    box(0, 660, 100, 700),
)
# a gold at 500,150 with four small neighbours, and a wide row whose centre is 0.14 away
TARGET = box(450, 130, 550, 170)
NEIGHBOURS = (box(380, 130, 420, 170), box(580, 130, 620, 170), box(450, 60, 550, 100))
FOURTH = box(450, 200, 550, 240)
ROW = box(0, 250, 1000, 330)


def on_button(agent: Action) -> Case:
    return pointed(agent, (540, 360), element=BUTTON, others=AROUND_BUTTON)


def on_edge(agent: Action) -> Case:
    return pointed(agent, (108, 1260), element=AT_EDGE, others=AROUND_EDGE)


CASES = [
    ("inside the element, 0.09 away", on_button(agent_tap(590, 150)), True),
    ("inside it enlarged 1.2x", on_button(agent_tap(615, 150)), True),
    ("outside it enlarged", on_button(agent_tap(625, 150)), False),
    # clamped at 0 keeping the enlarged size: [0, 240]; edges inclusive
    ("clamp keeps the size", on_edge(agent_tap(230, 525)), True),
    ("on the clamped box's edge", on_edge(agent_tap(240, 525)), True),
    ("past the clamped box", on_edge(agent_tap(250, 525)), False),
    # any of the 5 elements nearest the gold point counts, not only the edge's own
    (
        "inside the 5th nearest element",
        pointed(agent_tap(900, 300), (540, 360), element=TARGET, others=(*NEIGHBOURS, ROW)),
        True,
    ),
    (
        "inside the 6th nearest element",
        pointed(agent_tap(900, 300), (540, 360), element=TARGET, others=(*NEIGHBOURS, FOURTH, ROW)),
        False,
    ),
    # the whole screen is an element too: near the centre, every tap is inside a nearby one
    ("the screen is a nearby element", pointed(agent_tap(900, 900), (540, 1200)), True),
    ("a long press is not a click", on_button(Action.long_press(540, 150, screen=N)), False),
    # the nearest direction in [0,1000], an exact tie going to up, then down
    ("right in [0,1000]", swiped(agent_swipe(200, 500, 500, 750), RIGHT), True),
    ("a diagonal down-right is down", swiped(agent_swipe(300, 300, 500, 500), DOWN), True),
    ("so it is not right", swiped(agent_swipe(300, 300, 500, 500), RIGHT), False),
    # no minimum length; a swipe that does not move has no direction
    ("one unit right is right", swiped(agent_swipe(500, 500, 501, 500), RIGHT), True),
    ("a still swipe matches nothing", swiped(agent_swipe(500, 500, 500, 500), DOWN), False),
    # texts: either contains the other after lower().strip()
    ("case and spaces around", typed(" paris ", "Paris"), True),
    ("containing", typed("PARIS FRANCE", "Paris"), True),
    ("contained", typed("Pari", "Paris"), True),
    ("spaces inside count", typed("helloworld", "hello world"), False),
    ("an edit", typed("Pxris", "Paris"), False),
    ("enter", keyed(Action.key("enter"), Action.key("enter")), True),
    ("back is not home", keyed(Action.back(), Action.home()), False),
    ("wait", keyed(Action.wait(), Action.wait()), True),
]


@verdict_cases(CASES)
def test_the_androidcontrol_profile_gives_the_benchmarks_verdict(case, verdict):
    assert judged("androidcontrol", case) is verdict


def test_a_swipe_edge_the_benchmark_sees_as_a_click_takes_no_swipe():
    # demonstrated 41 px left and 82 px down on 1440x3200: 0.038 of the screen, a click
    case = swiped(agent_swipe(500, 300, 500, 700), (968, 1482, 927, 1564), screen=(1440, 3200))
    assert judged("androidcontrol", case) is False
    longer = swiped(agent_swipe(500, 300, 500, 700), (968, 1482, 927, 1664), screen=(1440, 3200))
    assert judged("androidcontrol", longer) is True
