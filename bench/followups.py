"""Followups: does reading who owes whom a reply cost the window, or the whole mailbox?

Two boxes, each a Maildir INBOX and a Maildir Sent, holding the same last two weeks of mail
(50 conversations: a question in the inbox, a reply in Sent to most of them, a question of the
user's to some): the *small* box holds only those 100 messages; the *large* one the same 100
plus 9,950 older messages in each folder (a year and a half of mail before the window), 20,000
in all. Each round reads the followups of the default 14-day window the way a run does (a
fresh `Feed` over fresh sources: a new process's view), small and large interleaved; the
medians and their ratio are reported, with the per-round ratios. Two cases, as bench/mail.py
has: *warm*, the Maildir folder names kept by an earlier listing are valid (the followups
after `read_inbox` in the same run); *cold*, they are not (mail arrived since), so the
folders' names are read again. Target: the warm ratio within 1.5x.

Run alone: `python -m bench.followups` (about a minute; `--quick`: three rounds, not
written). It prints the section and, unless `--quick`, writes it between the followups
markers of bench/RESULTS.md (the rest of the file is left as it is).
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.stats import write_between

BEGIN, END = "<!-- followups: begin -->", "<!-- followups: end -->"
DAY = dt.date(2026, 11, 18)
RECENT, OLD = 50, 9_950  # conversations in the window; older messages per folder (large box)
TARGET = 1.5


def _mail(n: int, *, mine: bool, when: dt.datetime, reply_to: str = "") -> bytes:
    from tests.mailkit import thread_mail

    them = f"Person {n % 40} <p{n % 40}@example.com>"
    me = "Alex Doe <alex@example.org>"
    ask = f"About item {n}: could you look at the numbers before Friday? "
    body = (f"Here are the numbers for item {n}. " if reply_to else ask) * 8
    return thread_mail(
        f"{'a' if mine else 'q'}{n}@bench", sender=me if mine else them, to=them if mine else me,
        subject=f"{'Re: ' if reply_to else ''}Item {n}", body=body, when=when, reply_to=reply_to,
    )  # fmt: skip


def build_box(root: Path, old: int) -> tuple[Path, Path]:
    """A Maildir INBOX and Sent: `old` messages each before the window, then the window's."""
    from tests.mailkit import deliver

    inbox, sent = root / "INBOX", root / "Sent"
    end = dt.datetime.combine(DAY, dt.time(8), tzinfo=dt.UTC)
    for n in range(old):
        when = end - dt.timedelta(days=20) - dt.timedelta(minutes=80 * (old - n))
        deliver(inbox, _mail(10_000 + n, mine=False, when=when), when)
        deliver(sent, _mail(10_000 + n, mine=True, when=when, reply_to=f"q{10_000 + n}@bench"),
                when + dt.timedelta(hours=1))  # fmt: skip
    for n in range(RECENT):
        when = end - dt.timedelta(hours=6 * (RECENT - n))
        deliver(inbox, _mail(n, mine=False, when=when), when)
        if n % 5:  # most are answered, an hour later; every fifth is owed
            later = when + dt.timedelta(hours=1)
            deliver(sent, _mail(n, mine=True, when=later, reply_to=f"q{n}@bench"), later)
        else:  # and for those the user asked something of someone else
            deliver(sent, _mail(n + 500, mine=True, when=when), when)
    return inbox, sent


def _read_once(inbox: Path, sent: Path, cache: Path, *, cold: bool) -> tuple[float, int]:
    from dayflow.followups import Feed
    from dayflow.sources.maildir import MaildirSource
    from dayflow.sources.me import parse_me

    if cold:
        for kept in cache.iterdir():
            kept.unlink()
    started = time.perf_counter()
    feed = Feed(
        [MaildirSource("work", inbox, cache=cache)],
        [MaildirSource("work/sent", sent, cache=cache)],
        me=parse_me(["alex@example.org"]), brief_date=DAY, tz=dt.UTC,
    )  # fmt: skip
    view = feed()
    elapsed = time.perf_counter() - started
    return elapsed, len(view.owed) + len(view.waiting)


def measure(tmp: Path, rounds: int = 15) -> dict[str, Any]:
    from dayflow.sources.maildir_index import SETTLE_NS

    boxes = {"small": build_box(tmp / "small", 0), "large": build_box(tmp / "large", OLD)}
    caches = {k: tmp / f"cache-{k}" for k in boxes}
    for cache in caches.values():
        cache.mkdir()
    time.sleep(SETTLE_NS / 1e9 + 0.5)  # new folders are never taken from kept names
    found = {k: _read_once(*boxes[k], caches[k], cold=False)[1] for k in boxes}
    assert found["small"] == found["large"] > 0, found  # the same window, the same lists
    times: dict[str, dict[str, list[float]]] = {
        c: {"small": [], "large": []} for c in ("warm", "cold")
    }
    for _ in range(rounds):
        for case in ("warm", "cold"):
            for k in ("small", "large"):
                times[case][k].append(_read_once(*boxes[k], caches[k], cold=case == "cold")[0])
    out: dict[str, Any] = {"rounds": rounds, "items": found["small"]}
    for case, by in times.items():
        med = {k: statistics.median(v) for k, v in by.items()}
        ratios = [b / a for a, b in zip(by["small"], by["large"], strict=True)]
        out[case] = {"median_s": med, "ratio": med["large"] / med["small"], "ratios": ratios}
    return out


def render(data: dict[str, Any]) -> str:
    def ms(s: float) -> str:
        return f"{s * 1000:.1f} ms"

    rows = []
    for case in ("warm", "cold"):
        d = data[case]
        spread = f"{min(d['ratios']):.2f}-{max(d['ratios']):.2f}"
        rows.append(
            f"| {case} | {ms(d['median_s']['small'])} | {ms(d['median_s']['large'])} | "
            f"{d['ratio']:.2f}x | {spread} |"
        )
    verdict = "within" if data["warm"]["ratio"] <= TARGET else "NOT within"
    return "\n".join(
        [
            BEGIN,
            "",
            "## Followups: the window's cost, not the mailbox's",
            "",
            f"Measured {data['when']} with `{data['command']}` (dayflow/ at {data['code']}); "
            f"load average {data['load']} before.",
            "",
            f"The followups of the last 14 days (`read_followups`: {data['items']} owed or "
            "waited-on items) from a Maildir INBOX and Sent holding only those two weeks (100 "
            f"messages) and from one holding the same two weeks plus {OLD:,} older messages in "
            f"each folder (20,000 in all); a fresh Feed and fresh sources each time, "
            f"{data['rounds']} rounds interleaved, medians. Target: warm within {TARGET}x "
            f"({verdict}).",
            "",
            "| case | 100 messages | 20,000 messages | ratio | per-round ratios |",
            "|---|---|---|---|---|",
            *rows,
            "",
            "Warm: the Maildir folder names kept by an earlier listing are still valid (the "
            "followups after read_inbox in the same run). Cold: mail arrived since, so both "
            "folders' names are read from the directory again, which grows with the folder "
            "(an `os.scandir` of 10,000 names each); the messages opened are the window's only.",
            "",
            END,
        ]
    )


def main(argv: list[str] | None = None) -> int:
    import subprocess

    quick = bool(argv and "--quick" in argv)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="dayflow-bench-followups-") as tmp:
        data = measure(Path(tmp), 3 if quick else 15)
    root = Path(__file__).resolve().parent.parent
    code = subprocess.run(
        ["git", "-C", str(root), "log", "-1", "--format=%h", "--", "dayflow"],
        capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    data |= {
        "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python -m bench.followups" + (" --quick" if quick else ""),
        "code": code or "?",
        "load": load,
    }
    text = render(data)
    print(text)
    if not quick:
        write_between(Path(__file__).with_name("RESULTS.md"), BEGIN, END, text)
    return 0 if data["warm"]["ratio"] <= TARGET else 1


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main(sys.argv[1:]))
