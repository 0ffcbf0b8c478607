"""Where the shared real-device fixtures live; tests skip when they are absent.

They sit beside the repository (``../shared/fixtures``); ``ELDERBENCH_SHARED_FIXTURES``
points elsewhere (a second working copy of the repository, for example).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_FIXTURES = Path(
    os.environ.get("ELDERBENCH_SHARED_FIXTURES")
    or Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
)
LLAMATOUCH_TRACE = SHARED_FIXTURES / "real" / "llamatouch_trace_18"
DEV_SCREENS = SHARED_FIXTURES / "real" / "dev_screens"


def require_llamatouch_trace() -> Path:
    """The real LlamaTouch trace folder, or skip the test saying why."""
    if not (LLAMATOUCH_TRACE / "0.xml").exists():
        pytest.skip(
            f"shared fixtures not found at {LLAMATOUCH_TRACE} (they sit beside the repo on CI)"
        )
    return LLAMATOUCH_TRACE


def require_dev_screens() -> Path:
    """The labelled real screens (dev_screens), or skip the test saying why."""
    if not (DEV_SCREENS / "pairs.tsv").exists():
        pytest.skip(f"real development screens not found at {DEV_SCREENS} (beside the repo)")
    return DEV_SCREENS
