"""Matching conformance: each benchmark profile against that benchmark's own code.

    .venv/bin/python benchmarks/matching_conformance.py --refs /tmp/refs [--cases 3000]
        [--seed 0] [--profile aitw ...] [--examples 2]

Draws ``--cases`` random steps per profile (benchmarks/matching_cases.py: taps near, far
and on element borders, long presses, swipes of every angle and length, texts with case,
spacing and small edits, back/home/enter/wait, and actions of another type), judges each
with our profile (``evaluator.matching.match_edges`` on the one edge built from the gold
step, with its demonstrated action, given the node's elements, as the evaluator does)
and with the benchmark's reference code (benchmarks/matching_references.py), and prints
the agreement per profile and the disagreements by case class. Steps the benchmark has
no form for (a double tap, a wait in a benchmark without one) are drawn again. Target:
at least 99% per profile.

``--refs`` is a folder kept outside this repository with the public reference files:

    aitw/android_in_the_wild/action_matching.py, action_type.py (+ an empty __init__.py)
        google-research/google-research @ 1d49f2c0d5506a6e11115726164d42f6b7b7b95a
    gui_odyssey/GUIOdyssey_action_matching.py, evaluate_GUIOdyssey.py   (src/eval_mm/)
    gui_odyssey/format_converter.py                                     (data/)
        OpenGVLab/GUI-Odyssey @ fefcbe9d76e2f010c68225ae7f378c4c550a89c1
    agentcpm/utils/evaluator.py, action_type.py, schema/schema_for_extraction.json
        OpenBMB/AgentCPM-GUI @ acbaf509b8afb3f58b782486f4e8c0e33d8a486b   (eval/utils/)
    colorbench/graph_tools.py
        MadeAgents/ColorBench @ 1f26a84230d26f99d84eab97d05032582b39018e  (src/test/)

Without jax installed the AitW file runs on numpy (``jax.numpy`` is given numpy's module;
the operations it uses mean the same there). The harness runs against whatever
``evaluator.matching`` is importable, so running it from an older checkout (with this
file copied in) measures the code before a change; keyword arguments that checkout's
``match_edges`` does not take are left out.
"""

from __future__ import annotations

import argparse
import inspect
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.matching_cases import KEYS, Case, draw  # noqa: E402
from benchmarks.matching_references import REFERENCES  # noqa: E402
from evaluator.matching import PROFILES, match_edges  # noqa: E402
from graph_builder.model import Edge, EdgeSupport, MemberRef  # noqa: E402

# the special steps each benchmark has (back/home/enter/wait)
BENCHMARK_KEYS = {
    "aitw": ("back", "home", "enter"),
    "gui_odyssey": ("back", "home"),
    "androidcontrol": KEYS,
    "colorbench": ("wait",),
}
_ACCEPTED = set(inspect.signature(match_edges).parameters)


def ours(profile: str, case: Case) -> bool:
    """Our verdict: whether the one edge built from the gold step takes the action."""
    edge = Edge("e", "here", "there", case.rule, (EdgeSupport(MemberRef("demo", 0), case.gold),))
    kwargs = {"screen": case.screen, "profile": PROFILES[profile], "elements": case.elements()}
    kept = {k: v for k, v in kwargs.items() if k in _ACCEPTED}
    return match_edges([edge], case.agent, **kept).matched  # type: ignore[arg-type]


def run_profile(profile: str, refs: Path, cases: int, seed: int, examples: int) -> float:
    reference = REFERENCES[profile](refs)
    rnd = random.Random(f"{seed}-{profile}")
    keys = BENCHMARK_KEYS[profile]
    agree = done = 0
    classes: Counter[str] = Counter()
    wrong: Counter[tuple[str, bool]] = Counter()
    shown: dict[tuple[str, bool], list[str]] = {}
    while done < cases:
        case = draw(rnd, keys)
        theirs = reference(case)
        if theirs is None:
            continue
        done += 1
        classes[case.kind] += 1
        mine = ours(profile, case)
        if mine == theirs:
            agree += 1
            continue
        key = (case.kind, theirs)
        wrong[key] += 1
        if len(shown.setdefault(key, [])) < examples:
            shown[key].append(
                f"      gold {case.gold.describe()} rule {case.rule.to_json()} screen "
                f"{case.screen}; agent {case.agent.to_json()}"
            )
    share = 100 * agree / done
    print(f"{profile}: {agree}/{done} agree ({share:.2f}%)")
    for (kind, theirs), count in wrong.most_common():
        verdict = "matches" if theirs else "rejects"
        print(f"  {count:5d} of {classes[kind]:5d} {kind}: the benchmark {verdict}, we do not")
        for line in shown[(kind, theirs)]:
            print(line)
    return share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--refs", type=Path, required=True, help="folder of reference files")
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="append", choices=sorted(REFERENCES))
    parser.add_argument("--examples", type=int, default=2, help="cases shown per class")
    args = parser.parse_args()
    if not args.refs.is_dir():
        parser.error(f"--refs {args.refs} is not a folder")
    shares = {
        p: run_profile(p, args.refs, args.cases, args.seed, args.examples)
        for p in args.profile or list(REFERENCES)
    }
    print("agreement: " + ", ".join(f"{p} {s:.2f}%" for p, s in shares.items()))
    if min(shares.values()) < 99.0:
        sys.exit(1)


if __name__ == "__main__":
    main()
