"""The realistic week end to end (tests/week.py tells the story): a Maildir with INBOX and Sent,
an IMAP account on the test server with a `\\Sent` folder, an ICS calendar whose attendees
wrote some of that mail, two days of briefs by the offline model. The owed replies, the
waited-on threads, the prep under each of today's events and the conflicts are exactly these;
nothing is written to a mailbox or the calendar; a run killed after its reads resumes without
reading again and sends the same bytes."""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from dayflow.sources.identity import mail_key, message_stable_id
from tests import week
from tests.conftest import dayflow_command, subprocess_env
from tests.fakeapi import FakeAPI, responder_from_client
from tests.harness import invoke
from tests.imapserver import ImapServer, imap_server

pytestmark = pytest.mark.slow  # a real IMAP server, real processes

TUESDAY = "2026-11-17T07:30:00+00:00"
WEDNESDAY = "2026-11-18T07:30:00+00:00"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ImapServer]:
    with imap_server(tmp_path) as running:
        yield running


def _brief(db: Path, config: Path, day: str, clock: str, *args: str) -> Any:
    result = invoke(
        db,
        lambda *_: OfflineModel(),
        "brief",
        "--date",
        day,
        "--tz",
        week.TZ,
        *args,
        env={"DAYFLOW_CONFIG": str(config)},
        clock=clock,
    )
    assert result.code == 0, result.err
    return result


def _tuesday(config: Path, db: Path) -> None:
    """Tuesday's brief files the week's requests as tasks: on Wednesday they are open tasks
    that came from the mail of the people Alex meets."""
    _brief(db, config, "2026-11-17", TUESDAY, "--since", "2026-11-09")


def _key(message_id: str) -> str:
    """The task key of the week's message with this Message-ID (and its sender's)."""
    import email

    for path in sorted(week.WEEK.rglob("*.eml")):
        msg = email.message_from_bytes(path.read_bytes())
        if (msg["Message-ID"] or "").strip() == message_id:
            return mail_key(message_stable_id(message_id, sender=msg["From"] or ""))
    raise KeyError(message_id)


def _tasks(db: Path, config: Path) -> list[tuple[str, str]]:
    listed = invoke(db, lambda *_: OfflineModel(), "tasks", "--json",
                    env={"DAYFLOW_CONFIG": str(config)})  # fmt: skip
    assert listed.code == 0, listed.err
    return [(t["idempotency_key"], t["title"]) for t in json.loads(listed.out)]


def _people(items: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    return [(i["with"]["address"], i["subject"], i["age_days"]) for i in items]


def test_the_week_gives_exactly_these_owed_replies_waits_prep_and_conflicts(
    tmp_path: Path, server: ImapServer
) -> None:
    config, db = week.build(tmp_path, server), tmp_path / "dayflow.db"
    before = week.snapshot(tmp_path, server)
    _tuesday(config, db)
    out = json.loads(_brief(db, config, week.DAY, WEDNESDAY, "--format", "json").out)

    followups = out["followups"]
    assert _people(followups["you_owe"]) == [
        ("sam@partner.example", "Q4 partnership one-pager", 3),
        ("marco@example.net", "Dinner Saturday?", 1),
    ]
    assert _people(followups["waiting_on"]) == [
        ("jordan@example.com", "Book club on Thursday", 6),
        ("priya@work.example", "Venue options for the offsite", 2),
    ]
    assert followups["waiting_on"][1]["sources"] == ["work", "work/sent"]  # with the auto-reply

    prep = {e["title"]: e for e in out["prep"]}
    assert list(prep) == [
        "Team standup",
        "Partnership review",
        "1:1 with Dana",
        "Lunch with Marco",
        "Design review",
        "Vendor call",
    ]
    subjects = {title: [t["subject"] for t in e["threads"]] for title, e in prep.items()}
    assert subjects == {
        # Newest first by what a person last wrote: Ben on Tuesday, Alex's answer to Dana on
        # Monday at 10:00, Alex's question to Priya on Monday at 08:30 (her out-of-office
        # reply a minute later says nothing).
        "Team standup": [
            "Design review agenda",
            "Re: Expense report for Denver",
            "Venue options for the offsite",
        ],
        "Partnership review": ["Q4 partnership one-pager", "Contract draft"],
        "1:1 with Dana": ["Design review agenda", "Re: Expense report for Denver"],
        "Lunch with Marco": ["Dinner Saturday?"],
        "Design review": ["Design review agenda", "Venue options for the offsite"],
        "Vendor call": [],
    }
    # Open tasks Tuesday's brief filed from these people's own mail: Ben's agenda request
    # (to Dana, Alex in Cc) is Ben's, so it is prep for the design review only. Dana's request
    # was answered from Sent and Marco's asks only for a reply: neither is a task.
    tasks = {title: [t["title"] for t in e["tasks"]] for title, e in prep.items()}
    assert tasks == {
        "Team standup": [],
        "Partnership review": ["Send edits on partnership one-pager to Sam"],
        "1:1 with Dana": [],
        "Lunch with Marco": [],
        "Design review": ["Add items to design review agenda"],
        "Vendor call": [],
    }

    conflicts = [(c["kind"], c["titles"], c["start"][11:16], c["end"][11:16])
                 for c in out["conflicts"]]  # fmt: skip
    assert conflicts == [
        ("travel", ["Team standup", "Partnership review"], "09:45", "10:00"),
        ("travel", ["Partnership review", "1:1 with Dana"], "11:00", "11:00"),
        ("overlap", ["Design review", "Dentist"], "14:30", "15:00"),
    ]

    brief = out["brief"]
    assert _section(brief, "Needs action") == [
        "- Add items to design review agenda (from Ben Carter, due today)",
        # the sender's words the request was found in, and whether its date was stated
        AGENDA_ASK,
    ]
    assert _section(brief, "Tasks created") == [
        "- None new: everything that needs action is already on your task list."
    ]
    assert "- 16:00–17:00 Offsite planning (Room 5) (declined)" in brief
    assert "- 16:00–18:00 Focus time (free)" in brief
    assert (
        "- 12:30–13:30 Lunch with Marco (Cafe Nero, Rosenthaler Str. 1)\n"
        '  - Mail: "Dinner Saturday?" (latest from Marco Bianchi, Tue 17 Nov)\n'
    ) in brief
    assert "- Conflict: Design review and Dentist overlap, 14:30–15:00." in brief
    assert week.snapshot(tmp_path, server) == before  # nothing written anywhere
    assert {c.split()[0] for c in server.plain.commands} <= READ_ONLY_IMAP


def test_only_real_work_is_filed_not_owed_answered_or_list_mail(
    tmp_path: Path, server: ImapServer
) -> None:
    """Tuesday files exactly Sam's edits and Ben's agenda items: Marco's dinner question asks
    only for a reply (it is under You owe replies), Dana's request was answered from Sent, and
    the staff survey (List-Id), the shop's sale (Precedence: bulk) and the help desk's rating
    (Auto-Submitted, noreply) are no requests. Wednesday files nothing new and the followups
    say why, as data."""
    config, db = week.build(tmp_path, server), tmp_path / "dayflow.db"
    tuesday = _brief(db, config, "2026-11-17", TUESDAY, "--since", "2026-11-09").out
    assert _section(tuesday, "Needs action") == [
        "- Add items to design review agenda (from Ben Carter, due tomorrow)",
        AGENDA_ASK,
        "- Send edits on partnership one-pager to Sam (from Sam Okafor, due Thu 19 Nov)",
        '  - "Could you send me your edits on the partnership one-pager by Thursday?" (due stated)',
    ]
    filed = [
        (_key("<w4.agenda@work.example>"), "Add items to design review agenda"),
        (_key("<w1.onepager@partner.example>"), "Send edits on partnership one-pager to Sam"),
    ]
    assert sorted(_tasks(db, config)) == sorted(filed)
    out = json.loads(_brief(db, config, week.DAY, WEDNESDAY, "--format", "json").out)
    assert sorted(_tasks(db, config)) == sorted(filed)  # nothing filed twice, nothing new
    followups = out["followups"]
    assert followups["answered"] == [_key("<w2.expenses@work.example>")]
    assert followups["bulk"] == [
        _key("<w5.survey@lists.work.example>"),
        _key("<w6.ticket@tickets.work.example>"),
        _key("<w3.ooo@work.example>"),  # Priya's out-of-office (Auto-Submitted)
        _key("<h3.sale@shop.example>"),
    ]
    assert followups["yours"] == [_key("<h4.books@example.org>")]  # Alex's, in the home INBOX
    marco = followups["you_owe"][1]
    assert marco["keys"] == [_key("<h1.dinner@example.net>")]
    assert marco["key"].startswith("thread:")


# The line under the agenda request: the sender's words it was found in, the date's kind.
AGENDA_ASK = (
    '  - "Hi all, Can you add your items to the design review agenda before Wednesday?" '
    + ("(due stated)")
)


def _section(brief: str, heading: str) -> list[str]:
    return brief.split(f"## {heading}\n", 1)[1].split("\n\n", 1)[0].strip().splitlines()


READ_ONLY_IMAP = {"CAPABILITY", "LOGIN", "LIST", "EXAMINE", "UID", "SEARCH", "FETCH", "LOGOUT",
                  "NOOP", "ID", "ENABLE"}  # fmt: skip


def test_a_brief_killed_after_its_reads_resumes_without_reading_again(
    tmp_path: Path, server: ImapServer
) -> None:
    config = week.build(tmp_path, server)
    with FakeAPI(responder=responder_from_client(OfflineModel())) as api:
        server.clear()
        base = _child(tmp_path / "base.db", config, api, "brief", "--date", week.DAY)
        assert base.returncode == 0, base.stderr
        bodies = [r.body for r in api.message_requests]
        base_reads = _reads(server.plain.commands)
        server.clear()
        killed = _child(tmp_path / "run.db", config, api, "brief", "--date", week.DAY,
                        DAYFLOW_KILL_AT="after_tools:1")  # fmt: skip
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        before_kill = _reads(server.plain.commands)
        server.clear()
        resumed = _child(tmp_path / "run.db", config, api, "resume")
        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stdout == base.stdout
        # The killed process's first call and the resumed calls, byte for byte the uncrashed
        # run's.
        assert [r.body for r in api.message_requests][len(bodies) :] == bodies
    # The saved reads were not made again: the killed process read what the uncrashed run read
    # first, and the resumed one read in full only what the uncrashed run read after that (a
    # fresh process finds a message to open by listing its folder's headers again: no body).
    after = _reads(server.plain.commands)
    assert before_kill and base_reads[: len(before_kill)] == before_kill
    whole = lambda reads: [c for c in reads if "BODY.PEEK[]" in c]  # noqa: E731
    assert whole(after) == whole(base_reads[len(before_kill) :])
    assert not set(whole(after)) & set(whole(before_kill))
    # nor was the window listed again (read_inbox's, read_followups' searches)
    assert not [c for c in after if c.startswith("UID SEARCH") and c in before_kill]


def _reads(commands: list[str]) -> list[str]:
    """The commands that read mail (a session's CAPABILITY, LOGIN and LOGOUT left out)."""
    return [c for c in commands if c.split(" ", 1)[0] in {"EXAMINE", "SELECT", "UID", "FETCH"}]


def _child(db: Path, config: Path, api: FakeAPI, *args: str, **extra: str) -> Any:
    """`dayflow ARGS` in a child process, its model the offline one behind the loopback API."""
    env = subprocess_env(
        db,
        DAYFLOW_CONFIG=str(config),
        DAYFLOW_TZ=week.TZ,
        ANTHROPIC_API_KEY="test",
        ANTHROPIC_BASE_URL=api.base_url,
        **extra,
    )
    since = ["--since", "2026-11-09"] if args[0] == "brief" else []
    command = dayflow_command(*args, *since)
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
