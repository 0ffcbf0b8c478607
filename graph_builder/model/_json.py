"""Reading and writing the model's JSON: typed field access, numbers, frozen copies.

Every record's ``from_json(data, *, where=..., source=None)`` builds a ``Reader`` over
``data``; ``where`` is the record's place in its document (``graph.edges[2].rule``) and
``source`` the file, so every problem names both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from graph_builder.errors import FormatError, InvalidIdError

SCHEMA_VERSION = 1


def num(value: float) -> float | int:
    """Write integral floats as ints so device-pixel JSON stays readable."""
    return int(value) if float(value).is_integer() else round(value, 3)


def freeze(value: Any) -> Any:
    """A read-only copy of a JSON value: objects become mapping proxies, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The plain JSON value (dicts and lists) of a ``freeze``d one."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value


class Reader:
    """Typed access to one JSON object; every problem names the document and the field."""

    __slots__ = ("_data", "where", "source")

    def __init__(self, data: object, where: str, source: object = None) -> None:
        if not isinstance(data, dict):
            raise FormatError(
                f"{where} must be a JSON object, not {type(data).__name__}", source=source
            )
        self._data: dict[str, Any] = data
        self.where = where
        self.source = source

    def fail(self, key: str, problem: str) -> FormatError:
        return FormatError(f"{self.where}: field {key!r} {problem}", source=self.source)

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def get(
        self, key: str, kind: type | tuple[type, ...], *, default: Any = ..., null: bool = False
    ) -> Any:
        if key not in self._data:
            if default is ...:
                raise self.fail(key, "is missing")
            return default
        value = self._data[key]
        if value is None and null:
            return None
        kinds = kind if isinstance(kind, tuple) else (kind,)
        # JSON has no int/bool distinction problems for us except that bool is an int subclass.
        if isinstance(value, bool) and bool not in kinds:
            raise self.fail(key, f"must be {_kind_names(kinds)}, not a boolean")
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, kinds):
            raise self.fail(key, f"must be {_kind_names(kinds)}, not {type(value).__name__}")
        return value

    def str_list(self, key: str) -> tuple[str, ...]:
        values = self.get(key, list, default=[])
        if not all(isinstance(v, str) for v in values):
            raise self.fail(key, "must be a list of strings")
        return tuple(values)

    def record[T](self, key: str, parse: Callable[..., T], *, kind: type = dict) -> T:
        """The record in field ``key`` (required, a JSON ``kind``), parsed by a ``from_json``."""
        value = self.get(key, kind)
        return parse(value, where=f"{self.where}.{key}", source=self.source)

    def optional[T](self, key: str, parse: Callable[..., T]) -> T | None:
        """The record in object field ``key``, or None when the field is missing or null."""
        value = self.get(key, dict, default=None, null=True)
        if value is None:
            return None
        return parse(value, where=f"{self.where}.{key}", source=self.source)

    def records[T](self, key: str, parse: Callable[..., T], *, default: Any = ...) -> tuple[T, ...]:
        """The records in the list field ``key``, each parsed by a ``from_json``."""
        values = self.get(key, list, default=default)
        return tuple(
            parse(v, where=f"{self.where}.{key}[{i}]", source=self.source)
            for i, v in enumerate(values)
        )

    def enum[E: StrEnum](self, key: str, enum: type[E], *, default: Any = ...) -> E:
        raw = self.get(key, str, default=default)
        try:
            return enum(raw)
        except ValueError:
            allowed = ", ".join(e.value for e in enum)
            raise self.fail(key, f"is {raw!r}; expected one of: {allowed}") from None

    def size(self, key: str) -> tuple[int, int]:
        value = self.get(key, list)
        if len(value) != 2 or not all(isinstance(v, int) and v > 0 for v in value):
            raise self.fail(key, "must be [width, height] with two positive integers")
        return (value[0], value[1])

    def build[T](self, factory: type[T], **kwargs: Any) -> T:
        """Construct a record, turning its validation errors into a FormatError here."""
        try:
            return factory(**kwargs)
        except (ValueError, TypeError, InvalidIdError) as exc:
            raise FormatError(f"{self.where}: {exc}", source=self.source) from exc


def _kind_names(kinds: tuple[type, ...]) -> str:
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        list: "a list",
        dict: "an object",
    }
    return " or ".join(names.get(k, k.__name__) for k in kinds)
