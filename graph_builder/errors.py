"""The graph_builder package's exceptions: one root, and specific kinds below it."""

from __future__ import annotations


class GraphBuilderError(Exception):
    """Root of every error raised by graph_builder."""


class FormatError(GraphBuilderError):
    """A file or JSON document does not have the expected format.

    The message names the file (when there is one) and the problem.
    """

    def __init__(self, problem: str, *, source: object = None) -> None:
        self.problem = problem
        self.source = str(source) if source is not None else None
        super().__init__(f"{self.source}: {problem}" if self.source else problem)


class InvalidIdError(GraphBuilderError):
    """A task or demonstration id that cannot safely become a folder name."""


class GraphEditError(GraphBuilderError):
    """A graph edit that does not apply to the graph it was given."""


class RecordError(GraphBuilderError, ValueError):
    """A model record given values that break its rules; the message names the field.

    It is a ValueError too, so callers that validate input with ``except ValueError`` keep
    working.
    """
