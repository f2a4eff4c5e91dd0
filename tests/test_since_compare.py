"""What `## Since yesterday` compares (`dayflow.tools.since`), in-process through the CLI: the
bundled sample's days (made again for each brief's day) against a real calendar's move."""

from __future__ import annotations

import json
from pathlib import Path

from tests.harness import home_calendar, invoke, offline_model

HEADING = "## Since yesterday"


def _section(text: str) -> list[str]:
    if HEADING not in text:
        return []
    after = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    return [line for line in after.strip().splitlines() if line]


def _brief(tmp_path: Path, day: str, *more: str, env: dict[str, str] | None = None) -> str:
    home = {"HOME": str(tmp_path / "home")} | (env or {})
    res = invoke(None, offline_model, "brief", "--date", day, *more, env=home)
    assert res.code == 0, res.err
    return res.out


def test_the_samples_second_day_moves_nothing(tmp_path: Path) -> None:
    """A new user (empty HOME) runs the sample two days running: its standup of tomorrow is
    tomorrow's standup, not a meeting moved by a day; nor is its daily conflict new."""
    _brief(tmp_path, "2026-11-05")
    two = _brief(tmp_path, "2026-11-06")
    assert _section(two) == [
        "- Nothing of your brief of Thursday 5 November changed (replies, waits, tasks, meetings)."
    ]
    # Three days later, in another zone: the sample's 09:30 is 09:30 wherever it is read.
    doc = json.loads(_brief(tmp_path, "2026-11-09", "--format", "json",
                            env={"DAYFLOW_TZ": "Europe/Berlin"}))  # fmt: skip
    since = doc["since"]
    assert since["previous"]["brief_date"] == "2026-11-06"
    assert since["nothing"] is True
    assert not since["meetings_moved"] and not since["conflicts_new"]


def _ics(start: str, end: str) -> str:
    return (
        "BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:review@x\nDTSTAMP:20261101T000000Z\n"
        f"DTSTART;TZID=Europe/Berlin:{start}\nDTEND;TZID=Europe/Berlin:{end}\n"
        "SUMMARY:Design review\nEND:VEVENT\nEND:VCALENDAR\n"
    )


def test_a_real_meeting_moved_to_the_next_day_at_the_same_hour_is_moved(tmp_path: Path) -> None:
    """A user's own calendar is taken as is: the same UID a day later, at the same time of
    day, moved, with its old and new times."""
    env = home_calendar(tmp_path, _ics("20261119T100000", "20261119T110000"))
    _brief(tmp_path, "2026-11-18", env=env)
    home_calendar(tmp_path, _ics("20261120T100000", "20261120T110000"))
    doc = json.loads(_brief(tmp_path, "2026-11-19", "--format", "json", env=env))
    assert _section(doc["brief"]) == [
        "- Moved: Design review, Thursday 19 November 10:00–11:00 → Friday 20 November 10:00–11:00."
    ]
    [moved] = doc["since"]["meetings_moved"]
    assert (moved["was"]["start"], moved["now"]["start"]) == (
        "2026-11-19T10:00:00+01:00",
        "2026-11-20T10:00:00+01:00",
    )


def _anchored(path: Path, start: str, end: str) -> None:
    event = {"id": "e1", "title": "Budget call", "start": start, "end": end}
    path.write_text(json.dumps({"anchor_date": "2026-11-05", "events": [event]}))


def test_an_anchored_files_edited_meeting_is_moved_where_its_days_are_not(
    tmp_path: Path,
) -> None:
    """A JSON calendar with an anchor_date follows the brief's day like the sample: day 2 sees
    its meeting of "tomorrow" still tomorrow (no move); once the file says another hour, it
    moved, between the times each day's brief made of it."""
    cal = tmp_path / "cal.json"
    _anchored(cal, "2026-11-06T09:30:00+00:00", "2026-11-06T10:00:00+00:00")
    _brief(tmp_path, "2026-11-05", "--calendar", str(cal))
    two = _brief(tmp_path, "2026-11-06", "--calendar", str(cal))
    assert [x for x in _section(two) if "Budget" in x] == []
    _anchored(cal, "2026-11-06T11:00:00+00:00", "2026-11-06T11:30:00+00:00")
    three = _brief(tmp_path, "2026-11-07", "--calendar", str(cal))
    assert [x for x in _section(three) if "Budget" in x] == [
        "- Moved: Budget call, Sunday 8 November 09:30–10:00 → 11:00–11:30."
    ]
