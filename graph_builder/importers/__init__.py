"""Importers of foreign trajectories into our demonstration format.

An importer reads one trajectory folder and writes one demonstration with DemoWriter
(computing the perceptual hash on the way), plus the task's task.json beside the demos
at ``<demos>/<task>/task.json`` when there is none yet. Register new importers (AitW,
AndroidControl, ...) in ``IMPORTERS``.

>>> import tempfile
>>> from PIL import Image
>>> tmp = Path(tempfile.mkdtemp())
>>> trace = tmp / "trace_18"
>>> trace.mkdir()
>>> for i in range(2):
...     Image.new("RGB", (320, 720), "white").save(trace / f"{i}.png")
>>> _ = (trace / "instruction.txt").write_text("Open the app")
>>> _ = (trace / "eventStructs.txt").write_text(
...     "[Click] Screen Resolution (320, 720), Click Position (160, 360)")
>>> result = IMPORTERS["llamatouch"](trace, task_id="open_app", demos_root=tmp / "demos")
>>> [step.action.describe() for step in result.demo.steps]
['tap (160, 360)', 'done']
>>> import shutil; shutil.rmtree(tmp)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from graph_builder.model import Demonstration


@dataclass(frozen=True, slots=True)
class ImportResult:
    demo: Demonstration
    folder: Path
    task_file: Path
    notes: tuple[str, ...] = ()


class Importer(Protocol):
    """Turns one foreign trajectory folder into a demonstration under ``demos_root``."""

    def __call__(
        self, source: Path, *, task_id: str, demos_root: Path, demo_id: str | None = None
    ) -> ImportResult: ...


def _registry() -> dict[str, Importer]:
    from graph_builder.importers.appagent import import_appagent
    from graph_builder.importers.droidbot import import_droidbot
    from graph_builder.importers.llamatouch import import_llamatouch

    return {
        "llamatouch": import_llamatouch,
        "droidbot": import_droidbot,
        "appagent": import_appagent,
    }


IMPORTERS: dict[str, Importer] = _registry()
