"""A task on the list whose due date this run moved (move_due) is listed by its new date: due
today before the move and due next week after it, it is not "due today" under Needs action,
nor the One thing (found by a two-day run by hand: Bob's "the deadline is now Tuesday")."""

from __future__ import annotations

import datetime as dt

from dayflow.providers.offline._brief import _listed_and_due, _moved_dues
from dayflow.providers.offline._conversation import Call

FRIDAY = dt.date(2026, 12, 4)
TASK = {
    "id": "t_1",
    "title": "Send budget figures to Bob",
    "due": "2026-12-04",
    "status": "open",
    "idempotency_key": "mail:abc",
}
WORDS = "Small change: the deadline is now Tuesday 8 December."


def _calls(*moves: dict[str, str]) -> list[Call]:
    calls = [Call("read_tasks", {}, {"tasks": [TASK]}, None)]
    for move in moves:
        calls.append(Call("move_due", {"id": "t_1"}, {"moved": move}, None))
    return calls


def test_a_task_due_today_that_this_run_moved_to_next_week_is_not_listed_as_due() -> None:
    calls = _calls({"id": "t_1", "now": "2026-12-08", "evidence": WORDS})
    assert _listed_and_due(calls, [], FRIDAY, _moved_dues(calls)) == []


def test_a_task_moved_to_today_is_listed_with_the_words_that_moved_it() -> None:
    later = dict(TASK, due="2026-12-09")
    calls = [
        Call("read_tasks", {}, {"tasks": [later]}, None),
        Call("move_due", {"id": "t_1"}, {"moved": {"id": "t_1", "now": "2026-12-04",
                                                    "evidence": WORDS}}, None),
    ]  # fmt: skip
    (need,) = _listed_and_due(calls, [], FRIDAY, _moved_dues(calls))
    assert (need.title, need.due, need.evidence) == (TASK["title"], FRIDAY, WORDS)


def test_without_a_move_a_task_due_today_is_listed() -> None:
    calls = _calls()
    (need,) = _listed_and_due(calls, [], FRIDAY, _moved_dues(calls))
    assert (need.due, need.evidence) == (FRIDAY, "")
