"""What the offline brief says of a message's own words: the quote under a request's line, and
the line for a message that tried to instruct an assistant.

Mail's words in a brief are data. A request's quote is cut for the terminal (`dayflow why`
shows it whole). A message that spoke to an AI assistant (a prompt injection, marked
`to_assistant` by the read tools) gets no task and no tool call; the brief names it by its
sender and subject, Markdown's marks escaped, and never repeats what it told the assistant.
"""

from __future__ import annotations

import datetime as dt
import re

from dayflow.models import Message
from dayflow.senders import with_address
from dayflow.shown import injections
from dayflow.tools.evidence import due_kind_of

QUOTE_SHOWN = 90  # a quote's characters on a brief's line (`dayflow why` shows it whole)
SUBJECT_SHOWN = 80  # an injected message's subject on its line
_MARKS = re.compile(r"([\\`*_#!|~])")  # links, images and HTML: `inert_markdown` judges them


def evidence_line(
    evidence: str, due: dt.date | None, phrase: str, *, moved: str = "", listed: str = ""
) -> list[str]:
    """The line under a request: the sender's words it was found in, shortened for the
    terminal, and whether its due date was stated or implied, with the words it came from;
    a due date a later message `moved` has those words as its source (a moved date is
    stated, as the task list keeps it), the ask still the quote; a date the `listed` task
    has (an earlier brief moved it) says so, and where to see why."""
    if moved or listed:
        how = (
            f'stated, moved: "{_shown(moved)}"'
            if moved
            else f"as on your list: `dayflow why {listed}`"
        )
        source = f"(due {how})"
        return [f'  - "{_shown(evidence)}" {source}' if evidence else f"  - {source[1:-1]}"]
    if not evidence:
        return []
    said = _shown(evidence)
    line = f'  - "{said}"'
    if due is not None:
        kind = due_kind_of(phrase or None, due)
        # The words the date came from, unless the quote shows them already.
        shown = not phrase or phrase.casefold() in said.casefold()
        line += f" (due {kind})" if shown else f' (due {kind}: "{phrase}")'
    return [line]


def _shown(words: str) -> str:
    """`words` on one line, cut at a word for the terminal (`dayflow why` shows them whole)."""
    said = " ".join(words.split())
    if len(said) > QUOTE_SHOWN:
        said = said[: QUOTE_SHOWN - 1].rsplit(" ", 1)[0] + "…"
    return said


def injected_lines(messages: list[Message]) -> list[str]:
    """A Needs action line for each message the run read that tried to instruct an
    assistant: not a task, who sent it and its subject (escaped, cut), what was done."""
    lines = []
    for m in injections(messages) or []:
        subject = _inert(str(m.get("subject") or "(no subject)"), SUBJECT_SHOWN)
        sender = _inert(with_address(str(m.get("from") or "")), SUBJECT_SHOWN)
        lines.append(
            f"- Not a task: “{subject}” from {sender}: {m['note']} (`dayflow why {m['id']}`)"
        )
    return lines


def _inert(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters, each Markdown mark escaped."""
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _MARKS.sub(r"\\\1", text)
