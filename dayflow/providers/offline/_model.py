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
write a reading plan, open the planned messages one thread (1-3 messages) per turn, file a task
for each request as it is found (batched with the next read), re-read the calendar if its
results are no longer in view, then write the brief. On the large sample that is 30+ turns.
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
summary's tool-call lines it also reads its `create_task` calls, for the "Tasks created" section:

    - step 7: create_task({"title": "...", "idempotency_key": "email:m151", ...}) -> ok, task
      t_ab12 created: "Sign renewal agreement in tenant portal"     (or `already existed`,
      or `-> error: <message>`, or `-> no result`)   (on one line)

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

This module decides each turn; `_conversation` reads the conversation (tool calls, results and
entries), `write_brief` writes the brief and `_reading` holds the mail heuristics.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

from dayflow.compaction import is_summary
from dayflow.models import Block, Message, ModelRequest, ModelResponse, Usage
from dayflow.providers import OFFLINE_MODEL
from dayflow.providers.offline._brief import action_order, snippet_actions, write_brief
from dayflow.providers.offline._conversation import (
    Call,
    Memory,
    blocks_of,
    latest_list,
    named,
    prompt_facts,
    remember,
    tool_calls,
)
from dayflow.providers.offline._reading import (
    Action,
    body_actions,
    is_urgent,
    reader_of,
    thread_key,
    triage_all,
    who,
)
from dayflow.tools import MAX_TOOL_CALLS_PER_TURN, due_window, refused_by_cap

FULL_LISTING = 50  # read_inbox's largest page
GATHER: tuple[tuple[str, dict[str, Any]], ...] = (
    # The largest page at once: a first page of 20 that came back full was listed again at
    # 50, so a 24-message morning listed its inbox twice.
    ("read_inbox", {"limit": FULL_LISTING}),
    ("read_calendar", {"range": "today"}),
    ("read_calendar", {"range": "week"}),
    ("read_tasks", {"include_done": False}),
)
READS_PER_TURN = 3  # one thread at a time, at most this many of its messages
NOTES_PER_TURN = 30  # request notes a page's turn writes: with them, it stays under max_tokens
NEXT_PAGE = 25  # the pages after the first: small, since each is noted whole in one turn
FILES_PER_TURN = 12  # create_task calls in a reading turn: its text stays well under max_tokens
NOTED = "Noted: "
_PLAN_CHARS = 400  # a plan entry's JSON stays well under a summariser's line limit


def estimate_tokens(obj: object) -> int:
    """About one token per four characters of `obj` as compact JSON."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=str)
    return (len(text) + 3) // 4


class OfflineModel:
    """A `ModelClient` that needs no network and answers deterministically."""

    def create(self, request: ModelRequest) -> ModelResponse:
        """Answer one turn of the daily-brief conversation; never raises."""
        try:
            content, stop_reason = _reply(request)
            for limit in (40, 15, 5):  # a brief too long for max_tokens lists the first N
                if stop_reason != "end_turn" or estimate_tokens(content) <= request.max_tokens:
                    break
                content, stop_reason = _reply(request, limit)
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


def _reply(request: ModelRequest, limit: int | None = None) -> tuple[list[Block], str]:
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
            return _with_tools(messages, [intro], plan), "tool_use"
    if "read_message" in offered or memory.plan is not None:
        can_act = last.get("role") == "user" and (last_is_results or is_summary(last))
        reading = _reading_turn(messages, calls, memory, offered, can_act, limit)
        if reading is not None:
            return reading
    if last_is_results and "create_task" in offered:
        pending = _pending(calls, memory)[:MAX_TOOL_CALLS_PER_TURN]  # the rest next turn
        if pending:
            n = len(pending)
            needs = "1 message needs" if n == 1 else f"{n} messages need"
            intro = f"{needs} something from you; adding them as tasks."
            plan = [("create_task", _task_input(a, messages)) for a in pending]
            return _with_tools(messages, [intro], plan), "tool_use"
    missing = [r for r in ("today", "week") if not named(calls, "read_calendar", range=r)]
    if memory.compacted and missing and last_is_results and "read_calendar" in offered:
        # The calendar was compacted away (a long inbox): read it again for the brief.
        uses = [("read_calendar", {"range": r}) for r in missing]
        return _with_tools(
            messages, ["Reading the calendar again for the brief."], uses
        ), "tool_use"
    return [{"type": "text", "text": write_brief(messages, calls, limit=limit)}], "end_turn"


def _with_tools(
    messages: list[Message], texts: list[str], plan: list[tuple[str, dict]]
) -> list[Block]:
    history = json.dumps(messages, sort_keys=True, separators=(",", ":"), default=str)
    blocks: list[Block] = [{"type": "text", "text": text} for text in texts]
    for name, args in plan:
        digest = hashlib.sha256(f"{history}#{len(blocks)}".encode()).hexdigest()
        # A fresh input dict: a caller mutating the response must not reach GATHER.
        blocks.append({"type": "tool_use", "id": "toolu_off_" + digest[:20], "name": name,
                       "input": dict(args)})  # fmt: skip
    return blocks


# --- the reading flow ----------------------------------------------------------------------------


def _reading_turn(
    messages: list[Message],
    calls: list[Call],
    memory: Memory,
    offered: set,
    can_act: bool,
    limit: int | None = None,
) -> tuple[list[Block], str] | None:
    """The next turn when messages are opened one thread at a time; None for the plain flow."""
    if memory.plan is None:
        return _planning_turn(messages, calls, memory, offered) if can_act else None
    if not can_act:
        text = write_brief(messages, calls, memory, limit=limit)
        return [{"type": "text", "text": text}], "end_turn"
    done = set(memory.done)
    filed = {c.key for c in memory.creates} | memory.have
    capped = _capped(memory)
    notes: list[str] = []
    found: list[Action] = []
    quiet: list[str] = []
    for call in named(calls, "read_message"):
        mid = str(call.input.get("id"))
        if mid in done:
            continue
        done.add(mid)
        message = call.result.get("message") if isinstance(call.result, dict) else None
        actions = body_actions(message, memory.reader) if isinstance(message, dict) else []
        if not actions:
            quiet.append(mid)
        found += actions
    notes += [NOTED + "request " + _dumps(_request_entry(a)) for a in found]
    if quiet:
        notes.append(NOTED + "no request " + _dumps(quiet))
    # Titles come from the mail, so they stay inside the JSON of the notes, never in the prose.
    said = (
        [f"Found a request in {_and(sorted({str(a.message.get('id')) for a in found}))}."]
        if found
        else []
    )
    said += [f"Nothing asked of you in {_and(quiet)}."] if quiet else []
    plan = list(memory.plan)
    page, more, again = _new_page(messages)
    if page is not None:  # a further page of the inbox: what it settles, what to open
        seen = done | {i for g in plan for i in g}
        # A page read with a cursor cannot be read again (the inbox lists each message once
        # in a walk through the pages), so all of it is noted; such pages are kept small.
        room = None if again.get("cursor") else NOTES_PER_TURN
        settled, groups, complete = _triage(page, memory.reader, seen, room)
        found += settled
        notes += [NOTED + "request " + _dumps(_request_entry(a)) for a in settled]
        notes += [NOTED + "plan " + _dumps(chunk) for chunk in _chunks(groups) if chunk]
        plan += groups
        said.append(f"Read {len(page)} more messages of the inbox.")
        if not complete:  # more to note than a turn holds: the same page again, for the rest
            more = None
    group = next(([i for i in g if i not in done] for g in plan if set(g) - done), [])
    reads: list[tuple[str, dict[str, Any]]] = []
    if page is not None and not complete and "read_inbox" in offered:
        reads.append(("read_inbox", again))
        said.append("Reading that page again for the rest of its requests.")
    elif more is not None and "read_inbox" in offered:
        reads.append(("read_inbox", {"limit": NEXT_PAGE, "cursor": more}))
        said.append("Reading the next page of the inbox.")
    if group and "read_message" in offered:
        reads += [("read_message", {"id": i}) for i in group]
        said.append(f"Opening {_and(group)}.")
    elif more is None and not (page is not None and not complete):
        missing = [r for r in ("today", "week") if not named(calls, "read_calendar", range=r)]
        if missing and "read_calendar" in offered:
            reads += [("read_calendar", {"range": r}) for r in missing]
            said.append("Reading the calendar again for the brief.")
    uses: list[tuple[str, dict[str, Any]]] = []
    # A page's turn only notes (its notes fill the answer), unless it is the last thing to do.
    if not capped and "create_task" in offered and (page is None or not reads):
        room = min(MAX_TOOL_CALLS_PER_TURN - len(reads), FILES_PER_TURN)
        for action in found:
            if action.key not in filed and len(uses) < room:
                filed.add(action.key)
                uses.append(("create_task", _task_input(action, messages)))
        for entry in memory.requests:  # noted earlier, not filed yet (a page's turn only notes)
            key = entry.get("key")
            if isinstance(key, str) and key not in filed and len(uses) < room:
                filed.add(key)
                uses.append(("create_task", _entry_task(entry)))
    uses += reads
    if not uses:
        requests = memory.requests + [_request_entry(a) for a in found]
        final = replace(memory, requests=requests, done=done)
        text = write_brief(messages, calls, final, limit=limit)
        return [{"type": "text", "text": text}], "end_turn"
    return _with_tools(messages, [" ".join(said) or "Filing what the inbox asks.", *notes], uses), (
        "tool_use"
    )


def _new_page(
    messages: list[Message],
) -> tuple[list[dict[str, Any]] | None, str | None, dict[str, Any]]:
    """The inbox page the last turn read (its messages), where the next one starts, and the
    arguments that read it; (None, None, {}) when the last turn read none."""
    last_turn = [m for m in messages[-2:] if isinstance(m, dict)]
    for call in named(tool_calls(last_turn), "read_inbox"):
        if not isinstance(call.result, dict):
            continue
        items = call.result.get("messages")
        cursor = call.result.get("next_cursor")
        page = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        return page, (cursor if isinstance(cursor, str) else None), dict(call.input)
    return None, None, {}


def _triage(
    inbox: list[dict[str, Any]], reader: str | None, seen: set[str], room: int | None
) -> tuple[list[Action], list[list[str]], bool]:
    """What a page of the inbox settles (in order), the threads to open (1-3 ids each), and
    whether the whole page was read: it stops before the requests pass `room`."""
    settled: list[Action] = []
    groups: list[list[str]] = []
    thread_of: dict[str, int] = {}
    for message in inbox:
        mid = str(message.get("id"))
        if mid in seen:
            continue
        actions, wanted = triage_all(message, reader)
        if room is not None and settled and len(settled) + len(actions) > room:
            settled.sort(key=action_order)
            return settled, groups, False
        settled += actions
        if not wanted:
            continue
        key = thread_key(str(message.get("subject", "")))
        index = thread_of.get(key)
        if index is not None and len(groups[index]) < READS_PER_TURN:
            groups[index].append(mid)
        else:
            thread_of[key] = len(groups)
            groups.append([mid])
    settled.sort(key=action_order)
    return settled, groups, True


def _entry_task(entry: dict[str, Any]) -> dict[str, Any]:
    """The create_task call for a noted request (what a note keeps is enough to file it)."""
    args: dict[str, Any] = {"title": str(entry.get("title")), "idempotency_key": str(entry["key"])}
    if entry.get("due"):
        args["due"] = str(entry["due"])
    notes = f"{entry.get('from', 'someone')} asked"
    notes += f' in "{entry["subject"]}"' if entry.get("subject") else ""
    notes += f" ({entry['deadline']})." if entry.get("deadline") else "."
    return args | {"source_id": str(entry.get("id")), "notes": notes}


def _planning_turn(
    messages: list[Message], calls: list[Call], memory: Memory, offered: set
) -> tuple[list[Block], str] | None:
    listed = named(calls, "read_inbox")
    inbox, error = latest_list(calls, "read_inbox", "messages")
    limit = listed[-1].input.get("limit") if listed else None
    if error or not (listed or memory.compacted):
        return None
    relist = [("read_inbox", {"limit": FULL_LISTING})]
    tasks_seen = bool(named(calls, "read_tasks")) or "read_tasks" not in offered
    if memory.compacted and not (listed and tasks_seen):
        # The listing or the task list was compacted away before the plan was written: read
        # both again, in one turn, so that the plan sees them together.
        if "read_tasks" in offered:
            relist.append(("read_tasks", {"include_done": False}))
        return _with_tools(messages, ["Reading the inbox and tasks again."], relist), "tool_use"
    if isinstance(limit, int) and len(inbox) >= limit and limit < FULL_LISTING:
        # A full first page means there is more.
        return _with_tools(messages, ["Reading more of the inbox."], relist), "tool_use"
    reader = reader_of(inbox)
    settled, groups, complete = _triage(inbox, reader, set(), NOTES_PER_TURN)
    result = listed[-1].result if listed else None
    cursor = result.get("next_cursor") if isinstance(result, dict) else None
    more = cursor if isinstance(cursor, str) and "read_inbox" in offered else None
    have = sorted(_covered(calls))
    tried = {c.key for c in memory.creates}
    pending = [] if _capped(memory) else [a for a in settled if a.key not in {*have, *tried}]
    if not complete:  # more to note than a turn holds: this listing again, for the rest
        more = None
    if not groups and more is None and complete:
        return _settled_turn(messages, calls, memory, offered, settled, have, pending)
    count = sum(map(len, groups))
    opening = f" Opening {_and(groups[0])}." if groups else ""
    texts = [
        f"{count} messages may need you and their snippets do not settle it; I will open them "
        f"one thread at a time.{opening}"
    ]
    texts += ["The inbox has more pages; I will read them as I go."] if more else []
    texts += [NOTED + "have " + _dumps(have)] if have else []
    texts += [NOTED + "reader " + _dumps(reader)] if reader else []
    texts += [NOTED + "request " + _dumps(_request_entry(a)) for a in settled]
    texts += [NOTED + "plan " + _dumps(chunk) for chunk in _chunks(groups)] if groups else []
    texts += [NOTED + "plan []"] if not groups else []
    reads = [("read_inbox", {"limit": NEXT_PAGE, "cursor": more})] if more else []
    reads = reads if complete else [("read_inbox", dict(listed[-1].input))]
    reads += [("read_message", {"id": i}) for i in (groups[0] if groups else [])]
    # The rest as reading goes (a long page's notes alone fill a turn, so it files nothing).
    pending = [] if more or not complete else pending[: MAX_TOOL_CALLS_PER_TURN - len(reads)]
    uses = [("create_task", _task_input(a, messages)) for a in pending]
    uses = uses if "create_task" in offered else []
    return _with_tools(messages, texts, uses + reads), "tool_use"


def _settled_turn(
    messages: list[Message],
    calls: list[Call],
    memory: Memory,
    offered: set,
    settled: list[Action],
    have: list[str],
    pending: list[Action],
) -> tuple[list[Block], str] | None:
    """Nothing to open. Without compaction the plain flow goes on (None). After one, what the
    listing settled is noted (with an empty plan) so that later turns never need the listing
    again: a long inbox compacted away each turn would otherwise be re-read forever."""
    if not memory.compacted:
        return None
    pending = pending[: MAX_TOOL_CALLS_PER_TURN - 2]  # the rest in the plain flow's turns
    uses = [("create_task", _task_input(a, messages)) for a in pending]
    uses = uses if "create_task" in offered else []
    missing = [r for r in ("today", "week") if not named(calls, "read_calendar", range=r)]
    if "read_calendar" in offered:
        uses += [("read_calendar", {"range": r}) for r in missing]
    if not uses:
        return None
    texts = ["Nothing more to open; filing what the inbox settles."]
    texts += [NOTED + "have " + _dumps(have)] if have else []
    texts += [NOTED + "request " + _dumps(_request_entry(a)) for a in settled]
    texts += [NOTED + "plan []"]
    return _with_tools(messages, texts, uses), "tool_use"


def _chunks(groups: list[list[str]]) -> list[list[list[str]]]:
    chunks: list[list[list[str]]] = [[]]
    for group in groups:
        if chunks[-1] and len(_dumps([*chunks[-1], group])) > _PLAN_CHARS:
            chunks.append([])
        chunks[-1].append(group)
    return chunks


def _request_entry(action: Action) -> dict[str, Any]:
    due = action.due.isoformat() if action.due else None
    sender = who(action.message)[:80]
    entry: dict[str, Any] = {"id": str(action.message.get("id")), "title": action.title}
    entry |= {"due": due, "from": sender}
    entry["key"] = action.key
    if is_urgent(action.message):
        entry["urgent"] = True
    if action.deadline:
        entry["deadline"] = action.deadline[:60]
    return entry


def _and(ids: list[str]) -> str:
    return ", ".join(ids[:-1]) + " and " + ids[-1] if len(ids) > 1 else "".join(ids)


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- deciding what needs action ----------------------------------------------------------------


def _covered(calls: list[Call]) -> set[str]:
    """The task keys already on the list: each task's key, and the key of the message a task
    names as its source (found in the inbox listing)."""
    tasks, _ = latest_list(calls, "read_tasks", "tasks")
    inbox, _ = latest_list(calls, "read_inbox", "messages")
    key_of = {str(m.get("id")): str(m.get("key") or f"email:{m.get('id')}") for m in inbox}
    covered = {str(t.get("idempotency_key")) for t in tasks if t.get("idempotency_key")}
    for t in tasks:
        if t.get("source_id"):
            covered.add(key_of.get(str(t["source_id"]), f"email:{t['source_id']}"))
    return covered


def _pending(calls: list[Call], memory: Memory) -> list[Action]:
    """The requests still to file: not on the list, never tried (a call that failed is not
    made again: what it would send is the same), none at all once the task cap was hit."""
    if _capped(memory):
        return []
    inbox, _ = latest_list(calls, "read_inbox", "messages")
    skip = _covered(calls) | {c.key for c in memory.creates}
    return [a for a in snippet_actions(inbox) if a.key not in skip]


def _capped(memory: Memory) -> bool:
    """Whether a create_task of this run hit the run's task cap."""
    return any(refused_by_cap(c.error) for c in memory.creates)


def _task_input(action: Action, messages: list[Message]) -> dict[str, Any]:
    """The create_task arguments for `action`. A due date outside the brief's horizon (a date
    misread from an old message) is left out: create_task would refuse the call."""
    message = action.message
    notes = f'{who(message)} asked in "{message.get("subject", "")}"'
    notes += f" ({action.deadline})." if action.deadline else "."
    args: dict[str, Any] = {"title": action.title, "idempotency_key": action.key}
    today, _ = prompt_facts(messages)
    lo, hi = due_window(today) if today else (action.due, action.due)
    if action.due and lo is not None and hi is not None and lo <= action.due <= hi:
        args["due"] = action.due.isoformat()
    return args | {"source_id": str(message.get("id")), "notes": notes}
