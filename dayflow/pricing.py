"""The price table, in one place: an *estimate* of what a run cost, never a bill.

Prices are US dollars per million tokens (input, output). Cache writes cost 1.25x input (the
5-minute TTL Dayflow asks for) and cache reads 0.1x; a call answered by the Message Batches API
costs half of all that. Override or extend the table with
DAYFLOW_PRICES, a JSON object `{"model": [input, output], ...}` or the path of a file holding one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from dayflow.errors import UsageError
from dayflow.models import Run, Usage

Prices = dict[str, tuple[float, float]]

PRICES: Prices = {
    "claude-haiku-5-5": (0.10, 0.50),
    "claude-sonnet-5-5": (2.00, 10.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "offline": (0.0, 0.0),
}
CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.10
# The Message Batches API bills every part of a call's usage (cache reads and writes included)
# at half the price.
BATCH_FACTOR = 0.5


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


def run_cost(run: Run, prices: Mapping[str, tuple[float, float]]) -> float | None:
    """Dollars for `run` so far: at the price recorded when it was made (a local run's $0),
    else at its model's price in `prices` (None when the model has none); the tokens answered
    by Message Batches (`run.batch_usage`) at `BATCH_FACTOR` of that price."""
    price = run.settings.price
    table = {run.model: price} if price is not None else prices
    full = estimate_cost(run.model, run.usage, table)
    if full is None or run.batch_usage.total == 0:
        return full
    batched = estimate_cost(run.model, run.batch_usage, table) or 0.0
    return full - batched * (1 - BATCH_FACTOR)


MAX_PRICE = 1_000_000.0  # dollars per million tokens: far above any real price


def load_prices(value: str | None) -> Prices:
    """The built-in table updated with DAYFLOW_PRICES (JSON text or a file path). Prices must
    be finite, non-negative numbers: NaN or Infinity would make `--json` output invalid."""
    table = dict(PRICES)
    if not value or not value.strip():
        return table
    text, where = value, "DAYFLOW_PRICES"
    if value.lstrip()[:1] not in ("{", "[", '"') and not _looks_like_json(value):
        where = f"DAYFLOW_PRICES file {value}"
        from dayflow import files

        try:
            text = files.read_regular(Path(value).expanduser(), 2**20).decode("utf-8-sig")
        except (files.NotRegular, files.TooLarge) as exc:
            raise UsageError(f"DAYFLOW_PRICES: cannot read the file {value}: {exc}") from None
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or "not UTF-8 text"
            raise UsageError(f"DAYFLOW_PRICES: cannot read the file {value}: {why}") from None
    shape = 'a JSON object like {"model": [input, output]} in dollars per million tokens'
    try:
        extra = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise UsageError(f"{where} must be {shape}: it is not valid JSON") from None
    if not isinstance(extra, dict):
        raise UsageError(f"{where} must be {shape}, not {type(extra).__name__}")
    for model, pair in extra.items():
        if not isinstance(pair, list) or len(pair) != 2 or not all(_is_price(x) for x in pair):
            raise UsageError(
                f"{where}: the price of {model!r} must be [input, output], two numbers from 0 "
                f"to {MAX_PRICE:,.0f} (dollars per million tokens), not {json.dumps(pair)}"
            )
        table[str(model)] = (float(pair[0]), float(pair[1]))
    return table


def _looks_like_json(value: str) -> bool:
    return value.strip()[:1].isdigit() or value.strip() in ("true", "false", "null")


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a price")


def _is_price(x: object) -> bool:
    return (
        isinstance(x, int | float)
        and not isinstance(x, bool)
        and math.isfinite(x)
        and 0 <= x <= MAX_PRICE
    )


def format_cost(dollars: float | None) -> str:
    if dollars is None:
        return "n/a"
    if dollars == 0:
        return "$0"
    return f"~${dollars:.4f}" if dollars < 1 else f"~${dollars:.2f}"
