"""An iCalendar text as content lines and components, before any parsing.

Why: parsing is what costs (icalendar takes about a millisecond a property), and a calendar of
10,000 events holds a few dozen that touch any one week. `index` scans the text once, a line at
a time, into the calendar's own lines and its components, noting the dates each one-off event
covers; `Block.touches` says whether an event can touch a range, and `text` gives the text of
the calendar's own lines, its other components (time zones) and the events chosen, which is
all that gets parsed. A recurring event (RRULE, RDATE, EXRULE, RECURRENCE-ID) or one whose
dates cannot be read from its text always touches. Each event carries `X-DAYFLOW-BLOCK:<n>`, its
place in the index, so a parsed event can be kept and reused for every later range.

The syntax is RFC 5545's, exactly, because the text chosen here is what the library parses: a
line split or glued differently here is a property lost there (a Google export folds ATTENDEE
inside its parameters, `;CN=Ben Ca` / ` rter;...`, and a scan that unfolded by guessing lost every
attendee and the organizer's address). So (section 3.1):

- Unfolding comes first, over the whole text: a line break (CRLF or LF) followed by one space
  or tab is removed wherever it is, inside a parameter or a quoted value too. `decode` does it
  on the bytes, before decoding, so a fold inside a multi-octet UTF-8 sequence joins the
  sequence again. Blank lines between a line and its continuation are removed with it, as
  icalendar does (old Mozilla exports write `VERSION` / `` / ` :2.0`).
- Then lines are split at CRLF or LF only: not at a bare CR, U+2028, NEL or the other breaks
  `str.splitlines` knows, which are text inside a value.
- A content line is `name *(";" param) ":" value`; a parameter value may be a quoted string
  holding ':', ';' and ',', so the value starts at the first ':' outside quotes (`split`).
  Backslash means nothing before the value (the RFC's grammar; icalendar's too).

Best effort: a line with no ':' outside quotes is not a content line and is dropped (inside an
event icalendar drops it too; at the calendar's level it would reject the whole file), and a
file cut short gets its open components closed. `tests/test_ical_conformance.py` holds every
event field the brief uses to what plain icalendar and recurring-ical-events give for the whole
file, on those libraries' own test calendars and on exports written to the big providers'
shapes.

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
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

_T = TypeVar("_T", str, bytes)
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
# icalendar's fold (parser/content_line.py): a line break, any blank lines, one space or tab;
# the lookbehinds pin a match to the first break of a run (no quadratic rescans).
_FOLD = re.compile(r"(?:(?<!\n)\r\n|(?<![\r\n])\n)(?:\r?\n)*[ \t]")
_FOLD_BYTES = re.compile(rb"(?:(?<!\n)\r\n|(?<![\r\n])\n)(?:\r?\n)*[ \t]")
_NEWLINE = re.compile(r"\r?\n")
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
    """The calendar's own lines (str) and its components (Block), in file order, from an
    iCalendar text (folded or not)."""
    items: list[str | Block] = []
    stack: list[str] = []
    block: list[tuple[str, str]] = []  # (name, line) of the component being read
    skipping = 0  # depth of a component being dropped for nesting too deep
    uids: dict[str, int] = {}
    for name, line in _logical_lines(text):
        if name == "BEGIN":
            if skipping or len(stack) >= MAX_DEPTH:
                skipping += 1
                continue
            stack.append(_value(line).strip().upper())
        elif name == "END" and skipping:
            skipping -= 1
            continue
        elif skipping:
            continue
        if len(stack) >= 2:  # inside a component of a calendar
            block.append((name, line))
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
            block.append(("END", closing))
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


def decode(data: bytes) -> str:
    """The text of an iCalendar file's bytes, unfolded: UTF-8 as RFC 5545 says, else
    Windows-1252 (old exports), never failing on the bytes alone."""
    data = _unfold(data)  # before decoding: a fold may split a UTF-8 sequence
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def unfold(text: str) -> str:
    """The text with every fold removed (RFC 5545 3.1), exactly as icalendar unfolds."""
    return _unfold(text)


def _unfold(text: _T) -> _T:
    # Without blank lines before a continuation (old Mozilla), icalendar's fold is CRLF or LF
    # and one space or tab: four literal replacements, far faster than the regex over a file
    # of short lines (tests/test_ical_text.py holds the two equal).
    if isinstance(text, str):
        crlf, lf, wsp, blank = "\r\n", "\n", (" ", "\t"), ("\n\n", "\n\r\n")
        if any(b + w in text for b in blank for w in wsp):
            return _FOLD.sub("", text)
    else:
        crlf, lf, wsp, blank = b"\r\n", b"\n", (b" ", b"\t"), (b"\n\n", b"\n\r\n")
        if any(b + w in text for b in blank for w in wsp):
            return _FOLD_BYTES.sub(b"", text)
    for eol in (crlf, lf):
        for w in wsp:
            text = text.replace(eol + w, text[:0])
    return text


def split(line: str) -> tuple[str, str, str] | None:
    """A content line's name (uppercase), its parameters as written (without the leading ';')
    and its value; None when it has no ':' outside quotes (not a content line)."""
    colon = line.find(":")
    if colon == -1:
        return None
    semi = line.find(";", 0, colon)
    if semi == -1:
        return _clean(line[:colon]), "", line[colon + 1 :]
    if line.find('"', semi, colon) != -1:  # a quoted parameter value: its ':' are not the end
        inside, colon = False, -1
        for i in range(semi, len(line)):
            ch = line[i]
            if ch == '"':
                inside = not inside
            elif ch == ":" and not inside:
                colon = i
                break
        if colon == -1:
            return None
    return _clean(line[:semi]), line[semi + 1 : colon], line[colon + 1 :]


def _clean(name: str) -> str:
    # icalendar (not strict) ignores spaces and tabs in a name: `DTSTART :...` is DTSTART
    return "".join(name.split()).upper() if " " in name or "\t" in name else name.upper()


def _logical_lines(text: str) -> Iterator[tuple[str, str]]:
    """The content lines of a text, unfolded, each with its name (one at a time: a name kept
    for every line of a 100,000-event file would cost a hundred MB); a text one cut at
    MAX_LINE, any other at _LONGEST."""
    for line in _NEWLINE.split(unfold(text)):
        parts = split(line)
        if parts is None:
            continue  # not a content line (blank, or no ':' outside quotes)
        name, _, value = parts
        if len(line) > MAX_LINE:
            limit = MAX_LINE if name in _TEXTS or name.startswith("X-") else _LONGEST
            if len(line) > limit and len(line) - len(value) < limit:
                line = line[:limit].rstrip("\\")  # not ending in half an escape
            elif len(line) > _LONGEST:
                line = line[:_LONGEST]  # parameters this long: refused whole, by `_refused`
        yield name, line


def _value(line: str) -> str:
    parts = split(line)
    return "" if parts is None else parts[2]


def _block(pairs: list[tuple[str, str]], uids: dict[str, int], number: int) -> Block:
    names: dict[str, str] = {}  # the event's own properties (not its alarms'), first wins
    uid_at = -1  # where the event's own UID line is
    depth = 0
    for i, (name, line) in enumerate(pairs):
        if name == "BEGIN":
            depth += 1
        elif name == "END":
            depth -= 1
        elif depth == 1 and name not in names:
            names[name] = line
            uid_at = i if name == "UID" else uid_at
    lines = [line for _, line in pairs]
    kind = _value(lines[0]).strip().upper()
    refused = _refused(pairs, names)
    if refused:
        title = _summary(names) if kind == "VEVENT" else f"a {kind} component"
        return Block("", None, refused, title, number if kind == "VEVENT" else None)
    if kind != "VEVENT":
        return Block("\r\n".join(lines), None)
    lines = [*lines[:-1], f"{MARK}:{number}", lines[-1]]
    if names.keys() & _RECURRING:
        return Block("\r\n".join(lines), None, event=number)
    uid = _value(names.get("UID", "")).strip()
    seen = uids.get(uid, 0) if uid else 0
    if uid:
        uids[uid] = seen + 1
    if seen:
        lines[uid_at] = f"UID:{uid}#duplicate-{seen + 1}"
    return Block("\r\n".join(lines), _span(names), event=number)


def _refused(pairs: list[tuple[str, str]], names: dict[str, str]) -> str | None:
    if len(pairs) > MAX_PROPERTIES:
        return f"not read: it has {len(pairs):,} lines"
    dates = sum(_value(line).count(",") + 1 for name, line in pairs if name in _DATE_LISTS)
    if dates > MAX_DATES:
        return f"not read: it lists {dates:,} RDATE/EXDATE dates"
    long = next(((name, line) for name, line in pairs if len(line) > MAX_LINE), None)
    if long is not None:
        return f"not read: its {long[0]} line is over {len(long[1]) // 1024:,} KB"
    return None


def _summary(names: dict[str, str]) -> str:
    text = _value(names.get("SUMMARY", ""))[:500]
    return " ".join(text.replace("\\,", ",").replace("\\;", ";").split()) or "(untitled)"


def _span(names: dict[str, str]) -> tuple[dt.date, dt.date] | None:
    start = _date(names.get("DTSTART"))
    if start is None:
        return None
    end = _date(names.get("DTEND"))
    if end is None and "DURATION" in names:
        m = _DURATION.match(_value(names["DURATION"]).strip())
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
    m = _DATE.match(_value(line).strip())
    if m is None:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None
