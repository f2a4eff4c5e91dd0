"""The price table, in one place: an *estimate* of what a run cost, never a bill.

Prices are US dollars per million tokens (input, output). Cache writes cost 1.25x input (the
5-minute TTL Dayflow asks for) and cache reads 0.1x. Override or extend the table with
DAYFLOW_PRICES, a JSON object `{"model": [input, output], ...}` or the path of a file holding one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from dayflow.errors import UsageError
from dayflow.models import Usage

Prices = dict[str, tuple[float, float]]

PRICES: Prices = {
    "claude-haiku-5-5": (0.10, 0.50),
    "claude-sonnet-5-5": (2.00, 10.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "offline": (0.0, 0.0),
}
CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.10


def estimate_cost(
    model: str, usage: Usage, prices: Mapping[str, tuple[float, float]]
) -> float | None:
    """Dollars for `usage` on `model`, or None when the model has no price."""
    if model not in prices:
        return None
    per_in, per_out = prices[model]
    dollars = (
        usage.input_tokens * per_in
        + usage.cache_creation_input_tokens * per_in * CACHE_WRITE_FACTOR
        + usage.cache_read_input_tokens * per_in * CACHE_READ_FACTOR
        + usage.output_tokens * per_out
    )
    return dollars / 1_000_000


def load_prices(value: str | None) -> Prices:
    """The built-in table updated with DAYFLOW_PRICES (JSON text or a file path)."""
    table = dict(PRICES)
    if not value:
        return table
    text = value
    if not value.lstrip().startswith("{"):
        try:
            text = Path(value).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"DAYFLOW_PRICES: cannot read {value}: {exc.strerror}") from None
    try:
        extra = json.loads(text)
        for model, pair in extra.items():
            per_in, per_out = (float(x) for x in pair)
            table[str(model)] = (per_in, per_out)
    except (ValueError, TypeError, AttributeError):
        raise UsageError(
            'DAYFLOW_PRICES must be a JSON object like {"model": [input, output]} '
            "in dollars per million tokens"
        ) from None
    return table


def format_cost(dollars: float | None) -> str:
    if dollars is None:
        return "n/a"
    if dollars == 0:
        return "$0"
    return f"~${dollars:.4f}" if dollars < 1 else f"~${dollars:.2f}"
