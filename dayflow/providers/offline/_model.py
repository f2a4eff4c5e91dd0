"""The built-in offline model: a deterministic stand-in for Claude when no API key is set.

It reads the conversation the way a model would and answers with the same wire shapes. It is a
pure function of the request, with no state between calls, because the loop may crash and resume
in a new process: the same history must get the same answer, tool-use ids included. It never
raises; whatever it is sent, it answers with something a person can read.

The plan is fixed: gather (inbox, calendar today and week, open tasks), then file a task for each
message that asks something of the reader and is not yet covered, then write the brief. When the
snippets settle everything (the bundled standard inbox) that is three turns.

When `read_message` is offered and snippets are not enough (see `_reading.triage_all`), it
works through the inbox instead: re-list it with `limit` 50 if the first page came back full,
write a reading plan, open the planned messages a few threads (whole, `OPENS_PER_TURN` messages
at most) per turn, file a task for each request as it is found (batched with the next read),
re-read the calendar if its results are no longer in view, then write the brief. On the large
sample that is 8 turns (30+ with `OfflineModel(opens_per_turn=1)`, one thread a turn).
A listing with a `next_cursor` is followed page by page (`NEXT_PAGE` messages each), each page
read in the turn right after it arrives (so compaction never hides one before it is read): what
it settles is noted, what it needs opened joins the plan, and that turn files nothing unless
nothing else is left (a page's notes fill a turn); later turns file what was noted, at most
`FILES_PER_TURN` a turn. The first listing, when it holds more than `NOTES_PER_TURN` requests,
is noted in parts and read again for the rest (a page read with a cursor cannot be: the inbox
lists each message once per walk through the pages). A brief longer than `max_tokens` is
written again listing only the most pressing 40, 15 or 5 lines, the rest counted. A message
may ask several things: each is a request of its own, its task keyed `<key>#2`, `<key>#3`...

Such a run outlives its early tool results: the loop may compact old exchanges into one user
turn labelled `Earlier in this run (compacted):`, dropping their payloads. So every decision
is taken from what survives compaction, never from an old payload: the model writes what it
learns into its own text, one text block per entry, each starting `Noted: ` and a kind, then
compact JSON:

    Noted: have ["email:m12"]                  task keys already on the list when planning
    Noted: plan [["m156","m121"],["m169"]]     the messages to open, one inner list per turn
    Noted: request {"id":"m151","title":"Sign renewal agreement in tenant portal",
                    "due":"2026-11-09","from":"Rosa Lindqvist"}   (on one line)
    Noted: no request ["m150"]                 opened, nothing asked (or it could not be read)
    Noted: reader "Alex"                       the name the inbox greets: whose own mail is whose

(A request entry also carries its task `key`, and `urgent` and `deadline` when it has them, so
that it can be filed in a later turn from the note alone.)
(A long plan is split over several `plan` entries, read in order.) The model finds these entries
in its visible assistant text blocks and in the compacted summary: anywhere in a summary line
that is not a tool-call line, so `- step 4, assistant: Opening m151. Noted: ...` works. From the
summary's tool-call lines it also reads its `create_task` calls, for the "Tasks created" section
(both through `compaction.summary_lines` and `summarised_creates`: the writer of the lines
reads them back, so no module here parses the summary's wording):

    - step 7: create_task({"title": "...", "idempotency_key": "email:m151", ...}) -> ok, task
      t_ab12 created: "Sign renewal agreement in tenant portal"     (or `already existed`,
      or `-> error: <message>`, or `-> no result`; `; key "..."` after the title when the
      call named its item by source_id alone)   (on one line)

and the results it keeps (`compaction.summarised_calls`): the calendar's events, conflicts and
cut-short series, the followups' lists (what is never a task) and the meetings' prep.

A message id counts as done once a `request` or `no request` entry names it; opened messages
whose results vanished before they were looked at are opened again. So the tasks created, their
order and the brief are the same with or without compaction; the only difference is a turn or
two that read again what was compacted away before it was needed (the calendar before the brief;
the inbox listing and task list, together, if they went before the plan was written). Text taken
from mail (titles, names) appears only inside the JSON of an entry, which the parser consumes
whole, so a message cannot forge an entry.

What it sends is fitted to the tool schemas it is offered (a subject of any length becomes a
title and notes within their limits), it never makes again a create_task call that failed (the
same call would fail the same way; the compacted summary remembers the failure too), it files
every request up to the run's task cap and no more once the cap is reached (the brief says how
many were left), at most 25 calls a turn, and a turn longer than the request's `max_tokens` is
cut there with stop_reason `max_tokens`, as the API would.

This module decides each turn (the gathering turn, the plain flow); `_plan` is the reading flow,
`_calls` makes the tool calls (their ids, a request's create_task arguments), `_conversation`
reads the conversation (tool calls, results and entries), `_brief` writes the brief (with
`_followups` for the owed and awaited replies) and `_reading` holds the mail heuristics.
"""

from __future__ import annotations

import json
from typing import Any

from dayflow.compaction import is_summary
from dayflow.mcp import with_offline_note
from dayflow.models import Block, ModelRequest, ModelResponse, Usage, estimate_tokens
from dayflow.providers import OFFLINE_MODEL
from dayflow.providers.offline._brief import write_brief
from dayflow.providers.offline._calls import pending_actions, rereads, task_input, with_tools
from dayflow.providers.offline._conversation import (
    blocks_of,
    remember,
    tool_calls,
)
from dayflow.providers.offline._drafts import drafting_turn
from dayflow.providers.offline._plan import FULL_LISTING, OPENS_PER_TURN, reading_turn
from dayflow.providers.offline._since import move_calls, since_again
from dayflow.tools import MAX_TOOL_CALLS_PER_TURN

GATHER: tuple[tuple[str, dict[str, Any]], ...] = (
    # The largest page at once: a first page of 20 that came back full was listed again at
    # 50, so a 24-message morning listed its inbox twice.
    ("read_inbox", {"limit": FULL_LISTING}),
    ("read_calendar", {"range": "today"}),
    ("read_calendar", {"range": "week"}),
    ("read_tasks", {"include_done": False}),
    ("read_followups", {}),
    ("read_prep", {}),
    ("read_since", {}),
)


class OfflineModel:
    """A `ModelClient` that needs no network and answers deterministically. `opens_per_turn`
    is how many messages a reading turn opens at most (whole threads); 1 reads one thread a
    turn, the long run the compaction tests want."""

    # It never calls an MCP tool (it cannot know what one means): a run starts no MCP server
    # for it (`providers.LeavesMcpAlone`).
    leaves_mcp_alone = True

    def __init__(self, opens_per_turn: int = OPENS_PER_TURN) -> None:
        self.opens_per_turn = max(1, opens_per_turn)

    def create(self, request: ModelRequest) -> ModelResponse:
        """Answer one turn of the daily-brief conversation; never raises."""
        try:
            content, stop_reason = _reply(request, opens=self.opens_per_turn)
            for limit in (40, 15, 5):  # a brief too long for max_tokens lists the first N
                if stop_reason != "end_turn" or estimate_tokens(content) <= request.max_tokens:
                    break
                content, stop_reason = _reply(request, limit, self.opens_per_turn)
            if stop_reason == "end_turn":  # it never calls an MCP tool: it says so, once
                content = with_offline_note(content, request.tools, request.system)
            content = [_fitted(block, request.tools) for block in content]
        except Exception as exc:  # the contract is "always answer", so say what broke instead
            problem = f"offline model error: {type(exc).__name__}"
            text = f"I could not put the brief together ({problem})."
            content, stop_reason = [{"type": "text", "text": text}], "end_turn"
        if estimate_tokens(content) > request.max_tokens:
            content, stop_reason = _cut(content, request.max_tokens), "max_tokens"
        out = estimate_tokens(content)
        usage = Usage(input_tokens=self.count_tokens(request), output_tokens=out)
        return ModelResponse(
            content, stop_reason, usage, model=OFFLINE_MODEL, request_id=None, estimated=True
        )

    def count_tokens(self, request: ModelRequest) -> int:
        """Estimated input tokens of `request` (system, tools and messages)."""
        return estimate_tokens(
            {"system": request.system, "tools": request.tools, "messages": request.messages}
        )


def _fitted(block: Block, tools: list[dict[str, Any]]) -> Block:
    """A tool_use block whose string arguments fit the lengths the tool's schema allows: text
    from mail can be any length, and a call the tool refuses would only be refused again."""
    if block.get("type") != "tool_use" or not isinstance(block.get("input"), dict):
        return block
    schema: Any = next(
        (t.get("input_schema") for t in tools if t.get("name") == block.get("name")), {}
    )
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    args = dict(block["input"])
    for name, value in args.items():
        limit = props.get(name, {}).get("maxLength") if isinstance(props.get(name), dict) else None
        if isinstance(value, str) and isinstance(limit, int) and len(value) > limit:
            args[name] = value[: limit - 1] + "…" if name in ("title", "notes") else value[:limit]
    return {**block, "input": args}


def _cut(content: list[Block], max_tokens: int) -> list[Block]:
    """What fits in `max_tokens` (as the API would cut a turn): whole blocks while they fit,
    then the start of a text block; a tool call is never sent half-made."""
    kept: list[Block] = []
    for block in content:
        if estimate_tokens([*kept, block]) <= max_tokens:
            kept.append(block)
            continue
        if block.get("type") == "text":
            room = max_tokens * 4 - len(json.dumps(kept, separators=(",", ":"))) - 40
            if room > 0:
                kept.append({"type": "text", "text": str(block.get("text", ""))[:room]})
        break
    return kept


def _reply(
    request: ModelRequest, limit: int | None = None, opens: int = OPENS_PER_TURN
) -> tuple[list[Block], str]:
    content, stop_reason = _answer(request, limit, opens)
    if stop_reason == "end_turn":  # drafts first (when offered), then the brief
        messages = [m for m in request.messages if isinstance(m, dict)]
        offered = {t.get("name") for t in request.tools if isinstance(t, dict)}
        turn = drafting_turn(messages, tool_calls(messages), offered)
        if turn is not None:
            return turn
    return content, stop_reason


def _answer(
    request: ModelRequest, limit: int | None = None, opens: int = OPENS_PER_TURN
) -> tuple[list[Block], str]:
    messages = [m for m in request.messages if isinstance(m, dict)]
    calls = tool_calls(messages)
    memory = remember(messages, calls)
    offered = {t.get("name") for t in request.tools if isinstance(t, dict)}
    last = messages[-1] if messages else {}
    last_is_results = last.get("role") == "user" and bool(blocks_of(last, "tool_result"))
    fresh = last.get("role") == "user" and all(m.get("role") != "assistant" for m in messages)
    if fresh and not memory.compacted:
        plan = [(name, args) for name, args in GATHER if name in offered]
        if plan:
            intro = "Let me look at your inbox, calendar and tasks."
            return with_tools(messages, [intro], plan), "tool_use"
    moves = move_calls(calls, offered) if last_is_results else []
    if moves:  # a later message moved a task's deadline (read_since): move it first
        return with_tools(messages, ["A deadline moved; updating its task."], moves), "tool_use"
    if "read_message" in offered or memory.plan is not None:
        can_act = last.get("role") == "user" and (last_is_results or is_summary(last))
        reading = reading_turn(
            messages, calls, memory, offered, can_act, limit, opens, step=request.step
        )
        if reading is not None:
            return reading
    if last_is_results and "create_task" in offered:
        pending = pending_actions(calls, memory)[:MAX_TOOL_CALLS_PER_TURN]  # the rest next turn
        if pending:
            n = len(pending)
            needs = "1 message needs" if n == 1 else f"{n} messages need"
            intro = f"{needs} something from you; adding them as tasks."
            plan = [("create_task", task_input(a, messages)) for a in pending]
            return with_tools(messages, [intro], plan), "tool_use"
    again = since_again(calls, offered) if last_is_results else []
    if again:  # a task filed this run whose deadline a later message may have moved
        return with_tools(messages, ["Checking whether a deadline moved since."], again), "tool_use"
    uses, why = rereads(calls, offered)
    if memory.compacted and uses and last_is_results:
        # The calendar or the followups were compacted away (a long inbox): read them again.
        return with_tools(messages, [why], uses), "tool_use"
    return [{"type": "text", "text": write_brief(messages, calls, limit=limit)}], "end_turn"
