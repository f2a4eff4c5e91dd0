"""What to know before each of today's meetings: the mail threads of the window with the people
it is with, newest first, and the open tasks that came from that mail.

An event gets prep when someone other than the user is on it (an attendee or the organizer
whose address is not one of `me`'s), unless it is cancelled or declined: nobody prepares for a
meeting they are not going to. The threads are `Followups.threads_with` those people's
addresses: every thread of the last `followup_days` in which one of them sent, or was sent or
copied, a message; the same reading of the mail as You owe and Waiting on. A thread is shown by,
and ordered by, its latest message a person wrote (an automatic reply is not what was last
said). The tasks are the open ones that came from their own mail: filed under the key of a
message one of them sent, or of a thread one of them wrote in (a request Ben sent Dana with the
user in Cc is Ben's, not Dana's). People named without an address get no mail.

Bounded for a model's context whatever the day holds: at most MAX_EVENTS events, MAX_THREADS
threads and MAX_TASKS tasks each, MAX_PEOPLE people shown, the rest counted.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from dayflow.followups import Followups, Thread, ThreadMessage
from dayflow.models import Task
from dayflow.sources.envelope import base_address
from dayflow.sources.people import others

MAX_EVENTS = 30
MAX_THREADS = 5
MAX_TASKS = 10
MAX_PEOPLE = 10
_SUBJECT = 200


def prep(
    events: Iterable[dict[str, Any]],
    followups: Followups,
    tasks: Iterable[Task],
    tz: dt.tzinfo,
) -> tuple[list[dict[str, Any]], int]:
    """The prep of each event (read_calendar's items) with someone else on it, in the events'
    order, at most MAX_EVENTS, and how many more events had someone else on them."""
    open_tasks = [t for t in tasks if t.status != "done"]
    out: list[dict[str, Any]] = []
    more = 0
    for event in events:
        if event.get("status") == "cancelled" or event.get("response") == "declined":
            continue
        people = others(event, followups.me.matches)
        if not people:
            continue
        if len(out) == MAX_EVENTS:
            more += 1
            continue
        out.append(_one(event, people, followups, open_tasks, tz))
    return out, more


def _one(
    event: dict[str, Any],
    people: list[dict[str, str]],
    followups: Followups,
    tasks: list[Task],
    tz: dt.tzinfo,
) -> dict[str, Any]:
    addresses = [p["address"] for p in people if p.get("address")]
    threads = followups.threads_with(addresses) if addresses else []
    threads.sort(key=lambda t: _said(t).received_at, reverse=True)  # stable: ties keep order
    filed = _their_tasks(threads, tasks, addresses)
    item: dict[str, Any] = {"id": event["id"], "title": event.get("title", "")}
    item.update({k: event[k] for k in ("start", "end", "all_day") if k in event})
    item["with"] = [{k: v for k, v in p.items() if v} for p in people[:MAX_PEOPLE]]
    if len(people) > MAX_PEOPLE:
        item["with_more"] = len(people) - MAX_PEOPLE
    item["threads"] = [_thread(t, tz) for t in threads[:MAX_THREADS]]
    if len(threads) > MAX_THREADS:
        item["threads_more"] = len(threads) - MAX_THREADS
    item["tasks"] = [_task(t) for t in filed[:MAX_TASKS]]
    if len(filed) > MAX_TASKS:
        item["tasks_more"] = len(filed) - MAX_TASKS
    return item


def _their_tasks(threads: list[Thread], tasks: list[Task], addresses: list[str]) -> list[Task]:
    """The open tasks filed from these people's own mail: under the key of a message one of
    them sent (a `#n` suffix ignored), or under the key of a thread one of them wrote in."""
    people = {base_address(a) for a in addresses}
    keys: set[str] = set()
    for thread in threads:
        theirs = [m for m in thread.messages if base_address(m.sender_address) in people]
        keys.update(m.key for m in theirs)
        if theirs:
            keys.add(thread.key)
    return [t for t in tasks if t.idempotency_key.split("#", 1)[0] in keys]


def _said(thread: Thread) -> ThreadMessage:
    """The latest message a person wrote (an out-of-office note or a bounce says nothing)."""
    return next((m for m in thread.messages if not m.automated), thread.messages[0])


def _thread(thread: Thread, tz: dt.tzinfo) -> dict[str, Any]:
    latest = _said(thread)
    out: dict[str, Any] = {
        "key": thread.key,
        "subject": _cap(" ".join(latest.subject.split())),
        "latest_at": latest.received_at.astimezone(tz).isoformat(),
    }
    if latest.from_me:
        out["latest_from_me"] = True
    else:
        sender = {"name": latest.sender_name, "address": latest.sender_address}
        out["latest_from"] = {k: v for k, v in sender.items() if v}
    out["messages"] = len(thread.messages)
    return out


def _task(task: Task) -> dict[str, Any]:
    return {"id": task.id, "title": task.title, "due": task.due, "key": task.idempotency_key}


def _cap(text: str) -> str:
    return text if len(text) <= _SUBJECT else text[: _SUBJECT - 1] + "…"
