"""Tasks as files people keep: Markdown checklists (Obsidian Tasks), todo.txt, iCalendar
VTODO and JSON, and reading ticked boxes back. Pure text in, text out: no I/O, no clock.

Why the formats look the way they do:

- Every line (or VTODO) carries the task's id, which is derived from its idempotency key
  (`store.task_id`): the same task has the same id in every export, from any database, so a
  file exported twice with nothing changed is byte-identical (no export time anywhere) and a
  ticked line names exactly one task.
- Reading back trusts only the id marker Dayflow wrote at the end of a line (`🆔 t_…` in
  Markdown, `dayflow:t_…` in todo.txt). A title is user data (an email subject): any marker
  inside it is defanged on export, and a line carrying two markers is ignored rather than
  guessed at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, tzinfo

from dayflow.models import Task
from dayflow.store.values import command_hint

FORMATS = ("markdown", "todo.txt", "ics", "json")
SYNC_FORMATS = ("markdown", "todo.txt")

_ID = r"t_[0-9a-f]{12}"
_MD_MARK = "🆔"
_TODO_MARK = "dayflow:"
_MD_LINE = re.compile(r"^\s*[-*+] \[(?P<box>.)\] (?P<rest>.*)$")
_MD_ID = re.compile(_MD_MARK + r"\s*(" + _ID + r")(?![0-9A-Za-z_-])")
_TODO_ID = re.compile(r"(?<!\S)" + _TODO_MARK + r"(" + _ID + r")(?!\S)")
_TODO_DONE = re.compile(r"^x ")
_ANY_MD_MARK = re.compile(_MD_MARK)
_ANY_TODO_MARK = re.compile(r"(?i)dayflow:")


def md_header(profile: str | None = None) -> str:
    """A Markdown export's first line: how to sync it back, for `profile`'s tasks."""
    sync = command_hint(profile, "tasks", "sync", "THIS_FILE")
    return f"<!-- dayflow tasks: tick a box, then `{sync}` -->"


MD_HEADER = md_header()


def export(tasks: Iterable[Task], fmt: str, tz: tzinfo, *, profile: str | None = None) -> str:
    """The tasks in format `fmt` (one of FORMATS); dates in the timezone `tz`; a Markdown
    header naming `profile`'s sync command."""
    items = list(tasks)
    if fmt == "markdown":
        return markdown(items, tz, profile=profile)
    if fmt == "todo.txt":
        return todotxt(items, tz)
    if fmt == "ics":
        return ics(items)
    if fmt == "json":
        return as_json(items)
    raise ValueError(f"unknown format {fmt!r}")


# ------------------------------------------------------------------------------ Markdown


def markdown(tasks: list[Task], tz: tzinfo, *, profile: str | None = None) -> str:
    """An Obsidian Tasks checklist: `- [ ] Title 📅 due ✅ done 🆔 id`, one task a line."""
    lines = [md_header(profile), ""]
    for t in tasks:
        box = "x" if t.status == "done" else " "
        parts = [f"- [{box}] {_md_title(t.title)}"]
        if t.due:
            parts.append(f"📅 {t.due}")
        if t.status == "done" and t.done_at:
            parts.append(f"✅ {_day(t.done_at, tz)}")
        parts.append(f"{_MD_MARK} {t.id}")
        lines.append(" ".join(parts))
    return "\n".join(lines) + "\n"


def _md_title(title: str) -> str:
    text = _one_line(title)
    # Obsidian Tasks reads its fields from the end of the line; keep a title's own emoji
    # fields and id markers from being read as ours.
    text = _ANY_MD_MARK.sub("ID", text)
    return text.replace("📅", "(date)").replace("✅", "(done)") or "(untitled)"


# ------------------------------------------------------------------------------ todo.txt


def todotxt(tasks: list[Task], tz: tzinfo) -> str:
    """todo.txt: `[x DONE] CREATED Title due:DATE dayflow:ID`, one task a line."""
    lines = []
    for t in tasks:
        parts = []
        if t.status == "done":
            parts.append("x")
            if t.done_at:
                parts.append(_day(t.done_at, tz))
        parts.append(_day(t.created_at, tz))
        parts.append(_todo_title(t.title))
        if t.due:
            parts.append(f"due:{t.due}")
        parts.append(f"{_TODO_MARK}{t.id}")
        lines.append(" ".join(parts))
    return "".join(line + "\n" for line in lines)


def _todo_title(title: str) -> str:
    text = _ANY_TODO_MARK.sub("dayflow-", _one_line(title))
    # `key:value` words are tags in todo.txt; a title's `due:` must not become the due date.
    text = re.sub(r"(?i)(?<!\S)due:", "due ", text)
    return text or "(untitled)"


# ------------------------------------------------------------------------------ iCalendar


def ics(tasks: list[Task]) -> str:
    """An iCalendar (RFC 5545) VCALENDAR of VTODOs; UID is the task id."""
    out = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Dayflow//Dayflow tasks//EN"]
    for t in tasks:
        out += [
            "BEGIN:VTODO",
            f"UID:{t.id}@dayflow",
            f"DTSTAMP:{_utc_stamp(t.done_at or t.created_at)}",
            f"CREATED:{_utc_stamp(t.created_at)}",
            f"SUMMARY:{_ics_text(t.title)}",
        ]
        if t.due:
            out.append(f"DUE;VALUE=DATE:{t.due.replace('-', '')}")
        if t.notes:
            out.append(f"DESCRIPTION:{_ics_text(t.notes)}")
        if t.status == "done":
            out.append("STATUS:COMPLETED")
            if t.done_at:
                out.append(f"COMPLETED:{_utc_stamp(t.done_at)}")
        else:
            out.append("STATUS:NEEDS-ACTION")
        out.append(f"X-DAYFLOW-KEY:{_ics_text(t.idempotency_key)}")
        out.append("END:VTODO")
    out.append("END:VCALENDAR")
    return "".join(_fold(line) + "\r\n" for line in out)


def _ics_text(value: str) -> str:
    value = value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
    value = value.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return "".join(c for c in value if c == "\t" or ord(c) >= 0x20 and c != "\x7f")


def _fold(line: str) -> str:
    """Fold a content line at 75 octets (RFC 5545 3.1), never inside a UTF-8 sequence."""
    pieces: list[str] = []
    current, size, limit = "", 0, 75
    for ch in line:
        n = len(ch.encode("utf-8"))
        if size + n > limit:
            pieces.append(current)
            current, size, limit = "", 0, 74  # continuation lines start with one space
        current += ch
        size += n
    pieces.append(current)
    return "\r\n ".join(pieces)


def _utc_stamp(stored: str) -> str:
    return datetime.fromisoformat(stored).strftime("%Y%m%dT%H%M%SZ")


# ---------------------------------------------------------------------------------- JSON


def as_json(tasks: list[Task]) -> str:
    """A JSON document: {"format": "dayflow-tasks", "version": 1, "tasks": [...]}."""
    doc = {
        "format": "dayflow-tasks",
        "version": 1,
        "tasks": [t.to_json() | {"done_at": t.done_at} for t in tasks],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


# ------------------------------------------------------------------------------ read back


@dataclass(frozen=True)
class Tick:
    """One line of an exported file that names a Dayflow task, and whether it is ticked."""

    task_id: str
    done: bool
    line: int


@dataclass(frozen=True)
class Reading:
    """What a file says: its format, the Dayflow lines in it, and lines that looked like ours
    but were ambiguous (two id markers) and were ignored."""

    fmt: str | None  # "markdown" | "todo.txt" | None: not a Dayflow export
    ticks: list[Tick]
    ambiguous: list[int]


def read_back(text: str) -> Reading:
    """Find the Dayflow task lines of a Markdown or todo.txt file and whether each is done.
    A Markdown box counts as done when it holds `x` or `X`; a todo.txt line when it starts with
    `x `. Lines without Dayflow's id marker are the user's own and are not touched."""
    md, todo, ambiguous = [], [], []
    for i, raw in enumerate(text.splitlines(), start=1):
        m = _MD_LINE.match(raw)
        if m is not None:
            ids = _MD_ID.findall(m.group("rest"))
            if len(ids) == 1:
                md.append(Tick(ids[0], m.group("box") in "xX", i))
                continue
            if len(ids) > 1:
                ambiguous.append(i)
                continue
        ids = _TODO_ID.findall(raw)
        if len(ids) == 1:
            todo.append(Tick(ids[0], bool(_TODO_DONE.match(raw)), i))
        elif len(ids) > 1:
            ambiguous.append(i)
    if md and len(md) >= len(todo):
        return Reading("markdown", md, ambiguous)
    if todo:
        return Reading("todo.txt", todo, ambiguous)
    return Reading(None, [], ambiguous)


def _one_line(text: str) -> str:
    """Whitespace runs (newlines included) become one space; control characters go."""
    text = "".join(c if c.isprintable() or c.isspace() else " " for c in text)
    return " ".join(text.split())


def _day(stored: str, tz: tzinfo) -> str:
    return datetime.fromisoformat(stored).astimezone(tz).date().isoformat()
