"""Shipped task suites, and the scripts that regenerate them.

``task_graphs/sample`` is a small suite on the virtual phone (see
``task_graphs.sample_recipes``); ``python -m task_graphs.generate`` rebuilds it. Use
``sample_suite()`` for its folder: an installed wheel ships each distinct file once
(``graph_builder.packing``) and the first call puts the copies back.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from graph_builder.packing import restore

SAMPLE_DIR = Path(__file__).resolve().parent / "sample"


def sample_suite() -> Path:
    """The sample suite's folder, complete. Restored in place; where the installation is
    read-only, in a copy under the user's cache folder."""
    try:
        restore(SAMPLE_DIR)
        return SAMPLE_DIR
    except OSError:
        pass
    from elderbench import __version__

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    copy = cache / "elderbench-studio" / f"sample-{__version__}"
    if not copy.is_dir():
        tmp = copy.with_name(copy.name + ".copying")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(SAMPLE_DIR, tmp)
        os.replace(tmp, copy)
    restore(copy)
    return copy
