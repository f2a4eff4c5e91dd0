from __future__ import annotations

import json
from pathlib import Path

import pytest

from dayflow.errors import UsageError
from dayflow.frozen import replace
from dayflow.models import Usage
from dayflow.pricing import PRICES, estimate_cost, format_cost, load_prices, run_cost
from dayflow.store import Store
from tests.scripted import text, tool_use, turn
from tests.test_agent import _new_run


def test_cost_counts_cache_writes_and_reads_at_their_rates() -> None:
    usage = Usage(1_000_000, 1_000_000, 1_000_000, 1_000_000)
    # haiku-5-5: 0.10 in, 0.50 out; writes 1.25x, reads 0.1x
    assert estimate_cost("claude-haiku-5-5", usage, PRICES) == pytest.approx(
        0.10 + 0.50 + 0.125 + 0.01
    )


def test_unknown_model_has_no_price_and_offline_is_free() -> None:
    assert estimate_cost("mystery", Usage(10, 10), PRICES) is None
    assert estimate_cost("offline", Usage(10, 10), PRICES) == 0
    assert format_cost(None) == "n/a" and format_cost(0) == "$0"


def test_prices_can_be_overridden_inline_or_from_a_file(tmp_path: Path) -> None:
    table = load_prices('{"claude-haiku-5-5": [1, 2], "my-model": [3, 4]}')
    assert table["claude-haiku-5-5"] == (1.0, 2.0) and table["my-model"] == (3.0, 4.0)
    f = tmp_path / "prices.json"
    f.write_text(json.dumps({"x": [0.5, 1]}))
    assert load_prices(str(f))["x"] == (0.5, 1.0)


@pytest.mark.parametrize("bad", ['{"m": 3}', "{nope", "/no/such/file.json", '{"m": ["a", 1]}'])
def test_bad_price_overrides_are_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError, match="DAYFLOW_PRICES"):
        load_prices(bad)


def test_the_tokens_a_message_batch_answered_cost_half(store: Store) -> None:
    """A run priced from its rows: the batch step at half, the normal one in full."""
    run, lease = store.runs.create(replace(_new_run(), model="claude-haiku-5-5"))
    batched = replace(turn(tool_use("t1", "read_inbox"), usage=(1_000_000, 0)), batch_id="mb_1")
    store.steps.begin(lease, 1, batched, 5)
    store.steps.complete(lease, 1, [{"type": "tool_result", "tool_use_id": "t1", "content": ""}])
    store.steps.begin(lease, 2, turn(text("brief"), usage=(1_000_000, 0)), 5)
    assert run_cost(store.runs.get(run.id), PRICES) == pytest.approx(0.05 + 0.10)
