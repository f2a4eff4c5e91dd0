"""Issue 32.29: escape remnants in task titles. Mail carrying terminal escapes gave titles such
as "Send [1mbudget [0m numbers to Priya": the readers dropped the ESC and kept the rest. The
readers now drop each escape sequence whole, and the task tools keep no escape, remnant,
control or bidi character in a title or notes, whoever wrote them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dayflow.providers.offline import OfflineModel
from dayflow.sources.mime import clean_line, title_text
from tests.conftest import db_rows
from tests.harness import invoke
from tests.scripted import ScriptedModel, text, tool_use, turn

DATE = "2026-11-05"


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("\x1b[1mbudget\x1b[0m numbers", "budget numbers"),
        ("[1mbudget [0m numbers", "budget numbers"),  # the ESC already dropped on the way
        ("Send [0;31mit[m now", "Send it now"),
        ("\x1b]8;;http://evil.example/\x07the link\x1b]8;;\x07 here", "the link here"),
        ("Pay \u202einvoice\x07 now\x9b31m", "Pay invoice now"),
        ("Line one\nline two\tend", "Line one line two end"),
        # What only looks like one stays: a 10 m race, a 5-minute slot.
        ("Book the [10m] race and a [5min] slot", "Book the [10m] race and a [5min] slot"),
    ],
)
def test_a_title_keeps_no_escape_remnant_or_control_character(raw: str, kept: str) -> None:
    assert title_text(raw) == kept


def test_the_readers_drop_an_escape_sequence_whole() -> None:
    assert clean_line("\x1b[31mBudget\x1b[0m review", 300) == "Budget review"
    assert clean_line("a\x1b[2Jb", 300) == "ab"


def test_notes_keep_their_lines_but_not_their_escapes() -> None:
    assert title_text("first\x1b[1m line\nsecond [0mline", one_line=False) == (
        "first line\nsecond line"
    )


def test_mail_with_escapes_files_a_clean_task_with_the_offline_model(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox.json"
    message = {
        "id": "m1",
        "from": "Priya Raman <priya@lumen.example>",
        "subject": "\x1b[31mBudget\x1b[0m review",
        "received_at": "2026-11-04T09:00:00-05:00",
        "unread": True,
        "body": "Hi Alex,\n\nCould you please send me the \x1b[1mbudget\x1b[0m numbers by "
        "Friday?\n\nPriya",
    }
    inbox.write_text(json.dumps({"messages": [message]}), encoding="utf-8")
    calendar = tmp_path / "calendar.json"
    calendar.write_text('{"events": []}', encoding="utf-8")
    db = tmp_path / "dayflow.db"
    res = invoke(
        db, lambda name, settings: OfflineModel(), "brief", "--date", DATE, "--inbox", str(inbox),
        "--calendar", str(calendar),
    )  # fmt: skip
    assert res.code == 0, res.err
    rows = db_rows(db, "SELECT title, notes FROM tasks")
    assert rows, res.out
    for title, notes in rows:
        assert "[1m" not in title and "[0m" not in title and "\x1b" not in title, title
        assert "[31m" not in (notes or "") and "\x1b" not in (notes or ""), notes
    assert "budget numbers" in rows[0][0]


def test_a_model_cannot_file_an_escape_in_a_title(tmp_path: Path) -> None:
    db = tmp_path / "dayflow.db"
    create = {
        "title": "\x1b[1mSend\x1b[0m the [0mreport\x07",
        "idempotency_key": "model:report",
        "notes": "asked \x1b]0;pwned\x07twice",
    }
    empty = {"title": "\x1b[0m\x07", "idempotency_key": "model:nothing"}
    brief = "## Today\n- Nothing\n\n## One thing\n**Send the report.**"
    model = ScriptedModel(
        [
            turn(tool_use("read_inbox", {})),
            turn(tool_use("create_task", create), tool_use("create_task", empty)),
            turn(text(brief)),
        ]
    )
    res = invoke(db, lambda name, settings: model, "brief", "--date", DATE, "--model", "x")
    assert res.code == 0, res.err
    rows = [tuple(r) for r in db_rows(db, "SELECT title, notes FROM tasks")]
    assert rows == [("Send the report", "asked twice")]
    results = model.requests[2].messages[-1]["content"]
    assert "is_error" not in results[0]
    assert results[1]["is_error"] is True and "'title' is empty" in results[1]["content"]
