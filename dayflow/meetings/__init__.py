"""Meetings: what clashes in a day (`conflicts`) and what to know before each one (`prep`).

Pure over what the tools read: `conflicts` takes read_calendar's items, `prep` adds the mail
threads and tasks of the people an event is with. The tools expose both to the model.
"""

from __future__ import annotations

from dayflow.meetings._conflicts import BACK_TO_BACK, MAX_CONFLICTS, conflicts, place
from dayflow.meetings._prep import prep

__all__ = ["BACK_TO_BACK", "MAX_CONFLICTS", "conflicts", "place", "prep"]
