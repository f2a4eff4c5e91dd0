"""Briefs for a whole team: profiles (one person each), the jobs that say "drive this person's
brief for this day now", and the workers that take them from a PostgreSQL queue.

Only `queue.py` imports the queue library (pgqueuer), and only `dayflow worker` and `dayflow
fleet` import it: `runs`, `tasks` and `--help` never do (tests/test_startup.py). Dayflow's own
run lease and day lock stay the authority on who drives a run; a queue job is only a nudge.
"""

from __future__ import annotations

from dayflow.fleet.profiles import BriefJob, check_name, due_at, due_jobs, profile_env
from dayflow.store.values import Profile

__all__ = ["BriefJob", "Profile", "check_name", "due_at", "due_jobs", "profile_env"]
