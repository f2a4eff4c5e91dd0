"""Meetings through the CLI (offline model): the home half of the realistic week (a Maildir with
INBOX and Sent) and its ICS calendar give prep lines under today's events and conflict lines
in `## Today`; `--format json` carries both as data; the mailboxes and calendar are unchanged.
The whole week, with its IMAP account, is tests/test_week.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dayflow.providers.offline import OfflineModel
from tests import week
from tests.harness import invoke

CLOCK = "2026-11-18T07:30:00+00:00"


def _brief(root: Path, *args: str) -> Any:
    result = invoke(root / "dayflow.db", lambda *_: OfflineModel(), "brief", "--date", week.DAY,
                    "--tz", week.TZ, "--since", "2026-11-09", *args,
                    env={"DAYFLOW_CONFIG": str(root / "config.toml")}, clock=CLOCK)  # fmt: skip
    assert result.code == 0, result.err
    return result


def test_today_lists_prep_under_each_event_and_the_days_conflicts(tmp_path: Path) -> None:
    week.build(tmp_path)
    result = _brief(tmp_path)
    today = result.out.split("## Today\n")[1].split("\n\n")[0].splitlines()
    assert today == [
        "- 09:30–09:45 Team standup (Room 2)",
        "- 10:00–11:00 Partnership review (Partner office, Friedrichstr. 10)",
        "- 10:30–11:00 Budget sync (cancelled)",
        "- 11:00–11:30 1:1 with Dana (Room 2)",
        "- 12:30–13:30 Lunch with Marco (Cafe Nero, Rosenthaler Str. 1)",
        '  - Mail: "Dinner Saturday?" (latest from Marco Bianchi, Tue 17 Nov)',
        "- 14:00–15:00 Design review (https://teams.microsoft.com/l/meetup-join/19%3ameeting_design)",
        "- 14:30–15:15 Dentist (Dr. Ruiz, Hauptstr. 5)",
        "- 15:15–15:45 Vendor call (https://zoom.us/j/5551234567)",
        "- 16:00–17:00 Offsite planning (Room 5) (declined)",
        "- 16:00–18:00 Focus time (free)",
        "- Conflict: Team standup ends at 09:45 in Room 2 and Partnership review starts at 10:00 "
        "in Partner office, Friedrichstr. 10: 15 minutes to get there.",
        "- Conflict: Partnership review ends at 11:00 in Partner office, Friedrichstr. 10 and "
        "1:1 with Dana starts at 11:00 in Room 2: no time to get there.",
        "- Conflict: Design review and Dentist overlap, 14:30–15:00.",
    ]


def test_format_json_carries_prep_and_conflicts_as_data(tmp_path: Path) -> None:
    week.build(tmp_path)
    out = json.loads(_brief(tmp_path, "--format", "json").out)
    lunch = next(e for e in out["prep"] if e["title"] == "Lunch with Marco")
    assert lunch["with"] == [{"name": "Marco Bianchi", "address": "marco@example.net"}]
    [thread] = lunch["threads"]
    assert thread["subject"] == "Dinner Saturday?" and thread["key"].startswith("thread:")
    assert thread["latest_from"] == {"name": "Marco Bianchi", "address": "marco@example.net"}
    assert [c["kind"] for c in out["conflicts"]] == ["travel", "travel", "overlap"]
    assert out["followups"]["you_owe"][0]["subject"] == "Dinner Saturday?"


def test_nothing_in_the_mailboxes_or_the_calendar_changes(tmp_path: Path) -> None:
    week.build(tmp_path)
    before = week.snapshot(tmp_path)
    _brief(tmp_path)
    assert week.snapshot(tmp_path) == before


def _today(out: str) -> list[str]:
    return out.split("## Today\n")[1].split("\n\n")[0].splitlines()


def test_a_folded_google_export_given_as_calendar_gives_prep_under_the_meeting(
    tmp_path: Path,
) -> None:
    """`brief --calendar export.ics --inbox inbox.json` (or the export on standard input):
    Google folds each ATTENDEE inside its parameters; the meeting still lists Ben (an attendee,
    not the organizer), and his thread is its prep."""
    from tests import provider_exports

    calendar = tmp_path / "google.ics"
    calendar.write_bytes(provider_exports.google())
    assert b"PARTSTAT=ACCEPTED;RSVP=TRUE\r\n ;CN=Ben Carter" in calendar.read_bytes()
    inbox = tmp_path / "inbox.json"
    inbox.write_text(json.dumps({"messages": [{
        "id": "m1", "from": f"Ben Carter <{provider_exports.BEN}>",
        "subject": "Rivera contract: open points", "received_at": "2026-11-17T16:00:00+00:00",
        "snippet": "Here are the open points before tomorrow.", "unread": True,
        "thread_id": "th-rivera",
    }]}))  # fmt: skip
    for where, stdin in ((str(calendar), None), ("-", calendar.read_bytes())):
        result = invoke(tmp_path / f"dayflow-{len(where)}.db", lambda *_: OfflineModel(),
                        "brief", "--date", week.DAY, "--tz", week.TZ, "--calendar", where,
                        "--inbox", str(inbox), clock=CLOCK, stdin=stdin)  # fmt: skip
        assert result.code == 0, result.err
        today = _today(result.out)
        meeting = next(i for i, line in enumerate(today) if "Quarterly review with Ben" in line)
        assert today[meeting].startswith("- 10:00–11:00 Quarterly review with Ben")
        assert today[meeting + 1] == (
            '  - Mail: "Rivera contract: open points" (latest from Ben Carter, Tue 17 Nov)'
        )
    kept = list((tmp_path / "inputs").glob("calendar-*")) or list(tmp_path.rglob("calendar-*"))
    assert [p.suffix for p in kept] == [".ics"]  # standard input kept as what it is


def test_the_weeks_calendar_folded_anywhere_gives_the_same_today(tmp_path: Path) -> None:
    """The same calendar folded every 20 octets (RFC 5545 allows a fold between any two
    octets: inside names, parameters and UTF-8 characters) gives the same Today section, prep
    and conflicts included."""
    from tests import provider_exports

    config = week.build(tmp_path)
    plain = _today(_brief(tmp_path).out)
    lines = (week.WEEK / "calendar.ics").read_text(encoding="utf-8").splitlines()
    assert not any(line[:1] in (" ", "\t") for line in lines)  # not folded yet
    folded = tmp_path / "folded.ics"
    folded.write_bytes(provider_exports.fold(lines, width=20))
    assert len(folded.read_bytes().splitlines()) > len(lines)
    config.write_text(config.read_text().replace(str(week.WEEK / "calendar.ics"), str(folded)))
    (tmp_path / "dayflow.db").unlink()
    assert _today(_brief(tmp_path).out) == plain
    assert any(line.startswith("  - Mail:") for line in plain)
