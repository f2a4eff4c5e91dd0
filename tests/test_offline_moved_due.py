"""A task on the list whose due date this run moved (move_due) is listed by its new date: due
today before the move and due next week after it, it is listed due next week, not "due today"
(found by a two-day run by hand: Bob's "the deadline is now Tuesday"). Its line still quotes
the ask in its sender's words; the move is shown as its due's source."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from dayflow.providers.offline._brief import _listed_and_due, _moved_dues
from dayflow.providers.offline._conversation import Call
from dayflow.providers.offline._quoted import evidence_line
from dayflow.shown import tool_calls
from dayflow.store import open_store
from tests.harness import invoke, offline_model

FRIDAY = dt.date(2026, 12, 4)
TASK = {
    "id": "t_1",
    "title": "Send budget figures to Bob",
    "due": "2026-12-04",
    "status": "open",
    "idempotency_key": "mail:abc",
}
WORDS = "Small change: the deadline is now Tuesday 8 December."
ASKED = "Could you send me the budget figures by Wednesday 9 December?"


def _calls(*moves: dict[str, str]) -> list[Call]:
    calls = [Call("read_tasks", {}, {"tasks": [TASK]}, None)]
    for move in moves:
        calls.append(Call("move_due", {"id": "t_1"}, {"moved": move}, None))
    return calls


def test_a_task_due_today_that_this_run_moved_to_next_week_is_listed_on_its_new_day() -> None:
    """Not as due today; and listed all the same, however far ahead (Since yesterday says it
    moved, and the brief's window may not hold its ask)."""
    calls = _calls({"id": "t_1", "now": "2026-12-08", "evidence": WORDS})
    (need,) = _listed_and_due(calls, [], FRIDAY, _moved_dues(calls))
    assert (need.due, need.moved) == (dt.date(2026, 12, 8), WORDS)


def test_a_task_moved_to_today_is_listed_with_its_ask_and_the_words_that_moved_it() -> None:
    later = dict(TASK, due="2026-12-09")
    calls = [
        Call("read_tasks", {}, {"tasks": [later]}, None),
        Call("move_due", {"id": "t_1"}, {"moved": {"id": "t_1", "now": "2026-12-04",
                                                    "evidence": WORDS, "asked": ASKED}}, None),
    ]  # fmt: skip
    (need,) = _listed_and_due(calls, [], FRIDAY, _moved_dues(calls))
    assert (need.title, need.due, need.evidence, need.moved) == (
        TASK["title"],
        FRIDAY,
        ASKED,
        WORDS,
    )
    assert evidence_line(need.evidence, need.due, need.phrase, moved=need.moved) == [
        f'  - "{ASKED}" (due stated, moved: "{WORDS}")'
    ]


def test_a_move_saved_without_the_ask_shows_the_move_alone_not_as_the_ask() -> None:
    """A move_due record saved before it carried `asked`: no quote is passed off as the ask."""
    assert evidence_line("", FRIDAY, "", moved=WORDS) == [f'  - due stated, moved: "{WORDS}"']


def test_without_a_move_a_task_due_today_is_listed() -> None:
    calls = _calls()
    (need,) = _listed_and_due(calls, [], FRIDAY, _moved_dues(calls))
    assert (need.due, need.evidence) == (FRIDAY, "")


def test_a_moved_requests_line_quotes_the_ask_and_shows_the_move_as_its_source(
    tmp_path: Path,
) -> None:
    """Day 2 of tests/test_since.py: Frank's later "the deadline moved to Wednesday 25
    November" moves his ask's task. Its Needs action line is due on the new day, its quote
    still his ask (not the move's words), the move named as the due date's source; and
    move_due's saved answer carries that ask."""
    from tests.test_since import DAY1, DAY2, SINCE, _day1, _day2

    db = tmp_path / "d.db"
    env = _day1(tmp_path)
    for day in (DAY1, DAY2):
        if day == DAY2:
            _day2(tmp_path)
        res = invoke(db, offline_model, "brief", "--date", day, *SINCE, "--format", "json",
                     env=env, clock=f"{day}T07:30:00+00:00")  # fmt: skip
        assert res.code == 0, res.err
    doc = json.loads(res.out)
    needs = doc["brief"].split("## Needs action\n", 1)[1].split("\n## ", 1)[0].splitlines()
    at = next(i for i, x in enumerate(needs) if x.startswith("- Review contract draft"))
    assert needs[at : at + 2] == [
        "- Review contract draft (from Frank Li, due Wed 25 Nov)",
        '  - "Please review the contract draft by Monday 23 November." (due stated, moved: '
        '"Good news: the deadline moved to Wednesday 25 November.")',
    ]
    with open_store(db) as store:
        newest = store.runs.list(limit=1)[0]  # day 2's
        calls = tool_calls(store.steps.conversation(newest.id))
    (made,) = [json.loads(c.content or "{}")["moved"] for c in calls if c.name == "move_due"]
    assert made["asked"] == "Please review the contract draft by Monday 23 November."


# --- an ask and the later message that moved its deadline, both new this morning -----------

ASK = {
    "id": "a1",
    "from": "Dana Ruiz <dana@acme.example>",
    "to": "alex@example.org",
    "subject": "Contract draft",
    "received_at": "2026-12-01T14:00:00+00:00",
    "body": "Hi Alex, please review the contract draft by Thursday 3 December. Dana",
    "unread": True,
    "message_id": "<a1@acme.example>",
}
MOVE = {
    "id": "a2",
    "from": "Dana Ruiz <dana@acme.example>",
    "to": "alex@example.org",
    "subject": "Re: Contract draft",
    "received_at": "2026-12-01T18:00:00+00:00",
    "body": "Good news: legal gave us more time, the deadline moved to Wednesday 9 December.",
    "unread": True,
    "message_id": "<a2@acme.example>",
    "in_reply_to": "<a1@acme.example>",
    "references": "<a1@acme.example>",
}


def _first_brief(tmp_path: Path, *messages: dict[str, object]) -> tuple[list[str], Path]:
    (tmp_path / "inbox.json").write_text(json.dumps({"messages": list(messages)}))
    (tmp_path / "config.toml").write_text('me = ["alex@example.org"]\n')
    db = tmp_path / "d.db"
    res = invoke(db, offline_model, "brief", "--date", "2026-12-02", "--inbox",
                 str(tmp_path / "inbox.json"), "--format", "json",
                 env={"DAYFLOW_CONFIG": str(tmp_path / "config.toml")},
                 clock="2026-12-02T07:30:00+00:00")  # fmt: skip
    assert res.code == 0, res.err
    brief = json.loads(res.out)["brief"]
    return brief.split("## Needs action\n", 1)[1].split("\n## ", 1)[0].splitlines(), db


def test_an_ask_and_its_moved_deadline_both_new_on_a_first_brief_take_the_new_date(
    tmp_path: Path,
) -> None:
    """Found by a new user's hand: the first brief read Dana's ask and her later "the
    deadline moved to Wednesday 9 December" and still said "due tomorrow". read_since
    proposed only tasks that existed when it was read, before this run filed any."""
    needs, db = _first_brief(tmp_path, ASK, MOVE)
    assert needs[:2] == [
        "- Review contract draft (from Dana Ruiz, due Wed 9 Dec)",
        '  - "please review the contract draft by Thursday 3 December." (due stated, moved: '
        '"Good news: legal gave us more time, the deadline moved to Wednesday 9 December.")',
    ]
    with open_store(db) as store:
        (task,) = store.tasks.list()
        assert task.due == "2026-12-09"
        run = store.runs.list(limit=1)[0]
        names = [c.name for c in tool_calls(store.steps.conversation(run.id))]
    assert names.count("read_since") == 2 and names.count("move_due") == 1


def test_without_a_later_move_read_since_is_read_once() -> None:
    """The second read_since is for a read message that moves a deadline, not every brief."""
    from dayflow.providers.offline._since import since_again

    offered = {"read_since", "move_due", "create_task"}
    read = Call("read_inbox", {}, {"messages": [ASK, MOVE]}, None)
    filed = Call("create_task", {"source_id": "a1"}, {"task": {"id": "t_1"}}, None)
    since = Call("read_since", {}, {"previous": None}, None)
    assert since_again([read, since, filed], offered) == [("read_since", {})]
    assert since_again([read, since, filed, since], offered) == []  # read after the filing
    quiet = Call("read_inbox", {}, {"messages": [ASK, dict(MOVE, body="Thanks!")]}, None)
    assert since_again([quiet, since, filed], offered) == []
    earlier = dict(MOVE, received_at="2026-12-01T10:00:00+00:00")  # before the ask: not later
    assert since_again([Call("read_inbox", {}, {"messages": [ASK, earlier]}, None), since,
                        filed], offered) == []  # fmt: skip
    assert since_again([read, since, filed], offered - {"move_due"}) == []
    # Across the end of DST (-04:00, then -05:00): compared as times, not as strings.
    dst_ask = dict(ASK, received_at="2026-11-01T01:50:00-04:00")
    dst_move = dict(MOVE, received_at="2026-11-01T01:10:00-05:00")  # 20 minutes later
    dst = Call("read_inbox", {}, {"messages": [dst_ask, dst_move]}, None)
    assert since_again([dst, since, filed], offered) == [("read_since", {})]
    other = dict(MOVE, subject="Re: Budget")  # a deadline of another thread moved
    assert since_again([Call("read_inbox", {}, {"messages": [ASK, other]}, None), since,
                        filed], offered) == []  # fmt: skip
