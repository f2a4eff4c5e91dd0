"""What a profile says and when its brief is due: names, schedule times, weekdays, and the
jobs due at a moment (each profile's local schedule time in its own timezone, DST included).

Pure values and arithmetic: no database, no queue. `runs --profile` imports this module, so it
stays cheap (zoneinfo is imported where a timezone is computed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING

from dayflow.errors import UsageError
from dayflow.frozen import Frozen

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from dayflow.store.values import Profile

NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
AT = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")
EVERY_DAY, WEEKDAYS = "1234567", "12345"


class BriefJob(Frozen):
    """What a queue job says: drive `profile`'s brief for `day` now."""

    profile: str
    day: date

    @property
    def key(self) -> str:
        """The queue's de-duplication key: one job per (profile, day) at a time."""
        return f"{self.profile}:{self.day.isoformat()}"

    def payload(self) -> bytes:
        return self.key.encode()

    @classmethod
    def from_payload(cls, payload: bytes | None) -> BriefJob:
        """The job a payload names; UsageError for one no Dayflow wrote."""
        text = (payload or b"").decode("utf-8", "replace")
        name, _, day = text.rpartition(":")
        try:
            return cls(check_name(name), date.fromisoformat(day))
        except (ValueError, UsageError):
            raise UsageError(f"not a brief job: {text[:80]!r}") from None


def check_name(name: str) -> str:
    """`name` if it can name a profile (lowercase letters, digits, `-`, `_`; 40 at most)."""
    if not NAME.fullmatch(name):
        shown = name if len(name) <= 40 else name[:40] + "..."
        raise UsageError(
            f"{shown!r} cannot name a profile: use lowercase letters, digits, '-' and '_' "
            "(40 at most, starting with a letter or digit)"
        )
    return name


def refuse_profile(given: str | None, command: str, why: str) -> None:
    """UsageError when --profile was given to a command for which it means nothing (it is
    hidden there: `cli.with_profile` adds it to every other command)."""
    if given is not None:
        raise UsageError(f"--profile does not apply to `dayflow {command}`: {why}")


def check_at(at: str) -> str:
    """`at` if it is a local time HH:MM (24-hour)."""
    if not AT.fullmatch(at):
        raise UsageError(f"--at must be a time HH:MM (24-hour), not {at[:20]!r}")
    return at


def check_tz(tz: str) -> str:
    """`tz` if it is an IANA timezone this machine knows."""
    _zone(tz)
    return tz


def profile_env(env: Mapping[str, str], profile: Profile) -> dict[str, str]:
    """The environment a profile's commands and briefs run in: the process's, with the
    profile's config file and timezone."""
    return {**env, "DAYFLOW_CONFIG": profile.config, "DAYFLOW_TZ": profile.tz}


def due_at(profile: Profile, day: date) -> datetime:
    """When `profile`'s brief for `day` is due, as an aware time in its zone. A schedule time
    a spring-forward gap skips is the same wall time just after the gap (03:30 for a skipped
    02:30); a time a fall-back repeats is its first occurrence."""
    hour, minute = (int(x) for x in profile.at.split(":"))
    zone = _zone(profile.tz)
    wall = datetime.combine(day, time(hour, minute), tzinfo=zone)
    from datetime import UTC

    # Through UTC and back: a wall time in a gap comes back as the time it names after it.
    return wall.astimezone(UTC).astimezone(zone)


def local_today(profile: Profile, now: datetime) -> date:
    """The day it is at `now` in `profile`'s zone: the day its brief of today is for."""
    return now.astimezone(_zone(profile.tz)).date()


def due_jobs(profiles: Iterable[Profile], now: datetime) -> list[BriefJob]:
    """The briefs due by `now`: each profile's local today (in its zone), when today is one of
    its weekdays and its schedule time has passed. Whether one already ran is the caller's
    (the store's) to say."""
    jobs = []
    for profile in profiles:
        today = local_today(profile, now)
        if str(today.isoweekday()) in profile.weekdays and now >= due_at(profile, today):
            jobs.append(BriefJob(profile.name, today))
    return jobs


def next_due(profiles: Iterable[Profile], now: datetime) -> datetime | None:
    """The first schedule time after `now` of any profile (within the coming eight days)."""
    found: list[datetime] = []
    for profile in profiles:
        today = local_today(profile, now)
        for ahead in range(9):
            day = today + timedelta(days=ahead)
            moment = due_at(profile, day)
            if str(day.isoweekday()) in profile.weekdays and moment > now:
                found.append(moment)
                break
    return min(found, default=None)


def _zone(tz: str) -> ZoneInfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"unknown timezone {tz[:60]!r} (an IANA name: Europe/Paris)") from None
