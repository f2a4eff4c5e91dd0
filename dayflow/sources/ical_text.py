"""An iCalendar text as content lines and components, before any parsing.

Why: parsing is what costs (icalendar takes about a millisecond a property), and a calendar of
10,000 events holds a few dozen that touch any one week. `index` scans the text once, a line at
a time, into the calendar's own lines and its components, noting the dates each one-off event
covers; `Block.touches` says whether an event can touch a range, and `text` gives the text of
the calendar's own lines, its other components (time zones) and the events chosen, which is
all that gets parsed. A recurring event (RRULE, RDATE, EXRULE, RECURRENCE-ID) or one whose
dates cannot be read from its text always touches. Each event carries `X-DAYFLOW-BLOCK:<n>`, its
place in the index, so a parsed event can be kept and reused for every later range.

Best effort as before: a line that is neither `NAME...:value` nor a folded continuation is
dropped (icalendar would reject the whole file), and a file cut short gets its open components
closed.

Bounds, since anyone can write into a calendar one subscribes to (the parser costs about a
millisecond a property and far more on one huge line): components nested deeper than MAX_DEPTH
are dropped (a file nesting thousands deep would exhaust the parser's recursion); a text line
(DESCRIPTION, SUMMARY, X-...) longer than MAX_LINE is cut there (a 50 MB DESCRIPTION); and an
event with another line that long (a RRULE listing 50,000 BYHOUR values), more than MAX_DATES
RDATE and EXDATE values or more than MAX_PROPERTIES lines is not parsed at all but named
(`Block.refused`), so the brief can say which series it left out.

One-off events sharing a UID (a broken export) are told apart by their place in the file: the
second and later get the UID `<uid>#duplicate-<n>`, so each is an event of its own (the library
would keep only the first) with the same id in every range.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

MAX_DEPTH = 8  # VCALENDAR > VEVENT > VALARM is 3
MAX_LINE = 64 * 1024  # characters of one content line (unfolded)
MAX_DATES = 5000  # RDATE and EXDATE values of one event
MAX_PROPERTIES = 5000  # content lines of one component
_DATE_LISTS = ("RDATE", "EXDATE")
MARK = "X-DAYFLOW-BLOCK"
_TEXTS = {"SUMMARY", "DESCRIPTION", "LOCATION", "COMMENT", "CONTACT", "RESOURCES", "CATEGORIES"}
_LONGEST = 100 * MAX_LINE  # any other line is kept up to this, to be refused whole
_RECURRING = {"RRULE", "RDATE", "EXRULE", "RECURRENCE-ID"}
_DATE = re.compile(r"(\d{4})(\d{2})(\d{2})")
_DURATION = re.compile(r"^[+]?P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?)?")


@dataclass(frozen=True)
class Block:
    """One component of a calendar, as text; `span` is the first and last date a one-off
    event can touch (None: always parse it)."""

    text: str
    span: tuple[dt.date, dt.date] | None
    refused: str | None = None  # why it is not parsed at all
    title: str = ""
    event: int | None = None  # a VEVENT's number (its X-DAYFLOW-BLOCK), else None

    def touches(self, first: dt.date, last: dt.date) -> bool:
        """Whether this event can have an occurrence in first..last."""
        return self.span is None or (self.span[0] <= last and self.span[1] >= first)


def index(text: str) -> list[str | Block]:
    """The calendar's own lines (str) and its components (Block), in file order."""
    items: list[str | Block] = []
    stack: list[str] = []
    block: list[str] = []
    skipping = 0  # depth of a component being dropped for nesting too deep
    uids: dict[str, int] = {}
    for line in _logical_lines(text):
        name = _name(line)
        if name == "BEGIN":
            if skipping or len(stack) >= MAX_DEPTH:
                skipping += 1
                continue
            stack.append(line.partition(":")[2].strip().upper())
        elif name == "END" and skipping:
            skipping -= 1
            continue
        elif skipping:
            continue
        if len(stack) >= 2:  # inside a component of a calendar
            block.append(line)
        else:
            items.append(line)
        if name == "END" and stack:
            stack.pop()
            if len(stack) == 1 and block:
                items.append(_block(block, uids, len(items)))
                block = []
    while stack:  # a file cut short: close what is open
        closing = f"END:{stack.pop()}"
        if block:
            block.append(closing)
            if len(stack) == 1:
                items.append(_block(block, uids, len(items)))
                block = []
        else:
            items.append(closing)
    return items


def text(items: list[str | Block], events: set[int]) -> str:
    """The text of the calendar's own lines, its components other than events, and the events
    numbered in `events` (none refused)."""
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
        elif item.refused:
            continue
        elif item.event is None or item.event in events:
            out.append(item.text)
    return "\r\n".join(out) + "\r\n"


def select(items: list[str | Block], first: dt.date, last: dt.date) -> str:
    """The text holding the calendar's own lines and the components that can touch
    first..last."""
    chosen = {b.event for b in events(items) if b.event is not None and b.touches(first, last)}
    return text(items, chosen)


def events(items: list[str | Block]) -> list[Block]:
    """The events of an index (refused ones included)."""
    return [item for item in items if isinstance(item, Block) and item.event is not None]


def _logical_lines(text: str) -> list[str]:
    """The unfolded content lines, a text one cut at MAX_LINE, any other at _LONGEST."""
    lines: list[str] = []
    parts: list[str] = []
    size = 0
    limit = MAX_LINE

    def flush() -> None:
        if parts:
            line = "".join(parts)
            lines.append(line.rstrip("\\") if len(line) >= limit else line)

    for line in text.splitlines():
        if line[:1] in (" ", "\t"):
            if parts and size < limit:
                parts.append(line[1 : 1 + limit - size])
                size += len(parts[-1])
            continue
        if ":" not in line:
            continue
        flush()
        name = _name(line)
        limit = MAX_LINE if name in _TEXTS or name.startswith("X-") else _LONGEST
        parts, size = [line[:limit]], min(len(line), limit)
    flush()
    return lines


def _name(line: str) -> str:
    head = line.partition(":")[0]
    return head.partition(";")[0].strip().upper()


def _block(lines: list[str], uids: dict[str, int], number: int) -> Block:
    names: dict[str, str] = {}  # the event's own properties (not its alarms'), first wins
    depth = 0
    for line in lines:
        name = _name(line)
        if name == "BEGIN":
            depth += 1
        elif name == "END":
            depth -= 1
        elif depth == 1:
            names.setdefault(name, line)
    kind = lines[0].partition(":")[2].strip().upper()
    refused = _refused(lines, names)
    if refused:
        title = _summary(names) if kind == "VEVENT" else f"a {kind} component"
        return Block("", None, refused, title, number if kind == "VEVENT" else None)
    if kind != "VEVENT":
        return Block("\r\n".join(lines), None)
    lines = [*lines[:-1], f"{MARK}:{number}", lines[-1]]
    if names.keys() & _RECURRING:
        return Block("\r\n".join(lines), None, event=number)
    uid = names.get("UID", "").partition(":")[2].strip()
    seen = uids.get(uid, 0) if uid else 0
    if uid:
        uids[uid] = seen + 1
    if seen:
        lines = [f"UID:{uid}#duplicate-{seen + 1}" if _name(x) == "UID" else x for x in lines]
    return Block("\r\n".join(lines), _span(names), event=number)


def _refused(lines: list[str], names: dict[str, str]) -> str | None:
    if len(lines) > MAX_PROPERTIES:
        return f"not read: it has {len(lines):,} lines"
    dates = sum(line.count(",") + 1 for line in lines if _name(line) in _DATE_LISTS)
    if dates > MAX_DATES:
        return f"not read: it lists {dates:,} RDATE/EXDATE dates"
    long = next((line for line in lines if len(line) > MAX_LINE), None)
    if long is not None:
        return f"not read: its {_name(long)} line is over {len(long) // 1024:,} KB"
    return None


def _summary(names: dict[str, str]) -> str:
    text = names.get("SUMMARY", "").partition(":")[2][:500]
    return " ".join(text.replace("\\,", ",").replace("\\;", ";").split()) or "(untitled)"


def _span(names: dict[str, str]) -> tuple[dt.date, dt.date] | None:
    start = _date(names.get("DTSTART"))
    if start is None:
        return None
    end = _date(names.get("DTEND"))
    if end is None and "DURATION" in names:
        m = _DURATION.match(names["DURATION"].rpartition(":")[2].strip())
        if m is None:
            return None
        weeks, days, hours = (int(g or 0) for g in m.groups())
        try:
            end = start + dt.timedelta(days=7 * weeks + days + hours // 24 + 1)
        except OverflowError:
            return None
    return start, max(start, end or start)


def _date(line: str | None) -> dt.date | None:
    if line is None:
        return None
    m = _DATE.match(line.rpartition(":")[2].strip())
    if m is None:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None
