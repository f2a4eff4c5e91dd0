"""`read_since`: what changed since the user's previous finished brief (issue 35 part 1).

What the previous brief showed is read from its committed steps only (its calendar, followups
and tasks reads and the tasks it filed): those rows are final once the run is done, so the
"state it showed" is saved data, never the store's state now. This read is saved with its step
like every read, so a resume or a fork that copies the step compares with exactly what it
compared with the first time, whatever briefs finished since.

Where a kill -9 lands: before the step's results are committed, the next process redoes the
read (nothing of it was shown); after, it sends the saved result again. The previous brief is
one whose status is `done` and whose day is before this one, so a kill while it was running
leaves it out (an unfinished brief showed the user nothing). The section's first line names the
brief it compared with (`previous` in the result), so a second brief of the day says it is
yesterday's.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from dayflow import meetings
from dayflow.dates import SENTENCE
from dayflow.followups.promises import date_in
from dayflow.followups.rules import own_words
from dayflow.models import Message
from dayflow.shown import calls_in
from dayflow.tools import evidence as proof
from dayflow.tools.calendar import calendar_range, read_calendar
from dayflow.tools.followups import read_followups
from dayflow.tools.spec import Tool, ToolEnv, ToolError, string_schema

if TYPE_CHECKING:
    from dayflow.followups import Followups
    from dayflow.followups.threads import Thread, ThreadMessage
    from dayflow.models import Run
    from dayflow.store import Store

# The kinds of change, in the order the section lists them.
KINDS = (
    "replies_sent",
    "answered",
    "tasks_done",
    "tasks_gone",
    "meetings_moved",
    "meetings_cancelled",
    "meetings_new",
    "conflicts_new",
    "due_moved",
)
MAX_EACH = 30  # items of one kind at most; the rest is counted in "<kind>_more"


@dataclass(frozen=True)
class Earlier:
    """The previous finished brief: its run, day and committed conversation."""

    run_id: str
    brief_date: str
    messages: list[Message]


@dataclass(frozen=True)
class State:
    """What a brief showed: the events it read by id (with the days its reads covered),
    today's conflicts by their key, the followups' lists by thread key, and the open tasks by
    id."""

    events: dict[str, dict[str, Any]]
    days: frozenset[date]
    conflicts: dict[str, dict[str, Any]]
    you_owe: dict[str, dict[str, Any]]
    waiting_on: dict[str, dict[str, Any]]
    tasks: dict[str, dict[str, Any]]


def earlier_brief(store: Store, run: Run) -> Earlier | None:
    """The finished brief of this profile for the latest day before `run`'s (of that day, the
    newest), with its committed conversation; None on a first brief. A second brief of the
    day compares with a day before's, as "since yesterday" says; a run whose reads `gc`
    blanked or removed never counts (it would show every event as new), nor does the bundled
    sample for a user's own sources or the other way round."""
    found = store.runs.latest_done_before(run.brief_date, sample=run.settings.reads_sample)
    if found is None:
        return None
    return Earlier(found.id, found.brief_date, store.steps.conversation(found.id))


def shown_state(messages: list[Message], brief_date: date) -> State:
    """The state a brief's committed `messages` showed (the last read of each list wins)."""
    events: dict[str, dict[str, Any]] = {}
    days: set[date] = set()
    conflicts: dict[str, dict[str, Any]] = {}
    owe: dict[str, dict[str, Any]] = {}
    waiting: dict[str, dict[str, Any]] = {}
    tasks: dict[str, dict[str, Any]] = {}
    for name, args, payload in calls_in(messages):
        if not isinstance(payload, dict):
            continue
        if name == "read_calendar":
            try:
                first, last = calendar_range(args, brief_date)
            except ToolError:
                continue
            days.update(first + timedelta(days=i) for i in range((last - first).days + 1))
            for e in _dicts(payload.get("events")):
                events[str(e.get("id"))] = _event(e)
            if first == last == brief_date:
                conflicts = {_conflict_key(c): c for c in _dicts(payload.get("conflicts"))}
        elif name == "read_followups":
            owe = _by_key(payload.get("you_owe"))
            waiting = _by_key(payload.get("waiting_on"))
        elif name == "read_tasks":
            for t in _dicts(payload.get("tasks")):
                if t.get("status", "open") != "done":
                    tasks[str(t.get("id"))] = _task(t)
        elif name == "create_task" and isinstance(payload.get("task"), dict):
            t = payload["task"]
            if t.get("status", "open") != "done":
                tasks[str(t.get("id"))] = _task(t)
        elif name == "move_due" and isinstance(payload.get("moved"), dict):
            # The brief said the new date (its Since line and Needs action): that is shown.
            moved = payload["moved"]
            if str(moved.get("id")) in tasks and moved.get("now"):
                tasks[str(moved["id"])] = tasks[str(moved["id"])] | {"due": moved["now"]}
    return State(events, frozenset(days), conflicts, owe, waiting, tasks)


def rebased(state: State, sources: Collection[str], days: int, tz: tzinfo) -> State:
    """`state` with the events of the calendars named `sources` (whose dates follow the brief's
    day: the bundled sample) `days` whole days later, at the same wall-clock time, in `tz`. Such
    a calendar is made again for each day, so what it showed a brief of `days` days before is
    compared where it stands now: its standup "tomorrow" is not "moved" to the day after."""
    if not sources or not days:
        return state
    names = set(sources)
    events = {
        eid: _later(e, days, tz) if e.get("source") in names else e
        for eid, e in state.events.items()
    }
    # The days it read, moved alike: a brief a week or more before still read "today" of such
    # a calendar (its conflicts then are not new). A user's calendar read beside one (a config
    # with both) is compared on those days too; the sample never is.
    try:
        moved = {d + timedelta(days=days) for d in state.days}
    except OverflowError:
        moved = set()
    return replace(state, events=events, days=state.days | moved)


def _later(e: dict[str, Any], days: int, tz: tzinfo) -> dict[str, Any]:
    out = dict(e)
    for key in ("start", "end"):
        try:
            if e.get("all_day"):
                out[key] = (date.fromisoformat(str(e[key])) + timedelta(days=days)).isoformat()
            else:
                # The wall-clock time that brief showed, in its zone: the sample's 09:30 is
                # 09:30 in the user's zone of each day, even when the zone changed between.
                wall = datetime.fromisoformat(str(e[key])).replace(tzinfo=None)
                out[key] = (wall + timedelta(days=days)).replace(tzinfo=tz).isoformat()
        except (KeyError, ValueError, OverflowError):
            return e  # not a time this brief could have shown: compared as it was
    return out


def changes(before: State, now: State, feed: Followups | None, today: date) -> dict[str, Any]:
    """What changed from `before` (the previous brief) to `now`, by kind (see `KINDS`); `feed`
    tells a reply sent or a wait answered from an item that only left the window."""
    out: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
    latest = {t.key: t.messages[0] for t in feed.threads if t.messages} if feed else {}
    for key, item in before.you_owe.items():
        last = latest.get(key)
        if key not in now.you_owe and last is not None and last.from_me:
            sent = {"at": last.received_at.isoformat(), "id": last.id}
            out["replies_sent"].append(_thread_line(item) | sent)
    for key, item in before.waiting_on.items():
        last = latest.get(key)
        if key not in now.waiting_on and last is not None and not last.from_me:
            by = {"name": last.sender_name, "address": last.sender_address}
            answer = {"by": by, "id": last.id, "at": last.received_at.isoformat()}
            out["answered"].append(_thread_line(item) | answer)
    # Each as the previous brief showed it, with its status now (`gone`: deleted, rejected).
    for tid, task in before.tasks.items():
        found = now.tasks.get(tid)
        if found is None:
            out["tasks_gone"].append(task | {"status": "gone"})
        elif found.get("status") == "done":
            out["tasks_done"].append(task | {"status": "done"})
    for eid, was in before.events.items():
        day = _day(was)
        if day is None or day < today or (day not in now.days and eid not in now.events):
            continue
        found = now.events.get(eid)
        if found is None or (found.get("status") == "cancelled" != was.get("status")):
            out["meetings_cancelled"].append(was)
        elif (found["start"], found["end"]) != (was["start"], was["end"]):
            # Its times now at the top, as every other event's are; the old ones in `was`.
            when = {"start": found["start"], "end": found["end"]}
            out["meetings_moved"].append(was | when | {"was": _when(was), "now": when})
    if today in before.days:
        for eid, e in now.events.items():
            if _day(e) == today and eid not in before.events and e.get("status") != "cancelled":
                out["meetings_new"].append(e)
    old = _conflicts_on(before, today) if today in before.days else {}
    out["conflicts_new"] = [c for k, c in now.conflicts.items() if k not in old]
    result: dict[str, Any] = {}
    for kind in KINDS:
        items = out[kind]
        result[kind] = items[:MAX_EACH]
        if len(items) > MAX_EACH:
            result[kind + "_more"] = len(items) - MAX_EACH
    return result


def read_since(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    earlier = env.earlier()
    if earlier is None:
        first: dict[str, Any] = {
            "previous": None,
            "note": "no earlier finished brief: leave the section out",
        }
        # Nothing to compare with, but a deadline a later message moved is the task's all the
        # same (an ask and its move both new this morning): move_due makes it.
        feed = _feed(env)
        moves = due_moves(env, feed) if feed is not None else []
        if moves:
            first["due_moved"] = moves[:MAX_EACH]
        return first
    then = date.fromisoformat(earlier.brief_date)
    week = read_calendar({"range": "week"}, env)
    before = shown_state(earlier.messages, then)
    before = rebased(before, env.calendars.anchored, (env.brief_date - then).days, env.tz)
    today = read_calendar({"range": "today"}, env)
    follow = read_followups({}, env)
    now = State(
        {str(e.get("id")): _event(e) for e in _dicts(week.get("events"))},
        frozenset(env.brief_date + timedelta(days=i) for i in range(7)),
        {_conflict_key(c): c for c in _dicts(today.get("conflicts"))},
        _by_key(follow.get("you_owe")),
        _by_key(follow.get("waiting_on")),
        {t.id: _task(t.to_json()) for t in env.tasks.list(include_done=True)},
    )
    feed = _feed(env)
    found = changes(before, now, feed, env.brief_date)
    moves = due_moves(env, feed, before.tasks) if feed is not None else []
    found["due_moved"] = moves[:MAX_EACH]
    out: dict[str, Any] = {
        "previous": {"run_id": earlier.run_id, "brief_date": earlier.brief_date},
        **found,
        "nothing": not any(found[k] for k in KINDS),
    }
    gone = [*_dicts(week.get("unavailable")), *_dicts(follow.get("unavailable"))]
    if gone:
        out["unavailable"] = gone
    return out


# A deadline named, and a word that it moved, in English, German, French and Spanish.
_DUE = re.compile(
    r"\b(?:deadline|due|frist|abgabe\w*|fällig\w*|termin|date\s+limite|échéance|délai|remise"
    r"|plazo|fecha\s+límite|fecha\s+de\s+entrega|entrega|vencimiento)\b",
    re.IGNORECASE,
)
_MOVE = re.compile(
    r"\b(?:moved|pushed|postponed|extended|shifted|changed|delayed|is\s+now|now\s+due"
    r"|verschoben|verlegt|verlängert|geändert|ist\s+jetzt|jetzt\s+am|neu(?:e|er)?"
    r"|reporté\w*|repoussé\w*|décalé\w*|prolongé\w*|déplacé\w*|changé\w*|est\s+maintenant"
    r"|pospuest[oa]s?|aplazad[oa]s?|movid[oa]s?|cambiad[oa]s?|ampliad[oa]s?|prorrogad[oa]s?"
    r"|retrasad[oa]s?|ahora\s+es)\b",
    re.IGNORECASE,
)


def moved_to(text: str, sent: date) -> tuple[date, str] | None:
    """The new due date a message's own words move a deadline to, with the sentence that
    says so ("the deadline moved to Friday 27 November"); None when none does."""
    for found in SENTENCE.finditer(own_words(text)):
        sentence = found.group(0).strip()
        if not (_DUE.search(sentence) and _MOVE.search(sentence)):
            continue
        day = date_in(sentence, sent)
        if day is not None:
            return day, sentence
    return None


def due_moves(
    env: ToolEnv, feed: Followups, shown: dict[str, dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The open tasks whose deadline a later message in their thread moved (someone else's,
    after the one the task came from): the task, its due date then and now, the sentence that
    moved it, the message it is in and who sent the ask (`move_due` makes the change). A task
    already on its new date is proposed still when the brief compared with (`shown`, its tasks
    by id) showed it on another: a brief earlier today made the move, and this one says it all
    the same (its `was` is the date that brief showed; `move_due` made again changes
    nothing)."""
    shown = shown or {}
    by_key: dict[str, tuple[Thread, ThreadMessage]] = {}
    for thread in feed.threads:
        for m in thread.messages:
            by_key[m.key] = by_key[m.id] = (thread, m)
    out = []
    for task in env.tasks.list():
        found = by_key.get(task.idempotency_key.split("#", 1)[0]) or by_key.get(
            task.source_id or ""
        )
        if found is None:
            continue
        thread, origin = found
        later = [m for m in thread.messages if m.received_at > origin.received_at]
        for m in later:  # newest first: the latest word on the date wins
            if m.from_me or m.automated or m.outside:
                continue
            moved = moved_to(m.text, m.received_at.astimezone(env.tz).date())
            if moved is None:
                continue
            day, sentence = moved
            # A day already past is no due date to move to (move_due refuses it): not proposed,
            # so `due_moved` holds only moves the brief can make and say.
            now = day.isoformat()
            then = shown[task.id].get("due") if task.id in shown else task.due
            if day >= env.brief_date and now != then:
                by = {"name": m.sender_name, "address": m.sender_address}
                # Who asked: a brief whose window no longer holds the ask names them all
                # the same, as the task's line under Needs action does.
                asked = {"name": origin.sender_name, "address": origin.sender_address}
                # And the ask in its sender's words (move_due's `asked`): an update of a brief
                # that moved it has no move_due answer to quote it from.
                words = {"asked": task.evidence} if task.evidence else {}
                out.append(
                    {"id": task.id, "title": task.title, "was": then, "now": now}
                    | {"evidence": sentence[: proof.MAX_CHARS], "source_id": m.id, "by": by}
                    | {"asked_by": asked}
                    | words
                )
            break
    return out


def move_due(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    """Move an open task's due date, as a later message says: its words must be in that
    message's own text (the evidence is kept with the change, in this saved effect)."""
    # Checked against the message as this run's reads showed it (never read again here: an
    # effect runs inside its saving transaction, which must not wait on a mail server).
    source = args["source_id"]
    texts = env.shown().texts_of.get(source)
    if not texts:
        raise ToolError(f"no message {source[:80]!r} among what this run read; nothing moved")
    quote = proof.check(args["evidence"], texts, f"message {source[:80]!r}")
    due = args["due"]
    try:
        day = date.fromisoformat(due)
    except ValueError:
        raise ToolError(f"'due' must be a real date as YYYY-MM-DD, got {due!r}") from None
    if day < env.brief_date:
        raise ToolError(f"'due' {due} is before the brief's day; nothing moved")
    before = next((t for t in env.tasks.list() if t.id == args["task_id"]), None)
    task = env.tasks.move_due(args["task_id"], due)
    if task is None or before is None:
        raise ToolError(f"no open task {args['task_id'][:80]!r}; nothing moved")
    moved = {"id": task.id, "title": task.title, "was": before.due, "now": task.due}
    # `asked`: the task's own ask in its sender's words, which a brief still quotes for it.
    asked = {"asked": task.evidence} if task.evidence else {}
    return {"moved": moved | {"evidence": quote, "source_id": source} | asked}


def _feed(env: ToolEnv) -> Followups | None:
    feed = env.mail.followups
    if feed is None or not (feed.inbox or feed.sent):
        return None
    try:
        return feed()
    except Exception:  # noqa: BLE001 - read_followups above already said what failed
        return None


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _by_key(items: Any) -> dict[str, dict[str, Any]]:
    return {str(i.get("key")): _thread_line(i) for i in _dicts(items)}


def _thread_line(item: dict[str, Any]) -> dict[str, Any]:
    return {k: item[k] for k in ("key", "with", "subject") if k in item}


def _event(e: dict[str, Any]) -> dict[str, Any]:
    kept = ("id", "title", "start", "end", "all_day", "status", "free", "response", "location",
            "source")  # fmt: skip
    return {k: e[k] for k in kept if k in e}


def _task(t: dict[str, Any]) -> dict[str, Any]:
    return {k: t.get(k) for k in ("id", "title", "due", "status", "source_id")}


def _when(e: dict[str, Any]) -> dict[str, Any]:
    return {"start": e.get("start"), "end": e.get("end")}


def _day(e: dict[str, Any]) -> date | None:
    try:
        return datetime.fromisoformat(str(e.get("start"))).date()
    except ValueError:
        return None


def _conflict_key(c: dict[str, Any]) -> str:
    ids: Iterable[Any] = c.get("events") or ()
    return str(c.get("kind")) + ":" + "|".join(sorted(str(i) for i in ids))


def _conflicts_on(state: State, day: date) -> dict[str, dict[str, Any]]:
    """The conflicts of `day` among the events a brief read (its week held them)."""
    those = [e for e in state.events.values() if _day(e) == day]
    found, _ = meetings.conflicts(those)
    return {_conflict_key(c): c for c in found}


READ_SINCE = Tool(
    "read_since",
    "What changed since the user's previous brief: replies_sent, answered ('by' whom), "
    "tasks_done, tasks_gone, meetings_moved ('was', 'now'), meetings_cancelled, meetings_new, "
    "conflicts_new, due_moved (call move_due for each). previous null: a first brief (no "
    "section; due_moved may still come). Call it again after filing a task when a later "
    "message you read moves that task's deadline: the task is then proposed too.",
    {"type": "object", "properties": {}, "additionalProperties": False},
    read_since,
)

MOVE_DUE = Tool(
    "move_due",
    "Move an open task's due date as a later message says (read_since's due_moved): task_id, "
    "the new due (YYYY-MM-DD), source_id (the message) and evidence (its words, copied).",
    {
        "type": "object",
        "properties": {
            "task_id": string_schema(64, "The task's id."),
            "due": {"type": "string", "description": "The new due date, YYYY-MM-DD."},
            "source_id": string_schema(300, "The id of the message that moves it."),
            "evidence": string_schema(proof.MAX_CHARS, "The message's words that move it."),
        },
        "required": ["task_id", "due", "source_id", "evidence"],
        "additionalProperties": False,
    },
    move_due,
    effect=True,
)
