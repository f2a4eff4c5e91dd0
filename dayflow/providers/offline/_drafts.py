"""The offline model's drafts (issue 36): when draft_reply is offered, before the brief is
written, each owed reply's latest message is opened (read_message) and a short, honest
template drafted for it (`dayflow.drafts.template`: the sender greeted by name, the ask
quoted, `[your answer]` left for the user), in the language of the mail."""

from __future__ import annotations

from typing import Any

from dayflow.compaction import is_summary, summarised_arguments
from dayflow.drafts import first_name, language_of, template
from dayflow.drafts.words import ask_of
from dayflow.followups.rules import own_words
from dayflow.models import Block, Message
from dayflow.providers.offline._calls import with_tools
from dayflow.providers.offline._conversation import Call, named
from dayflow.tools import MAX_TOOL_CALLS_PER_TURN

DRAFT = "draft_reply"


def drafting_turn(
    messages: list[Message], calls: list[Call], offered: set[Any]
) -> tuple[list[Block], str] | None:
    """The turn that drafts the owed replies not drafted yet (opening their latest messages
    first); None when draft_reply is not offered or nothing is left to draft."""
    if DRAFT not in offered or "read_message" not in offered:
        return None
    followups = named(calls, "read_followups")
    result = followups[-1].result if followups else None
    owed = result.get("you_owe") if isinstance(result, dict) else None
    if not isinstance(owed, list):
        return None
    tried = {str(c.input.get("thread_key")) for c in named(calls, DRAFT)}
    # A compacted history keeps draft_reply's results, and the summary names every call
    # tried (a refused one too): none is tried again. The messages read are not kept, so
    # after a compaction a reply is drafted from the ask read_followups quotes: opening the
    # message again would be compacted away again, and again.
    tried |= {str(a.get("thread_key")) for m in messages for a in summarised_arguments(m, DRAFT)}
    compacted = any(is_summary(m) for m in messages)
    left = [i for i in owed if isinstance(i, dict) and str(i.get("key")) not in tried]
    read = {str(c.input.get("id")): c for c in named(calls, "read_message")}
    unread = [] if compacted else [str(i.get("id")) for i in left if str(i.get("id")) not in read]
    if unread:
        plan = [("read_message", {"id": mid}) for mid in unread[:MAX_TOOL_CALLS_PER_TURN]]
        return with_tools(messages, ["Opening the replies you owe, to draft them."], plan), (
            "tool_use"
        )
    plan = [(DRAFT, _draft_input(i, read.get(str(i.get("id"))))) for i in left]
    if not plan:
        return None
    intro = f"Drafting {len(plan)} repl{'y' if len(plan) == 1 else 'ies'} in your drafts folder."
    return with_tools(messages, [intro], plan[:MAX_TOOL_CALLS_PER_TURN]), "tool_use"


def _draft_input(item: dict[str, Any], opened: Call | None) -> dict[str, Any]:
    """The template for owed `item`, from its latest message as opened, or (None: compacted
    away) from the ask read_followups quotes."""
    party = item.get("with") if isinstance(item.get("with"), dict) else {}
    assert isinstance(party, dict)
    result = opened.result if opened is not None else None
    message = result.get("message") if isinstance(result, dict) else None
    body = str(message.get("body") or "") if isinstance(message, dict) else ""
    if opened is None:
        body = str(item.get("asked") or "")
    words = own_words(body)
    name = first_name(str(party.get("name") or ""), str(party.get("address") or ""))
    text = template(name, ask_of(words), language_of(words or str(item.get("subject", ""))))
    return {"thread_key": str(item.get("key")), "body": text}
