"""The offline model's "Since yesterday" section, from read_since's result: one line per
change, in the tool's order; one line when nothing changed; no section on a first brief (or
when the run never read it)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from dayflow.followups.threads import normalise_subject
from dayflow.models import SINCE_DUE_MOVED, SINCE_LINES, Section
from dayflow.providers.offline._conversation import Call, latest_list, named
from dayflow.providers.offline._reading import DAYS, MONTHS, parse_time
from dayflow.senders import sender_name
from dayflow.tools.since import moved_to


def since_lines(calls: list[Call]) -> list[str]:
    """The section's heading and lines ([] when there is nothing to compare with)."""
    found = named(calls, "read_since")
    if not found:
        return []
    # The run's first read is what this brief compares (a fork that copies it shows it whole);
    # a second one, after a filing (`since_again`), only adds deadlines to move.
    call = found[0]
    if call.error:
        return ["", Section.heading(Section.SINCE), f"- _Could not compare: {call.error}_"]
    result = call.result if isinstance(call.result, dict) else {}
    previous = result.get("previous")
    if not isinstance(previous, dict):
        return []
    # Which brief it compares with, said first: a second brief of the day compares with the
    # last one of a day before ("since yesterday"), not with this morning's.
    lines = ["", Section.heading(Section.SINCE), Section.compared_with(previous.get("brief_date"))]
    made = moves_made(calls)
    if result.get("nothing") and not made:
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
    proposed = {
        (i.get("id"), i.get("now")): i
        for c in found
        if isinstance(c.result, dict)
        for i in _dicts(c.result.get("due_moved"))
    }
    for move in made:
        was = proposed.get((move.get("id"), move.get("now")), {}).get("was")
        lines.append("- " + _due_moved(move | ({"was": was} if was else {})))
    return lines


def moves_made(calls: list[Call]) -> list[dict[str, Any]]:
    """The due dates moved that the brief says: move_due's answers, and read_since's proposals
    whose task the list already has on its new date (a brief earlier today moved it; an update
    of that brief, which reads only the mail since, has no message to make the move with
    again, and says it all the same)."""
    made = [
        m.result["moved"]
        for m in named(calls, "move_due")
        if not m.error and isinstance(m.result, dict) and isinstance(m.result.get("moved"), dict)
    ]
    said = {(m.get("id"), m.get("now")) for m in made}
    for item in _already_moved(calls):
        if (item.get("id"), item.get("now")) not in said:
            said.add((item.get("id"), item.get("now")))
            made.append(item)
    return made


def _already_moved(calls: list[Call]) -> list[dict[str, Any]]:
    """read_since's proposed moves whose task the run's latest read_tasks has on its new date."""
    tasks, _ = latest_list(calls, "read_tasks", "tasks")
    due_of = {str(t.get("id")): t.get("due") for t in tasks}
    return [
        item
        for c in named(calls, "read_since")
        if isinstance(c.result, dict)
        for item in _dicts(c.result.get("due_moved"))
        if item.get("now") and due_of.get(str(item.get("id"))) == item.get("now")
    ]


def move_calls(calls: list[Call], offered: set[Any]) -> list[tuple[str, dict[str, Any]]]:
    """The move_due calls read_since's due_moved asks for that the run has not made yet; none
    for a task already on its new date whose message the run did not read (move_due checks
    the words against what the run read, and the move would change nothing)."""
    found = named(calls, "read_since")
    if "move_due" not in offered or not found or not isinstance(found[-1].result, dict):
        return []
    made = {(c.input.get("task_id"), c.input.get("due")) for c in named(calls, "move_due")}
    read = {str(m.get("id")) for m in _mail_read(calls)}
    already = {
        (i.get("id"), i.get("now")) for i in _already_moved(calls) if i.get("source_id") not in read
    }
    out = []
    for item in _dicts(found[-1].result.get("due_moved")):
        args = {k: item.get(f) for k, f in _MOVE_ARGS}
        if all(isinstance(v, str) and v for v in args.values()):
            if (args["task_id"], args["due"]) not in made | already:
                out.append(("move_due", args))
    return out


def since_again(calls: list[Call], offered: set[Any]) -> list[tuple[str, dict[str, Any]]]:
    """read_since once more when this run filed a task after its last read_since and a
    message it read in that task's thread (by subject), received after the task's own, says
    a deadline moved: read_since proposes only tasks that exist, and the ask and its move
    may both be new this morning (the move is then made by `move_calls`). Nothing when no
    read message moves a deadline."""
    if not {"read_since", "move_due"} <= offered:
        return []
    last_since = max((i for i, c in enumerate(calls) if c.name == "read_since"), default=None)
    if last_since is None:
        return []
    filed = [
        c for c in calls[last_since + 1 :] if c.name == "create_task" and isinstance(c.result, dict)
    ]
    sources = {str(c.input.get("source_id") or "") for c in filed}
    read = [(m, _received(m)) for m in _mail_read(calls)]
    # Their threads, by subject ("Re: Contract draft" answers "Contract draft"): read_since
    # knows the threads, and proposes only a move in the task's own.
    first: dict[str, dt.datetime] = {}
    for m, when in read:
        if when is not None and str(m.get("id")) in sources:
            subject = normalise_subject(str(m.get("subject") or ""))
            first[subject] = min(first.get(subject, when), when)
    for m, when in read:
        since = first.get(normalise_subject(str(m.get("subject") or "")))
        if when is None or since is None or when <= since or str(m.get("id")) in sources:
            continue
        text = " ".join(str(m.get(k) or "") for k in ("subject", "snippet", "body"))
        if moved_to(text, when.date()) is not None:
            return [("read_since", {})]
    return []


def _received(message: dict[str, Any]) -> dt.datetime | None:
    """When a listed message was received (aware; in the brief's zone, as the tools list it),
    or None when its time is missing or naive."""
    try:
        when = dt.datetime.fromisoformat(str(message.get("received_at") or ""))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def _mail_read(calls: list[Call]) -> list[dict[str, Any]]:
    """The messages the run's read_inbox and read_message calls gave."""
    out: list[dict[str, Any]] = []
    for c in calls:
        result = c.result if isinstance(c.result, dict) else {}
        if c.name == "read_inbox":
            out += _dicts(result.get("messages"))
        elif c.name == "read_message" and isinstance(result.get("message"), dict):
            out.append(result["message"])
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
