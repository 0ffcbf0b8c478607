"""The matching profiles: ours (``elderbench``, the default) and each benchmark's own step
rule, so that a run can be matched, and re-matched, the way each benchmark judges."""

from __future__ import annotations

from dataclasses import dataclass

from evaluator.matching.aitw import AitwRules
from evaluator.matching.androidcontrol import AndroidControlRules
from evaluator.matching.base import StepRules
from evaluator.matching.colorbench import ColorBenchRules
from evaluator.matching.elderbench import ElderbenchRules
from evaluator.matching.gui_odyssey import GuiOdysseyRules


@dataclass(frozen=True, slots=True)
class MatchingProfile:
    """A named way of judging a step (``rules``), with one line saying what it is."""

    name: str
    description: str
    rules: StepRules

    @property
    def needs_elements(self) -> bool:
        """Whether the rule looks at the screen's elements (from the node's hierarchy)."""
        return self.rules.needs_elements


ELDERBENCH = MatchingProfile(
    "elderbench",
    "inside the element bounds, or within the edge's radius of a demonstrated point; "
    "swipes by direction in pixels, with a minimum length",
    ElderbenchRules(),
)
PROFILES: dict[str, MatchingProfile] = {
    p.name: p
    for p in (
        ELDERBENCH,
        MatchingProfile(
            "aitw",
            "AitW: both taps in one annotation box enlarged 2.4x, or within 0.14; "
            "swipes by axis; typing by type",
            AitwRules(),
        ),
        MatchingProfile(
            "gui_odyssey",
            "GUI-Odyssey: inside the element's box or within 0.14; "
            "texts by containment or edit ratio 0.5",
            GuiOdysseyRules(),
        ),
        MatchingProfile(
            "androidcontrol",
            "AndroidControl: inside one of the 5 nearest elements enlarged 1.2x, or "
            "within 0.04; texts by containment",
            AndroidControlRules(),
        ),
        MatchingProfile(
            "colorbench",
            "ColorBench: inside the element's box, else within 151.2 px; texts by containment",
            ColorBenchRules(),
        ),
    )
}


def profile_named(name: str) -> MatchingProfile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"unknown matching profile {name!r}; choose from: {', '.join(PROFILES)}"
        ) from None
