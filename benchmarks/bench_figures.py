"""How long ``elderbench figures`` takes for the four sample runs.

    .venv/bin/python benchmarks/bench_figures.py [--repeats 3]

Makes the sample suite's heuristic and random runs on original and normalized
instructions (offline) in a temporary folder, then runs the whole command, Python's start
and matplotlib's import included, ``--repeats`` times into fresh folders and prints each
time and the median. Also prints the time to start the CLI without drawing (``--help``),
which must not grow with matplotlib (it is imported only to draw).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "task_graphs" / "sample"
RUNS = ("heuristic-original", "heuristic-normalized", "random-original", "random-normalized")


def _cli(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "elderbench.cli", *args],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=600,
    )
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for name in RUNS:
            agent, variant = name.split("-")
            run = Path(tmp) / name
            argv = ["eval", "--suite", str(SAMPLE), "--protocol", "offline", "--agent", agent]
            _cli(*argv, "--instruction", variant, "--out", str(run), "--no-report")
            runs.append(str(run))
        times = [
            _cli("figures", *runs, "--out", str(Path(tmp) / f"figures-{i}"))
            for i in range(args.repeats)
        ]
        files = sorted(p.name for p in (Path(tmp) / "figures-0").iterdir())
    startup = statistics.median(_cli("--help") for _ in range(args.repeats))
    each = ", ".join(f"{t:.2f}" for t in times)
    median = statistics.median(times)
    print(f"figures of {len(RUNS)} runs ({len(files)} files): {each} s; median {median:.2f} s")
    print(f"elderbench --help (no drawing): median {startup:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
