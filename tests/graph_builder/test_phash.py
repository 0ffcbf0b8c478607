"""The numpy perceptual hashes equal the ImageHash library's, bit for bit: every hash
stored in the sample suite was made by that library at capture time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from graph_builder.hierarchy import load_hierarchy
from graph_builder.io import demo_dirs, load_demo
from graph_builder.phash import bits_to_hex, compute_phash

SAMPLE = Path(__file__).resolve().parents[2] / "task_graphs" / "sample"


def test_every_hash_stored_in_the_sample_suite_is_recomputed_bit_for_bit():
    seen: set[tuple[bytes, bytes, str | None]] = set()
    for folder in demo_dirs(SAMPLE / "demos"):
        for step in load_demo(folder).steps:
            obs = step.observation
            png = (folder / obs.screenshot).read_bytes()
            xml = (folder / obs.hierarchy).read_bytes() if obs.hierarchy else b""
            if (png, xml, obs.phash) in seen:
                continue  # the same screen recorded again: same inputs, same stored hash
            seen.add((png, xml, obs.phash))
            hierarchy = load_hierarchy(folder / obs.hierarchy) if obs.hierarchy else None
            with Image.open(folder / obs.screenshot) as image:
                assert compute_phash(image, hierarchy) == obs.phash, folder / obs.screenshot
    assert len(seen) >= 100  # every distinct screen of the sample suite


@pytest.mark.parametrize(
    ("bits", "hex_digits"),
    [([[1, 0], [0, 0]], "8"), ([[0] * 8, [1] * 8], "00ff"), ([[1, 1, 1]], "7")],
)
def test_bits_become_hex_first_bit_most_significant(bits, hex_digits):
    assert bits_to_hex(np.array(bits, dtype=bool)) == hex_digits
