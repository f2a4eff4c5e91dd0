"""The task file formats: what each writes, and reading ticked boxes back."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from dayflow import taskfiles
from dayflow.models import Task
from dayflow.store import task_id


def make(
    key: str, title: str = "Send the edits", due: str | None = "2026-11-06", **kw: object
) -> Task:
    fields: dict[str, object] = {
        "id": task_id(key),
        "title": title,
        "due": due,
        "status": "open",
        "source_id": None,
        "notes": None,
        "idempotency_key": key,
        "run_id": "abc123abc123",
        "created_at": "2026-11-05T07:30:00.000+00:00",
        "done_at": None,
    }
    fields.update(kw)
    return Task(**fields)  # type: ignore[arg-type]


def test_markdown_is_an_obsidian_tasks_checklist_with_due_done_and_id() -> None:
    open_task = make("email:m1")
    done = make(
        "email:m2", "Pay the invoice", None, status="done", done_at="2026-11-05T23:30:00.000+00:00"
    )
    text = taskfiles.markdown([open_task, done], ZoneInfo("Europe/Berlin"))
    lines = text.splitlines()
    assert lines[0] == taskfiles.MD_HEADER
    assert lines[2] == f"- [ ] Send the edits 📅 2026-11-06 🆔 {task_id('email:m1')}"
    # done at 23:30 UTC is the 6th in Berlin: the done date is the user's day
    assert lines[3] == f"- [x] Pay the invoice ✅ 2026-11-06 🆔 {task_id('email:m2')}"


def test_todotxt_puts_completion_then_creation_date_and_tags_at_the_end() -> None:
    done = make("email:m2", status="done", done_at="2026-11-06T08:00:00.000+00:00")
    text = taskfiles.todotxt([make("email:m1", due=None), done], UTC)
    assert text.splitlines() == [
        f"2026-11-05 Send the edits dayflow:{task_id('email:m1')}",
        f"x 2026-11-06 2026-11-05 Send the edits due:2026-11-06 dayflow:{task_id('email:m2')}",
    ]


def test_ics_is_crlf_folded_escaped_vtodo_with_the_task_id_as_uid() -> None:
    long = "Reply to Sam; budget, timeline\nand " + "é" * 60
    text = taskfiles.ics([make("email:m1", long, notes="line one\nline two")])
    assert text.startswith("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n")
    assert text.endswith("END:VCALENDAR\r\n")
    assert "\n" not in text.replace("\r\n", "")
    for line in text.split("\r\n"):
        assert len(line.encode("utf-8")) <= 75
    unfolded = text.replace("\r\n ", "")
    assert f"UID:{task_id('email:m1')}@dayflow\r\n" in unfolded
    assert "SUMMARY:Reply to Sam\\; budget\\, timeline\\nand " + "é" * 60 + "\r\n" in unfolded
    assert "DUE;VALUE=DATE:20261106\r\n" in unfolded
    assert "DESCRIPTION:line one\\nline two\r\n" in unfolded
    assert "STATUS:NEEDS-ACTION\r\n" in unfolded
    assert "DTSTAMP:20261105T073000Z\r\n" in unfolded


def test_ics_marks_a_done_task_completed_with_its_time() -> None:
    done = make("k", status="done", done_at="2026-11-06T08:00:00.000+00:00")
    text = taskfiles.ics([done])
    assert "STATUS:COMPLETED\r\nCOMPLETED:20261106T080000Z\r\n" in text


def test_json_carries_format_version_and_every_field() -> None:
    doc = json.loads(taskfiles.as_json([make("email:m1")]))
    assert doc["format"] == "dayflow-tasks" and doc["version"] == 1
    assert doc["tasks"][0]["id"] == task_id("email:m1")
    assert doc["tasks"][0]["idempotency_key"] == "email:m1"
    assert doc["tasks"][0]["done_at"] is None


def test_a_title_cannot_smuggle_another_tasks_id_into_a_line() -> None:
    victim = task_id("email:victim")
    hostile = make("email:evil", f"Tick me 🆔 {victim} dayflow:{victim} due:2030-01-01")
    md = taskfiles.markdown([hostile], UTC).replace("[ ]", "[x]")
    todo = "x 2026-11-06 " + taskfiles.todotxt([hostile], UTC)
    for text in (md, todo):
        reading = taskfiles.read_back(text)
        assert [t.task_id for t in reading.ticks] == [task_id("email:evil")]
    assert "due:2030-01-01" not in todo


def test_a_hand_edited_line_with_two_ids_is_ignored_not_guessed() -> None:
    a, b = task_id("a"), task_id("b")
    reading = taskfiles.read_back(f"- [x] one 🆔 {a} 🆔 {b}\n- [x] two 🆔 {b}\n")
    assert reading.ambiguous == [1]
    assert [(t.task_id, t.done) for t in reading.ticks] == [(b, True)]


def test_read_back_knows_ticked_from_unticked_in_both_formats() -> None:
    a, b = make("a"), make("b")
    md = taskfiles.markdown([a, b], UTC).replace(
        "- [ ] Send the edits 📅 2026-11-06 🆔 " + a.id,
        "- [X] Send the edits 📅 2026-11-06 🆔 " + a.id,
    )
    assert [(t.task_id, t.done) for t in taskfiles.read_back(md).ticks] == [
        (a.id, True),
        (b.id, False),
    ]
    todo = taskfiles.todotxt([a, b], UTC).splitlines()
    todo[1] = "x 2026-11-07 " + todo[1]
    reading = taskfiles.read_back("\n".join(todo) + "\nmy own line with no id\n")
    assert reading.fmt == "todo.txt"
    assert [(t.task_id, t.done) for t in reading.ticks] == [(a.id, False), (b.id, True)]


def test_a_file_without_dayflow_ids_is_not_a_dayflow_export() -> None:
    for text in (
        "",
        "# notes\n- [x] buy milk\n",
        "x 2026-01-01 call mum +home\n",
        taskfiles.ics([make("a")]),
        taskfiles.as_json([make("a")]),
    ):
        assert taskfiles.read_back(text).fmt is None


titles = st.text(min_size=0, max_size=80)


@given(st.lists(st.tuples(titles, st.booleans()), max_size=8, unique_by=lambda x: x[0]))
def test_every_exported_line_reads_back_as_its_own_task_and_state(
    items: list[tuple[str, bool]],
) -> None:
    tasks = [
        make(
            f"k{i}",
            title,
            status="done" if done else "open",
            done_at="2026-11-06T08:00:00.000+00:00" if done else None,
        )
        for i, (title, done) in enumerate(items)
    ]
    expected = [(t.id, t.status == "done") for t in tasks]
    for fmt in taskfiles.SYNC_FORMATS:
        reading = taskfiles.read_back(taskfiles.export(tasks, fmt, UTC))
        assert [(t.task_id, t.done) for t in reading.ticks] == expected
        assert reading.ambiguous == []


@given(st.lists(titles, max_size=5))
def test_ics_lines_never_pass_75_octets_and_unfold_to_one_line_per_property(
    items: list[str],
) -> None:
    tasks = [make(f"k{i}", title, notes=title) for i, title in enumerate(items)]
    text = taskfiles.ics(tasks)
    assert all(len(line.encode()) <= 75 for line in text.split("\r\n"))
    unfolded = text.replace("\r\n ", "").split("\r\n")[:-1]
    assert sum(1 for line in unfolded if line.startswith("SUMMARY:")) == len(tasks)


def test_an_rfc5545_parser_reads_the_ics_export_back_field_for_field() -> None:
    import icalendar

    title = "Reply to Sam; budget, timeline\\n and 📅 " + "é" * 40
    tasks = [
        make("email:m1", title, notes="line one\nline two"),
        make("email:m2", "Paid", None, status="done", done_at="2026-11-06T08:00:00.000+00:00"),
    ]
    cal = icalendar.Calendar.from_ical(taskfiles.ics(tasks))
    todos: list[Any] = [c for c in cal.walk() if c.name == "VTODO"]
    assert [str(t["UID"]) for t in todos] == [f"{t.id}@dayflow" for t in tasks]
    assert str(todos[0]["SUMMARY"]) == title
    assert str(todos[0]["DESCRIPTION"]) == "line one\nline two"
    assert todos[0]["DUE"].dt.isoformat() == "2026-11-06"
    assert str(todos[0]["STATUS"]) == "NEEDS-ACTION"
    assert str(todos[1]["STATUS"]) == "COMPLETED"
    assert todos[1]["COMPLETED"].dt.isoformat() == "2026-11-06T08:00:00+00:00"
