"""Where the shared real-device fixtures live; tests skip when they are absent."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
LLAMATOUCH_TRACE = SHARED_FIXTURES / "real" / "llamatouch_trace_18"


def require_llamatouch_trace() -> Path:
    """The real LlamaTouch trace folder, or skip the test saying why."""
    if not (LLAMATOUCH_TRACE / "0.xml").exists():
        pytest.skip(
            f"shared fixtures not found at {LLAMATOUCH_TRACE} (they sit beside the repo on CI)"
        )
    return LLAMATOUCH_TRACE
