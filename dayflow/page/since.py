"""The page's "Since yesterday": read_since's changes (and the moves move_due made) as lines,
the brief it compares with first, then each change with the message it stands on, as the other
sections have (a reply sent, an answer, a task's mail, a moved deadline's words). The words of
each line are `models.SINCE_LINES`', which the offline model's Markdown writes too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dayflow.models import SINCE_DUE_MOVED, SINCE_LINES, Message, Section
from dayflow.page.lines import (
    SUBJECT,
    Evidence,
    Line,
    clip,
    date_of,
    dicts_in,
    event_id,
    hm,
    person_text,
    results_of,
    short_day,
    unread_lines,
)

# How a page finds a line's evidence: a message id (and the quote it carries) to the message
# as the run read it, None when the run read no such message.
Find = Callable[[object, object], Evidence | None]


def since_lines(result: dict[str, Any], conversation: list[Message], find: Find) -> list[Line]:
    """The section's lines from read_since's `result` (one that compared with a brief)."""
    return _Since(conversation, find).lines(result)


class _Since:
    def __init__(self, conversation: list[Message], find: Find) -> None:
        self.conversation = conversation
        self.evidence = find

    def lines(self, result: dict[str, Any]) -> list[Line]:
        previous = result.get("previous") or {}
        lines = [Line(Section.compared_with(previous.get("brief_date")))]
        lines += unread_lines(result)
        for kind, words, _ in SINCE_LINES:
            lines += [_SINCE_LINES[kind](self, item, words) for item in dicts_in(result, kind)]
            more = result.get(kind + "_more")
            if isinstance(more, int) and more > 0:
                lines.append(Line(f"and {more} more"))
        proposed = {(i.get("id"), i.get("now")): i for i in dicts_in(result, "due_moved")}
        for made in results_of(self.conversation, "move_due"):
            moved = made.get("moved")
            if isinstance(moved, dict):
                was = proposed.get((moved.get("id"), moved.get("now")), {}).get("was")
                lines.append(self._due_moved(moved | ({"was": was} if was else {})))
        if result.get("nothing"):
            lines.append(Line(Section.SINCE_NOTHING))
        return lines

    def _mail_or_thread(self, item: dict[str, Any], sender: str) -> Evidence:
        """The message a change stands on: as this run read it, else as read_since names it."""
        return self.evidence(item.get("id"), "") or Evidence(
            str(item.get("id") or item.get("key") or ""),
            clip(item.get("subject") or "(no subject)", SUBJECT),
            sender,
            str(item.get("at") or ""),
            kind="thread",
        )

    def _replied(self, item: dict[str, Any], words: str) -> Line:
        who = person_text(item["with"]) if isinstance(item.get("with"), dict) else "someone"
        ev = self._mail_or_thread(item, "you")
        return Line(words.format(who=who), f"“{ev.subject}”", ev, why=ev.ref)

    def _answered(self, item: dict[str, Any], words: str) -> Line:
        who = person_text(item["by"], addresses=False) if isinstance(item.get("by"), dict) else ""
        ev = self._mail_or_thread(item, who)
        return Line(words.format(who=who or "someone"), f"“{ev.subject}”", ev, why=ev.ref)

    def _task_line(self, item: dict[str, Any], words: str, *, done: bool = False) -> Line:
        ev = self.evidence(item.get("source_id"), "")
        why = str(item["id"]) if done and item.get("id") else None
        title = clip(item.get("title") or "(untitled)")
        return Line(words.format(title=title), evidence=ev, why=why or (ev.ref if ev else None))

    def _due_moved(self, item: dict[str, Any]) -> Line:
        was, now = date_of(item.get("was")), date_of(item.get("now"))
        ev = self.evidence(item.get("source_id"), item.get("evidence") or "")
        detail = f"{short_day(was)} → {short_day(now)}" if was else f"now {short_day(now)}"
        text = SINCE_DUE_MOVED[0].format(title=clip(item.get("title") or "(untitled)"))
        return Line(text, detail, ev, why=str(item.get("id") or "") or None)


def _span(when: dict[str, Any], *, day: bool = True) -> str:
    if when.get("all_day"):
        return f"{short_day(date_of(when.get('start')))} all day" if day else "all day"
    hours = f"{hm(when.get('start'))}–{hm(when.get('end'))}"
    return f"{short_day(date_of(when.get('start')))} {hours}" if day else hours


def _moved(_: _Since, item: dict[str, Any], words: str) -> Line:
    was, now = item.get("was") or {}, item.get("now") or {}
    same = date_of(was.get("start")) == date_of(now.get("start"))
    detail = f"{_span(was)} → {_span(now, day=not same)}"
    title = clip(item.get("title") or "(untitled)")
    return Line(words.format(title=title), detail, why=event_id(item))


def _cancelled(_: _Since, item: dict[str, Any], words: str) -> Line:
    title = clip(item.get("title") or "(untitled)")
    return Line(words.format(title=title), f"was {_span(item)}", why=event_id(item))


def _new(_: _Since, item: dict[str, Any], words: str) -> Line:
    title = clip(item.get("title") or "(untitled)")
    return Line(words.format(title=title), _span(item, day=False), why=event_id(item))


def _conflict(_: _Since, item: dict[str, Any], words: str) -> Line:
    titles = " and ".join(clip(t, 120) for t in item.get("titles") or [] if isinstance(t, str))
    return Line(words.format(titles=titles or "two events"), warn=True)


# Each kind's line (its words, and the section's order, are `SINCE_LINES`'; the due dates
# moved come after, from move_due's answers: the moves made, not proposed).
_SINCE_LINES: dict[str, Callable[[_Since, dict[str, Any], str], Line]] = {
    "replies_sent": _Since._replied,
    "answered": _Since._answered,
    "tasks_done": lambda r, item, words: r._task_line(item, words, done=True),
    "tasks_gone": _Since._task_line,
    "meetings_moved": _moved,
    "meetings_cancelled": _cancelled,
    "meetings_new": _new,
    "conflicts_new": _conflict,
}
