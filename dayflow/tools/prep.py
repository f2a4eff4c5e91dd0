"""`read_prep`: what to know before each of today's meetings.

A read like `read_calendar` and `read_followups`, of both: today's events (exactly as
`read_calendar` with range today gives them) and the run's `Feed` of the window's mail
(`dayflow.followups`, read once per process), joined by `meetings.prep`. Its result is saved
with the step (at once, when a source is a server), so a resume sends the model the same bytes
and reads neither again for it. A calendar that cannot be read fails the call as read_calendar
does; mail that cannot be read leaves the events with no threads and says so.
"""

from __future__ import annotations

from typing import Any

from dayflow import meetings
from dayflow.errors import SourceError, SourceUnavailable
from dayflow.followups import Followups
from dayflow.tools.calendar import read_calendar
from dayflow.tools.followups import NO_ME
from dayflow.tools.mail import NO_MAIL_SOURCE
from dayflow.tools.spec import Tool, ToolEnv


def read_prep(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    today = read_calendar({"range": "today"}, env)
    unavailable = list(today.get("unavailable", []))
    view = _followups(env, unavailable)
    if view is None:
        return {"events": [], "unavailable": unavailable}
    tasks = env.tasks.list(include_done=False)
    items, more = meetings.prep(today["events"], view, tasks, env.tz)
    out: dict[str, Any] = {"events": items}
    if more:
        out["more"] = more
    unavailable += [{"source": n, "reason": why} for n, why in view.failures]
    if unavailable:
        out["unavailable"] = unavailable
    if not view.me.addresses:
        out["note"] = NO_ME
    return out


def _followups(env: ToolEnv, unavailable: list[dict[str, str]]) -> Followups | None:
    """The run's followups, or None (the reason added to `unavailable`) when there is no mail
    to read or it could not be read."""
    feed = env.mail.followups
    if feed is None or not (feed.inbox or feed.sent):
        unavailable.append({"source": "mail", "reason": NO_MAIL_SOURCE})
        return None
    try:
        return feed()
    except SourceUnavailable:
        raise
    except SourceError as exc:
        unavailable.append({"source": "mail", "reason": f"could not read the mail: {exc}"})
        return None


def reads_network(env: ToolEnv) -> bool:
    """Whether read_prep reads a server in this run (a calendar's or the mail's)."""
    feed = env.mail.followups
    return env.calendars.remote or (feed is not None and feed.remote)


READ_PREP = Tool(
    "read_prep",
    "Read what to know before each of today's meetings: for each event today with someone "
    "other than the user on it (not cancelled, not declined), who (`with`), the mail threads "
    "of the last days with any of them, newest first (subject, when the latest message came, "
    "who wrote it, the thread's `key`), and the open tasks filed from that mail. Write them "
    "under the event in the brief's Today section. 'unavailable' names what could not be read.",
    {"type": "object", "properties": {}, "additionalProperties": False},
    read_prep,
)
