"""Followups: who is waiting on the user, and what the user is waiting on (issue 22).

The user's own sent mail and addresses (`me`) joined with the inbox into threads; the two
lists are decided from each thread's latest message (`rules`). `read_followups` reads the
window's mail from the sources; `build_followups` is the same from records (tests, tools).
"""

from __future__ import annotations

from dayflow.followups.feed import Feed
from dayflow.followups.reader import read_followups
from dayflow.followups.rules import FollowupItem, asks, working_days
from dayflow.followups.threads import Record, Thread, ThreadMessage, normalise_subject
from dayflow.followups.view import (
    FOLLOWUP_DAYS,
    WAITING_AFTER_DAYS,
    Followups,
    Window,
    build_followups,
)
from dayflow.sources.me import Me, default_me, is_address, parse_me

__all__ = [
    "FOLLOWUP_DAYS",
    "WAITING_AFTER_DAYS",
    "Feed",
    "FollowupItem",
    "Followups",
    "Me",
    "Record",
    "Thread",
    "ThreadMessage",
    "Window",
    "asks",
    "build_followups",
    "default_me",
    "is_address",
    "normalise_subject",
    "parse_me",
    "read_followups",
    "working_days",
]
