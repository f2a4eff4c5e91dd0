"""The `file:PATH` sink: the brief as a section of a Markdown note, between two comment lines
that name its run, replaced atomically; the user's own lines are never touched. A path ending
in `.html` (or `.htm`) is a page instead (`dayflow.page`): the day's brief and its updates as
articles of one self-contained document, each replaced by its own run; a file there that
Dayflow did not write is never overwritten."""

from __future__ import annotations

import stat

from dayflow.delivery.effects import Brief
from dayflow.delivery.settings import DeliveryFailed, file_target
from dayflow.errors import DayflowError


def to_file(sink: str, brief: Brief) -> str:
    from dayflow import files

    target = file_target(sink, brief.brief_date)
    try:
        st = target.stat()
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        # A FIFO would block the brief for ever, a device or socket is no note.
        raise DeliveryFailed(f"file {target}: it is {files.kind_of(st.st_mode)}, not a note")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            existing = files.read_text(target, "file")
        except DayflowError:
            if target.exists():
                raise
            existing = ""
        if target.suffix.lower() in (".html", ".htm"):
            merged, verb = _with_page(existing, brief, target)
        else:
            merged, verb = with_section(existing, brief.run_id, brief.inert)
        if merged != existing:
            files.write_atomic(target, merged.encode("utf-8"))
    except DayflowError as exc:
        raise DeliveryFailed(str(exc)) from None  # its words name the file already
    except OSError as exc:
        raise DeliveryFailed(f"file {target}: {exc.strerror or exc}") from None
    return f"{verb} {target}"


def _with_page(existing: str, brief: Brief, target: object) -> tuple[str, str]:
    from dayflow.page import with_article

    merged = with_article(existing, brief.html)
    if merged is None:
        raise DeliveryFailed(f"file {target}: not a page Dayflow wrote; it is left as it is")
    return merged


def section_marks(run_id: str) -> tuple[str, str]:
    """The comment lines around one run's brief in a note (hidden by Markdown renderers)."""
    return f"<!-- dayflow brief {run_id} -->", f"<!-- end of dayflow brief {run_id} -->"


def with_section(existing: str, run_id: str, text: str) -> tuple[str, str]:
    """The note with run `run_id`'s brief in it: its section replaced where it already is
    (a redone delivery gives the same bytes), else appended. Everything else in the note, the
    user's own lines and other runs' briefs (the morning's, before an update), is kept.

    A section is a start mark line and the next end mark line with no other start mark of the
    run between (marks matched as whole lines, surrounding spaces ignored): an end mark with no
    start before it, or a start whose end the user deleted, is the user's text and never makes
    a replacement swallow lines. A section found twice (a synced copy) is kept once. The note's
    own line ends (CRLF or LF) are used for the section."""
    start, end = section_marks(run_id)
    nl = "\r\n" if "\r\n" in existing else "\n"
    body = nl.join(text.replace("\r\n", "\n").rstrip().split("\n"))
    section = f"{start}{nl}{body}{nl}{end}{nl}"
    lines = existing.splitlines(keepends=True)
    spans = _sections(lines, start, end)
    if spans:
        dropped = {k for i, j in spans[1:] for k in range(i, j + 1)}
        first, last = spans[0]
        kept = [line for k, line in enumerate(lines) if k not in dropped and not first <= k <= last]
        merged = "".join(kept[:first] + [section] + kept[first:])
        return merged, "updated its section in"
    if not existing:
        return section, "wrote"
    sep = "" if existing.endswith(nl * 2) else nl if existing.endswith(nl) else nl * 2
    return existing + sep + section, "added to"


def _sections(lines: list[str], start: str, end: str) -> list[tuple[int, int]]:
    """The (start line, end line) of each well-formed section of the run, in order."""
    spans, opened = [], None
    for k, line in enumerate(lines):
        mark = line.strip()
        if mark == start:
            opened = k  # a start with no end before the next start is the user's text
        elif mark == end and opened is not None:
            spans.append((opened, k))
            opened = None
    return spans
