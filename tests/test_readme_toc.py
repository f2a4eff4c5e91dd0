"""The README's table of contents (issue 32.30) lists its `##` and `###` headings, in order,
each linked by the anchor GitHub gives it: a heading added, renamed or moved without the
contents following fails here, with the block to paste."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN, END = "<!-- contents: begin -->", "<!-- contents: end -->"
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{2,3}) (.+?)\s*#*\s*$")


def headings(text: str) -> list[tuple[int, str]]:
    """(level, title) of each `##` / `###` heading outside fenced code, after the contents."""
    found, fenced = [], False
    for line in text.split(BEGIN, 1)[-1].splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            found.append((len(match.group(1)), match.group(2)))
    return found


def anchor(title: str, seen: dict[str, int]) -> str:
    """GitHub's anchor for a heading: lower case, punctuation out, spaces to hyphens, and a
    `-N` suffix for the Nth repeat."""
    slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
    count = seen.get(slug, 0)
    seen[slug] = count + 1
    return slug if count == 0 else f"{slug}-{count}"


def contents(text: str) -> str:
    seen: dict[str, int] = {}
    lines = []
    for level, title in headings(text):
        shown = title.replace("`", "")
        lines.append(f"{'  ' * (level - 2)}- [{shown}](#{anchor(title, seen)})")
    return "\n".join(lines)


def test_the_contents_match_the_headings() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1, "the contents' markers"
    written = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    expected = contents(text)
    assert written == expected, f"paste this between the markers:\n{expected}"


def test_the_anchors_follow_githubs_rules() -> None:
    seen: dict[str, int] = {}
    assert anchor("A crash, a resume", seen) == "a-crash-a-resume"
    assert anchor("Calendars: .ics files, feeds and CalDAV", seen) == (
        "calendars-ics-files-feeds-and-caldav"
    )
    assert anchor("Dayflow as an MCP server", seen) == "dayflow-as-an-mcp-server"
    assert anchor("A crash, a resume", seen) == "a-crash-a-resume-1"
