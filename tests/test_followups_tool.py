"""read_followups through the loop: its schema, its result, and create_task under a thread's
key (accepted once the run was shown it, never filed twice)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from dayflow.agent import BriefOptions, Loop, start_run
from dayflow.followups import Feed
from dayflow.models import DONE
from dayflow.sources.inbox import Inbox
from dayflow.sources.json_files import JsonCalendar
from dayflow.sources.maildir import MaildirSource
from dayflow.sources.me import parse_me
from dayflow.store import Store
from dayflow.tools import TOOLS, ToolError, validate
from tests.scripted import ScriptedModel, text, tool_use, turn
from tests.test_sent_mail import week

DAY = dt.date(2026, 11, 18)
OPTIONS = BriefOptions(brief_date=DAY)


def _sources(root: Path) -> Any:
    inbox_path, sent_path = week(root)

    def sources(settings: Any, day: dt.date) -> tuple[Inbox, JsonCalendar]:
        inbox = Inbox([MaildirSource("work", inbox_path)])
        sent = [MaildirSource("work/sent", sent_path)]
        me = parse_me(["alex@example.org"])
        inbox.followups = Feed(inbox.sources, sent, me=me, brief_date=day, tz=dt.UTC)
        return inbox, JsonCalendar(None, day)

    return sources


def _results(model: ScriptedModel, n: int) -> list[dict[str, Any]]:
    return list(model.requests[n].messages[-1]["content"])


def test_the_schema_takes_no_arguments() -> None:
    schema = TOOLS["read_followups"].input_schema
    validate(schema, {})
    with pytest.raises(ToolError, match="unknown argument"):
        validate(schema, {"limit": 5})


def test_an_owed_reply_is_filed_once_under_its_thread_key(store: Store, tmp_path: Path) -> None:
    model = ScriptedModel([turn(tool_use("read_followups", {})), turn(text("..."))])
    first = start_run(Loop(store, model, sources=_sources(tmp_path / "a")), OPTIONS)
    (result,) = _results(model, 1)
    owed = json.loads(result["content"])["you_owe"]
    assert [(o["with"]["address"], o["age_days"]) for o in owed] == [("bob@example.com", 3)]
    key, source = owed[0]["key"], owed[0]["id"]
    assert first.run.status == DONE

    file = {"title": "Reply to Bob", "idempotency_key": key, "source_id": source}
    model = ScriptedModel(
        [
            turn(tool_use("read_followups", {})),
            turn(
                tool_use("create_task", file),
                tool_use("create_task", file | {"title": "Reply to Bob again"}),
                tool_use("create_task", {"title": "x", "idempotency_key": "thread:000000000000"}),
            ),
            turn(text("## You owe replies\n- Bob")),
        ]
    )
    done = start_run(Loop(store, model, sources=_sources(tmp_path / "b")), OPTIONS)
    assert done.run.status == DONE
    made, again, bogus = _results(model, 2)
    assert json.loads(made["content"])["created"] is True
    assert json.loads(again["content"])["created"] is False  # the same thread: one task
    assert bogus.get("is_error") and "is not the key of any item" in bogus["content"]
    assert [t.idempotency_key for t in store.tasks.list()] == [key]

    # A later run (a new message in the same thread, or the same one again) gets the same
    # thread key from read_followups and finds the task that is there.
    model = ScriptedModel(
        [
            turn(tool_use("read_followups", {})),
            turn(tool_use("create_task", file | {"title": "Reply to Bob (again)"})),
            turn(text("## You owe replies\n- Bob")),
        ]
    )
    later = start_run(Loop(store, model, sources=_sources(tmp_path / "c")), OPTIONS)
    assert later.run.status == DONE
    (result,) = _results(model, 1)
    assert json.loads(result["content"])["you_owe"][0]["key"] == key
    (filed,) = _results(model, 2)
    assert json.loads(filed["content"])["created"] is False
    assert [t.idempotency_key for t in store.tasks.list()] == [key]


def test_a_config_that_only_says_who_me_is_is_read_with_mail_from_inbox(tmp_path: Path) -> None:
    """`me = [...]` in a config file that names no source, the mail given with --inbox: the
    run stored no sources, so its `me` was dropped and every brief said "Your own address is
    not known" (found by hand). It is the user's all the same."""
    from tests.harness import invoke, offline_model

    mail = {
        "id": "q1",
        "from": "Lee Park <lee@other.example>",
        "to": "alex@example.org",
        "subject": "Offsite",
        "received_at": "2026-12-01T14:00:00+00:00",
        "body": "Hi Alex, what did you think of the offsite agenda?",
        "unread": True,
    }
    (tmp_path / "inbox.json").write_text(json.dumps({"messages": [mail]}))
    (tmp_path / "config.toml").write_text('me = ["alex@example.org"]\n')
    res = invoke(tmp_path / "d.db", offline_model, "brief", "--date", "2026-12-02", "--inbox",
                 str(tmp_path / "inbox.json"), "--format", "markdown",
                 env={"DAYFLOW_CONFIG": str(tmp_path / "config.toml")},
                 clock="2026-12-02T07:30:00+00:00")  # fmt: skip
    assert res.code == 0, res.err
    owed = res.out.split("## You owe replies\n", 1)[1].split("\n## ", 1)[0]
    assert "not known" not in owed and "Lee Park" in owed, owed
