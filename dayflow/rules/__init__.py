"""The user's corrections, kept as rules they can read and edit: `rules.toml` beside each
profile's config file, what each rule forbids or prefers, and the commands that make them.

The face: `Rule` and `RuleSet` (what is in force, asked of each message and thread through
its `Facts`), `read_rules` / `rules_path` (the file, each malformed entry one line), and the
corrections (`reject`, `mute`, `important`, `snooze`) with the `Where` they write to, and
`replay` (the saved mornings read again with today's rules). A run
keeps the rules it started with in its settings (`RuleSet.to_json`), so a resume obeys the
same ones whatever the file says by then.
"""

from __future__ import annotations

import os
import signal

from dayflow.rules._corrections import (
    KINDS_SHOWN,
    MOST_SNOOZE_DAYS,
    Where,
    important,
    mute,
    parse_until,
    reject,
    snooze,
    task_facts,
    thread_shown,
)
from dayflow.rules._file import (
    FILE_NAME,
    KILL_POINTS,
    MAX_RULES_BYTES,
    Kill,
    Reading,
    dumps,
    read_rules,
    rules_path,
)
from dayflow.rules._replay import Change, Morning, replay
from dayflow.rules._values import (
    IMPORTANT,
    KINDS,
    MUTE,
    REJECT,
    SNOOZE,
    Facts,
    Rule,
    RuleSet,
    asks,
    matches,
    own_names,
    parse_match,
)

__all__ = [
    "FILE_NAME",
    "IMPORTANT",
    "KILL_POINTS",
    "KINDS",
    "KINDS_SHOWN",
    "MAX_RULES_BYTES",
    "MOST_SNOOZE_DAYS",
    "MUTE",
    "Morning",
    "REJECT",
    "SNOOZE",
    "Change",
    "Facts",
    "Kill",
    "Reading",
    "Rule",
    "RuleSet",
    "Where",
    "asks",
    "dumps",
    "important",
    "kill_hook",
    "matches",
    "mute",
    "own_names",
    "parse_match",
    "parse_until",
    "read_rules",
    "reject",
    "replay",
    "rules_path",
    "snooze",
    "task_facts",
    "thread_shown",
]


def kill_hook(kill_at: tuple[str, int] | None) -> Kill | None:
    """The crash tests' hook (DAYFLOW_KILL_AT=POINT:1): SIGKILL this process at that point
    of a rules write; None when none is asked for."""
    if kill_at is None or kill_at[0] not in KILL_POINTS:
        return None

    def kill(point: str) -> None:
        if point == kill_at[0]:
            os.kill(os.getpid(), signal.SIGKILL)

    return kill
