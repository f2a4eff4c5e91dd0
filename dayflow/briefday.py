"""Today's brief: which run is it, and what a second `dayflow brief` on the same day does.

A day has at most one brief that counts ("today's"): the newest run whose brief date is that
day. `brief --ensure-today` finishes or prints it; a plain `brief` on a day whose brief is
done writes an update covering what arrived since (the default, `--since-last`) or a full new
brief (`--new`).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Protocol

from dayflow.clock import iso
from dayflow.models import Run

# A run for a day is created on that day or the day before in some timezone: look back far
# enough for any timezone without reading the whole history.
_LOOKBACK = timedelta(days=3)


class _Runs(Protocol):
    def list_runs(
        self, *, status: str | None = None, since: str | None = None, limit: int | None = 20
    ) -> list[Run]: ...


def latest_for(store: _Runs, day: date, now: datetime) -> Run | None:
    """The newest run (any status) whose brief date is `day`, created in the last few days."""
    for run in store.list_runs(since=iso(now - _LOOKBACK), limit=None):
        if run.brief_date == day.isoformat() and not run.pruned_at:
            return run
    return None
