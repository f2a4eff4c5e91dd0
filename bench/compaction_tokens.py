"""Issue 4's figure: total input tokens of the long run with compaction on against off.

The run is `dayflow brief --sample large` (69 long messages, about 35 steps) driven through the
real loop and store by the offline model, which is deterministic: one run per setting gives the
figure exactly, with no noise to average away. Tokens are the offline model's estimates (a
quarter of the characters of each request), the same estimator on both sides.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any

from dayflow.agent import BriefOptions, Loop, start_run
from dayflow.compaction import DEFAULT_COMPACT_AT
from dayflow.models import RunSettings
from dayflow.providers.offline import OfflineModel
from dayflow.store import open_store

SETTINGS = (0, DEFAULT_COMPACT_AT)  # off, and the default threshold


def measure(tmp: Path) -> dict[int, dict[str, Any]]:
    """{compact_at: steps, total input tokens, compactions, task keys, brief sections}."""
    out = {}
    for compact_at in SETTINGS:
        with open_store(tmp / f"long-{compact_at}.db") as store:
            options = BriefOptions(
                brief_date=date(2026, 11, 5),
                max_steps=80,
                settings=RunSettings(sample="large", compact_at=compact_at),
            )
            result = start_run(Loop(store, OfflineModel()), options)
            run = result.run
            out[compact_at] = {
                "status": run.status,
                "steps": run.steps,
                "input_tokens": run.usage.total_input,
                "compactions": len(store.steps.compactions(run.id)),
                "tasks": sorted(t.idempotency_key for t in store.tasks.list()),
                "sections": re.findall(r"^## (.+)$", result.text or "", re.MULTILINE),
                "brief": result.text,
            }
    return out


def section(data: dict[int, dict[str, Any]]) -> list[str]:
    """RESULTS.md lines for the figure, with its verdict against the 60% target."""
    off, on = data[0], data[DEFAULT_COMPACT_AT]
    cut = 1 - on["input_tokens"] / off["input_tokens"]
    same_tasks = on["tasks"] == off["tasks"]
    same_sections = on["sections"] == off["sections"]
    verdict = "met" if cut >= 0.60 and same_tasks and same_sections else "**missed**"
    rows = [
        f"| off (`--compact-at 0`) | {off['steps']} | {off['input_tokens']:,} | 0 |",
        f"| on (default, {DEFAULT_COMPACT_AT:,}) | {on['steps']} | {on['input_tokens']:,} | "
        f"{on['compactions']} |",
    ]
    return [
        "## Compaction: input tokens over the long run (issue 4)",
        "",
        "`dayflow brief --sample large --date 2026-11-05` through the real loop and store, the "
        "offline model deterministic (one run per setting is exact; tokens are its estimates).",
        "",
        "| compaction | steps | total input tokens | compactions |",
        "|---|---|---|---|",
        *rows,
        "",
        f"Reduction: **{cut:.1%}** (target at least 60%: {verdict}). Same tasks created: "
        f"{'yes' if same_tasks else 'NO'} ({len(on['tasks'])}); same brief sections: "
        f"{'yes' if same_sections else 'NO'} ({', '.join(on['sections'])}); the same brief "
        f"byte for byte: {'yes' if on['brief'] == off['brief'] else 'no'}.",
        "",
    ]
