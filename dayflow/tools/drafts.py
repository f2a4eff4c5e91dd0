"""`draft_reply`: a reply the user owes, drafted in their drafts folder (issue 36), never sent.

Offered only in a run with drafts on (an [[inbox]] entry's `drafts = ...`, and no
`brief --no-drafts`). The model gives the thread's key from read_followups' you_owe and the
reply's words; everything else is Dayflow's: the draft goes to the latest message's sender
alone (no Cc, no Bcc, never an address from the mail), quotes that message, and is written
exactly once (`dayflow.drafts.ledger`). A thread not owed in this run, or one drafted before,
is refused. Its write is its own (the marks around it), so it runs outside any transaction
and its result is saved the moment it returns, as a server read's is.
"""

from __future__ import annotations

from typing import Any

from dayflow.drafts import Refused
from dayflow.followups.rules import FollowupItem
from dayflow.rules import Facts
from dayflow.sources.mail import MailItem
from dayflow.sources.mime import title_text
from dayflow.tools.spec import Tool, ToolEnv, ToolError, string_schema

MAX_BODY_CHARS = 5000

OFF = (
    "drafts are off in this run (no [[inbox]] entry says `drafts = ...`, or the brief was "
    "run with --no-drafts); no draft was written"
)


def draft_reply(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    drafter = env.drafts
    if drafter is None:
        raise ToolError(OFF)
    thread = str(args["thread_key"]).strip()
    body = title_text(str(args["body"]), one_line=False)
    if not body:
        raise ToolError("'body' is empty once control characters are removed; no draft was written")

    def owed(key: str) -> tuple[FollowupItem, MailItem]:
        feed = env.mail.followups
        view = feed() if feed is not None else None
        item = next((i for i in view.owed if i.thread == key), None) if view else None
        if item is None:
            raise Refused(
                f"{key[:80]!r} is not the key of a reply the user owes in this run "
                "(read_followups' you_owe); no draft was written"
            )
        facts = Facts(sender=item.counterpart_address, thread=item.thread)
        rule = env.rules.leaves_out(facts, env.brief_date) if env.rules else None
        if rule is not None:
            raise Refused(
                f"{key} is left out by the user's rule {rule.named()}; no draft was written"
            )
        try:
            return item, env.mail.read(item.message_id)
        except KeyError:
            raise Refused(
                f"the latest message of {key} can no longer be read; no draft was written"
            ) from None

    try:
        draft = drafter.draft(env.call_id, thread, body, owed)
    except Refused as exc:
        raise ToolError(str(exc)) from None
    done = "made by an earlier brief, still" if draft.get("earlier") else "saved"
    return {
        "draft": draft,
        "note": f'{done} in {draft["folder"]} as a draft (never sent); say "draft in Drafts" '
        "on this reply's line under You owe",
    }


DRAFT_REPLY = Tool(
    "draft_reply",
    "Draft the user's reply to an owed thread in their drafts folder (it is never sent: the "
    "user reviews and sends it). Give the thread's `key` from read_followups' you_owe and the "
    "reply's words only, in the user's voice (read_followups' your_voice: greeting, sign-off, "
    "length, language); Dayflow addresses it to the latest message's sender alone, sets the "
    "subject and quotes that message. Leave [your answer] where only the user knows the "
    "answer; never promise anything they have not said. One draft per thread: a thread not "
    "owed in this run, or drafted before, is refused.",
    {
        "type": "object",
        "properties": {
            "thread_key": string_schema(200, "The thread's key, thread:<hash>, from you_owe."),
            "body": string_schema(MAX_BODY_CHARS, "The reply's words (no quote, no headers)."),
        },
        "required": ["thread_key", "body"],
        "additionalProperties": False,
    },
    draft_reply,
    outward=True,
)
