"""Token prices (resources/prices.json, user-editable) and the cost of a run.

The file maps a model name to its price in ``currency`` per million input and output
tokens. Models are looked up by exact name, then case-insensitively.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from evaluator.errors import ConfigError
from graph_builder.errors import GraphBuilderError
from graph_builder.io import read_json

# Package data, so an installed wheel finds it as a checkout does.
DEFAULT_PRICES = resources.files("resources").joinpath("prices.json")


@dataclass(frozen=True, slots=True)
class Price:
    input: float  # per million tokens
    output: float


@dataclass(frozen=True, slots=True)
class PriceTable:
    currency: str
    models: Mapping[str, Price]
    source: str | None = None  # the file it was read from

    def to_json(self) -> dict[str, Any]:
        """The table as a report records it (``prices_from_json`` reads it back)."""
        return {
            "file": self.source,
            "currency": self.currency,
            "models": {m: {"input": p.input, "output": p.output} for m, p in self.models.items()},
        }

    def price(self, model: str | None) -> Price | None:
        if not model:
            return None
        found = self.models.get(model)
        if found is None:
            folded = model.casefold()
            found = next((p for m, p in self.models.items() if m.casefold() == folded), None)
        return found

    def cost(self, model: str | None, input_tokens: int, output_tokens: int) -> float | None:
        """The cost of these tokens; 0 when no tokens were used, None when unpriced."""
        if input_tokens == 0 and output_tokens == 0:
            return 0.0
        price = self.price(model)
        if price is None:
            return None
        return (input_tokens * price.input + output_tokens * price.output) / 1_000_000


def load_prices(path: Path | None = None) -> PriceTable:
    try:
        if path is None:
            with resources.as_file(DEFAULT_PRICES) as shipped:
                path = shipped
                data = read_json(shipped)
        else:
            path = Path(path)
            data = read_json(path)
    except GraphBuilderError as exc:
        raise ConfigError(f"cannot read the price table: {exc}") from exc
    return prices_from_json(data, str(path), source=str(path))


def prices_from_json(data: Any, where: str, *, source: str | None = None) -> PriceTable:
    """A price table from its JSON (a prices file, or ``PriceTable.to_json``); ``where``
    names it in errors."""
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise ConfigError(f"{where}: expected an object with 'models': {{name: {{input, output}}}}")
    table: dict[str, Price] = {}
    for name, entry in models.items():
        try:
            table[name] = Price(float(entry["input"]), float(entry["output"]))
        except (KeyError, TypeError, ValueError):
            raise ConfigError(
                f"{where}: model {name!r} needs numeric 'input' and 'output' prices"
            ) from None
    return PriceTable(str(data.get("currency", "USD")), table, source)
