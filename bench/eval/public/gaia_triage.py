"""AMD GAIA's email-triage corpus (`vendor_corpus_seed.jsonl`, in GAIA's MIT repository): 307
labelled mails, the only source of GAIA's `synthetic_inbox.mbox` (built from it, not committed).
Not vendored: the mail comes from a vendor's data set and public spam corpora (SpamAssassin,
Ling-Spam), so the file is read at run time from `$DAYFLOW_BENCH_CACHE/gaia/` (default
`~/.cache/dayflow/bench/gaia/`), checked against its sha256; one line says how to get it.

Each mail's label is a triage category and a suggested action: URGENT, NEEDS_RESPONSE and
PERSONAL mail is to be answered (`reply`), PROMOTIONAL mail archived, FYI mail left (`none`).
What is scored: a brief over all of them by the real loop with the offline model (no `me`, so a
reply owed is a task, as on the house set), every mail's time moved to the brief's morning in
its own order (they span 2002 to 2026); a mail gets "a task" when one is filed from it.
- false tasks per 100 mails labelled `archive` or `none` (issue 34's bar: at most 1);
- detection of mails labelled `reply`, per category (recall), and precision over all tasks.
GAIA's own figures on this corpus are an LLM's category accuracy (0.796, Gemma-4-E4B,
`baseline_accuracy.json`): another task, not a figure to stand beside these.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from bench.eval.public import Unavailable
from bench.eval.public._loop import run_brief

COMMIT = "78bbc3076bc329ec58bb2ad8bbe460d752c66d83"
URL = (
    f"https://raw.githubusercontent.com/amd/gaia/{COMMIT}/tests/fixtures/email/"
    "vendor_corpus_seed.jsonl"
)
SHA256 = "ff6a54669806334f86212b5fbd7d64cb924e2a5b4b2f4f1b67cac29d3e602bc6"
BRIEF_DATE = dt.date(2026, 7, 17)  # the day after the corpus's last mail


def path() -> Path:
    root = Path(os.environ.get("DAYFLOW_BENCH_CACHE") or "~/.cache/dayflow/bench").expanduser()
    return root / "gaia" / "vendor_corpus_seed.jsonl"


def load(file: Path | None = None, sha256: str | None = SHA256) -> list[dict[str, Any]]:
    """The rows of the file (`sha256` None: any content, for a test's excerpt)."""
    file = file or path()
    if not file.is_file():
        raise Unavailable(
            f"GAIA's vendor_corpus_seed.jsonl is not at {file}: "
            f"curl -L --create-dirs -o {file} {URL}"
        )
    data = file.read_bytes()
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise Unavailable(f"{file} is not the file of GAIA {COMMIT[:7]} (sha256 differs)")
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def messages(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The inbox: each row's mail, its time moved to the brief's morning in its own order."""
    order = sorted(range(len(rows)), key=lambda n: (rows[n]["date"], rows[n]["id"]))
    start = dt.datetime.combine(BRIEF_DATE, dt.time(1, 0), dt.UTC)
    out = []
    for k, n in enumerate(order):
        r = rows[n]
        to = r.get("to") or []
        out.append(
            {
                "id": r["id"],
                "from": r["sender"],
                "to": to if isinstance(to, list) else [to],
                "cc": r.get("cc") or [],
                "subject": r["subject"] or "(no subject)",
                "body": r["body"] or "",
                "received_at": (start + dt.timedelta(minutes=k)).isoformat(),
                "unread": True,
            }
        )
    return out


def score(rows: list[dict[str, Any]], with_task: set[str]) -> dict[str, Any]:
    """The counts, from the ids of the rows a task was filed from."""
    per: Counter[tuple[str, bool]] = Counter()
    for r in rows:
        per[(r["category"], r["id"] in with_task)] += 1
    quiet = [r for r in rows if r["suggestedAction"] != "reply"]
    asks = [r for r in rows if r["suggestedAction"] == "reply"]
    false = sum(r["id"] in with_task for r in quiet)
    found = sum(r["id"] in with_task for r in asks)
    return {
        "categories": {c: (per[(c, True)], per[(c, True)] + per[(c, False)]) for c, _ in per},
        "quiet": len(quiet),
        "false": false,
        "asks": len(asks),
        "found": found,
        "precision": found / (found + false) if found + false else 0.0,
        "recall": found / len(asks) if asks else 0.0,
        "false_per_100": 100 * false / len(quiet) if quiet else 0.0,
    }


def report() -> str:
    rows = load()
    outcome = run_brief(messages(rows), BRIEF_DATE)
    s = score(rows, {mid for mid, tasks in outcome.by_message.items() if tasks})
    p, r = s["precision"], s["recall"]
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    lines = [
        f"## AMD GAIA's triage corpus (`vendor_corpus_seed.jsonl` at `{COMMIT[:7]}`), "
        "model `offline`",
        "",
        f"Run: {outcome.status}, {len(rows)} mails, {len(outcome.tasks)} tasks.",
        "",
        "| category (suggested action) | mails | with a task |",
        "|---|---|---|",
    ]
    action = {r["category"]: r["suggestedAction"] for r in rows}
    for cat in sorted(s["categories"]):
        got, n = s["categories"][cat]
        lines.append(f"| {cat} ({action[cat]}) | {n} | {got} |")
    lines += [
        "",
        f"Mails to answer found (recall): {s['found']}/{s['asks']} = {r:.3f}; precision "
        f"{p:.3f}; F1 **{f1:.3f}**. False tasks per 100 mails to archive or leave: "
        f"**{s['false_per_100']:.1f}** ({s['false']} on {s['quiet']}).",
    ]
    return "\n".join(lines)
