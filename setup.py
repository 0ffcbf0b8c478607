"""The wheel build: everything is declared in pyproject.toml; this file only adds one step.

After the package files are copied into the build folder, the sample suite there is
packed: each distinct PNG is kept once and the other copies are listed in
duplicates.json (graph_builder.packing), which shrinks the wheel from 33 MB to about 11 MB.
``task_graphs.sample_suite()`` and the studio put the copies back on first use.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class PackSampleSuite(build_py):
    def run(self) -> None:
        super().run()
        # Loaded by path: the build must use this tree's code, not an installed copy.
        spec = importlib.util.spec_from_file_location(
            "packing", Path(__file__).parent / "graph_builder" / "packing.py"
        )
        assert spec is not None and spec.loader is not None
        packing = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(packing)
        sample = Path(self.build_lib) / "task_graphs" / "sample"
        if sample.is_dir():
            dropped = packing.pack(sample)
            self.announce(f"sample suite: {dropped} duplicate PNGs left to duplicates.json", 2)


setup(cmdclass={"build_py": PackSampleSuite})
