"""Match an agent's action against a task graph's edges, using each edge's MatchRule.

The rules are data (``graph_builder.model.MatchRule``, geometry in ``[0,1000]`` space);
a matching profile says how a step is judged. The default, ``elderbench``
(``evaluator.matching.elderbench``), is the physically sensible one. The others
reproduce a benchmark's own step rule, quirks included, so that a number can be
compared with the numbers its papers print: ``aitw``, ``gui_odyssey``,
``androidcontrol`` and ``colorbench`` (one module each; docs/evaluation.md lists the
quirks and the code each follows). Every match says in words which rule decided it,
e.g. ``"within 37.2 of point"``; a miss says why.

(``launch``, ``answer``, ``ask_user`` and ``give_up`` are handled by
``evaluator.task_actions``, not by rules.)

>>> from graph_builder.model import MatchRule, Action, NORMALIZED_SCREEN
>>> rule = MatchRule("tap", points=((500, 500),))
>>> match_rule(rule, Action.tap(530, 540, screen=NORMALIZED_SCREEN)).reason
'within 50 of point'
"""

from evaluator.matching.base import (
    RuleMatch,
    ScreenElements,
    StepView,
    canonical_key,
    exact,
    normalize_text,
    text_ratio,
)
from evaluator.matching.edges import EdgeMatch, match_edges, match_rule
from evaluator.matching.elderbench import swipe_direction
from evaluator.matching.profiles import ELDERBENCH, PROFILES, MatchingProfile, profile_named

__all__ = [
    "ELDERBENCH",
    "PROFILES",
    "EdgeMatch",
    "MatchingProfile",
    "RuleMatch",
    "ScreenElements",
    "StepView",
    "canonical_key",
    "exact",
    "match_edges",
    "match_rule",
    "normalize_text",
    "profile_named",
    "swipe_direction",
    "text_ratio",
]
