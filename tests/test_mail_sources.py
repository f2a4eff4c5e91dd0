"""Maildir, mbox and .eml sources behind one inbox: order, unread state, windows, paging,
identity across sources, caps, and failures (one source down, a path gone, --strict-sources)."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dayflow import tools as toolbox
from dayflow.errors import SourceError, SourceUnavailable
from dayflow.sources import JsonCalendar, JsonInbox
from dayflow.sources.identity import mail_key, message_stable_id
from dayflow.sources.inbox import Inbox, legacy_inbox
from dayflow.sources.maildir import MaildirSource
from dayflow.sources.mailfiles import EmlFolderSource
from dayflow.sources.mbox import MboxSource
from tests.mailkit import BASE, message, write_maildir, write_mbox
from tests.scripted import NoTasks

UTC = ZoneInfo("UTC")


def env_for(inbox: Any) -> toolbox.ToolEnv:
    return toolbox.ToolEnv(
        tasks=NoTasks(),  # type: ignore[arg-type]  # the read tools only ask filed_at
        run_id="r",
        inbox=inbox,
        calendar=JsonCalendar(None, dt.date(2026, 11, 5)),
        brief_date=dt.date(2026, 11, 5),
        tz=UTC,
        task_cap=20,
    )


def read_inbox(inbox: Any, **args: Any) -> dict[str, Any]:
    args.setdefault("limit", 50)
    toolbox.validate(toolbox.TOOLS["read_inbox"].input_schema, args)
    return toolbox.read_inbox(args, env_for(inbox))


def snapshot(root: Path) -> dict[str, tuple[int, float]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime)
        for p in sorted(root.rglob("*"))
    }


def test_maildir_lists_newest_first_with_unread_from_new_and_the_seen_flag(tmp_path: Path) -> None:
    root = write_maildir(tmp_path / "md", 5, seen={1, 3})
    page = read_inbox(Inbox([MaildirSource("home", root)]))
    subjects = [m["subject"] for m in page["messages"]]
    assert subjects == [f"Message number {n}" for n in (4, 3, 2, 1, 0)]
    assert [m["unread"] for m in page["messages"]] == [True, False, True, False, True]
    first = page["messages"][0]
    stable = message_stable_id("<msg4@example.org>", sender="s4@example.org")
    assert (first["id"], first["key"]) == (f"home:{stable}", f"mail:{stable}")
    assert first["source"] == "home"
    assert "next_cursor" not in page


def test_reading_a_maildir_changes_nothing_in_it(tmp_path: Path) -> None:
    root = write_maildir(tmp_path / "md", 6, seen={0})
    before = snapshot(root)
    inbox = Inbox([MaildirSource("home", root)])
    listed = read_inbox(inbox, unread_only=True)
    for m in listed["messages"]:
        toolbox.read_message({"id": m["id"]}, env_for(inbox))
    assert snapshot(root) == before


def test_a_70_message_inbox_is_walked_in_pages_with_the_cursor(tmp_path: Path) -> None:
    inbox = Inbox([MaildirSource("home", write_maildir(tmp_path / "md", 70))])
    first = read_inbox(inbox, limit=50)
    second = read_inbox(inbox, limit=50, cursor=first["next_cursor"])
    ids = [m["id"] for m in first["messages"] + second["messages"]]
    assert len(first["messages"]) == 50 and len(second["messages"]) == 20
    assert len(set(ids)) == 70
    assert "next_cursor" not in second


def test_two_sources_merge_newest_first_and_a_walk_sees_each_message_once(tmp_path: Path) -> None:
    md = write_maildir(tmp_path / "md", 30)  # messages 0..29, BASE + n minutes
    later = [message(100 + n, when=BASE + dt.timedelta(minutes=2 * n + 1)) for n in range(20)]
    mbox = write_mbox(tmp_path / "box.mbox", later)
    inbox = Inbox([MaildirSource("home", md), MboxSource("archive", mbox)])
    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = read_inbox(inbox, limit=7, **({"cursor": cursor} if cursor else {}))
        seen += page["messages"]
        cursor = page.get("next_cursor")
        if cursor is None:
            break
    assert len(seen) == 50 and len({m["id"] for m in seen}) == 50
    times = [m["received_at"] for m in seen]
    assert times == sorted(times, reverse=True)
    assert {m["source"] for m in seen} == {"home", "archive"}


def test_the_same_message_in_maildir_and_mbox_is_listed_once_with_one_task_key(
    tmp_path: Path,
) -> None:
    """Two copies, two item ids, one key: listed once (the first in the merged order), and
    either copy can still be read by its id."""
    raw = message(7, subject="Sign the lease")
    md = write_maildir(tmp_path / "md", 0)
    (md / "new" / "1.M1P1Q1.host").write_bytes(raw)
    box = write_mbox(tmp_path / "box.mbox", [raw])
    inbox = Inbox([MaildirSource("imapcopy", md), MboxSource("export", box)])
    (listed,) = read_inbox(inbox)["messages"]
    assert listed["key"] == mail_key(
        message_stable_id("<msg7@example.org>", sender="s7@example.org")
    )
    other = "imapcopy" if listed["source"] == "export" else "export"
    copy = inbox.read(f"{other}:{listed['id'].split(':', 1)[1]}")
    assert copy.subject == "Sign the lease" and copy.key == listed["key"]


def _walk(inbox: Inbox, limit: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = read_inbox(inbox, limit=limit, **({"cursor": cursor} if cursor else {}))
        seen += page["messages"]
        cursor = page.get("next_cursor")
        if cursor is None:
            return seen


def test_a_maildir_configured_twice_lists_each_message_once_across_pages(
    tmp_path: Path,
) -> None:
    """Issue 19.19: each message was listed once per source."""
    md = write_maildir(tmp_path / "md", 23)
    inbox = Inbox([MaildirSource("home", md), MaildirSource("again", md)])
    for limit in (1, 4, 50):
        walked = _walk(inbox, limit)
        assert len(walked) == 23 and len({m["key"] for m in walked}) == 23, limit
        times = [m["received_at"] for m in walked]
        assert times == sorted(times, reverse=True)


def test_copies_that_arrived_at_other_times_are_listed_once_on_any_page(tmp_path: Path) -> None:
    """IMAP beside its mbsync copy: the copy's delivery time is the sync's, hours later, so
    the two land on different pages; each message is still listed once per walk, and the
    messages only one source holds all appear."""
    md = write_maildir(tmp_path / "md", 12)  # BASE + n minutes
    synced = [message(n, when=BASE + dt.timedelta(minutes=n)) for n in range(0, 12, 2)]
    synced += [message(50 + n) for n in range(3)]  # only in the copy
    box = tmp_path / "copy.mbox"
    box.write_bytes(
        b"".join(
            f"From sync@x Wed Nov  4 {10 + i // 60:02d}:{i % 60:02d}:00 2026\n".encode()
            + raw.replace(b"\r\n", b"\n")
            + b"\n"
            for i, raw in enumerate(synced)
        )
    )
    inbox = Inbox([MaildirSource("imap", md), MboxSource("mbsync", box)])
    for limit in (2, 5, 50):
        walked = _walk(inbox, limit)
        keys = [m["key"] for m in walked]
        assert len(keys) == len(set(keys)) == 15, limit
    fresh = Inbox([MaildirSource("imap", md), MboxSource("mbsync", box)])
    first = read_inbox(inbox, limit=5)
    # A cursor from another process (a resumed run) is still a cursor: it lists on.
    assert read_inbox(fresh, limit=5, cursor=first["next_cursor"])["messages"]


def test_since_limits_the_window_and_the_run_window_is_the_default(tmp_path: Path) -> None:
    md = write_maildir(tmp_path / "md", 10)
    window = BASE + dt.timedelta(minutes=6)
    inbox = Inbox([MaildirSource("home", md)], default_since=window)
    default = read_inbox(inbox)
    assert [m["subject"][-1] for m in default["messages"]] == ["9", "8", "7", "6"]
    assert default["since"] == window.isoformat()
    everything = read_inbox(inbox, since="2000-01-01")
    assert len(everything["messages"]) == 10
    with pytest.raises(toolbox.ToolError, match="'since' must be an ISO date"):
        read_inbox(inbox, since="yesterday")


def test_read_message_caps_the_body_and_lists_attachments_never_their_content(
    tmp_path: Path,
) -> None:
    md = write_maildir(tmp_path / "md", 0)
    huge = "x" * 120_000
    (md / "new" / "1.M1P1Q1.host").write_bytes(message(1, body=huge))
    fixture = Path(__file__).parent / "fixtures" / "mime" / "attachments.eml"
    (md / "new" / "2.M2P1Q1.host").write_bytes(fixture.read_bytes())
    inbox = Inbox([MaildirSource("home", md)])
    listing = read_inbox(inbox)["messages"]
    by_subject = {m["subject"]: m["id"] for m in listing}
    big = toolbox.read_message({"id": by_subject["Message number 1"]}, env_for(inbox))["message"]
    assert len(big["body"]) < 20_100
    assert big["body"].endswith("[… 100,000 more characters not shown]")
    att = toolbox.read_message({"id": by_subject["Contract and photo"]}, env_for(inbox))
    assert att["message"]["attachments"] == [
        {"name": "contract.pdf", "type": "application/pdf", "size": 1040},
        {"name": "été.png", "type": "image/png", "size": 520},
    ]
    assert "fake pdf" not in json.dumps(att)


def test_an_eml_folder_and_its_unparseable_files_never_fail_the_listing(tmp_path: Path) -> None:
    folder = tmp_path / "eml"
    folder.mkdir()
    fixtures = Path(__file__).parent / "fixtures" / "mime"
    for p in fixtures.glob("*.eml"):
        (folder / p.name).write_bytes(p.read_bytes())
    inbox = Inbox([EmlFolderSource("saved", folder)])
    listed = read_inbox(inbox)["messages"]
    assert len(listed) == len(list(fixtures.glob("*.eml")))
    for m in listed:
        assert toolbox.read_message({"id": m["id"]}, env_for(inbox))["message"]["id"] == m["id"]


def test_one_source_down_the_others_answer_and_the_failure_is_named(tmp_path: Path) -> None:
    md = write_maildir(tmp_path / "md", 3)
    bad = tmp_path / "bad.mbox"
    bad.write_bytes(b"this is not an mbox\n")
    inbox = Inbox([MaildirSource("home", md), MboxSource("old", bad)])
    page = read_inbox(inbox)
    assert len(page["messages"]) == 3
    [down] = page["unavailable"]
    assert down["source"] == "old" and "not an mbox file" in down["reason"]
    with pytest.raises(toolbox.ToolError, match="old: .*not an mbox"):
        read_inbox(inbox, source="old")
    strict = Inbox([MaildirSource("home", md), MboxSource("old", bad)], strict=True)
    with pytest.raises(SourceUnavailable, match="--strict-sources"):
        read_inbox(strict)


def test_a_local_mailbox_that_is_gone_fails_the_read_resumably_naming_it(tmp_path: Path) -> None:
    md = write_maildir(tmp_path / "md", 3)
    inbox = Inbox([MaildirSource("home", md)])
    for sub in ("new", "cur", "tmp"):
        for f in (md / sub).iterdir():
            f.unlink()
        (md / sub).rmdir()
    md.rmdir()
    with pytest.raises(SourceUnavailable, match=f"home: Maildir {md} does not exist"):
        read_inbox(inbox)


def test_a_bad_cursor_is_a_tool_error_the_model_can_act_on(tmp_path: Path) -> None:
    inbox = Inbox([MaildirSource("home", write_maildir(tmp_path / "md", 2))])
    with pytest.raises(toolbox.ToolError, match="not one that read_inbox returned"):
        read_inbox(inbox, cursor="garbage!!")


def test_the_bundled_sample_lives_in_its_own_namespace() -> None:
    inbox = legacy_inbox(JsonInbox(None, dt.date(2026, 11, 5)))
    page = read_inbox(inbox, limit=50)
    assert all(m["id"].startswith("sample:") and m["key"] == m["id"] for m in page["messages"])


def test_two_json_files_reusing_an_id_never_share_a_task_key(tmp_path: Path) -> None:
    def file(name: str, subject: str) -> JsonInbox:
        path = tmp_path / name
        when = "2026-11-04T09:00:00+00:00"
        msg = {"id": "m08", "from": "A <a@x>", "subject": subject, "received_at": when}
        path.write_text(json.dumps({"messages": [msg]}))
        return JsonInbox(path, dt.date(2026, 11, 5))

    a = read_inbox(legacy_inbox(file("a.json", "Pay rent")))["messages"][0]
    b = read_inbox(legacy_inbox(file("b.json", "Book flights")))["messages"][0]
    sample = read_inbox(legacy_inbox(JsonInbox(None, dt.date(2026, 11, 5))))["messages"]
    assert a["key"] != b["key"]
    assert a["key"] not in {m["key"] for m in sample}


def test_no_tool_result_is_larger_than_the_cap(tmp_path: Path) -> None:
    md = write_maildir(tmp_path / "md", 0)
    for n in range(50):
        subject = "S" * 5000
        (md / "new" / f"{n + 1}.M{n}P1Q1.host").write_bytes(message(n, subject=subject))
    listing = read_inbox(Inbox([MaildirSource("home", md)]))
    assert len(toolbox.result_text(listing)) < toolbox.MAX_RESULT_CHARS
    assert all(len(m["subject"]) <= 300 for m in listing["messages"])


def test_a_maildir_that_is_not_one_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(SourceError, match="is not a Maildir"):
        MaildirSource("x", tmp_path / "plain").page(
            since=None, after=None, limit=5, unread_only=False
        )


def test_mbox_status_header_gives_unread_state(tmp_path: Path) -> None:
    box = write_mbox(tmp_path / "b.mbox", [message(1), message(2)], read={0})
    items = read_inbox(Inbox([MboxSource("b", box)]))["messages"]
    assert [(m["subject"], m["unread"]) for m in items] == [
        ("Message number 2", True),
        ("Message number 1", False),
    ]
    assert os.path.getsize(box) == box.stat().st_size


def test_an_inbox_until_leaves_out_later_mail_in_every_kind_of_source(tmp_path: Path) -> None:
    """A brief for a past day reads no mail from after that day: each source kind applies the
    window's end, paging included."""
    md = write_maildir(tmp_path / "md", 10)  # BASE + 0..9 minutes
    box = write_mbox(
        tmp_path / "b.mbox",
        [message(20 + n, when=BASE + dt.timedelta(minutes=n)) for n in range(10)],
    )
    eml = tmp_path / "eml"
    eml.mkdir()
    for n in range(10):
        (eml / f"{n}.eml").write_bytes(message(40 + n, when=BASE + dt.timedelta(minutes=n)))
    until = BASE + dt.timedelta(minutes=6)
    for source in (
        MaildirSource("md", md),
        MboxSource("mbox", box),
        EmlFolderSource("eml", eml),
    ):
        inbox = Inbox([source], until=until)
        first = read_inbox(inbox, limit=4)
        rest = read_inbox(inbox, limit=4, cursor=first["next_cursor"])
        got = [m["received_at"] for m in first["messages"] + rest["messages"]]
        assert len(got) == 6, source.name
        assert max(got) == (BASE + dt.timedelta(minutes=5)).isoformat(), source.name
    sample = Inbox([legacy_inbox(JsonInbox(None, dt.date(2026, 11, 5))).sources[0]])
    everything = read_inbox(sample)["messages"]
    cut = dt.datetime.fromisoformat(sorted(m["received_at"] for m in everything)[3])
    sample.until = cut
    kept = read_inbox(sample)["messages"]
    assert len(kept) == 3 and all(dt.datetime.fromisoformat(m["received_at"]) < cut for m in kept)
