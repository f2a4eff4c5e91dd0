"""What a brief is asked to do: the `BriefRequest` the CLI parses its options into, and its
`Mode`. A value of its own below `flow` (which carries it out) and `inputs` (which reads the
sources it names), so neither imports the other back (tests/floors.py).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from dayflow.models import DEFAULT_COMPACT_AT, NO_LIMITS, Limits


class Mode(enum.Enum):
    """What a brief does when the day already has one (the CLI's mutually exclusive flags)."""

    AUTO = "auto"  # a done brief: write an update since it; else a full one
    SINCE_LAST = "--since-last"  # the same, said out loud (a note when there is none)
    NEW = "--new"  # a full brief even if the day has one
    ENSURE_TODAY = "--ensure-today"  # start, resume or show the day's brief
    RESUME_LATEST = "--resume-latest"  # continue the day's unfinished run, else start one


@dataclass(frozen=True)
class BriefRequest:
    """One `dayflow brief`, parsed. `given` names the options given on the command line (a
    resumed run says which of them do not apply to it)."""

    day: date | None = None  # None: today in the settings' timezone
    mode: Mode = Mode.AUTO
    sample: str = "standard"
    limits: Limits = NO_LIMITS  # None fields: a new run's defaults (`Limits.for_new_run`)
    compact_at: int = DEFAULT_COMPACT_AT
    deliver: tuple[str, ...] = ()  # --deliver sinks, as written
    config_file: Path | None = None
    strict_sources: bool = False
    drafts: bool = True  # False: --no-drafts, whatever the config's `drafts = ...` says
    crash_after: int | None = None
    timeout: float | None = None  # --timeout, for a resumed run's own provider
    given: frozenset[str] = frozenset()
    # --since: where the configured inboxes' mail starts, a day (from its start) or a span
    # before the brief's moment; None: since the last brief, else 24 hours (day.mail_since).
    since: date | timedelta | None = None
