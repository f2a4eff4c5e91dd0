"""Why a message got no task, as `dayflow why` says it: one list, for the core and `--help`.

`dayflow.why` gives each answer as one of these reasons and its details, and the line it prints
starts with the reason's words; `dayflow why --help` lists the same words from here, so the help
cannot name a reason the core no longer gives, nor leave out a new one. It imports nothing, so
the CLI can build its help without importing the core.
"""

from __future__ import annotations

from enum import StrEnum


class NoTask(StrEnum):
    """A reason a message got no task, in the order `dayflow.why` tries them; its value is
    the words its line starts with."""

    REFUSED = "create_task was refused"
    NOT_READ = "no task was filed for it"
    RULE = "your rule"
    INJECTION = "it tried to instruct an assistant"
    AUTOMATED = "list mail or automated"
    YOURS = "your own mail to others"
    ANSWERED = "answered"
    OWED = "an owed reply"
    SCAM = "spam or a scam"
    QUOTED = "quoted only"
    NO_ASK = "no ask found"


def said(reason: NoTask, details: str) -> str:
    """The reason as its line says it: its words, then `details` (which start with the
    punctuation that joins them, ": ..." or " (...)")."""
    return f"{reason.value}{details}"
