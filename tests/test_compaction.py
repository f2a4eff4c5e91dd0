from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from dayflow.agent import BriefOptions, Hooks, Loop, rebuild_messages, resume_run, start_run
from dayflow.compaction import LABEL, summarise_exchange, summary_message
from dayflow.errors import SimulatedCrash
from dayflow.models import DEFAULT_COMPACT_AT, Limits, Message, RunSettings, estimate_tokens
from dayflow.providers.offline import OfflineModel
from dayflow.store import Store, open_store
from tests.scripted import ScriptedModel, text, tool_use, turn

JOB: Message = {"role": "user", "content": "Prepare my daily brief for Thursday 2026-11-05."}


def _exchange(i: int, payload: str = "x" * 400, error: bool = False) -> list[Message]:
    use = {"type": "tool_use", "id": f"toolu_{i}", "name": "read_message", "input": {"id": f"m{i}"}}
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": f"toolu_{i}"}
    if error:
        result |= {"content": "Error: no message with id", "is_error": True}
    else:
        result["content"] = json.dumps({"message": {"id": f"m{i}", "body": payload}})
    return [
        {"role": "assistant", "content": [{"type": "text", "text": f"Reading m{i}."}, use]},
        {"role": "user", "content": [result]},
    ]


def _history(n: int, **kw: Any) -> list[Message]:
    out = [JOB]
    for i in range(1, n + 1):
        out += _exchange(i, **kw)
    return out


def _exchanges(messages: list[Message]) -> list[tuple[int, list[Any], list[Any]]]:
    """The (step, assistant content, tool results) of [job, a1, u1, ...], as the loop reads
    them from its step rows."""
    out = []
    for i, a in enumerate(messages[1::2], start=1):
        u = messages[2 * i] if 2 * i < len(messages) else None
        out.append((i, a["content"], (u or {}).get("content") or []))
    return out


def test_summary_keeps_shape_and_drops_payloads() -> None:
    history = _history(3, payload="SECRET BODY " * 50)
    history += _exchange(4, error=True) + _exchange(5)
    summary = summary_message(_exchanges(history))
    assert summary["role"] == "user"
    text_ = summary["content"][0]["text"]
    assert text_.startswith(LABEL)
    assert 'read_message({"id": "m1"}) -> ok, message m1 read' in text_
    assert "- step 4: read_message" in text_ and "error: Error: no message with id" in text_
    assert "SECRET BODY" not in text_
    assert "- step 1, assistant: Reading m1." in text_
    assert estimate_tokens([summary]) < estimate_tokens(history) / 3


def test_created_task_ids_and_titles_survive() -> None:
    use = tool_use("create_task", {"title": "Pay rent", "idempotency_key": "email:m9"}, "tu9")
    result = {
        "type": "tool_result",
        "tool_use_id": "tu9",
        "content": json.dumps({"task": {"id": "t_abc", "title": "Pay rent"}, "created": True}),
    }
    line = summarise_exchange(7, [use], [result])
    assert line == (
        '- step 7: create_task({"title": "Pay rent", "idempotency_key": "email:m9"})'
        ' -> ok, task t_abc created: "Pay rent"'
    )


def test_extending_a_summary_keeps_one_label_and_every_step_number() -> None:
    once = summary_message(_exchanges(_history(5)))
    twice = summary_message(_exchanges(_history(7))[5:6], once)
    body = twice["content"][0]["text"]
    assert body.count(LABEL) == 1
    assert [ln.split(":")[0] for ln in body.splitlines() if ": read_message" in ln] == [
        f"- step {i}" for i in range(1, 7)
    ]


def _valid_for_api(messages: list[Message]) -> bool:
    """The job's user turn first, and every tool_use answered by exactly its tool_results, in
    order, in the next turn. (Two user turns in a row, the job and a summary, and a paused
    assistant turn sent back are what the API accepts: it joins turns of one role.)"""
    if not messages or messages[0]["role"] != "user":
        return False
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        ids = [b["id"] for b in m["content"] if b.get("type") == "tool_use"]
        if not ids:
            continue
        if i + 1 >= len(messages):
            return False
        if messages[i + 1]["role"] != "user":
            return False
        answer = messages[i + 1]["content"]
        got = [b.get("tool_use_id") for b in answer if b.get("type") == "tool_result"]
        if got != ids:
            return False
    return True


_TOOLS = ["read_inbox", "read_message", "read_tasks", "create_task", "no_such_tool"]


@st.composite
def scripts(draw: st.DrawFn) -> list[Any]:
    """A model's turns: up to 12 steps of 0-3 tool calls each (known tools, a made-up one,
    arguments that fail), with text of any size, then a final answer."""
    turns = []
    for i in range(draw(st.integers(1, 12))):
        uses = [
            tool_use(
                draw(st.sampled_from(_TOOLS)),
                draw(st.sampled_from([{}, {"id": "nope"}, {"limit": 50}, {"title": "x"}])),
                f"tu_{i}_{j}",
            )
            for j in range(draw(st.integers(0, 3)))
        ]
        words = text(draw(st.text(max_size=40)) or ".")
        turns.append(turn(words, *uses) if uses else turn(words, stop="pause_turn"))
    turns.append(turn(text("## Today\nDone.")))
    return turns


@settings(max_examples=60, deadline=None)
@given(scripts(), st.integers(1, 6_000))
def test_every_request_of_a_compacting_loop_is_valid_for_the_api(
    script: list[Any], compact_at: int
) -> None:
    """The real loop, compacting at any threshold: every request it sends has the job first,
    alternating roles and each tool_use answered; once compacted, the summary is the second
    turn and the last exchange before the request is there verbatim."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "p.db")
        try:
            model = ScriptedModel(script)
            options = BriefOptions(
                brief_date=date(2026, 11, 5),
                limits=Limits(max_steps=30),
                settings=RunSettings(compact_at=compact_at),
            )
            result = start_run(Loop(store, model), options)
            steps = store.steps.of(result.run.id)
            compacted = bool(store.steps.compactions(result.run.id))
        finally:
            store.close()
    for n, request in enumerate(model.requests):
        messages = request.messages
        assert messages[0] == result.run.user_msg
        assert _valid_for_api(messages), messages
        if len(messages) > 1 and messages[1]["role"] == "user":
            assert messages[1]["content"][0]["text"].startswith(LABEL)
        if n:  # the step just before this request, verbatim
            last = steps[n - 1]
            tail = [{"role": "assistant", "content": last.assistant}]
            if last.tool_results is not None:
                tail.append({"role": "user", "content": last.tool_results})
            assert messages[-len(tail) :] == tail
    event("compacted" if compacted else "not compacted")
    assert compacted or all(not str(m).count(LABEL) for r in model.requests for m in r.messages)


# -------------------------------------------------------------------------- in the loop


def _reader_turns(n: int) -> list[Any]:
    """A model that reads a big message per step, creates a task at step 3, errs at step 4."""
    turns = []
    for i in range(1, n + 1):
        blocks = [text(f"Step {i}."), tool_use("read_inbox", {"limit": 50}, f"tu_{i}a")]
        if i == 3:
            args = {"title": "Pay rent", "idempotency_key": "model:rent"}
            blocks.append(tool_use("create_task", args, f"tu_{i}b"))
        if i == 4:
            blocks.append(tool_use("read_message", {"id": "nope"}, f"tu_{i}b"))
        turns.append(turn(*blocks))
    turns.append(turn(text("## Today\nDone.")))
    return turns


OPTS = BriefOptions(
    brief_date=date(2026, 11, 5), limits=Limits(max_steps=30), settings=RunSettings(compact_at=3000)
)


def test_the_loop_compacts_and_the_model_still_sees_job_tasks_and_errors(store: Store) -> None:
    model = ScriptedModel(_reader_turns(8))
    result = start_run(Loop(store, model), OPTS)
    assert result.run.status == "done"
    compactions = store.steps.compactions(result.run.id)
    assert compactions, "compaction never fired"
    last = model.requests[-1].messages
    assert last[0] == result.run.user_msg
    summary = last[1]["content"][0]["text"]
    assert summary.startswith(LABEL)
    task = store.tasks.list()[0]
    assert f"task {task.id} created" in summary and "Pay rent" in summary
    assert "no message with id 'nope'" in summary
    # Later requests are far smaller than an uncompacted one.
    assert estimate_tokens(last) < compactions[0]["tokens_before"]
    # The step rows are untouched: every step keeps its full payloads.
    assert len(store.steps.of(result.run.id)) == 9
    assert all(s.tool_results for s in store.steps.of(result.run.id)[:8])


def test_each_request_equals_the_rebuild_a_resume_would_send(store: Store, tmp_path: Any) -> None:
    live = ScriptedModel(_reader_turns(8))
    start_run(Loop(store, live), OPTS)
    for k in range(1, 9):
        other = open_store(tmp_path / f"k{k}.db")
        with pytest.raises(SimulatedCrash):
            start_run(
                Loop(other, ScriptedModel(_reader_turns(8)), hooks=Hooks(crash_after=k)), OPTS
            )
        run = other.runs.list()[0]
        fresh = ScriptedModel(_reader_turns(8)[k:])
        resume_run(Loop(other, fresh), run)
        assert [r.messages for r in fresh.requests] == [r.messages for r in live.requests[k:]]
        other.close()


def test_compaction_off_sends_everything(store: Store) -> None:
    model = ScriptedModel(_reader_turns(8))
    opts = BriefOptions(
        brief_date=date(2026, 11, 5),
        limits=Limits(max_steps=30),
        settings=RunSettings(compact_at=0),
    )
    result = start_run(Loop(store, model), opts)
    assert store.steps.compactions(result.run.id) == []
    assert rebuild_messages(store, result.run)[:-1] == model.requests[-1].messages
    assert len(model.requests[-1].messages) == 1 + 2 * 8


def test_listings_keep_ids_with_keys_subjects_and_event_times() -> None:
    lease = {"id": "m1", "key": "mail:3fa2", "subject": "Sign the lease"}
    inbox = {"messages": [lease, {"id": "m2", "key": "mail:77", "subject": "Sale", "bulk": True}]}
    events = {"events": [{"id": "e1", "title": "Standup", "start": "2026-11-05T09:30:00+00:00"}]}
    results = [
        {"type": "tool_result", "tool_use_id": "a", "content": json.dumps(inbox)},
        {"type": "tool_result", "tool_use_id": "b", "content": json.dumps(events)},
    ]
    uses = [tool_use("read_inbox", {"limit": 1}, "a"), tool_use("read_calendar", {}, "b")]
    lines = summarise_exchange(1, uses, results).splitlines()
    assert lines[0].endswith(
        '-> ok, 2 messages: m1 mail:3fa2 "Sign the lease"; m2 mail:77 "Sale" bulk'
    )
    event = '{"id":"e1","start":"2026-11-05T09:30:00+00:00","title":"Standup"}'
    assert lines[1].endswith(f'-> ok, 1 events: {{"events":[{event}]}}')


def test_a_summarised_calendar_read_gives_its_events_back_for_the_brief() -> None:
    """Calendar reads keep their events whole in the summary (times, title, place, all-day,
    status; not descriptions or attendees), and summarised_calls reads them back."""
    from dayflow.compaction import summarised_calls, summary_message

    events: list[dict[str, Any]] = [
        {"id": "c:1", "title": "Standup", "start": "2026-11-05T09:30:00+00:00",
         "end": "2026-11-05T09:45:00+00:00", "location": "Room 2", "attendees": ["A"],
         "description": "long text"},
        {"id": "c:2", "title": "Trip", "start": "2026-11-06", "end": "2026-11-08",
         "all_day": True, "status": "cancelled"},
    ]  # fmt: skip
    payload = {"events": events, "unavailable": [{"source": "work", "reason": "gone"}]}
    uses = [tool_use("read_calendar", {"range": "week"}, "w")]
    results = [{"type": "tool_result", "tool_use_id": "w", "content": json.dumps(payload)}]
    summary = summary_message([(1, uses, results)])
    ((name, args, result),) = summarised_calls(summary)
    assert (name, args) == ("read_calendar", {"range": "week"})
    assert result["events"] == [
        {k: v for k, v in e.items() if k not in ("attendees", "description")} for e in events
    ]
    assert [u["source"] for u in result["unavailable"]] == ["work"]
    error = [{"type": "tool_result", "tool_use_id": "w", "content": "Error: x", "is_error": True}]
    assert summarised_calls(summary_message([(1, uses, error)])) == []


def _inbox_of(tmp_path: Path, n: int) -> str:
    """`n` long messages of the large sample (the ones with most requests), all received in the
    24 hours before the brief."""
    from importlib.resources import files

    data = json.loads(files("dayflow.fixtures").joinpath("inbox_large.json").read_text())
    base = datetime(2026, 11, 5, 6, 0, tzinfo=UTC)
    messages = [
        dict(m, received_at=(base - timedelta(minutes=40 * i)).isoformat())
        for i, m in enumerate(data["messages"][-n:])
    ]
    path = tmp_path / f"inbox{n}.json"
    path.write_text(json.dumps({"messages": messages}))
    return str(path)


@pytest.mark.parametrize("compact_at", [DEFAULT_COMPACT_AT, 6_000])
def test_a_24_message_first_brief_lists_the_inbox_once_and_the_calendar_once(
    store: Store, tmp_path: Path, compact_at: int
) -> None:
    """Issue 19.20: at 6,000 tokens compaction dropped listings the run still needed, and it
    listed the inbox three times and read the calendar twice. Now the inbox is listed at its
    largest page once, and a summary keeps the calendar's events, so neither is read again,
    compacted or not; and the default is above such a morning's peak, so it never compacts."""
    settings = RunSettings(
        inbox=_inbox_of(tmp_path, 24),
        mail_since="2026-11-04T07:00:00+00:00",
        compact_at=compact_at,
    )
    options = BriefOptions(brief_date=date(2026, 11, 5), settings=settings)
    result = start_run(Loop(store, OfflineModel()), options)
    assert result.run.status == "done"
    steps = store.steps.of(result.run.id)
    names = [u["name"] for s in steps for u in s.tool_uses()]
    assert names.count("read_inbox") == 1
    assert [u["input"] for s in steps for u in s.tool_uses() if u["name"] == "read_calendar"] == [
        {"range": "today"},
        {"range": "week"},
    ]
    assert len(store.tasks.list()) >= 5
    if compact_at == DEFAULT_COMPACT_AT:
        assert store.steps.compactions(result.run.id) == []
        assert max(s.usage.total_input for s in steps) < DEFAULT_COMPACT_AT
    else:
        assert store.steps.compactions(result.run.id)  # it did compact, and read nothing again
        assert "## Today" in (result.text or "") and "Nothing on the calendar" not in (
            result.text or ""
        )


@pytest.mark.parametrize("sample", ["standard", "large"])
def test_the_bundled_samples_brief_the_same_with_the_default_compaction_or_none(
    tmp_path: Path, sample: str
) -> None:
    """The standard sample never reaches the default threshold; the large one compacts, yet
    writes the same brief and the same tasks, reading nothing twice. (The offline model's
    behaviour, the same on either engine: one SQLite file per setting.)"""
    texts = []
    for compact_at in (0, DEFAULT_COMPACT_AT):
        store = open_store(tmp_path / f"{compact_at}.db")
        settings = RunSettings(sample=sample, compact_at=compact_at)
        options = BriefOptions(brief_date=date(2026, 11, 5), settings=settings)
        result = start_run(Loop(store, OfflineModel()), options)
        steps = store.steps.of(result.run.id)
        names = [u["name"] for s in steps for u in s.tool_uses()]
        listings = [u["input"] for s in steps for u in s.tool_uses() if u["name"] == "read_inbox"]
        # The inbox listed once: its first page, then only later pages (by cursor), if any.
        assert [bool(a.get("cursor")) for a in listings] == [False] + [True] * (len(listings) - 1)
        assert names.count("read_calendar") == 2
        if sample == "standard":
            assert max(s.usage.total_input for s in steps) < DEFAULT_COMPACT_AT
        texts.append(result.text)
        store.close()
    assert texts[0] == texts[1]


def test_extending_a_summary_gives_the_text_of_summarising_everything_again() -> None:
    exchanges = _exchanges(_history(6))
    whole = summary_message(exchanges)
    assert summary_message(exchanges[3:], summary_message(exchanges[:3])) == whole


def test_a_summarised_listing_keeps_its_next_cursor_what_was_left_out_and_failed_sources() -> None:
    """Paging survives compaction: a later step can still ask for the next page, and the brief
    can still say which source could not be read."""
    call = {"type": "tool_use", "id": "t1", "name": "read_inbox", "input": {"limit": 2}}
    payload = {
        "messages": [{"id": "work:1", "subject": "A"}, {"id": "work:2", "subject": "B"}],
        "next_cursor": "c:42",
        "unavailable": [{"source": "home", "reason": "is gone"}],
    }
    result = {"type": "tool_result", "tool_use_id": "t1", "content": json.dumps(payload)}
    text = summarise_exchange(3, [call], [result])
    assert 'next_cursor="c:42"' in text and "unavailable: home" in text
    events = {"events": [{"id": "cal:1", "title": "X", "start": "2026-11-05T09:00"}], "more": 7}
    result["content"] = json.dumps(events)
    assert "7 more not listed" in summarise_exchange(3, [call], [result])


# ------------------------------------------------- keys across a compaction (issue 31.2)


def _long_inbox(tmp_path: Path) -> str:
    """Three long messages: their listing and bodies pass a low threshold within two steps."""
    base = datetime(2026, 11, 5, 6, 0, tzinfo=UTC)
    messages = [
        {"id": f"m{i}", "from": f"Person {i} <p{i}@example.org>", "subject": f"Ask number {i}",
         "received_at": (base - timedelta(hours=i)).isoformat(),
         "body": f"Could you do thing {i} by Friday? " + "Background. " * 400}
        for i in (1, 2, 3)
    ]  # fmt: skip
    path = tmp_path / "inbox.json"
    path.write_text(json.dumps({"messages": messages}))
    return str(path)


def test_a_model_that_kept_only_ids_files_under_the_right_keys(
    store: Store, tmp_path: Path
) -> None:
    """After a compaction the model has each message's id but not its key: create_task with
    `source_id` alone files under that message's key, `#2` alone under its `<key>#2`, and a
    made-up key is refused with the right key named, so its retry by source_id files once."""
    from tests.scripted import forgetful_filer

    settings = RunSettings(
        inbox=_long_inbox(tmp_path), mail_since="2026-11-01T00:00:00+00:00", compact_at=2000
    )
    options = BriefOptions(
        brief_date=date(2026, 11, 5), limits=Limits(max_steps=10), settings=settings
    )
    model = ScriptedModel(fn=forgetful_filer())
    result = start_run(Loop(store, model), options)
    assert result.run.status == "done", result.run.reason
    results = [s.tool_results or [] for s in store.steps.of(result.run.id)]
    listing = json.loads(results[0][0]["content"])["messages"]
    key = {m["id"]: m["key"] for m in listing}
    first, second = listing[0], listing[1]  # newest first: m1, then m2
    assert sorted((t.idempotency_key, t.title) for t in store.tasks.list()) == sorted([
        (first["key"], "Do the first thing"),
        (first["key"] + "#2", "Do the second thing"),
        (second["key"], "Answer the other"),
    ])  # fmt: skip
    # The made-up key was refused, and the refusal named the key the model should have used.
    refused = results[4][2]
    assert refused.get("is_error") is True
    assert f"the key of {second['id']!r} is {second['key']!r}" in refused["content"]
    # It filed after a compaction that had taken the listing out of view; the summary's
    # listing line keeps each message's key.
    assert store.steps.compactions(result.run.id)
    summary = model.requests[4].messages[1]["content"][0]["text"]
    assert all(f"{mid} {k} " in summary for mid, k in key.items())


def test_create_task_resolves_source_id_from_what_the_run_read_only() -> None:
    """The key comes from the run's committed reads: a source_id the run never read, or none
    at all, is refused; a key naming another item is refused with the right one named."""
    from dayflow.shown import shown_in
    from dayflow.tools import ToolError
    from dayflow.tools.tasks import task_key

    listing = {"messages": [{"id": "m1", "key": "mail:aaa"}, {"id": "m2", "key": "mail:bbb"}]}
    opened = {"message": {"id": "m1", "key": "mail:aaa", "thread_id": "th1"}}
    events = {"events": [{"id": "e1", "title": "Standup"}]}
    owed = {"you_owe": [{"id": "m9", "key": "thread:ccc", "keys": ["mail:zzz"]}]}
    reads = [("read_inbox", listing), ("read_message", opened), ("read_calendar", events),
             ("read_followups", owed)]  # fmt: skip
    messages: list[Message] = [JOB]
    for n, (name, payload) in enumerate(reads):
        messages.append({"role": "assistant", "content": [tool_use(name, {}, f"u{n}")]})
        result = {"type": "tool_result", "tool_use_id": f"u{n}", "content": json.dumps(payload)}
        messages.append({"role": "user", "content": [result]})
    shown = shown_in(messages)
    assert task_key(None, "m1", shown) == "mail:aaa"  # the message's key, not its thread's
    assert task_key("#3", "m1", shown) == "mail:aaa#3"
    assert task_key("#1", "m2", shown) == "mail:bbb"
    assert task_key(None, "e1", shown) == "event:e1"
    assert task_key(None, "m9", shown) == "thread:ccc"  # an owed thread's latest message
    assert task_key("thread:th1", "m1", shown) == "thread:th1"  # a key of its own, as given
    with pytest.raises(ToolError, match="is not the key of 'm1' \\(that is 'mail:aaa'"):
        task_key("mail:bbb", "m1", shown)
    with pytest.raises(ToolError, match="the key of 'm2' is 'mail:bbb'"):
        task_key("mail:made-up", "m2", shown)
    with pytest.raises(ToolError, match="not the id of a message or event this run has read"):
        task_key(None, "m404", shown)
    with pytest.raises(ToolError, match="give idempotency_key"):
        task_key(None, None, shown)
    with pytest.raises(ToolError, match="give idempotency_key"):
        task_key("#2", None, shown)


def test_a_resumed_run_sends_the_summary_its_compaction_stored_not_todays(
    store: Store, store_target: Path | str
) -> None:
    """A run compacted by an older Dayflow (another summariser's words) resumes with exactly
    the summary its compaction record holds, and a later compaction extends that text: the
    stored record decides what is sent, never today's summariser."""
    from tests.conftest import Db

    with pytest.raises(SimulatedCrash):
        start_run(Loop(store, ScriptedModel(_reader_turns(8)), hooks=Hooks(crash_after=4)), OPTS)
    (run,) = store.runs.list()
    latest = store.steps.latest_compaction(run.id)
    assert latest is not None
    through, today = latest
    # What an older summariser wrote for the same steps: other words, no keys.
    lines = [f"- step {n}: read_inbox({{\"limit\": 50}}) -> ok, 0 messages" for n in
             range(1, through + 1)]  # fmt: skip
    old: Message = {
        "role": "user",
        "content": [{"type": "text", "text": "\n".join([LABEL, *lines])}],
    }
    assert old != today
    with Db(store_target) as db:
        db.run(
            "UPDATE compactions SET summary_json = ? WHERE run_id = ? AND through_step = ?",
            json.dumps(old), run.id, through,
        )  # fmt: skip
    assert rebuild_messages(store, run)[1] == old  # what a resume sends: the stored record
    fresh = ScriptedModel(_reader_turns(8)[4:])
    resume_run(Loop(store, fresh), run)
    summaries = [r.messages[1]["content"][0]["text"] for r in fresh.requests]
    text_ = old["content"][0]["text"]
    assert any(s != text_ for s in summaries), "no compaction after the resume"
    # Each later compaction extends the stored text, as it stands, with today's lines.
    assert all(s == text_ or s.startswith(text_ + "\n- step ") for s in summaries)


def _summary_of(name: str, args: dict[str, Any], payload: Any) -> Message:
    from dayflow.compaction import summary_message

    content = payload if isinstance(payload, str) else json.dumps(payload)
    result = {"type": "tool_result", "tool_use_id": "u", "content": content}
    return summary_message([(1, [tool_use(name, args, "u")], [result])])


def _line(message: Message) -> str:
    return str(message["content"][0]["text"]).splitlines()[1]


def test_each_read_keeps_what_a_later_step_needs() -> None:
    """The followups' lists (owed, awaited, answered, bulk, yours) and the calendar's conflicts
    and cut-short series come back whole from the summary; prep keeps its threads and tasks;
    the task list and an opened message keep their keys; another server's text keeps its
    opening."""
    from dayflow.compaction import summarised_calls, summarised_unavailable

    owed = {"key": "thread:aa", "with": {"name": "Marco", "address": "m@x"}, "subject": "Dinner",
            "latest_at": "2026-11-17T18:00:00+00:00", "age_days": 1, "id": "home:7",
            "keys": ["mail:77"], "sources": ["home"]}  # fmt: skip
    followups = {"since": "2026-11-04T00:00:00+00:00", "me": ["alex@x"], "you_owe": [owed],
                 "waiting_on": [], "answered": ["mail:11"], "bulk": ["mail:22"],
                 "yours": ["mail:33"],
                 "unavailable": [{"source": "work", "reason": "down"}]}  # fmt: skip
    ((_, _, kept),) = summarised_calls(_summary_of("read_followups", {}, followups))
    assert kept == {k: v for k, v in followups.items() if k not in ("since", "me")} | {
        "you_owe": [{k: v for k, v in owed.items() if k != "sources"}]
    }
    summary = _summary_of("read_followups", {}, followups)
    assert summarised_unavailable(summary) == {"read_followups": ["work"]}

    cut = {"source": "office", "series": "Runaway", "reason": "not expanded"}
    clash = {"kind": "overlap", "events": ["e1", "e2"], "titles": ["A", "B"],
             "start": "2026-11-18T13:30:00+00:00", "end": "2026-11-18T14:00:00+00:00"}  # fmt: skip
    calendar = {"events": [{"id": "e1", "title": "A", "description": "long"}],
                "conflicts": [clash], "cut_short": [cut], "more": 3}  # fmt: skip
    ((name, args, kept),) = summarised_calls(
        _summary_of("read_calendar", {"range": "today"}, calendar)
    )
    assert (name, args) == ("read_calendar", {"range": "today"})
    assert kept == {"events": [{"id": "e1", "title": "A"}], "conflicts": [clash],
                    "cut_short": [cut], "more": 3}  # fmt: skip

    thread = {"key": "thread:bb", "subject": "Agenda", "latest_at": "2026-11-17T09:00:00+00:00",
              "latest_from": {"name": "Ben"}, "messages": 2}  # fmt: skip
    task = {"id": "t_1", "title": "Add items", "due": None, "key": "mail:44"}
    prep = {"events": [{"id": "e1", "title": "Review", "with": [{"address": "b@x"}],
                        "threads": [thread], "tasks": [task]}]}  # fmt: skip
    ((_, _, kept),) = summarised_calls(_summary_of("read_prep", {}, prep))
    assert kept == {
        "events": [{"id": "e1", "title": "Review", "threads": [thread], "tasks": [task]}]
    }

    tasks = {"tasks": [{"id": "t_1", "title": "Pay rent", "due": "2026-11-20", "status": "open",
                        "source_id": "m9", "idempotency_key": "mail:99"}]}  # fmt: skip
    assert _line(_summary_of("read_tasks", {"include_done": False}, tasks)).endswith(
        '-> ok, 1 tasks: t_1 mail:99 "Pay rent" due 2026-11-20'
    )
    opened = {"message": {"id": "m9", "key": "mail:99", "thread_id": "th9", "body": "x" * 900}}
    assert _line(_summary_of("read_message", {"id": "m9"}, opened)).endswith(
        '-> ok, message m9 read; key "mail:99"; thread "thread:th9"'
    )
    words = "Ticket 42 is open: the printer on floor 3 is out of toner. " * 20
    line = _line(_summary_of("mcp__desk__tickets", {}, words))
    assert line.split(" -> ", 1)[1].startswith(f'ok, {len(words)} chars: "Ticket 42 is open')
    assert len(line) < 400


def test_a_summary_an_older_dayflow_wrote_still_reads_back() -> None:
    """Stored summaries are never rewritten: a calendar line in the older form (its events as
    a bare list, failed sources by name) still gives its events and failures back."""
    from dayflow.compaction import summarised_calls, summarised_unavailable

    old: Message = {"role": "user", "content": [{"type": "text", "text": (
        LABEL + '\n- step 2: read_calendar({"range": "week"}) -> ok, 1 events: '
        '[{"id":"e1","start":"2026-11-05T09:00:00+00:00","title":"Standup"}]; unavailable: work'
    )}]}  # fmt: skip
    ((name, args, result),) = summarised_calls(old)
    assert (name, args) == ("read_calendar", {"range": "week"})
    assert result["events"] == [
        {"id": "e1", "start": "2026-11-05T09:00:00+00:00", "title": "Standup"}
    ]
    assert [u["source"] for u in result["unavailable"]] == ["work"]
    assert summarised_unavailable(old) == {"read_calendar": ["work"]}


def test_summarised_creates_give_back_each_call_with_the_key_it_was_filed_under() -> None:
    """A reader of the summary gets its create_task calls as data (no parsing of the wording):
    the key a source_id-only call was filed under, the task's id, and a refusal's reason."""
    from dayflow.compaction import summarised_creates, summary_lines, summary_message

    filed = {"task": {"id": "t_1", "title": "Pay", "idempotency_key": "mail:aa#2"}, "created": True}
    calls = [
        tool_use("create_task", {"title": "Pay", "source_id": "m1", "idempotency_key": "#2"}, "a"),
        tool_use("create_task", {"title": "X", "idempotency_key": "mail:zz"}, "b"),
    ]
    results = [
        {"type": "tool_result", "tool_use_id": "a", "content": json.dumps(filed)},
        {"type": "tool_result", "tool_use_id": "b", "content": "Error: not read", "is_error": True},
    ]
    summary = summary_message([(3, [text("Filing."), *calls], results)])
    one, two = summarised_creates(summary)
    assert (one.key, one.task_id, one.existing, one.error) == ("mail:aa#2", "t_1", False, None)
    assert (two.key, two.task_id, two.error) == ("mail:zz", None, "Error: not read")
    assert summary_lines(summary, calls=False) == [LABEL, "- step 3, assistant: Filing."]
