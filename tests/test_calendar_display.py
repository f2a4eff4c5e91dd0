"""How events are shown: a cancelled event (STATUS:CANCELLED, or one cancelled instance of a
series) says so wherever it is listed, an all-day event has no fake midnight, and `sources
check`'s "next" is the next event not yet over at the (injected) clock."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

from dayflow import tools
from dayflow.sources.factory import Calendar
from dayflow.sources.ics import IcsCalendar
from dayflow.store import Store
from tests.harness import home_calendar, invoke, offline_model


def _vevent(uid: str, *lines: str) -> str:
    return "\n".join(["BEGIN:VEVENT", f"UID:{uid}", *lines, "END:VEVENT"]) + "\n"


def _berlin(uid: str, day: str, start: str, end: str, summary: str, *lines: str) -> str:
    """An event on `day` (YYYYMMDD) from `start` to `end` (HHMMSS) in Berlin's wall clock."""
    zone = "TZID=Europe/Berlin"
    when = [f"DTSTART;{zone}:{day}T{start}", f"DTEND;{zone}:{day}T{end}"]
    return _vevent(uid, *when, f"SUMMARY:{summary}", *lines)


MOVED = "RECURRENCE-ID;TZID=Europe/Berlin:20261109T140000"  # one instance of the series
# The harness clock is 2026-11-05T07:30Z: Thursday 08:30 in Berlin.
ICS = "".join(
    [
        "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n",
        _berlin("early@x", "20261105", "060000", "070000", "Early run"),
        _berlin("dropped@x", "20261105", "090000", "093000", "Dropped call", "STATUS:CANCELLED"),
        _berlin("review@x", "20261105", "100000", "110000", "Design review"),
        _vevent(
            "holiday@x",
            "DTSTART;VALUE=DATE:20261106",
            "DTEND;VALUE=DATE:20261107",
            "SUMMARY:Bridge day",
        ),
        _berlin("sync@x", "20261102", "140000", "143000", "Team sync", "RRULE:FREQ=DAILY;COUNT=10"),
        _berlin("sync@x", "20261109", "140000", "143000", "Team sync", "STATUS:CANCELLED", MOVED),
        "END:VCALENDAR\n",
    ]
)


def _config(tmp_path: Path, ics: str = ICS) -> dict[str, str]:
    return home_calendar(tmp_path, ics)


def _brief(tmp_path: Path) -> str:
    result = invoke(tmp_path / "d.db", offline_model, "brief", env=_config(tmp_path))
    assert result.code == 0, result.err
    return result.out


def test_this_week_marks_cancelled_events_and_gives_all_day_ones_no_time(tmp_path: Path) -> None:
    week = _brief(tmp_path).split("## This week")[1].split("##")[0]
    assert "- Fri 6 Nov: all day: Bridge day, 14:00 Team sync\n" in week
    assert "- Mon 9 Nov: 14:00 Team sync (cancelled)\n" in week  # one cancelled instance
    assert "00:00" not in week


def test_the_one_thing_is_neither_a_cancelled_nor_an_all_day_event(tmp_path: Path) -> None:
    closed = "BEGIN:VEVENT\nUID:closed@x\nDTSTART;VALUE=DATE:20261105\nSUMMARY:Office closed\n"
    ics = ICS.replace("BEGIN:VEVENT\nUID:early@x", closed + "END:VEVENT\nBEGIN:VEVENT\nUID:e@x")
    result = invoke(tmp_path / "d.db", offline_model, "brief", env=_config(tmp_path, ics))
    assert result.code == 0, result.err
    today = result.out.split("## Today")[1].split("##")[0]
    assert "- All day Office closed\n" in today
    assert "- 09:00–09:30 Dropped call (cancelled)\n" in today
    one = result.out.split("## One thing")[1]
    assert "Office closed" not in one and "Dropped call" not in one and "00:00" not in one


def test_the_tool_result_marks_a_cancelled_instance_and_an_all_day_event(
    tmp_path: Path, store: Store
) -> None:
    _config(tmp_path)
    source = IcsCalendar("home", path=tmp_path / "cal.ics", tz=ZoneInfo("Europe/Berlin"))
    env = tools.ToolEnv(
        tasks=store.tasks,
        run_id="r",
        inbox=None,  # type: ignore[arg-type]
        calendar=Calendar([("home", source)]),
        brief_date=__import__("datetime").date(2026, 11, 5),
        tz=ZoneInfo("Europe/Berlin"),
        task_cap=20,
    )
    events = tools.TOOLS["read_calendar"].handler({"range": "week"}, env)["events"]
    bridge = next(e for e in events if e["title"] == "Bridge day")
    assert (bridge["start"], bridge["end"], bridge["all_day"]) == ("2026-11-06", "2026-11-07", True)
    syncs = [e for e in events if e["title"] == "Team sync"]
    assert [e.get("status") for e in syncs] == [None] * 4 + ["cancelled"] + [None] * 2


def test_sources_check_names_the_next_event_not_yet_over(tmp_path: Path) -> None:
    """At 08:30 the 06:00 run is over and the 09:00 call cancelled: next is the 10:00 review."""
    check = invoke(None, offline_model, "sources", "check", env=_config(tmp_path))
    assert check.code == 0, check.err
    assert "next 2026-11-05 10:00 Design review" in check.out
    later = invoke(
        None,
        offline_model,
        "sources",
        "check",
        env=_config(tmp_path),
        clock="2026-11-05T10:30:00+00:00",  # 11:30 in Berlin: the review is over too
    )
    assert "next 2026-11-05 14:00 Team sync" in later.out


def test_sources_check_shows_an_all_day_event_as_a_day(tmp_path: Path) -> None:
    start = ICS.index("BEGIN:VEVENT\nUID:holiday")
    only = ICS[: ICS.index("BEGIN:VEVENT")] + ICS[start : ICS.index("END:VEVENT", start)]
    only += "END:VEVENT\nEND:VCALENDAR\n"
    check = invoke(None, offline_model, "sources", "check", env=_config(tmp_path, only))
    assert "next 2026-11-06 (all day) Bridge day" in check.out
