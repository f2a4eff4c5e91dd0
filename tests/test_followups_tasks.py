"""What the offline model files from mail the followups know about, through the CLI (a Maildir
with INBOX and Sent, `me` in the config): an owed reply is no task, a request the user already
answered from Sent is no task, mailing-list and automated mail is no task; real work asked in
an owed thread still is. Each rule is checked against the same mail without the fact that
makes it no task (then it is filed), with a short message (its snippet settles it) and a long
one (the model opens it), and the tool files a thread's key once across runs."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from dayflow.sources.identity import mail_key, message_stable_id
from tests.harness import invoke
from tests.mailkit import deliver, thread_mail

DAY = "2026-11-18"  # a Wednesday
CLOCK = "2026-11-18T07:30:00+00:00"
ALEX = "Alex Doe <alex@example.org>"
MARCO = "Marco Bianchi <marco@example.net>"
# A long message is cut in its snippet, so the model opens it (the reading flow).
FILLER = " ".join(["We had a lovely time at the lake last weekend, thanks again."] * 6)


def at(day: int, hour: int = 10) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, 0, tzinfo=dt.UTC)


def _model(*_: Any) -> OfflineModel:
    return OfflineModel()


def _run(root: Path, *, me: bool = True) -> tuple[str, list[tuple[str, str]]]:
    """The brief of the mail under `root` and the tasks it filed (key, title)."""
    config = root / "config.toml"
    config.write_text(
        ('me = ["alex@example.org"]\n' if me else "")
        + f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{root / "INBOX"}"\n'
        f'sent = "{root / "Sent"}"\n'
    )
    env = {"DAYFLOW_CONFIG": str(config)}
    got = invoke(root / "d.db", _model, "brief", "--date", DAY, "--since", "2026-11-09",
                 env=env, clock=CLOCK)  # fmt: skip
    assert got.code == 0, got.err
    listed = invoke(root / "d.db", _model, "tasks", "--json", env=env, clock=CLOCK)
    tasks = [(t["idempotency_key"], t["title"]) for t in json.loads(listed.out)]
    return got.out, tasks


def _nothing_filed(root: Path) -> str:
    """The brief of the mail under `root`, which files no task and says nothing needs you."""
    brief, tasks = _run(root)
    assert tasks == []
    assert _needs(brief) == ["- Nothing in the inbox needs you right now."]
    return brief


def _needs(brief: str) -> list[str]:
    return brief.split("## Needs action\n", 1)[1].split("\n\n", 1)[0].strip().splitlines()


def _mail(root: Path, raw: bytes, when: dt.datetime, folder: str = "INBOX") -> None:
    deliver(root / folder, raw, when, seen=False)
    (root / "Sent").mkdir(exist_ok=True)  # an empty sent folder is a sent folder
    for sub in ("cur", "new", "tmp"):
        (root / "Sent" / sub).mkdir(exist_ok=True)


@pytest.mark.parametrize("long", [False, True], ids=["snippet", "opened"])
def test_an_owed_reply_is_under_you_owe_and_not_filed(tmp_path: Path, long: bool) -> None:
    body = "Are you free for dinner on Saturday? Let me know." + (" " + FILLER if long else "")
    raw = thread_mail("dinner@x", sender=MARCO, subject="Dinner Saturday?", body=body,
                      when=at(17))  # fmt: skip
    _mail(tmp_path / "owed", raw, at(17))
    brief = _nothing_filed(tmp_path / "owed")
    assert '- Reply to Marco Bianchi (marco@example.net): "Dinner Saturday?"' in brief
    # Without `me` nothing is known to be owed: the same question is a request, filed.
    _mail(tmp_path / "unknown", raw, at(17))
    brief, tasks = _run(tmp_path / "unknown", me=False)
    key = mail_key(message_stable_id("<dinner@x>", sender=MARCO))
    assert tasks == [(key, "Reply to Marco about Dinner Saturday")]


@pytest.mark.parametrize("long", [False, True], ids=["snippet", "opened"])
def test_real_work_in_an_owed_thread_is_still_a_task(tmp_path: Path, long: bool) -> None:
    body = "Could you send me the signed contract by Friday? And are you free on Saturday?"
    raw = thread_mail("contract@x", sender=MARCO, subject="Contract", when=at(17),
                      body=body + (" " + FILLER if long else ""))  # fmt: skip
    _mail(tmp_path, raw, at(17))
    brief, tasks = _run(tmp_path)
    key = mail_key(message_stable_id("<contract@x>", sender=MARCO))
    assert [k for k, _ in tasks] == [key]
    assert tasks[0][1].startswith("Send ") and "contract" in tasks[0][1]
    assert '- Reply to Marco Bianchi (marco@example.net): "Contract"' in brief


@pytest.mark.parametrize("long", [False, True], ids=["snippet", "opened"])
def test_a_request_answered_from_sent_is_no_task(tmp_path: Path, long: bool) -> None:
    body = "Could you confirm the venue for Friday?" + (" " + FILLER if long else "")
    ask = thread_mail("venue@x", sender="Carol Ng <carol@example.net>", subject="Venue",
                      body=body, when=at(17))  # fmt: skip
    reply = thread_mail("re-venue@y", sender=ALEX, to="Carol Ng <carol@example.net>",
                        subject="Re: Venue", body="Confirmed: room 4.", when=at(17, 11),
                        reply_to="venue@x", refs="<venue@x>")  # fmt: skip
    _mail(tmp_path / "answered", ask, at(17))
    _mail(tmp_path / "answered", reply, at(17, 11), folder="Sent")
    _nothing_filed(tmp_path / "answered")
    # Not answered: the same request is filed.
    _mail(tmp_path / "open", ask, at(17))
    _, tasks = _run(tmp_path / "open")
    assert [k for k, _ in tasks] == [
        mail_key(message_stable_id("<venue@x>", sender="carol@example.net"))
    ]


@pytest.mark.parametrize(
    "header",
    ["List-Id: <staff.lists.example>", "Precedence: list", "Precedence: bulk",
     "Auto-Submitted: auto-generated", "List-Unsubscribe: <https://x.example/u>",
     "X-Spam-Flag: YES", "X-Spam-Status: Yes, score=7.9 required=5.0"],
)  # fmt: skip
def test_list_bulk_and_automated_mail_is_no_task(tmp_path: Path, header: str) -> None:
    body = "Please fill in the staff survey by Friday."
    sender = "Staff Office <office@work.example>"
    raw = thread_mail("survey@x", sender=sender, subject="Staff survey", body=body,
                      when=at(17), extra=header)  # fmt: skip
    _mail(tmp_path / "list", raw, at(17))
    _nothing_filed(tmp_path / "list")
    # The same request from the same person, no list header: filed.
    plain = thread_mail("survey@x", sender=sender, subject="Staff survey", body=body, when=at(17))
    _mail(tmp_path / "plain", plain, at(17))
    _, tasks = _run(tmp_path / "plain")
    assert [k for k, _ in tasks] == [mail_key(message_stable_id("<survey@x>", sender=sender))]


def test_list_mail_past_the_bulk_lists_cap_is_no_task_either(tmp_path: Path) -> None:
    """read_followups lists the newest MAX_KEYS bulk keys only; a busy inbox holds more list
    mail than that, and each message carries its own `bulk` mark in read_inbox."""
    from dayflow.followups.view import MAX_KEYS

    root = tmp_path / "busy"
    for n in range(MAX_KEYS + 5):
        when = at(10) + dt.timedelta(minutes=20 * n)
        raw = thread_mail(f"digest{n}@lists.example", sender=f"Member {n} <m{n}@lists.example>",
                          subject=f"[staff] Re: Survey round {n}", when=when,
                          body="Could you fill in the staff survey by Friday?",
                          extra="List-Id: Staff <staff.lists.example>")  # fmt: skip
        _mail(root, raw, when)
    _nothing_filed(root)


@pytest.mark.parametrize("long", [False, True], ids=["snippet", "opened"])
def test_my_own_mail_found_in_the_inbox_is_no_task(tmp_path: Path, long: bool) -> None:
    """Alex's own question to Jordan, in the inbox (Gmail's All Mail): waited on, not filed."""
    body = "Can you bring the book back on Thursday?" + (" " + FILLER if long else "")
    jordan = "Jordan Reyes <jordan@example.com>"
    mine = thread_mail("books@y", sender=ALEX, to=jordan, subject="Book club", body=body,
                       when=at(10))  # fmt: skip
    _mail(tmp_path / "mine", mine, at(10))
    brief = _nothing_filed(tmp_path / "mine")
    assert '- Jordan Reyes (jordan@example.com): "Book club", no answer for' in brief
    # The same words in a note to self: a reminder, filed.
    note = thread_mail("books@y", sender=ALEX, to=ALEX, subject="Book club", body=body, when=at(10))
    _mail(tmp_path / "note", note, at(10))
    _, tasks = _run(tmp_path / "note")
    assert [k for k, _ in tasks] == [mail_key(message_stable_id("<books@y>", sender=ALEX))]
    # The same words from Jordan to Alex ask something of Alex: filed.
    theirs = thread_mail("books@y", sender=jordan, subject="Book club", body=body, when=at(10))
    _mail(tmp_path / "theirs", theirs, at(10))
    _, tasks = _run(tmp_path / "theirs")
    assert [k for k, _ in tasks] == [mail_key(message_stable_id("<books@y>", sender=jordan))]
