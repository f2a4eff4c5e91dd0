"""The offline model's reading flow: planning which messages to open, then opening them a few
threads per turn (several read_message calls in one turn), noting what each settles and filing
what it asks (see `_model` for the whole plan and the `Noted:` entries it keeps)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dayflow.models import DEFAULT_MAX_STEPS, Block, Message
from dayflow.providers.offline._brief import action_order, write_brief
from dayflow.providers.offline._calls import (
    NOTED,
    and_list,
    compact_json,
    covered_keys,
    entry_task,
    hit_cap,
    request_entry,
    rereads,
    task_input,
    with_tools,
)
from dayflow.providers.offline._conversation import (
    Call,
    Memory,
    latest_list,
    named,
    tool_calls,
)
from dayflow.providers.offline._followups import NoTasks, no_tasks
from dayflow.providers.offline._reading import (
    Action,
    body_actions,
    reader_of,
    thread_key,
    triage_all,
)
from dayflow.tools import MAX_TOOL_CALLS_PER_TURN

FULL_LISTING = 50  # read_inbox's largest page
READS_PER_TURN = 3  # a thread's messages opened together, at most this many
OPENS_PER_TURN = 8  # messages opened in one turn (whole threads): a long morning stays short
# A long morning's opening is paced to end by this turn, leaving the default --max-steps room
# to file the tasks and write the brief.
READ_BY_TURN = DEFAULT_MAX_STEPS - 10
MAX_OPENS = MAX_TOOL_CALLS_PER_TURN - 1  # with a page of the inbox, a turn's whole allowance
NOTES_PER_TURN = 30  # request notes a page's turn writes: with them, it stays under max_tokens
NEXT_PAGE = 25  # the pages after the first: small, since each is noted whole in one turn
FILES_PER_TURN = 12  # create_task calls in a reading turn: its text stays well under max_tokens
_PLAN_CHARS = 400  # a plan entry's JSON stays well under a summariser's line limit


def reading_turn(
    messages: list[Message],
    calls: list[Call],
    memory: Memory,
    offered: set,
    can_act: bool,
    limit: int | None = None,
    opens: int = OPENS_PER_TURN,
    step: int | None = None,
) -> tuple[list[Block], str] | None:
    """The next turn when messages are opened a few threads at a time (`opens` messages at
    most, whole threads; more on a long morning, by `step`, the run's step this turn is);
    None for the plain flow."""
    if memory.plan is None:
        return _planning_turn(messages, calls, memory, offered, opens) if can_act else None
    if not can_act:
        text = write_brief(messages, calls, memory, limit=limit)
        return [{"type": "text", "text": text}], "end_turn"
    done = set(memory.done)
    filed = {c.key for c in memory.creates} | memory.have
    capped = hit_cap(memory)
    skip = no_tasks(calls)
    found, quiet = _opened(calls, memory, done, skip)
    notes = [NOTED + "request " + compact_json(request_entry(a)) for a in found]
    if quiet:
        notes.append(NOTED + "no request " + compact_json(quiet))
    # Titles come from the mail, so they stay inside the JSON of the notes, never in the prose.
    said = (
        [f"Found a request in {and_list(sorted({str(a.message.get('id')) for a in found}))}."]
        if found
        else []
    )
    said += [f"Nothing asked of you in {and_list(quiet)}."] if quiet else []
    plan = list(memory.plan)
    page, more, again = _new_page(messages)
    if page is not None:  # a further page of the inbox: what it settles, what to open
        seen = done | {i for g in plan for i in g}
        # A page read with a cursor cannot be read again (the inbox lists each message once
        # in a walk through the pages), so all of it is noted; such pages are kept small.
        room = None if again.get("cursor") else NOTES_PER_TURN
        settled, groups, complete = _triage(page, memory.reader, seen, room, skip)
        found += settled
        notes += [NOTED + "request " + compact_json(request_entry(a)) for a in settled]
        notes += [NOTED + "plan " + compact_json(chunk) for chunk in _chunks(groups) if chunk]
        plan += groups
        said.append(f"Read {len(page)} more messages of the inbox.")
        if not complete:  # more to note than a turn holds: the same page again, for the rest
            more = None
    group = _next_reads(plan, done, _paced(opens, plan, done, step, messages))
    reads: list[tuple[str, dict[str, Any]]] = []
    if page is not None and not complete and "read_inbox" in offered:
        reads.append(("read_inbox", again))
        said.append("Reading that page again for the rest of its requests.")
    elif more is not None and "read_inbox" in offered:
        reads.append(("read_inbox", {"limit": NEXT_PAGE, "cursor": more}))
        said.append("Reading the next page of the inbox.")
    if group and "read_message" in offered:
        reads += [("read_message", {"id": i}) for i in group]
        said.append(f"Opening {and_list(group)}.")
    elif more is None and not (page is not None and not complete):
        again_uses, why = rereads(calls, offered)
        if again_uses:
            reads += again_uses
            said.append(why)
    uses: list[tuple[str, dict[str, Any]]] = []
    # A page's turn only notes (its notes fill the answer), unless it is the last thing to do.
    if not capped and "create_task" in offered and (page is None or not reads):
        room = min(MAX_TOOL_CALLS_PER_TURN - len(reads), FILES_PER_TURN)
        uses = _filings(found, memory, filed, room, messages)
    uses += reads
    if not uses:
        requests = memory.requests + [request_entry(a) for a in found]
        final = replace(memory, requests=requests, done=done)
        text = write_brief(messages, calls, final, limit=limit)
        return [{"type": "text", "text": text}], "end_turn"
    return with_tools(messages, [" ".join(said) or "Filing what the inbox asks.", *notes], uses), (
        "tool_use"
    )


def _opened(
    calls: list[Call], memory: Memory, done: set[str], skip: NoTasks
) -> tuple[list[Action], list[str]]:
    """The requests in the messages opened since the last turn (what `skip` says is no task
    left out), and the ids of those that ask nothing; each id is added to `done`."""
    found: list[Action] = []
    quiet: list[str] = []
    for call in named(calls, "read_message"):
        mid = str(call.input.get("id"))
        if mid in done:
            continue
        done.add(mid)
        message = call.result.get("message") if isinstance(call.result, dict) else None
        actions = body_actions(message, memory.reader) if isinstance(message, dict) else []
        actions = skip.keep(actions)
        if not actions:
            quiet.append(mid)
        found += actions
    return found, quiet


def _filings(
    found: list[Action], memory: Memory, filed: set[str], room: int, messages: list[Message]
) -> list[tuple[str, dict[str, Any]]]:
    """The create_task calls for what this turn found and what was noted earlier and not filed
    yet (a page's turn only notes), `room` at most; their keys are added to `filed`."""
    uses: list[tuple[str, dict[str, Any]]] = []
    for action in found:
        if action.key not in filed and len(uses) < room:
            filed.add(action.key)
            uses.append(("create_task", task_input(action, messages)))
    for entry in memory.requests:
        key = entry.get("key")
        if isinstance(key, str) and key not in filed and len(uses) < room:
            filed.add(key)
            uses.append(("create_task", entry_task(entry)))
    return uses


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
    inbox: list[dict[str, Any]],
    reader: str | None,
    seen: set[str],
    room: int | None,
    skip: NoTasks,
) -> tuple[list[Action], list[list[str]], bool]:
    """What a page of the inbox settles (in order), the threads to open (1-3 ids each), and
    whether the whole page was read: it stops before the requests pass `room`. What `skip`
    says is no task is left out, and bulk or answered mail is never opened."""
    settled: list[Action] = []
    groups: list[list[str]] = []
    thread_of: dict[str, int] = {}
    for message in inbox:
        mid = str(message.get("id"))
        if mid in seen:
            continue
        actions, wanted = triage_all(message, reader)
        if str(message.get("key")) in skip.replies:  # answered: its asks are read whole
            actions, wanted = [], True
        actions, wanted = skip.keep(actions), wanted and skip.opens(message)
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


def _planning_turn(
    messages: list[Message], calls: list[Call], memory: Memory, offered: set, opens: int
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
        return with_tools(messages, ["Reading the inbox and tasks again."], relist), "tool_use"
    if isinstance(limit, int) and len(inbox) >= limit and limit < FULL_LISTING:
        # A full first page means there is more.
        return with_tools(messages, ["Reading more of the inbox."], relist), "tool_use"
    reader = reader_of(inbox)
    settled, groups, complete = _triage(inbox, reader, set(), NOTES_PER_TURN, no_tasks(calls))
    result = listed[-1].result if listed else None
    cursor = result.get("next_cursor") if isinstance(result, dict) else None
    more = cursor if isinstance(cursor, str) and "read_inbox" in offered else None
    have = sorted(covered_keys(calls))
    tried = {c.key for c in memory.creates}
    pending = [] if hit_cap(memory) else [a for a in settled if a.key not in {*have, *tried}]
    if not complete:  # more to note than a turn holds: this listing again, for the rest
        more = None
    if not groups and more is None and complete:
        return _settled_turn(messages, calls, memory, offered, settled, have, pending)
    count = sum(map(len, groups))
    first = _next_reads(groups, set(), opens)
    opening = f" Opening {and_list(first)}." if groups else ""
    texts = [
        f"{count} messages may need you and their snippets do not settle it; I will open them "
        f"a few threads at a time.{opening}"
    ]
    texts += ["The inbox has more pages; I will read them as I go."] if more else []
    texts += [NOTED + "have " + compact_json(have)] if have else []
    texts += [NOTED + "reader " + compact_json(reader)] if reader else []
    texts += [NOTED + "request " + compact_json(request_entry(a)) for a in settled]
    texts += [NOTED + "plan " + compact_json(chunk) for chunk in _chunks(groups)] if groups else []
    texts += [NOTED + "plan []"] if not groups else []
    reads = [("read_inbox", {"limit": NEXT_PAGE, "cursor": more})] if more else []
    reads = reads if complete else [("read_inbox", dict(listed[-1].input))]
    reads += [("read_message", {"id": i}) for i in first]
    # The rest as reading goes (a long page's notes alone fill a turn, so it files nothing).
    pending = [] if more or not complete else pending[: MAX_TOOL_CALLS_PER_TURN - len(reads)]
    uses = [("create_task", task_input(a, messages)) for a in pending]
    uses = uses if "create_task" in offered else []
    return with_tools(messages, texts, uses + reads), "tool_use"


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
    uses = [("create_task", task_input(a, messages)) for a in pending]
    uses = uses if "create_task" in offered else []
    uses += rereads(calls, offered)[0]
    if not uses:
        return None
    texts = ["Nothing more to open; filing what the inbox settles."]
    texts += [NOTED + "have " + compact_json(have)] if have else []
    texts += [NOTED + "request " + compact_json(request_entry(a)) for a in settled]
    texts += [NOTED + "plan []"]
    return with_tools(messages, texts, uses), "tool_use"


def _paced(
    opens: int, plan: list[list[str]], done: set[str], step: int | None, messages: list[Message]
) -> int:
    """How many messages to open this turn: `opens`, or more when so many wait that at that
    pace the reading would outlast the run's default steps (a morning after a week away: the
    brief must still be written), spreading what waits over the turns left before
    READ_BY_TURN. A model told to open fewer than OPENS_PER_TURN keeps its pace."""
    if opens < OPENS_PER_TURN:
        return opens
    waiting = sum(1 for group in plan for i in group if i not in done)
    # The run's step (compaction folds earlier turns away, so they cannot be counted).
    turns = step if step is not None else sum(1 for m in messages if m.get("role") == "assistant")
    left = max(1, READ_BY_TURN - turns)
    return max(opens, min(MAX_OPENS, -(-waiting // left)))


def _next_reads(plan: list[list[str]], done: set[str], opens: int) -> list[str]:
    """The messages to open next: the plan's first threads not yet done, whole, up to `opens`
    messages (always the first such thread, however long)."""
    out: list[str] = []
    for group in plan:
        todo = [i for i in group if i not in done and i not in out]
        if not todo:
            continue
        if out and len(out) + len(todo) > opens:
            break
        out += todo
    return out


def _chunks(groups: list[list[str]]) -> list[list[list[str]]]:
    chunks: list[list[list[str]]] = [[]]
    for group in groups:
        if chunks[-1] and len(compact_json([*chunks[-1], group])) > _PLAN_CHARS:
            chunks.append([])
        chunks[-1].append(group)
    return chunks
