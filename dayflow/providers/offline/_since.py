"""The offline model's "Since yesterday" section, from read_since's result: one line per
change, in the tool's order; one line when nothing changed; no section on a first brief (or
when the run never read it)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from dayflow.models import SINCE_DUE_MOVED, SINCE_LINES, Section
from dayflow.providers.offline._conversation import Call, named
from dayflow.providers.offline._reading import DAYS, MONTHS, parse_time
from dayflow.senders import sender_name


def since_lines(calls: list[Call]) -> list[str]:
    """The section's heading and lines ([] when there is nothing to compare with)."""
    found = named(calls, "read_since")
    if not found:
        return []
    call = found[-1]
    if call.error:
        return ["", Section.heading(Section.SINCE), f"- _Could not compare: {call.error}_"]
    result = call.result if isinstance(call.result, dict) else {}
    previous = result.get("previous")
    if not isinstance(previous, dict):
        return []
    # Which brief it compares with, said first: a second brief of the day compares with the
    # last one of a day before ("since yesterday"), not with this morning's.
    lines = ["", Section.heading(Section.SINCE), Section.compared_with(previous.get("brief_date"))]
    if result.get("nothing"):
        # What it compared, said: a task new since that brief is no change *of* it.
        return [*lines, f"- {Section.SINCE_NOTHING}"]
    for kind, words, sentence in SINCE_LINES:
        for item in _dicts(result.get(kind)):
            lines.append("- " + _said(words, sentence, _VALUES[kind](item)))
        more = result.get(kind + "_more")
        if isinstance(more, int) and more > 0:
            lines.append(f"- and {more} more")
    # A deadline a later message moved: the moves made (move_due's answers), not proposed.
    # Its date then is the one the compared state showed (read_since's), when it has one: a
    # fork that makes the move again finds the task already moved by the run it forked from.
    proposed = {(i.get("id"), i.get("now")): i for i in _dicts(result.get("due_moved"))}
    for moved in named(calls, "move_due"):
        if not moved.error and isinstance(moved.result, dict):
            made = moved.result.get("moved")
            if isinstance(made, dict):
                was = proposed.get((made.get("id"), made.get("now")), {}).get("was")
                lines.append("- " + _due_moved(made | ({"was": was} if was else {})))
    return lines


def move_calls(calls: list[Call], offered: set[Any]) -> list[tuple[str, dict[str, Any]]]:
    """The move_due calls read_since's due_moved asks for that the run has not made yet."""
    found = named(calls, "read_since")
    if "move_due" not in offered or not found or not isinstance(found[-1].result, dict):
        return []
    made = {(c.input.get("task_id"), c.input.get("due")) for c in named(calls, "move_due")}
    out = []
    for item in _dicts(found[-1].result.get("due_moved")):
        args = {k: item.get(f) for k, f in _MOVE_ARGS}
        if all(isinstance(v, str) and v for v in args.values()):
            if (args["task_id"], args["due"]) not in made:
                out.append(("move_due", args))
    return out


_MOVE_ARGS = (
    ("task_id", "id"),
    ("due", "now"),
    ("source_id", "source_id"),
    ("evidence", "evidence"),
)


def _said(words: str, sentence: str, values: dict[str, str]) -> str:
    return sentence.format(line=words.format(**values), **values)


def _due_moved(item: dict[str, Any]) -> str:
    was, now = _date(item.get("was")), _date(item.get("now"))
    detail = f"{_day(was)} → {_day(now)}" if was else f"now {_day(now)}"
    said = f' ("{item["evidence"]}")' if item.get("evidence") else ""
    return _said(*SINCE_DUE_MOVED, {"title": _title(item), "detail": detail, "said": said})


def _replied(item: dict[str, Any]) -> dict[str, str]:
    return {"who": sender_name(item.get("with")), "detail": _subject(item)}


def _answered(item: dict[str, Any]) -> dict[str, str]:
    return {"who": sender_name(item.get("by")), "detail": _subject(item)}


def _task(item: dict[str, Any]) -> dict[str, str]:
    return {"title": _title(item)}


def _moved(item: dict[str, Any]) -> dict[str, str]:
    was, now = item.get("was") or {}, item.get("now") or {}
    same = _date(str(was.get("start"))[:10]) == _date(str(now.get("start"))[:10])
    return {"title": _title(item), "detail": f"{_span(was)} → {_span(now, day=not same)}"}


def _cancelled(item: dict[str, Any]) -> dict[str, str]:
    return {"title": _title(item), "detail": f"was {_span(item)}"}


def _new(item: dict[str, Any]) -> dict[str, str]:
    return {"title": _title(item), "detail": _span(item, day=False)}


def _conflict(item: dict[str, Any]) -> dict[str, str]:
    titles = [str(t) for t in item.get("titles") or [] if t]
    return {"titles": " and ".join(titles) if titles else "two events"}


# The values of each kind's line (its words are `SINCE_LINES`').
_VALUES = {
    "replies_sent": _replied,
    "answered": _answered,
    "tasks_done": _task,
    "tasks_gone": _task,
    "meetings_moved": _moved,
    "meetings_cancelled": _cancelled,
    "meetings_new": _new,
    "conflicts_new": _conflict,
}


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _subject(item: dict[str, Any]) -> str:
    return f'"{item.get("subject") or "(no subject)"}"'


def _title(item: dict[str, Any]) -> str:
    return str(item.get("title") or "(untitled)")


def _span(when: dict[str, Any], *, day: bool = True) -> str:
    start, end = parse_time(when.get("start")), parse_time(when.get("end"))
    if start is None:
        return str(when.get("start") or "?")
    text = f"{start:%H:%M}" + (f"–{end:%H:%M}" if end is not None else "")
    return f"{_day(start.date())} {text}" if day else text


def _date(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _day(day: dt.date | None) -> str:
    return f"{DAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]}" if day else ""
