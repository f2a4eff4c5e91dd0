"""The brief's room: what happens on a day (`flow`: the request, the outcome, new vs update vs
ensure-today vs resume) and the day's primitives (`day`: its lock, which run is its brief, the
mail window). The CLI builds a `BriefRequest` and a `Room`, calls `brief` or `resume`, and
renders the `Outcome`.

Only `brief`, `resume` and the commands that look at the day (`schedule status`, `sources
check`) import it: `--help`, `runs` and `tasks` never do (tests/test_startup.py).
"""

from __future__ import annotations

from dayflow.briefing.flow import BriefRequest, Mode, Outcome, Room, brief, outcome_of, resume

__all__ = ["BriefRequest", "Mode", "Outcome", "Room", "brief", "outcome_of", "resume"]
