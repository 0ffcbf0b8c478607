"""Ids: every task, demonstration, node and edge id becomes a folder or file name."""

from __future__ import annotations

import re

from graph_builder.errors import InvalidIdError

_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def validate_id(value: str, what: str = "id") -> str:
    """Return ``value`` if it is safe as a single folder name, else raise InvalidIdError.

    Ids become folder names, so path separators, ``..`` and control characters are refused.

    >>> validate_id("font_size-2")
    'font_size-2'
    >>> validate_id("../etc", "task id")
    Traceback (most recent call last):
    ...
    graph_builder.errors.InvalidIdError: task id '../etc' is not allowed: use 1-128 letters, \
digits, '.', '_' or '-', starting with a letter or digit, and no '..'
    """
    if not isinstance(value, str) or not _ID_PATTERN.fullmatch(value) or ".." in value:
        raise InvalidIdError(
            f"{what} {value!r} is not allowed: use 1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit, and no '..'"
        )
    return value
