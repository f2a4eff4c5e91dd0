"""`dayflow tasks add --from promise:KEY` (dayflow/tools/promises.py): the promise is found in
the saved reads of any earlier brief, however many runs came after it, on both engines."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dayflow.errors import RunNotFound, UsageError
from dayflow.frozen import replace
from dayflow.models import RunSettings
from dayflow.store import Store
from dayflow.store.runs import EARLIER_PAGE
from dayflow.tools.promises import promise_of, task_from_promise
from dayflow.why import explain, render_text
from tests.scripted import text, tool_use, turn
from tests.test_agent import _new_run

KEY = "promise:0123456789ab"
PROMISE: dict[str, Any] = {
    "key": KEY,
    "with": {"name": "Ivan Petrov", "address": "ivan@example.net"},
    "what": "Let me check with legal and revert tomorrow",
    "due": "2026-11-19",
    "due_kind": "implied",
    "evidence": "Let me check with legal and revert tomorrow.",
    "id": "work:abc",
}


def _brief(
    store: Store, day: str, promised: list[dict[str, Any]], kept: list[str] | None = None
) -> str:
    """A finished brief of `day` whose read_followups listed `promised` under you_promised
    (and `kept` under promises_kept)."""
    settings = RunSettings(tz="UTC", inbox="/mail/inbox")
    run, lease = store.runs.create(replace(_new_run(), brief_date=day, settings=settings))
    store.steps.begin(lease, 1, turn(tool_use("read_followups", {}, "tu_f")), 1)
    listed: dict[str, Any] = {"you_owe": [], "waiting_on": [], "you_promised": promised}
    result = json.dumps(listed | ({"promises_kept": kept} if kept else {}))
    store.steps.complete(
        lease, 1, [{"type": "tool_result", "tool_use_id": "tu_f", "content": result}]
    )
    store.steps.begin(lease, 2, turn(text("brief")), 1)
    store.steps.complete(lease, 2, None, final_text="brief")
    return run.id


def test_a_promise_of_a_brief_older_than_two_pages_of_runs_is_found(store: Store) -> None:
    """The promise's brief, then more runs than two pages (and the old cap of 20) hold, none
    listing it, one of them pruned: `--from` still finds it, and files it once."""
    _brief(store, "2026-11-18", [PROMISE])
    later = [_brief(store, "2026-11-19", []) for _ in range(2 * EARLIER_PAGE + 3)]
    assert store.archive.prune(later[0])
    assert promise_of(store, KEY) == PROMISE
    filed = task_from_promise(store, KEY)
    assert (
        filed.created
        and filed.task
        and (filed.task.title, filed.task.due)
        == (
            "Let me check with legal and revert tomorrow (to Ivan Petrov)",
            "2026-11-19",
        )
    )
    assert task_from_promise(store, KEY) == replace(filed, created=False)


def test_the_newest_brief_that_listed_a_promise_gives_it(store: Store) -> None:
    """Listed by an old brief and again, reworded, by a newer one beyond a page: the newer's."""
    _brief(store, "2026-11-18", [PROMISE])
    for _ in range(EARLIER_PAGE + 1):
        _brief(store, "2026-11-19", [])
    newer = PROMISE | {"due": "2026-11-20"}
    _brief(store, "2026-11-19", [newer])
    for _ in range(EARLIER_PAGE + 1):
        _brief(store, "2026-11-20", [])
    assert promise_of(store, KEY) == newer


def test_a_promise_no_brief_listed_is_run_not_found_after_every_page(store: Store) -> None:
    for _ in range(EARLIER_PAGE + 2):
        _brief(store, "2026-11-19", [PROMISE | {"key": "promise:ffffffffffff"}])
    with pytest.raises(RunNotFound, match="in any brief of this profile"):
        promise_of(store, KEY)


def test_every_run_is_listed_once_newest_first_across_pages(store: Store) -> None:
    """Runs created at one instant (the test clock stands still) page by insertion order."""
    made = [_brief(store, "2026-11-19", []) for _ in range(2 * EARLIER_PAGE)]
    assert list(store.runs.ids_newest_first()) == made[::-1]


def test_why_a_promise_made_a_task_says_what_the_task_keeps(store: Store) -> None:
    """`dayflow why` on a task `tasks add --from promise:KEY` made was "task t_... names no
    run that filed it" (exit 3, "no such task") though the task is on the list."""
    _brief(store, "2026-11-18", [PROMISE])
    task = task_from_promise(store, KEY).task
    assert task is not None
    why = explain(store, task.id[:6])
    assert why.to_json()["run_id"] is None and why.item == "work:abc"
    assert render_text(why).splitlines() == [
        "run: none (no brief filed this task)",
        "item work:abc",
        f"task {task.id}: Let me check with legal and revert tomorrow (to Ivan Petrov) (open)",
        '  evidence: "Let me check with legal and revert tomorrow."',
        "  counted:  your promise, made a task by `dayflow tasks add`",
        "  due:      2026-11-19, implied by the message (no date named)",
    ]


def test_a_promise_key_is_read_as_typed_and_a_bad_one_is_refused_in_a_short_line(
    store: Store,
) -> None:
    """`promise:` alone was "no promise 'promise:'" (exit 3, as if looked for), a key in capitals
    was refused, and a 5,000-character one was echoed whole in the error."""
    _brief(store, "2026-11-18", [PROMISE])
    assert promise_of(store, " PROMISE:0123456789AB ") == PROMISE
    with pytest.raises(UsageError, match="not 'promise:'"):
        promise_of(store, "promise:")
    with pytest.raises(UsageError) as refused:
        promise_of(store, "promise:" + "x" * 5000)
    assert len(str(refused.value)) < 200


def test_a_key_typed_in_capitals_with_spaces_or_its_prefix_so_is_the_same_one_task(
    store: Store,
) -> None:
    """The lookup read the key whatever its case, but the task was filed under the key as
    typed: `PROMISE:…`, capitals, a trailing space or tab were each a second task."""
    _brief(store, "2026-11-18", [PROMISE])
    first = task_from_promise(store, KEY)
    assert first.created
    hexdigits = KEY.split(":", 1)[1]
    for typed in (
        KEY.upper(),
        KEY + " ",
        KEY + "\t",
        "PROMISE:" + hexdigits,
        "promise: " + hexdigits,
    ):
        again = task_from_promise(store, typed)
        assert (again.task, again.created) == (first.task, False), typed
    assert [t.idempotency_key for t in store.tasks.list()] == [KEY]


def test_a_promise_a_later_brief_found_kept_files_no_task(store: Store) -> None:
    """Day 1 listed it; day 2 found it kept (its read_followups' promises_kept): no task, and
    one filed before it was kept is still found on the list."""
    _brief(store, "2026-11-18", [PROMISE, PROMISE | {"key": "promise:ffffffffffff"}])
    before = task_from_promise(store, "promise:ffffffffffff")
    _brief(store, "2026-11-19", [], kept=[KEY, "promise:ffffffffffff"])
    kept = task_from_promise(store, KEY)
    assert kept.kept and kept.title.startswith("Let me check with legal")
    assert [t.idempotency_key for t in store.tasks.list()] == ["promise:ffffffffffff"]
    assert task_from_promise(store, "promise:ffffffffffff") == replace(before, created=False)
    # Listed again by a newer brief (the thread's promise open once more): filed as usual.
    _brief(store, "2026-11-20", [PROMISE])
    assert task_from_promise(store, KEY).created
