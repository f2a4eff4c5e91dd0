"""A morning whose run compacts gives the brief and the tasks of one that does not (issue 31.2).

The mailbox (a Maildir with INBOX and Sent, `me` in the config) holds four real requests and
the mail the followups say is never a task: two owed replies (questions that ask only for an
answer), a request the user already answered from Sent, the user's own request to someone
else found in the inbox, and list mail. The calendar (ICS) has a busy day with a conflict and
a runaway series the reader cuts short. Through the CLI with the offline model, at
`--compact-at` 0 (never), 3000 (every few turns) and the default, the same tasks are filed and
the brief is the same, section by section: the summary keeps the followups' lists and the
calendar's conflicts and cut-short notice, which later turns act on. (Before, the compacted
runs filed 9 tasks where the plain one filed 4, and Today lost its "not read in full" line.)
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from dayflow.sources.identity import mail_key, message_stable_id
from dayflow.store import open_store
from tests.harness import invoke
from tests.mailkit import deliver, thread_mail

DAY = "2026-11-18"  # a Wednesday
CLOCK = "2026-11-18T07:30:00+00:00"
ALEX = "Alex Doe <alex@example.org>"
FILLER = " ".join(["We had a lovely time at the lake last weekend, thanks again."] * 6)


def at(day: int, hour: int = 10) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, 0, tzinfo=dt.UTC)


# (Message-ID, sender, subject, body, day, hour): the inbox, oldest first.
REQUESTS = [
    ("report@x", "Dana Whit <dana@work.example>", "Q3 report",
     "Could you send me the Q3 report by Friday?", 16, 9),
    ("lease@x", "Rosa Lind <rosa@homes.example>", "Lease renewal",
     "Please sign the lease renewal in the tenant portal by Monday. " + FILLER, 16, 11),
    ("slides@x", "Ben Carter <ben@work.example>", "Board slides",
     "Can you review the board slides before Thursday?", 17, 8),
    ("room@x", "Priya Nair <priya@work.example>", "Offsite room",
     "Please book the meeting room for the offsite next week. " + FILLER, 17, 9),
]  # fmt: skip
OWED = [
    ("dinner@x", "Marco Bianchi <marco@example.net>", "Dinner Saturday?",
     "Are you free for dinner on Saturday? Let me know.", 17, 18),
    ("hike@x", "Lee Park <lee@example.net>", "Hike on Sunday?",
     "Are you free for a hike on Sunday? Let me know.", 17, 19),
]  # fmt: skip
ANSWERED = ("venue@x", "Carol Ng <carol@example.net>", "Venue",
            "Could you confirm the venue for Friday?", 16, 14)  # fmt: skip
YOURS = ("photos@y", "Can you send me the photos from the trip?", 16, 15)
BULK = ("survey@x", "Staff Office <office@work.example>", "Staff survey",
        "Please fill in the staff survey by Friday.", 17, 7)  # fmt: skip

CALENDAR = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
{events}BEGIN:VEVENT
UID:runaway@x
DTSTART:20261101T000000Z
SUMMARY:Runaway
RRULE:FREQ=DAILY;INTERVAL=0
END:VEVENT
END:VCALENDAR
"""
EVENT = """BEGIN:VEVENT
UID:{uid}@x
DTSTART:{day}T{start}00Z
DTEND:{day}T{end}00Z
SUMMARY:{title}
LOCATION:{where}
DESCRIPTION:{about}
END:VEVENT
"""
# A busy week: today's meetings (the design review and the dentist overlap), and more days.
EVENTS = [
    ("standup", "20261118", "0800", "0815", "Team standup", "Room 2"),
    ("review", "20261118", "1300", "1400", "Design review", "Room 3"),
    ("dentist", "20261118", "1330", "1430", "Dentist", "Main St 4"),
    ("vendor", "20261118", "1500", "1530", "Vendor call", "Zoom"),
] + [
    (f"d{d}m{h}", f"202611{d}", f"{h:02d}00", f"{h:02d}45", f"Planning block {d}/{h}", "Room 5")
    for d in (19, 20, 21, 22, 23, 24)
    for h in range(7, 19)
]


# Newer than the rest, a full page and more of notes that ask nothing: the mail the followups
# judge comes on a later page, read after the first turns were compacted away.
FYIS = [
    (f"fyi{n}@x", f"Team Member {n} <member{n}@work.example>", f"Minutes, part {n}",
     f"Here are the minutes of sync number {n}, for your records.", 18, 0)
    for n in range(56)
]  # fmt: skip


def _mailbox(root: Path) -> Path:
    """The Maildir, the calendar and the config file; the config file's path."""
    mail = root / "Mail"
    for n, (mid, sender, subject, body, day, _) in enumerate(FYIS):
        when = at(day, 0) + dt.timedelta(minutes=n)
        raw = thread_mail(mid, sender=sender, subject=subject, body=body, when=when)
        deliver(mail / "INBOX", raw, when, seen=True)
    for mid, sender, subject, body, day, hour in [*REQUESTS, *OWED, ANSWERED, BULK]:
        extra = "List-Id: <staff.lists.work.example>" if mid == BULK[0] else ""
        raw = thread_mail(mid, sender=sender, subject=subject, body=body, when=at(day, hour),
                          extra=extra)  # fmt: skip
        deliver(mail / "INBOX", raw, at(day, hour), seen=False)
    mid, body, day, hour = YOURS
    jordan = "Jordan Reyes <jordan@example.com>"
    mine = thread_mail(mid, sender=ALEX, to=jordan, subject="Trip photos", body=body,
                       when=at(day, hour))  # fmt: skip
    deliver(mail / "INBOX", mine, at(day, hour), seen=True)
    mid, sender, subject, _, day, hour = ANSWERED
    reply = thread_mail("re-venue@y", sender=ALEX, to=sender, subject=f"Re: {subject}",
                        body="Confirmed: room 4.", when=at(day, hour + 1), reply_to=mid,
                        refs=f"<{mid}>")  # fmt: skip
    deliver(mail / "Sent", reply, at(day, hour + 1), seen=True)
    events = "".join(
        EVENT.format(uid=u, day=d, start=s, end=e, title=t, where=w, about=f"Agenda for {t}. " * 30)
        for u, d, s, e, t, w in EVENTS
    )
    (root / "cal.ics").write_text(CALENDAR.format(events=events).replace("\n", "\r\n"))
    config = root / "config.toml"
    config.write_text(
        'me = ["alex@example.org"]\n'
        f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{mail / "INBOX"}"\n'
        f'sent = "{mail / "Sent"}"\n'
        f'[[calendar]]\nname = "office"\nkind = "ics"\npath = "{root / "cal.ics"}"\n'
    )
    return config


def _model(*_: Any) -> OfflineModel:
    return OfflineModel(opens_per_turn=1)  # one thread a turn: a long run, it compacts


def _brief(root: Path, compact_at: int | None) -> dict[str, Any]:
    """The JSON brief of the morning at `compact_at` (None: the default), its tasks and its
    run's compactions."""
    config = _mailbox(root)
    env = {"DAYFLOW_CONFIG": str(config), "DAYFLOW_TZ": "UTC"}
    args = ["brief", "--date", DAY, "--since", "2026-11-09", "--format", "json"]
    args += [] if compact_at is None else ["--compact-at", str(compact_at)]
    got = invoke(root / "d.db", _model, *args, env=env, clock=CLOCK)
    assert got.code == 0, got.err
    listed = invoke(root / "d.db", _model, "tasks", "--json", env=env, clock=CLOCK)
    with open_store(root / "d.db") as store:
        (run,) = store.runs.list()
        compactions = len(store.steps.compactions(run.id))
    return {
        "brief": json.loads(got.out)["brief"],
        "tasks": sorted((t["idempotency_key"], t["title"]) for t in json.loads(listed.out)),
        "compactions": compactions,
    }


def _sections(brief: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", brief, flags=re.MULTILINE)
    return {head: body.strip() for head, body in zip(parts[1::2], parts[2::2], strict=True)}


def _key(mid: str, sender: str) -> str:
    return mail_key(message_stable_id(f"<{mid}>", sender=sender))


@pytest.fixture(scope="module")
def mornings(tmp_path_factory: pytest.TempPathFactory) -> dict[int | None, dict[str, Any]]:
    return {at: _brief(tmp_path_factory.mktemp(f"at{at}"), at) for at in (0, 3000, None)}


def test_the_uncompacted_morning_files_only_the_four_real_requests(
    mornings: dict[int | None, dict[str, Any]],
) -> None:
    plain = mornings[0]
    assert plain["compactions"] == 0
    assert sorted(k for k, _ in plain["tasks"]) == sorted(_key(r[0], r[1]) for r in REQUESTS)
    sections = _sections(plain["brief"])
    assert "Runaway" in sections["Today"] and "was not read in full" in sections["Today"]
    assert "Conflict:" in sections["Today"]
    assert "Marco Bianchi" in sections["You owe replies"]
    assert "Lee Park" in sections["You owe replies"]
    assert "Jordan Reyes" in sections["Waiting on others"]


@pytest.mark.parametrize("compact_at", [3000, None], ids=["3000", "default"])
def test_a_compacted_morning_files_the_same_tasks_and_writes_the_same_brief(
    mornings: dict[int | None, dict[str, Any]], compact_at: int | None
) -> None:
    plain, compacted = mornings[0], mornings[compact_at]
    # It did compact: at 3000 every few turns, at the default once (a busy calendar's week
    # with its descriptions is most of a call).
    assert compacted["compactions"] >= (2 if compact_at == 3000 else 1)
    assert compacted["tasks"] == plain["tasks"]
    assert _sections(compacted["brief"]) == _sections(plain["brief"])
