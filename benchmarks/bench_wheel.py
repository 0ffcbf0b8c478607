"""The size of the wheel and of what it installs.

    .venv/bin/python benchmarks/bench_wheel.py

Builds the wheel from a copy of the checkout (no network: the current environment's
setuptools) and prints its size and how many PNGs it holds; the sample suite is packed
(graph_builder.packing), so each distinct image is shipped once. Target: at most 12 MB.
Then prints the runtime dependencies declared in pyproject.toml: the dropped imagehash
brought SciPy and PyWavelets, which are no longer among them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        source, dist = Path(tmp) / "src", Path(tmp) / "dist"
        shutil.copytree(
            ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info")
        )
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
            + ["--no-index", "-w", str(dist), str(source)],
            check=True,
        )
        (wheel,) = dist.glob("*.whl")
        names = zipfile.ZipFile(wheel).namelist()
        pngs = [n for n in names if n.endswith(".png")]
        print(
            f"wheel: {wheel.stat().st_size / 1e6:.1f} MB, {len(names)} files, {len(pngs)} PNGs "
            "(target <= 12 MB)"
        )
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    print("runtime dependencies:", ", ".join(dependencies))
    return 0


if __name__ == "__main__":
    sys.exit(main())
