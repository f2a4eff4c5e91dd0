"""`read_followups`: the replies the user owes and the ones the user is waiting for.

A read like `read_inbox`: its result is saved with the step (at once, when a source is a
server), so a resume sends the model the same bytes and never reads the mail again for it.
The lists come from the run's `Feed` (dayflow.followups), which reads the window's mail and
the sent folders once per process.
"""

from __future__ import annotations

from typing import Any

from dayflow.drafts import voice_of
from dayflow.errors import SourceError, SourceUnavailable
from dayflow.followups import Feed, Me
from dayflow.followups.rules import own_words
from dayflow.rules import Facts, RuleSet
from dayflow.tools.mail import NO_MAIL_SOURCE
from dayflow.tools.spec import Tool, ToolEnv, ToolError

VOICE_MESSAGES = 30  # the user's newest sent messages the voice is read from

NO_ME = (
    'who the user is is not known (set `me = ["you@example.org"]` in the config file), so '
    "no reply can be told owed or awaited"
)


def read_followups(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    inbox = env.mail
    feed = inbox.followups or Feed(inbox.sources, me=Me(), brief_date=env.brief_date, tz=env.tz)
    if not (feed.inbox or feed.sent):
        gone = [{"source": "mail", "reason": NO_MAIL_SOURCE}]
        return {"you_owe": [], "waiting_on": [], "unavailable": gone}
    try:
        view = feed()
    except SourceUnavailable:
        raise
    except SourceError as exc:
        raise ToolError(f"could not read the followups: {exc}") from None
    out = view.to_json(env.tz)
    if not view.me.addresses:
        out["note"] = NO_ME
    if env.drafts is not None:  # draft_reply writes in the user's voice: its form only
        mine = [own_words(m.text) for t in view.threads for m in t.messages if m.from_me]
        voice = voice_of(mine[:VOICE_MESSAGES])
        if voice is not None:
            out["your_voice"] = voice.to_json()
    return ruled(out, env.rules, env.brief_date) if env.rules else out


def ruled(out: dict[str, Any], rules: RuleSet, day: Any) -> dict[str, Any]:
    """The lists as the user's rules leave them: a muted person or thread, or a snoozed
    thread, moved to `left_out` with the rule's words; an important person's items first
    (marked `important`), the rest in their order."""
    left: list[dict[str, Any]] = []
    for name in ("you_owe", "waiting_on"):
        kept, first = [], []
        for item in out.get(name, []):
            party = item.get("with") or {}
            keys = tuple(str(k) for k in item.get("keys") or ())
            facts = Facts(
                sender=str(party.get("address") or ""), thread=str(item.get("key")), keys=keys
            )
            rule = rules.leaves_out(facts, day)
            if rule is not None:
                gone = {k: item[k] for k in ("key", "with", "subject", "keys") if k in item}
                left.append(gone | {"list": name, "rule": rule.named()})
            elif rules.important(facts) is not None:
                first.append(item | {"important": True})
            else:
                kept.append(item)
        out[name] = first + kept
    if left:
        out["left_out"] = left
    return out


READ_FOLLOWUPS = Tool(
    "read_followups",
    "Read the replies the user owes (you_owe: the latest message of a thread is someone "
    "else's, to the user, asking something, unanswered) and the ones the user is waiting for "
    "(waiting_on: the user asked, no answer for some working days), from the last days of "
    "mail and the user's sent mail. Each item: who (`with`), subject, when the latest message "
    "came, its age in working days, the sources, and the thread's `key` (thread:<hash>): an "
    "owed reply is not a task unless the user needs one, and then create_task takes that key. "
    "`answered`, `bulk` and `yours` list the mail keys of no new request (the user wrote "
    "after them; list, bulk or automated mail; the user's own mail to others found in an inbox); "
    "`answered_replies` gives, for answered keys, the words of the user's reply, so that an ask "
    "of several the reply left open is still a task. "
    "`not_yours` lists the mail keys of messages that say they are from the user but came "
    "from outside (failed authentication, or no copy in the sent mail): not the user's own "
    "note, never ranked above real requests. 'unavailable' names folders that could not be "
    "read.",
    {"type": "object", "properties": {}, "additionalProperties": False},
    read_followups,
)
