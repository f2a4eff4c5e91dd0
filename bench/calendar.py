"""ICS calendars: does a run pay for the week it reads, or for the whole file every call?

A synthetic calendar of 10,000 and of 100,000 events (one every 7 hours from 2024 on, so a
week holds a few dozen; one in 50 recurring weekly, forever: far more live series than a real
calendar keeps), read the way a brief reads it, each round with a fresh source (a new
process's view):

- *first*: the first `read_calendar` of a run (the week): the file read and indexed, the
  week's events parsed and expanded;
- *another range*: the next call on the same source (today): only events not parsed yet are;
- *same range*: the week asked again: kept.

Peak memory (max RSS) is measured in a child process that does the first read alone. Before
this change (issue 19.18) every call parsed the whole file: 9.5 s per call for 10,000 events,
61 s and 630 MB for 100,000 (the issue's figures).

Run alone: `python -m bench --part calendar` or `python -m bench.calendar` (about two minutes;
`--quick`: one round each, not written). Either prints the section and, unless `--quick`, writes
it between the calendar markers of bench/RESULTS.md (the rest of the file is left as it is).
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

BEGIN, END = "<!-- calendar: begin -->", "<!-- calendar: end -->"
SIZES = (10_000, 100_000)
ROUNDS = {10_000: 5, 100_000: 2}
DAY = dt.date(2026, 11, 5)
TZ = "Europe/Berlin"


def build_ics(path: Path, count: int) -> Path:
    out = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//dayflow bench//EN"]
    base = dt.datetime(2024, 1, 1, 9, 0, tzinfo=dt.UTC)
    for i in range(count):
        start = base + dt.timedelta(hours=7 * i)
        out += [
            "BEGIN:VEVENT",
            f"UID:ev-{i}@bench",
            "DTSTAMP:20240101T000000Z",
            f"DTSTART:{start:%Y%m%dT%H%M%SZ}",
            f"DTEND:{start + dt.timedelta(minutes=45):%Y%m%dT%H%M%SZ}",
            f"SUMMARY:Meeting {i}",
            "LOCATION:Room 4",
            "DESCRIPTION:Agenda: the numbers\\, the review\\, next steps.",
        ]
        if i % 50 == 0:
            out.append("RRULE:FREQ=WEEKLY;BYDAY=MO,WE")
        out.append("END:VEVENT")
    out.append("END:VCALENDAR")
    path.write_text("\r\n".join(out) + "\r\n", encoding="utf-8")
    return path


def _round(path: Path) -> dict[str, float]:
    from dayflow.sources import IcsCalendar

    calendar = IcsCalendar("bench", path=path, tz=ZoneInfo(TZ))
    week = (DAY, DAY + dt.timedelta(days=6))
    t0 = time.perf_counter()
    calendar.events(*week)
    t1 = time.perf_counter()
    calendar.events(DAY, DAY)
    t2 = time.perf_counter()
    calendar.events(*week)
    t3 = time.perf_counter()
    assert not calendar.cut_short, calendar.cut_short
    return {"first": t1 - t0, "another": t2 - t1, "same": t3 - t2}


def _peak_mb(path: Path) -> float:
    code = (
        "import datetime as dt, resource, sys\n"
        "from zoneinfo import ZoneInfo\n"
        "from dayflow.sources import IcsCalendar\n"
        f"c = IcsCalendar('bench', path=sys.argv[1], tz=ZoneInfo({TZ!r}))\n"
        f"c.events(dt.date({DAY.year}, {DAY.month}, {DAY.day}), "
        f"dt.date({DAY.year}, {DAY.month}, {DAY.day + 6}))\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip()) / 1024


def measure(tmp: Path, quick: bool = False) -> dict[str, Any]:
    load_before = os.getloadavg()
    data: dict[str, Any] = {"sizes": {}}
    for size in SIZES:
        path = build_ics(tmp / f"cal-{size}.ics", size)
        rounds = [_round(path) for _ in range(1 if quick else ROUNDS[size])]
        data["sizes"][size] = {
            "bytes": path.stat().st_size,
            "rounds": len(rounds),
            **{k: statistics.median(r[k] for r in rounds) for k in ("first", "another", "same")},
            "peak_mb": _peak_mb(path),
        }
    data["load"] = (load_before, os.getloadavg())
    return data


def render(data: dict[str, Any]) -> str:
    load = data["load"]
    when = data.get("when")
    lines = [
        BEGIN,
        "",
        "## ICS calendars: a run pays for the week, once",
        "",
        *(
            [f"Measured {when} with `{data.get('command')}` (dayflow/ at {data.get('code')}).", ""]
            if when
            else []
        ),
        "A synthetic calendar (an event every 7 hours since 2024, one in 50 recurring weekly "
        "forever), read as a brief reads it with a fresh source each round (medians). Load "
        f"average {', '.join(f'{x:.2f}' for x in load[0])} before, "
        f"{', '.join(f'{x:.2f}' for x in load[1])} after.",
        "",
        "| events | file | rounds | first read (week) | another range (today) | same range "
        "again | peak RSS, first read |",
        "|---|---|---|---|---|---|---|",
    ]
    for size, row in data["sizes"].items():
        lines.append(
            f"| {size:,} | {row['bytes'] / 1e6:.1f} MB | {row['rounds']} | {row['first']:.2f} s "
            f"| {row['another']:.2f} s | {row['same'] * 1000:.2f} ms | {row['peak_mb']:.0f} MB |"
        )
    lines += [
        "",
        "Before (issue 19.18): every `read_calendar` call parsed the whole file, 9.5 s for "
        "10,000 events and 61 s and 630 MB for 100,000. Now the file is indexed once per source "
        "(a line scan), each event is parsed once, when a range it can touch is first asked "
        "for (every recurring one, and the one-off events within two days of the range), and "
        "each range's events are kept. What is left grows with the live recurring series "
        "(here one in 50 of all events), which every range must expand.",
        "",
        END,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from bench.stats import write_between  # here: run as a script, bench/ is on the path by now

    quick = bool(argv and "--quick" in argv)
    with tempfile.TemporaryDirectory(prefix="dayflow-bench-cal-") as tmp:
        data = measure(Path(tmp), quick)
    if not quick:
        code = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
        data["when"] = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        data["command"] = "python -m bench --part calendar"
        data["code"] = code or "?"
    text = render(data)
    print(text)
    if not quick:
        write_between(Path(__file__).with_name("RESULTS.md"), BEGIN, END, text)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main(sys.argv[1:]))
