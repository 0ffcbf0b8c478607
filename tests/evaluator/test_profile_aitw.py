"""The ``aitw`` profile gives the verdicts of the benchmark's own matcher.

Each verdict below was written down from running ``check_actions_match`` of
``android_in_the_wild/action_matching.py`` (google-research/google-research at
1d49f2c0d5506a6e11115726164d42f6b7b7b95a) on the same step, through the adaptor of
benchmarks/matching_references.py; every disagreement class of issue 29 has a case. The
screen is 1080x2400; agent points are in ``[0,1000]``.
"""

from __future__ import annotations

from graph_builder.model import Action, ActionType, Bounds
from tests.evaluator.profile_steps import (
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

BUTTON = Bounds(432, 1140, 648, 1260)  # [400,475]-[600,525] in [0,1000], centre 500,500
AT_EDGE = Bounds(21.6, 1200, 237.6, 1320)  # [20,500]-[220,550]: touches the left side
BANNER = Bounds(0, 1080, 1080, 1680)  # [0,450]-[1000,700], another leaf on the screen
UP = (540, 1800, 540, 600)
DIAGONAL = (100, 100, 400, 500)  # down on the glass, horizontal in [0,1]

CASES = [
    # boxes are enlarged by 1.4 of their size on each axis (2.4x in all), not 1.4x
    ("2.4x box holds both taps", pointed(agent_tap(730, 500), (540, 1200), element=BUTTON), True),
    ("outside the 2.4x box", pointed(agent_tap(745, 500), (540, 1200), element=BUTTON), False),
    # clamped at 0 keeping the enlarged size: the box shifts right to [0, 480]
    ("clamp keeps the size", pointed(agent_tap(470, 525), (129.6, 1260), element=AT_EDGE), True),
    ("beyond the shifted box", pointed(agent_tap(490, 525), (129.6, 1260), element=AT_EDGE), False),
    # any annotation box of the screen counts, not only the edge's element
    (
        "another element's box holds both",
        pointed(agent_tap(900, 650), (540, 1200), element=BUTTON, others=(BANNER,)),
        True,
    ),
    ("no box holds both, far", pointed(agent_tap(900, 650), (540, 1200), element=BUTTON), False),
    ("within 0.14", pointed(agent_tap(500, 639), (540, 1200)), True),
    ("beyond 0.14", pointed(agent_tap(500, 641), (540, 1200)), False),
    # typing matches on the action type alone
    ("any text", typed("London", "Paris"), True),
    # swipes match on the axis only, chosen in [0,1]
    ("up matches down", swiped(agent_swipe(500, 300, 500, 700), UP), True),
    ("up does not match left", swiped(agent_swipe(700, 500, 300, 500), UP), False),
    ("axis in [0,1]: horizontal", swiped(agent_swipe(200, 500, 700, 500), DIAGONAL), True),
    ("axis in [0,1]: not vertical", swiped(agent_swipe(500, 200, 500, 800), DIAGONAL), False),
    # a dual-point gesture of length <= 0.04 is a tap
    (
        "tiny swipe is a tap",
        pointed(agent_swipe(500, 500, 520, 520), (540, 1200)),
        True,
    ),
    ("short swipe is no swipe", swiped(agent_swipe(500, 500, 500, 470), UP), False),
    ("swipe of 0.05 is a swipe", swiped(agent_swipe(500, 500, 500, 450), UP), True),
    # a long press is the same dual-point gesture as a tap
    (
        "long press on a tap edge",
        pointed(Action.long_press(505, 500, screen=N), (540, 1200)),
        True,
    ),
    # back, home and enter by type
    ("enter", keyed(Action.key("enter"), Action.key("enter")), True),
    ("back is not home", keyed(Action.back(), Action.home()), False),
    ("home", keyed(Action.home(), Action.home()), True),
]


@verdict_cases(CASES)
def test_the_aitw_profile_gives_the_benchmarks_verdict(case, verdict):
    assert judged("aitw", case) is verdict


def test_a_swipe_edge_the_benchmark_sees_as_a_tap_takes_no_swipe():
    # demonstrated 30 px down on 1080x2400: 0.0125 of the screen, a tap for the benchmark
    case = swiped(agent_swipe(500, 300, 500, 700), (540, 1200, 540, 1230))
    assert case.rule.action_type is ActionType.SWIPE
    assert judged("aitw", case) is False
