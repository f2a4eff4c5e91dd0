"""What `## Since yesterday` compares (`dayflow.tools.since`), in-process through the CLI: the
bundled sample's days (made again for each brief's day) against a real calendar's move."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

from dayflow.frozen import replace
from dayflow.models import RunSettings
from dayflow.store import Store
from dayflow.store.runs import EARLIER_PAGE
from dayflow.tools.since import earlier_brief
from tests.harness import home_calendar, invoke, offline_model
from tests.scripted import text, turn
from tests.test_agent import _new_run

HEADING = "## Since yesterday"


def _section(text: str) -> list[str]:
    if HEADING not in text:
        return []
    after = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    return [line for line in after.strip().splitlines() if line]


def _brief(tmp_path: Path, day: str, *more: str, env: dict[str, str] | None = None) -> str:
    home = {"HOME": str(tmp_path / "home")} | (env or {})
    res = invoke(None, offline_model, "brief", "--date", day, *more, env=home)
    assert res.code == 0, res.err
    return res.out


def test_the_samples_second_day_moves_nothing(tmp_path: Path) -> None:
    """A new user (empty HOME) runs the sample two days running: its standup of tomorrow is
    tomorrow's standup, not a meeting moved by a day; nor is its daily conflict new."""
    _brief(tmp_path, "2026-11-05")
    two = _brief(tmp_path, "2026-11-06")
    assert _section(two) == [
        "Compared with the brief of Thu 5 Nov.",
        "- Nothing of it changed (replies, waits, tasks, meetings).",
    ]
    # Eleven days later (a holiday): its daily conflict is no new one, nor its meetings.
    later = _brief(tmp_path, "2026-11-17", "--format", "json")
    assert json.loads(later)["since"]["nothing"] is True
    # Three days later, in another zone: the sample's 09:30 is 09:30 wherever it is read.
    doc = json.loads(_brief(tmp_path, "2026-11-20", "--format", "json",
                            env={"DAYFLOW_TZ": "Europe/Berlin"}))  # fmt: skip
    since = doc["since"]
    assert since["previous"]["brief_date"] == "2026-11-17"
    assert since["nothing"] is True
    assert not since["meetings_moved"] and not since["conflicts_new"]


def _ics(start: str, end: str) -> str:
    return (
        "BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:review@x\nDTSTAMP:20261101T000000Z\n"
        f"DTSTART;TZID=Europe/Berlin:{start}\nDTEND;TZID=Europe/Berlin:{end}\n"
        "SUMMARY:Design review\nEND:VEVENT\nEND:VCALENDAR\n"
    )


def test_a_real_meeting_moved_to_the_next_day_at_the_same_hour_is_moved(tmp_path: Path) -> None:
    """A user's own calendar is taken as is: the same UID a day later, at the same time of
    day, moved, with its old and new times."""
    env = home_calendar(tmp_path, _ics("20261119T100000", "20261119T110000"))
    _brief(tmp_path, "2026-11-18", env=env)
    home_calendar(tmp_path, _ics("20261120T100000", "20261120T110000"))
    doc = json.loads(_brief(tmp_path, "2026-11-19", "--format", "json", env=env))
    assert _section(doc["brief"]) == [
        "Compared with the brief of Wed 18 Nov.",
        "- Moved: Design review, Thursday 19 November 10:00–11:00 → Friday 20 November"
        " 10:00–11:00.",
    ]
    [moved] = doc["since"]["meetings_moved"]
    assert (moved["was"]["start"], moved["now"]["start"]) == (
        "2026-11-19T10:00:00+01:00",
        "2026-11-20T10:00:00+01:00",
    )


def _anchored(path: Path, start: str, end: str) -> None:
    event = {"id": "e1", "title": "Budget call", "start": start, "end": end}
    path.write_text(json.dumps({"anchor_date": "2026-11-05", "events": [event]}))


def test_an_anchored_files_edited_meeting_is_moved_where_its_days_are_not(
    tmp_path: Path,
) -> None:
    """A JSON calendar with an anchor_date follows the brief's day like the sample: day 2 sees
    its meeting of "tomorrow" still tomorrow (no move); once the file says another hour, it
    moved, between the times each day's brief made of it."""
    cal = tmp_path / "cal.json"
    _anchored(cal, "2026-11-06T09:30:00+00:00", "2026-11-06T10:00:00+00:00")
    _brief(tmp_path, "2026-11-05", "--calendar", str(cal))
    two = _brief(tmp_path, "2026-11-06", "--calendar", str(cal))
    assert _section(two) == [
        "Compared with the brief of Thu 5 Nov.",
        "- Nothing of it changed (replies, waits, tasks, meetings).",
    ]
    _anchored(cal, "2026-11-06T11:00:00+00:00", "2026-11-06T11:30:00+00:00")
    three = _brief(tmp_path, "2026-11-07", "--calendar", str(cal))
    assert [x for x in _section(three) if "Budget" in x] == [
        "- Moved: Budget call, Sunday 8 November 09:30–10:00 → 11:00–11:30."
    ]


def _json(tmp_path: Path, *args: str) -> dict[str, Any]:
    home = {"HOME": str(tmp_path / "home")}
    res = invoke(None, offline_model, *args, "--format", "json", env=home)
    assert res.code == 0, res.err
    doc: dict[str, Any] = json.loads(res.out)
    return doc


def test_a_second_brief_of_the_day_says_it_compares_with_yesterdays(tmp_path: Path) -> None:
    """ "Since yesterday" is yesterday: a second brief of Friday compares with Thursday's (its
    first line and `previous` say so), a brief made since for an older day does not take
    Thursday's place, and a fork of the second brief compares with what that brief did."""
    thu = _json(tmp_path, "brief", "--date", "2026-11-05")
    fri = _json(tmp_path, "brief", "--date", "2026-11-06")
    assert fri["since"]["previous"] == {"run_id": thu["run"]["id"], "brief_date": "2026-11-05"}
    _json(tmp_path, "brief", "--date", "2026-11-03")  # a past day, briefed afterwards
    again = _json(tmp_path, "brief", "--date", "2026-11-06")
    assert again["run"]["id"] != fri["run"]["id"]
    assert again["since"]["previous"] == {"run_id": thu["run"]["id"], "brief_date": "2026-11-05"}
    assert _section(again["brief"])[0] == "Compared with the brief of Thu 5 Nov."
    for step in ("0", "1"):  # read again, or the saved comparison copied
        fork = _json(tmp_path, "fork", again["run"]["id"], "--from-step", step)
        assert fork["since"]["previous"] == again["since"]["previous"]
        assert _section(fork["brief"]) == _section(again["brief"])


def _section_html(page: str) -> str:
    return page.split("<h2>Since yesterday</h2>", 1)[1].split("</section>", 1)[0]


def test_the_pages_since_yesterday_links_each_change_to_its_mail(tmp_path: Path) -> None:
    """`--format html` of day 2 (tests/test_since.py's sequence): the lines are built from the
    run's reads, as the other sections are, each change linked to the message it stands on
    (the reply sent, Dan's answer, the done task's mail, Frank's moved deadline with his words
    in the evidence list); an event's line is its own evidence, as under Today."""
    from tests.test_since import DAY1, DAY2, SINCE, _day1, _day2

    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    one = invoke(db, offline_model, "brief", "--date", DAY1, *SINCE, env=env,
                 clock=f"{DAY1}T07:30:00+00:00")  # fmt: skip
    assert one.code == 0, one.err
    tasks = json.loads(invoke(db, offline_model, "tasks", "--json", env=env).out)
    slides = next(t["id"] for t in tasks if "slides" in t["title"].lower())
    assert invoke(db, offline_model, "tasks", "done", slides, env=env).code == 0
    _day2(tmp_path)
    two = invoke(db, offline_model, "brief", "--date", DAY2, *SINCE, "--format", "html",
                 env=env, clock=f"{DAY2}T07:30:00+00:00")  # fmt: skip
    assert two.code == 0, two.err
    section = two.out.split("<h2>Since yesterday</h2>", 1)[1].split("</section>", 1)[0]
    items = re.findall(r"<li[^>]*>(.*?)</li>", section, re.S)
    lines = [" ".join(re.sub(r"<[^>]+>", " ", li).split()) for li in items]
    links = [re.findall(r'<a class="ev" href="(#e-[^"]+)"', li) for li in items]
    assert lines == [
        "Compared with the brief of Wed 18 Nov.",
        "You replied to Bob Stone (bob@example.com) “Budget” Mail “Budget” · Wed 18 Nov 18:00",
        "Dan Reyes answered “Re: Contract signed?” Mail “Re: Contract signed?” · Thu 19 Nov 07:00",
        "Done: Send slides to Erin Mail “Slides” · Wed 18 Nov 08:00",
        "Moved: Standup Thu 19 Nov 11:00–11:30 → 15:00–15:30",
        "Cancelled: 1:1 with Dan was Thu 19 Nov 09:00–09:30",
        "New today: Client call 14:30–15:00",
        "New conflict: Design review and Client call",
        "Due date moved: Review contract draft Mon 23 Nov → Wed 25 Nov Mail “Re: Contract draft” "
        "· Thu 19 Nov 06:00",
    ]
    assert [len(x) for x in links] == [0, 1, 1, 1, 0, 0, 0, 0, 1]
    evidence = two.out.split("<h2>Evidence</h2>", 1)[1]
    for (anchor,) in filter(None, links):  # each link lands on an entry of the list
        assert f'<dt id="{anchor[1:]}">' in evidence
    frank = evidence.split("Mail “Re: Contract draft”", 1)[1].split("</dd>", 1)[0]
    assert "<q>Good news: the deadline moved to Wednesday 25 November.</q>" in frank


def test_a_deadline_moved_to_a_day_already_past_is_not_proposed(tmp_path: Path) -> None:
    """Frank's later word moves his deadline to a day before the brief's: move_due would
    refuse it, so read_since proposes no such move (its data and the section agree), and the
    task keeps its date; a move to a later day, in the next message, is made."""
    from tests.mailkit import deliver, thread_mail
    from tests.test_sent_mail import at
    from tests.test_since import DAY1, DAY2, DAY3, FRANK, SINCE, _day1

    db = tmp_path / "d.db"
    env = _day1(tmp_path)

    def brief(day: str) -> dict[str, Any]:
        res = invoke(db, offline_model, "brief", "--date", day, *SINCE, "--format", "json",
                     env=env, clock=f"{day}T07:30:00+00:00")  # fmt: skip
        assert res.code == 0, res.err
        doc: dict[str, Any] = json.loads(res.out)
        return doc

    def contract_due() -> list[str]:
        tasks = json.loads(invoke(db, offline_model, "tasks", "--json", env=env).out)
        return [t["due"] for t in tasks if "contract" in t["title"].lower()]

    brief(DAY1)
    assert contract_due() == ["2026-11-23"]
    past = thread_mail("frank2@x", sender=FRANK, subject="Re: Contract draft",
                       body="Sorry: the deadline was moved to Monday 16 November.",
                       when=at(19, 6), reply_to="frank1@x", refs="<frank1@x>")  # fmt: skip
    deliver(tmp_path / "mail" / "INBOX", past, at(19, 6))
    two = brief(DAY2)
    assert two["since"]["due_moved"] == []
    assert not [x for x in _section(two["brief"]) if x.startswith("- Due date moved")]
    assert contract_due() == ["2026-11-23"]
    later = thread_mail("frank3@x", sender=FRANK, subject="Re: Contract draft",
                        body="Correction: the deadline moved to Thursday 26 November.",
                        when=at(19, 18), reply_to="frank2@x",
                        refs="<frank1@x> <frank2@x>")  # fmt: skip
    deliver(tmp_path / "mail" / "INBOX", later, at(19, 18))
    three = brief(DAY3)
    assert [(m["was"], m["now"]) for m in three["since"]["due_moved"]] == [
        ("2026-11-23", "2026-11-26")
    ]
    assert contract_due() == ["2026-11-26"]


def _finished(store: Store, day: str, *, sample: bool = False) -> str:
    """A finished run of `day`: of the bundled sample, or of the user's own inbox."""
    settings = RunSettings(tz="UTC", inbox=None if sample else "/mail/inbox")
    run, lease = store.runs.create(replace(_new_run(), brief_date=day, settings=settings))
    store.steps.begin(lease, 1, turn(text("brief")), 1)
    store.steps.complete(lease, 1, None, final_text="brief")
    return run.id


def test_the_previous_brief_is_found_however_many_runs_came_after(store: Store) -> None:
    """Thursday's brief, then more finished runs than a page holds: Friday re-briefed in a
    loop, sample runs of Thursday, a later Thursday brief that was pruned and one redacted, and
    an unfinished one. Friday's brief still compares with Thursday's (the newest that counts),
    and a sample run with the newest sample run of an earlier day."""
    _finished(store, "2026-11-04")
    thu = _finished(store, "2026-11-05")
    for _ in range(EARLIER_PAGE + 5):
        _finished(store, "2026-11-06")  # a test loop's same-day updates
    sample_thu = [_finished(store, "2026-11-05", sample=True) for _ in range(EARLIER_PAGE + 5)]
    pruned, redacted = _finished(store, "2026-11-05"), _finished(store, "2026-11-05")
    assert store.archive.prune(pruned) and store.archive.redact(redacted, ["read_calendar"])
    store.runs.create(replace(_new_run(), brief_date="2026-11-05",
                              settings=RunSettings(tz="UTC", inbox="/mail/inbox")))  # fmt: skip
    friday = store.runs.get(_finished(store, "2026-11-06"))
    found = earlier_brief(store, friday)
    assert found is not None and (found.run_id, found.brief_date) == (thu, "2026-11-05")
    assert [m["role"] for m in found.messages] == ["assistant"]  # its committed step
    sample = store.runs.get(_finished(store, "2026-11-06", sample=True))
    found = earlier_brief(store, sample)
    assert found is not None and found.run_id == sample_thu[-1]
    monday = store.runs.get(_finished(store, "2026-11-04"))
    assert earlier_brief(store, monday) is None  # nothing before its day: a first brief


def test_a_second_brief_of_the_day_still_says_the_due_date_moved_since_yesterday(
    tmp_path: Path,
) -> None:
    """Day 2's first brief moves Frank's deadline (move_due) and says so; a second full brief
    of day 2 (`--new`) compares with day 1's brief too, so it says the same move, not a
    silent nothing because the task already carries its new date. Day 3 compares with day
    2's last brief, which showed the new date: nothing moved."""
    from tests.test_since import DAY1, DAY2, DAY2_LINES, DAY3, SINCE, _day1, _day2

    db = tmp_path / "d.db"
    env = _day1(tmp_path)

    def brief(day: str, *more: str) -> list[str]:
        res = invoke(db, offline_model, "brief", "--date", day, *SINCE, *more, env=env,
                     clock=f"{day}T07:30:00+00:00")  # fmt: skip
        assert res.code == 0, res.err
        return _section(res.out)

    brief(DAY1)
    _day2(tmp_path)
    moved = [x for x in DAY2_LINES if x.startswith("- Due date moved")]
    assert [x for x in brief(DAY2) if x.startswith("- Due date moved")] == moved
    again = brief(DAY2, "--new")
    assert again[0] == "Compared with the brief of Wed 18 Nov."
    assert [x for x in again if x.startswith("- Due date moved")] == moved
    tasks = json.loads(invoke(db, offline_model, "tasks", "--json", env=env).out)
    assert [t["due"] for t in tasks if "contract" in t["title"].lower()] == ["2026-11-25"]
    third = brief(DAY3)
    assert third[0] == "Compared with the brief of Thu 19 Nov."
    assert not [x for x in third if x.startswith("- Due date moved")]


def test_a_second_brief_of_the_day_gets_the_old_date_from_read_since_not_move_due(
    tmp_path: Path,
) -> None:
    """In day 2's second brief the task is on its new date already, so move_due answers the
    same date then and now; read_since's `was` is the date yesterday's brief showed. The
    offline model and the page take that one, and Claude's prompt says so."""
    from dayflow.agent import SYSTEM_PROMPT
    from dayflow.shown import calls_in
    from dayflow.store import open_store
    from tests.test_since import DAY1, DAY2, SINCE, _day1, _day2

    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    for day, *more in ((DAY1,), (DAY2,), (DAY2, "--new")):
        if day == DAY2 and not more:
            _day2(tmp_path)  # Frank's later word moves the deadline
        res = invoke(db, offline_model, "brief", "--date", day, *SINCE, *more, env=env,
                     clock=f"{day}T07:30:00+00:00")  # fmt: skip
        assert res.code == 0, res.err
    with open_store(db) as store:
        second = store.runs.list(limit=1)[0]
        calls = list(calls_in(store.steps.conversation(second.id)))
    (proposed,) = next(p for n, _, p in calls if n == "read_since")["due_moved"]
    (made,) = [p["moved"] for n, _, p in calls if n == "move_due"]
    assert (proposed["was"], proposed["now"]) == ("2026-11-23", "2026-11-25")
    assert (made["id"], made["was"], made["now"]) == (proposed["id"], "2026-11-25", "2026-11-25")
    flat = " ".join(SYSTEM_PROMPT.split())
    assert (
        "as its old date that item's `was` (the date the brief compared with showed), not "
        "move_due's: move_due answers the date the task had just before the call, already the "
        "new one when a brief earlier today moved it, and the line is said all the same"
    ) in flat


def test_the_state_a_brief_showed_has_the_due_date_it_moved() -> None:
    """A brief that read its tasks and then moved one's due date (move_due) showed the new
    date: that is what the next brief compares with, so it says no move again."""
    from dayflow.tools.since import shown_state

    task = {"id": "t_1", "title": "Review contract draft", "due": "2026-11-23", "status": "open"}
    moved = {"id": "t_1", "title": task["title"], "was": "2026-11-23", "now": "2026-11-25"}
    messages: list[dict[str, Any]] = [
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "read_tasks", "input": {}},
            {"type": "tool_use", "id": "b", "name": "move_due", "input": {"task_id": "t_1"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": json.dumps({"tasks": [task]})},
            {"type": "tool_result", "tool_use_id": "b", "content": json.dumps({"moved": moved})},
        ]},
    ]  # fmt: skip
    state = shown_state(messages, dt.date(2026, 11, 19))
    assert state.tasks["t_1"]["due"] == "2026-11-25"


def test_a_task_done_or_gone_carries_its_status_now_and_a_moved_meeting_its_new_times() -> None:
    """`--format json`'s since had `"status": "open"` for a task done or gone (the previous
    brief's), and a moved meeting's `start` and `end` were its old times, beside `now`."""
    from dayflow.tools.since import State, changes

    task = {"title": "Send slides", "due": "2026-11-20", "status": "open"}
    old = {"id": "e1", "title": "Standup", "start": "2026-11-19T11:00:00+00:00",
           "end": "2026-11-19T11:30:00+00:00"}  # fmt: skip
    new = old | {"start": "2026-11-19T15:00:00+00:00", "end": "2026-11-19T15:30:00+00:00"}
    day = dt.date(2026, 11, 19)
    before = State({"e1": old}, frozenset({day}), {}, {}, {},
                   {"t_1": task | {"id": "t_1"}, "t_2": task | {"id": "t_2"}})  # fmt: skip
    now = State({"e1": new}, frozenset({day}), {}, {}, {},
                {"t_1": task | {"id": "t_1", "status": "done"}})  # fmt: skip
    found = changes(before, now, None, day)
    assert [(t["id"], t["status"]) for t in found["tasks_done"]] == [("t_1", "done")]
    assert [(t["id"], t["status"]) for t in found["tasks_gone"]] == [("t_2", "gone")]
    [moved] = found["meetings_moved"]
    assert (moved["start"], moved["end"]) == (new["start"], new["end"])
    assert moved["was"] == {"start": old["start"], "end": old["end"]}
    assert moved["now"] == {"start": new["start"], "end": new["end"]}
