"""Headers past a listing's first 64 KB (issue 32.17): a long `Received:` chain hid the body,
so the listing said `snippet: ""` with `snippet_is_whole: true`, and To: and Message-ID fell
past the cut, so no reply was owed. A listing reads on to the end of the headers; the snippet
is whole only when the body was read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dayflow.sources.inbox import Inbox
from dayflow.sources.maildir import MaildirSource
from dayflow.sources.mailfiles import EmlFolderSource
from dayflow.sources.mbox import MboxSource
from dayflow.sources.mime import MAX_HEADER_BYTES
from tests.mailkit import deliver, thread_mail, write_mbox
from tests.test_followups_tasks import MARCO, _mail, _run, at
from tests.test_mail_sources import read_inbox

ASK = "Are you free for dinner on Saturday? Let me know."


def _received(size: int) -> bytes:
    hop = (
        b"Received: from relay%d.example.net (relay.example.net [192.0.2.1]) by mx.example.org\r\n"
    )
    lines, total, n = [], 0, 0
    while total < size:
        line = hop % n
        lines.append(line)
        total, n = total + len(line), n + 1
    return b"".join(lines)


def _raw(headers: int) -> bytes:
    return _received(headers) + thread_mail(
        "dinner@x", sender=MARCO, subject="Dinner Saturday?", body=ASK, when=at(17)
    )


def _source(kind: str, root: Path, raw: bytes) -> Any:
    if kind == "maildir":
        deliver(root / "md", raw, at(17), seen=False)
        return MaildirSource("home", root / "md")
    if kind == "mbox":
        return MboxSource("home", write_mbox(root / "box", [raw]))
    (root / "eml").mkdir()
    (root / "eml" / "one.eml").write_bytes(raw)
    return EmlFolderSource("home", root / "eml")


@pytest.mark.parametrize("kind", ["maildir", "mbox", "eml"])
def test_a_body_after_70_kb_of_headers_is_listed_whole(tmp_path: Path, kind: str) -> None:
    source = _source(kind, tmp_path, _raw(70 * 1024))
    [listed] = read_inbox(Inbox([source]))["messages"]
    assert listed["snippet"] == ASK
    assert listed["snippet_is_whole"] is True
    assert listed["subject"] == "Dinner Saturday?"
    read = source.read(source.page(since=None, after=None, limit=5, unread_only=False)[0].stable_id)
    assert (
        read is not None
        and read.stable_id
        == source.page(since=None, after=None, limit=5, unread_only=False)[0].stable_id
    )  # the listing saw the Message-ID the full read sees


@pytest.mark.parametrize("kind", ["maildir", "mbox"])
def test_headers_past_every_cap_never_claim_a_whole_snippet(tmp_path: Path, kind: str) -> None:
    source = _source(kind, tmp_path, _raw(MAX_HEADER_BYTES + 128 * 1024))
    [item] = source.page(since=None, after=None, limit=5, unread_only=False)
    assert item.snippet == ""
    assert item.snippet_whole is False  # the body was never reached: not "whole"


def test_a_question_after_long_headers_is_an_owed_reply(tmp_path: Path) -> None:
    _mail(tmp_path, _raw(70 * 1024), at(17))
    brief, tasks = _run(tmp_path)
    assert tasks == []
    assert '- Reply to Marco Bianchi (marco@example.net): "Dinner Saturday?"' in brief
