"""The user's sent mail and `me` from the config, through the CLI: a Maildir with INBOX and
Sent, an mbox and an .eml folder as sent mail, a sent folder that is missing, `sources` and
`sources check`, and the brief's You owe replies / Waiting on others sections. Nothing is
ever written to a mailbox (every file's bytes and name are checked)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from tests.harness import invoke
from tests.mailkit import deliver, thread_mail, write_mbox

DAY = "2026-11-18"  # a Wednesday
CLOCK = "2026-11-18T07:30:00+00:00"
ALEX = "Alex Doe <alex@example.org>"
BOB = "Bob Stone <bob@example.com>"
DAN = "Dan Reyes <dan@example.net>"
CAROL = "Carol Ng <carol@example.net>"


def at(day: int, hour: int = 10) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, 0, tzinfo=dt.UTC)


def week(root: Path) -> tuple[Path, Path]:
    """A week of mail: Bob's question unanswered since Friday (owed), Alex's question to Dan
    unanswered since Monday but for Dan's out-of-office (waited on), Carol's question answered
    from Sent (neither), a newsletter asking something (neither)."""
    inbox, sent = root / "INBOX", root / "Sent"
    deliver(inbox, thread_mail("bob1@x", subject="Budget", when=at(13)), at(13))
    deliver(
        sent,
        thread_mail(
            "alex1@y",
            sender=ALEX,
            to=DAN,
            subject="Contract signed?",
            body="Did you sign the contract?",
            when=at(16, 9),
        ),
        at(16, 9),
    )
    deliver(inbox, thread_mail("ooo1@x", sender=DAN, subject="Out of office: Contract signed?",
                               body="I am away.", when=at(16, 9) + dt.timedelta(minutes=1),
                               reply_to="alex1@y"), at(16, 9))  # fmt: skip
    _answered(inbox, sent)
    deliver(inbox, thread_mail("news@x", sender="Weekly <news@lists.example>", subject="Survey?",
                               body="Could you fill in our survey?", when=at(17, 12),
                               extra="List-Id: <weekly.lists.example>"), at(17, 12))  # fmt: skip
    return inbox, sent


def _answered(inbox: Path, sent: Path) -> None:
    """Carol's question on Tuesday, answered from Sent an hour later."""
    ask = thread_mail("carol1@x", sender=CAROL, subject="Venue?",
                      body="Can you confirm the venue?", when=at(17))  # fmt: skip
    deliver(inbox, ask, at(17))
    reply = thread_mail("alex2@y", sender=ALEX, to=CAROL, subject="Re: Venue?",
                        body="Confirmed: room 4.", when=at(17, 11), reply_to="carol1@x",
                        refs="<carol1@x>")  # fmt: skip
    deliver(sent, reply, at(17, 11))


def config(root: Path, inbox: Path, sent: Path | str, extra: str = "") -> dict[str, str]:
    path = root / "config.toml"
    path.write_text(
        f'me = ["Alex@Example.org"]\n{extra}[[inbox]]\nname = "work"\nkind = "maildir"\n'
        f'path = "{inbox}"\nsent = "{sent}"\n'
    )
    return {"DAYFLOW_CONFIG": str(path)}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def model(m: str, s: Any) -> OfflineModel:
    return OfflineModel()


def section(out: str, heading: str, *, asked: bool = False) -> list[str]:
    """A section's lines; with `asked`, the question under each reply too (its evidence)."""
    lines = out.split(f"## {heading}\n", 1)[1].split("\n\n", 1)[0].strip().splitlines()
    return [line for line in lines if asked or not line.startswith("  - asked: ")]


def test_a_week_of_mail_gives_exactly_the_owed_and_awaited_replies(tmp_path: Path) -> None:
    inbox, sent = week(tmp_path / "mail")
    env = config(tmp_path, inbox, sent)
    before = snapshot(tmp_path / "mail")
    got = invoke(tmp_path / "d.db", model, "brief", "--date", DAY, env=env, clock=CLOCK)
    assert got.code == 0, got.err
    assert section(got.out, "You owe replies") == [
        '- Reply to Bob Stone (bob@example.com): "Budget", waiting 3 working days '
        "(since Fri 13 Nov)"
    ]
    # Under each, its evidence: the question the latest message asked, in its own words.
    assert section(got.out, "Waiting on others", asked=True) == [
        '- Dan Reyes (dan@example.net): "Contract signed?", no answer for 2 working days '
        "(since Mon 16 Nov)",
        '  - asked: "Did you sign the contract?"',
    ]
    # A reply owed for three working days outweighs a request with no deadline.
    assert section(got.out, "One thing") == [
        '**Reply to Bob Stone (bob@example.com) about "Budget": they have waited 3 working days.**'
    ]
    assert snapshot(tmp_path / "mail") == before  # nothing written, moved or flagged


def test_an_owed_reply_is_no_task_and_the_json_brief_carries_both_lists(tmp_path: Path) -> None:
    inbox, sent = week(tmp_path / "mail")
    env = config(tmp_path, inbox, sent)
    got = invoke(tmp_path / "d.db", model, "brief", "--date", DAY, "--format", "json", env=env,
                 clock=CLOCK)  # fmt: skip
    assert got.code == 0, got.err
    doc = json.loads(got.out)
    owed, waiting = doc["followups"]["you_owe"], doc["followups"]["waiting_on"]
    assert [(i["with"]["address"], i["age_days"]) for i in owed] == [("bob@example.com", 3)]
    assert [(i["with"]["address"], i["age_days"]) for i in waiting] == [("dan@example.net", 2)]
    assert owed[0]["key"].startswith("thread:") and owed[0]["sources"] == ["work"]
    tasks = invoke(tmp_path / "d.db", model, "tasks", "--json", env=env, clock=CLOCK)
    assert not [t for t in json.loads(tasks.out) if str(t["idempotency_key"]).startswith("thread:")]


def test_a_missing_sent_folder_is_named_in_one_line_and_the_rest_is_written(
    tmp_path: Path,
) -> None:
    inbox, _ = week(tmp_path / "mail")
    env = config(tmp_path, inbox, tmp_path / "mail" / "Gone")
    got = invoke(tmp_path / "d.db", model, "brief", "--date", DAY, env=env, clock=CLOCK)
    assert got.code == 0, got.err
    owed = section(got.out, "You owe replies")
    assert owed[0].startswith("- _Could not read work/sent: sent folder ")
    assert owed[0].endswith("Gone does not exist (moved, deleted, or mistyped in the config?)_")
    assert "## Needs action" in got.out and "## This week" in got.out
    check = invoke(tmp_path / "d.db", model, "sources", "check", "--date", DAY, env=env,
                   clock=CLOCK)  # fmt: skip
    assert check.code == 4
    lines = check.out.splitlines()
    assert lines[0].startswith("work ") and "4 message(s)" in lines[0]
    assert lines[1].startswith("work/sent") and "Gone does not exist" in lines[1]
    assert len(lines) == 2


@pytest.mark.parametrize("kind", ["maildir", "mbox", "eml"])
def test_sources_check_reports_each_kind_of_sent_folder(tmp_path: Path, kind: str) -> None:
    inbox, sent = week(tmp_path / "mail")
    raws = [p.read_bytes() for p in sorted((sent / "cur").iterdir())]
    if kind == "mbox":
        sent = write_mbox(tmp_path / "sent.mbox", raws)
    elif kind == "eml":
        sent = tmp_path / "sent-eml"
        sent.mkdir()
        for n, raw in enumerate(raws):
            (sent / f"{n}.eml").write_bytes(raw)
    env = config(tmp_path, inbox, sent)
    before = snapshot(tmp_path)
    check = invoke(tmp_path / "d.db", model, "sources", "check", "--date", DAY, env=env,
                   clock=CLOCK)  # fmt: skip
    assert check.code == 0, check.out + check.err
    line = check.out.splitlines()[1]
    assert line.startswith("work/sent") and "2 message(s)" in line
    assert line.split()[1] == kind  # the sent folder's own kind, not the inbox's (maildir)
    assert "from Alex Doe <alex@example.org>: Re: Venue?" in line
    got = invoke(tmp_path / "d.db", model, "brief", "--date", DAY, env=env, clock=CLOCK)
    assert "Carol" not in "\n".join(section(got.out, "You owe replies"))
    assert len(section(got.out, "Waiting on others")) == 1
    after = snapshot(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("d.db")} == {
        k: v for k, v in before.items() if not k.startswith("d.db")
    }


def test_sources_lists_me_and_where_it_came_from(tmp_path: Path) -> None:
    inbox, sent = week(tmp_path / "mail")
    env = config(tmp_path, inbox, sent)
    listed = invoke(tmp_path / "d.db", model, "sources", env=env)
    assert listed.code == 0, listed.err
    assert listed.out.splitlines()[-1] == "me       Alex@Example.org (me in the config file)"
    assert f"(sent: {sent})" in listed.out
    doc = json.loads(invoke(tmp_path / "d.db", model, "sources", "--json", env=env).out)
    assert doc["me"] == [{"address": "Alex@Example.org", "from": "me in the config file"}]


def test_without_me_the_imap_and_smtp_users_that_are_addresses_are_me(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[smtp]\nhost = "127.0.0.1"\nuser = "alex@example.org"\npassword_env = "P"\n'
        'to = "alex@example.org"\n[[inbox]]\nname = "imap"\nkind = "imap"\nhost = "127.0.0.1"\n'
        'user = "demouser"\npassword_env = "P"\n'
    )
    listed = invoke(tmp_path / "d.db", model, "sources", env={"DAYFLOW_CONFIG": str(path)})
    assert listed.code == 0, listed.err
    assert listed.out.splitlines()[-1] == "me       alex@example.org (the [smtp] user)"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('me = ["alex@example.org", "alex"]', "me entry 2 ('alex') is not an email address"),
        ("me = []", "me is empty: list your email addresses"),
        ("me = 42", "me must be a list of your email addresses"),
        ('me = ["Alex <alex@example.org>"]', "me entry 1 ('Alex <alex@example.org>')"),
        ("followup_days = 0", "followup_days must be a whole number of days from 1 to 365"),
        ('waiting_after_days = "2"', "waiting_after_days must be a whole number of days"),
    ],
)
def test_a_bad_me_or_window_is_refused_in_one_line_naming_the_key(
    tmp_path: Path, line: str, problem: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f'{line}\n[[inbox]]\nname = "w"\nkind = "maildir"\npath = "{tmp_path}"\n')
    got = invoke(tmp_path / "d.db", model, "sources", "check", env={"DAYFLOW_CONFIG": str(path)})
    assert got.code == 4, got.out + got.err  # a config file error
    assert problem in got.err and len(got.err.strip().splitlines()) == 1
    assert "Traceback" not in got.err


def test_empty_sections_say_so_in_one_line_each(tmp_path: Path) -> None:
    inbox, sent = tmp_path / "mail" / "INBOX", tmp_path / "mail" / "Sent"
    _answered(inbox, sent)
    env = config(tmp_path, inbox, sent)
    got = invoke(tmp_path / "d.db", model, "brief", "--date", DAY, env=env, clock=CLOCK)
    assert got.code == 0, got.err
    assert section(got.out, "You owe replies") == ["- Nobody is waiting on a reply from you."]
    assert section(got.out, "Waiting on others") == ["- You are not waiting on anyone."]


def test_a_request_due_today_comes_before_an_owed_reply_in_one_thing(tmp_path: Path) -> None:
    inbox, sent = week(tmp_path / "mail")
    deliver(inbox, thread_mail("eve1@x", sender="Eve Park <eve@example.net>", subject="Slides",
                               body="Please send me the slides by today.", when=at(18, 6)),
            at(18, 6))  # fmt: skip
    env = config(tmp_path, inbox, sent)
    got = invoke(tmp_path / "d.db", model, "brief", "--date", DAY, env=env, clock=CLOCK)
    assert got.code == 0, got.err
    (one,) = section(got.out, "One thing")
    assert "due today" in one and "Reply to Bob" not in one
    assert len(section(got.out, "You owe replies")) == 2  # Eve's asks too: owed, 0 days


def test_a_sent_path_neither_folder_nor_file_is_named_in_one_line(tmp_path: Path) -> None:
    import os

    inbox, _ = week(tmp_path / "mail")
    fifo = tmp_path / "sent.fifo"
    os.mkfifo(fifo)
    env = config(tmp_path, inbox, fifo)
    got = invoke(tmp_path / "d.db", model, "brief", "--date", DAY, env=env, clock=CLOCK)
    assert got.code == 0, got.err
    owed = section(got.out, "You owe replies")
    assert (
        owed[0]
        == f"- _Could not read work/sent: sent folder {fifo} is neither a folder nor a file_"
    )
    assert len(owed) == 3  # the inbox still counts: Bob and Carol (her answer is in Sent)
