from __future__ import annotations

import csv
import io
import json
import os
import socket
import sqlite3
import stat
from datetime import date
from pathlib import Path

import pytest

from dayflow.agent import Hooks, Loop, resume_run, start_run, totals_from_steps
from dayflow.clock import FixedClock
from dayflow.errors import RunPruned, SimulatedCrash, UsageError
from dayflow.frozen import replace
from dayflow.history import (
    READ_TOOLS,
    check_fork_point,
    collect_garbage,
    diagnose,
    export_events,
    fork_run,
    gc_candidates,
    recompute_totals,
)
from dayflow.models import (
    DONE,
    INTERRUPTED,
    STOPPED,
    Event,
    Limits,
    ModelRequest,
    ModelResponse,
    Run,
    Usage,
    estimate_tokens,
)
from dayflow.store import PRUNED_MARK, REDACTED_MARK, Owner, Store, open_store
from dayflow.timeline import label_levels, restart_indexes, spread_times
from tests.conftest import is_pg
from tests.scripted import ScriptedModel, seed_turns, text, tool_use, turn
from tests.test_agent import OPTIONS, _new_run

TOMORROW = date(2026, 11, 6)


def _seed_run(store: Store) -> tuple[Run, ScriptedModel]:
    model = ScriptedModel(seed_turns())
    result = start_run(Loop(store, model), OPTIONS)
    assert result.run.status == DONE
    return result.run, model


def _task_rows(store: Store) -> list[tuple[str, str, str | None]]:
    return [(t.id, t.idempotency_key, t.run_id) for t in store.tasks.list(include_done=True)]


# ------------------------------------------------------------------------------------ fork


def test_fork_at_step_1_makes_exactly_the_calls_after_it_and_duplicates_no_task(
    store: Store,
) -> None:
    parent, first = _seed_run(store)
    tasks = _task_rows(store)
    assert len(tasks) == 2
    parent_steps = store.steps.of(parent.id)

    model = ScriptedModel(seed_turns()[1:])
    result = fork_run(Loop(store, model), parent, 1)

    assert model.calls == 2  # steps 2 and 3; step 1 came from the parent for free
    # The first call of the fork is the parent's second call, value for value.
    assert model.requests[0].messages == first.requests[1].messages
    assert model.requests[0].system == first.requests[1].system
    assert model.requests[0].tools == first.requests[1].tools
    fork = result.run
    assert fork.status == DONE and fork.steps == 3
    assert (fork.parent_run_id, fork.forked_at_step) == (parent.id, 1)
    assert _task_rows(store) == tasks  # same tasks, still credited to the parent
    created = json.loads(store.steps.of(fork.id)[1].tool_results[0]["content"])  # type: ignore[index]
    assert created["created"] is False
    # Only what the fork paid for is counted, and its totals are the sum of its steps.
    assert fork.usage == Usage(2758 + 3406, 535 + 582)
    assert fork.usage == totals_from_steps(store, fork)
    assert store.steps.of(fork.id)[0].usage == Usage()
    # The parent is untouched but for the event that links it to the fork.
    assert store.steps.of(parent.id) == parent_steps
    assert store.runs.get(parent.id).usage == parent.usage
    assert store.events.of(parent.id)[-1].kind == "run_forked"
    assert store.events.of(parent.id)[-1].detail == {"fork": fork.id, "step": 1}
    forked = [e for e in store.events.of(fork.id) if e.kind == "run_forked"]
    assert forked[0].detail == {"parent": parent.id, "step": 1, "model": "scripted"}
    assert diagnose(store).findings == []


def test_fork_copies_the_saved_effects_and_can_use_another_model(store: Store) -> None:
    parent, _ = _seed_run(store)
    model = ScriptedModel(seed_turns()[2:])
    result = fork_run(Loop(store, model), parent, 2, model="claude-other-1")
    assert model.calls == 1 and model.requests[0].model == "claude-other-1"
    assert result.run.model == "claude-other-1"
    copied = {(e.tool_use_id, e.tool_name, e.content) for e in store.steps.effects(result.run.id)}
    original = {(e.tool_use_id, e.tool_name, e.content) for e in store.steps.effects(parent.id)}
    assert copied == original and len(copied) == 2  # the two create_task calls (reads save none)


def test_fork_after_a_compaction_sends_what_the_parent_sent(store: Store) -> None:
    """Compactions made before the fork point are copied; later ones the fork makes itself,
    exactly as the parent did."""
    reads = [
        turn(tool_use("read_inbox", {"limit": 20})),
        turn(tool_use("read_calendar", {"range": "week"})),
        turn(tool_use("read_calendar", {"range": "today"})),
        turn(tool_use("read_tasks", {"include_done": True})),
        turn(text("## Today\nok")),
    ]
    options = replace(OPTIONS, settings=replace(OPTIONS.settings, compact_at=50))
    first = ScriptedModel(list(reads))
    parent = start_run(Loop(store, first), options).run
    assert store.steps.compactions(parent.id), "the scenario must compact"
    model = ScriptedModel(list(reads[3:]))
    fork = fork_run(Loop(store, model), parent, 3).run
    assert model.requests[0].messages == first.requests[3].messages
    assert model.requests[1].messages == first.requests[4].messages
    # One compaction copied (made before call 3), the two later ones made again by the fork.
    assert [e.kind for e in store.events.of(fork.id)].count("compacted") == 2
    same = [
        {k: v for k, v in c.items() if k != "created_at"} for c in store.steps.compactions(fork.id)
    ]
    assert same == [
        {k: v for k, v in c.items() if k != "created_at"}
        for c in store.steps.compactions(parent.id)
    ]


def test_a_fork_budget_counts_only_what_the_fork_spends(store: Store) -> None:
    # The parent's calls are charged what they would cost (each request's own estimate in,
    # the seed's tokens out), so the figures below hold however big the prompt grows (fixed
    # figures broke twice when the prompt and the sample grew).
    turns = seed_turns()

    def charged(request: ModelRequest) -> ModelResponse:
        turn = turns.pop(0)
        spent = estimate_tokens([request.system, request.tools, request.messages])
        return replace(turn, usage=replace(turn.usage, input_tokens=spent))

    parent = start_run(Loop(store, ScriptedModel(fn=charged)), OPTIONS).run
    assert parent.status == DONE
    last = seed_turns()[2].usage.output_tokens
    # Less than the parent spent: the fork's one call (the parent's last, estimated the
    # same) fits in it alone, but counting what the parent spent on the two steps the fork
    # copies, it would have fewer tokens left than its answer needs.
    budget = parent.usage.total - last // 2
    model = ScriptedModel(seed_turns()[2:])
    result = fork_run(Loop(store, model), parent, 2, limits=Limits(budget=budget))
    assert result.run.status == DONE and result.run.budget == budget, result.run.reason
    assert 0 < result.run.usage.total < budget


@pytest.mark.parametrize(
    ("n", "message"),
    [
        (4, "has 3 step\\(s\\): there is no step 4 to fork from"),
        (3, "step 3 of run .* ended the run \\(end_turn\\); fork from step 2"),
        (-1, "0 or more"),
    ],
)
def test_fork_refuses_a_point_it_cannot_continue_from(store: Store, n: int, message: str) -> None:
    parent, _ = _seed_run(store)
    with pytest.raises(UsageError, match=message):
        fork_run(Loop(store, ScriptedModel([])), parent, n)
    assert len(store.runs.list()) == 1


def test_fork_refuses_pending_and_discarded_steps(store: Store) -> None:
    run, lease = store.runs.create(_new_run())
    store.steps.begin(lease, 1, seed_turns()[0], 5)
    with pytest.raises(UsageError, match="step 1 of run .* is pending"):
        check_fork_point(store.runs.get(run.id), store.steps.of(run.id), 1)
    cut = start_run(Loop(store, ScriptedModel([turn(text("## To"), stop="max_tokens")])), OPTIONS)
    with pytest.raises(UsageError, match="was discarded \\(max_tokens\\)"):
        check_fork_point(cut.run, store.steps.of(cut.run.id), 1)


def test_fork_from_step_0_starts_over_with_the_same_job(store: Store) -> None:
    parent, first = _seed_run(store)
    model = ScriptedModel(seed_turns())
    fork = fork_run(Loop(store, model), parent, 0).run
    assert model.calls == 3 and fork.status == DONE and fork.forked_at_step == 0
    assert model.requests[0].messages == first.requests[0].messages
    assert len(store.tasks.list()) == 2


# -------------------------------------------------------------------------------------- gc


def _size_on_disk(target: Path | str) -> int:
    """The history's size with every committed page folded into it (the WAL checkpointed)."""
    if not is_pg(target):
        conn = sqlite3.connect(target)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    with open_store(target) as s:
        return s.upkeep.size_bytes()


def test_gc_then_replaying_the_same_turns_recreates_no_task_and_the_file_shrinks(
    db_path: Path, clock: FixedClock
) -> None:
    with open_store(db_path, clock=clock) as store:
        runs = [_seed_run(store)[0] for _ in range(4)]
        tasks = _task_rows(store)
        assert {t[2] for t in tasks} == {runs[0].id}
    before = _size_on_disk(db_path)

    with open_store(db_path, clock=clock) as store:
        report = collect_garbage(store, before=TOMORROW)
        assert [r.id for r in report.runs] == [r.id for r in reversed(runs)]
        assert report.bytes_after < report.bytes_before
    after = _size_on_disk(db_path)
    assert after < before * 0.8, (before, after)

    with open_store(db_path, clock=clock) as store:
        replay = ScriptedModel(seed_turns())
        again = start_run(Loop(store, replay), OPTIONS).run
        assert again.status == DONE
        assert _task_rows(store) == tasks  # not one task re-created
        results = store.steps.of(again.id)[1].tool_results or []
        assert [json.loads(r["content"])["created"] for r in results] == [False, False]


def test_a_pruned_run_keeps_its_tombstone_and_cannot_continue(store: Store) -> None:
    parent, _ = _seed_run(store)
    before_steps = store.steps.of(parent.id)
    tasks = _task_rows(store)
    report = collect_garbage(store, keep=0)
    assert [r.id for r in report.runs] == [parent.id]

    run = store.runs.get(parent.id)
    assert run.pruned_at is not None and run.status == DONE
    assert (run.steps, run.usage, run.created_at, run.finished_at, run.final_text) == (
        3,
        parent.usage,
        parent.created_at,
        parent.finished_at,
        parent.final_text,
    )
    steps = store.steps.of(run.id)
    assert [(s.n, s.state, s.stop_reason, s.usage) for s in steps] == [
        (s.n, s.state, s.stop_reason, s.usage) for s in before_steps
    ]
    assert all(s.tool_results is None for s in steps)
    assert [u["name"] for u in steps[0].tool_uses()] == [
        u["name"] for u in before_steps[0].tool_uses()
    ]
    assert {u["input"] for u in steps[0].tool_uses()} == {PRUNED_MARK}
    assert not any(b.get("type") == "text" for s in steps for b in s.assistant)
    assert {e.content for e in store.steps.effects(run.id)} == {""}
    events = store.events.of(run.id)
    assert all(e.detail == {} for e in events[:-1])
    assert events[-1].kind == "run_pruned"
    assert _task_rows(store) == tasks
    keys = store.db.execute(
        "SELECT idempotency_key FROM tool_effects WHERE run_id = ? AND idempotency_key IS NOT NULL",
        (run.id,),
    )
    assert sorted(r[0] for r in keys) == ["sample:m02", "sample:m12"]
    with pytest.raises(RunPruned, match="pruned by `dayflow gc`.*not resumed or forked"):
        fork_run(Loop(store, ScriptedModel([])), run, 1)
    assert diagnose(store).findings == []  # totals still equal the (kept) step usage
    assert collect_garbage(store, keep=0).runs == []  # already a tombstone


def test_gc_leaves_unfinished_and_live_runs_alone_unless_asked(store: Store) -> None:
    with pytest.raises(SimulatedCrash):
        start_run(Loop(store, ScriptedModel(seed_turns()), hooks=Hooks(crash_after=1)), OPTIONS)
    crashed = store.runs.list()[0]
    live, _ = store.runs.create(_new_run())  # driven by this very (live) process
    assert gc_candidates(store, before=TOMORROW, keep=None) == []
    chosen = gc_candidates(store, before=TOMORROW, keep=None, unfinished=True)
    assert [r.id for r in chosen] == [crashed.id]
    collect_garbage(store, before=TOMORROW, unfinished=True)
    assert store.runs.get(crashed.id).pruned_at is not None
    assert store.runs.get(live.id).pruned_at is None
    with pytest.raises(RunPruned):
        resume_run(Loop(store, ScriptedModel([])), store.runs.get(crashed.id))
    assert store.runs.latest_unfinished() is None  # a tombstone is nothing to resume


def test_gc_keep_before_and_dry_run(store: Store, clock: FixedClock) -> None:
    old = _seed_run(store)[0]
    clock.advance(86_400)
    newer = _seed_run(store)[0]
    newest = _seed_run(store)[0]
    dry = collect_garbage(store, keep=1, dry_run=True)
    assert [r.id for r in dry.runs] == [newer.id, old.id] and dry.dry_run
    assert all(store.runs.get(r.id).pruned_at is None for r in (old, newer, newest))
    assert [r.id for r in gc_candidates(store, before=TOMORROW, keep=None)] == [old.id]
    assert [r.id for r in gc_candidates(store, before=TOMORROW, keep=2)] == [old.id]
    assert gc_candidates(store, before=date(2026, 11, 5), keep=None) == []
    with pytest.raises(UsageError, match="--before DATE, --keep N"):
        gc_candidates(store, before=None, keep=None)


def test_redact_blanks_what_the_reads_returned_and_nothing_else(store: Store) -> None:
    parent, _ = _seed_run(store)
    before = store.steps.of(parent.id)
    report = collect_garbage(store, keep=0, redact=True)
    assert report.action == "redact" and [r.id for r in report.runs] == [parent.id]
    run = store.runs.get(parent.id)
    assert run.redacted_at is not None and run.pruned_at is None
    after = store.steps.of(parent.id)
    assert [s.assistant for s in after] == [s.assistant for s in before]
    names = {u["id"]: u["name"] for s in after for u in s.tool_uses()}
    for old, new in zip(before, after, strict=True):
        for a, b in zip(old.tool_results or [], new.tool_results or [], strict=True):
            if names[a["tool_use_id"]] in READ_TOOLS:
                assert b["content"] == REDACTED_MARK != a["content"]
            else:
                assert b == a
    for effect in store.steps.effects(parent.id):
        assert (effect.content == REDACTED_MARK) == (effect.tool_name in READ_TOOLS)
    with pytest.raises(RunPruned, match="redacted"):
        fork_run(Loop(store, ScriptedModel([])), run, 1)
    # A redacted run can still be pruned later; a second redact finds nothing to do.
    assert collect_garbage(store, keep=0, redact=True).runs == []
    assert [r.id for r in collect_garbage(store, keep=0).runs] == [parent.id]


def test_a_stopped_run_that_was_redacted_cannot_be_resumed(store: Store) -> None:
    result = start_run(
        Loop(store, ScriptedModel(seed_turns())), replace(OPTIONS, limits=Limits(max_steps=1))
    ).run
    assert result.status == STOPPED
    collect_garbage(store, keep=0, redact=True)
    with pytest.raises(RunPruned, match="redacted by `dayflow gc --redact`"):
        resume_run(Loop(store, ScriptedModel([])), store.runs.get(result.id))


# ---------------------------------------------------------------------------------- doctor


def test_a_fresh_database_is_healthy(store: Store) -> None:
    _seed_run(store)
    report = diagnose(store)
    assert (
        report.healthy and report.findings == [] and report.schema == store.upkeep.schema_version()
    )


def test_totals_that_disagree_are_reported_not_fixed_and_recomputed_on_request(
    store: Store,
) -> None:
    run, _ = _seed_run(store)
    store.db.execute("UPDATE runs SET input_tokens = input_tokens + 5 WHERE id = ?", (run.id,))
    report = diagnose(store, fix=True)
    [finding] = report.findings
    assert finding.code == "totals_mismatch" and not finding.fixed and not report.healthy
    assert finding.fix_command == f"dayflow doctor --recompute-totals {run.id}"
    done = recompute_totals(store, run.id[:6])
    assert done.fixed and "old ones" in done.message
    assert store.runs.get(run.id).usage == run.usage
    event = store.events.of(run.id)[-1]
    assert event.kind == "totals_recomputed"
    assert event.detail["old"]["input_tokens"] == run.usage.input_tokens + 5
    assert diagnose(store).healthy
    assert not recompute_totals(store, run.id).fixed


def test_a_tool_use_without_its_result_is_reported_with_the_fork_that_repairs_it(
    store: Store,
) -> None:
    run, _ = _seed_run(store)
    store.db.execute(
        "UPDATE steps SET tool_results_json = '[]' WHERE run_id = ? AND n = 2", (run.id,)
    )
    [finding] = diagnose(store).findings
    assert finding.code == "missing_tool_results" and finding.severity == "error"
    assert f"run {run.id} step 2" in finding.message
    assert finding.fix_command == f"dayflow fork {run.id} --from-step 1"


def test_a_stale_lease_is_released_by_fix(db_path: Path, clock: FixedClock) -> None:
    gone = Owner(pid=_dead_pid(), host=socket.gethostname(), started=None)
    with open_store(db_path, clock=clock, owner=gone) as dead:
        run, _ = dead.runs.create(_new_run())
    with open_store(db_path, clock=clock) as store:
        assert store.runs.get(run.id).stored_status == "running"
        [finding] = diagnose(store).findings
        assert finding.code == "stale_lease" and finding.fixable and not finding.fixed
        fixed = diagnose(store, fix=True)
        assert fixed.healthy and fixed.findings[0].fixed
        after = store.runs.get(run.id)
        assert after.stored_status == INTERRUPTED == after.status
        assert store.events.of(run.id)[-1].kind == "lease_released"
        assert diagnose(store).findings == []


def test_loose_file_permissions_are_fixed(sqlite_path: Path) -> None:
    store, db_path = open_store(sqlite_path), sqlite_path
    os.chmod(db_path, 0o644)
    [finding] = [f for f in diagnose(store).findings if f.message.startswith(f"{db_path} ")]
    assert finding.code == "permissions" and finding.fix_command == f"chmod go-rwx {db_path}"
    assert diagnose(store, fix=True).healthy
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600


def test_a_broken_reference_is_an_integrity_finding(sqlite_path: Path) -> None:
    """SQLite only: PostgreSQL enforces foreign keys whatever a session asks."""
    store = open_store(sqlite_path)
    store.db.execute("PRAGMA foreign_keys = OFF")
    store.db.execute(
        "INSERT INTO events (run_id, seq, kind, detail_json, at) VALUES ('nope', 1, 'x', '{}', '')"
    )
    store.db.execute("PRAGMA foreign_keys = ON")
    [finding] = diagnose(store).findings
    assert finding.code == "integrity" and "events row" in finding.message
    assert ".recover" in (finding.fix_command or "")


def _dead_pid() -> int:
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


# ----------------------------------------------------------------------------------- trace


def test_events_export_as_json_lines_and_csv(store: Store) -> None:
    run, _ = _seed_run(store)
    events = store.events.of(run.id)
    lines = export_events(events, "jsonl").splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [e.seq for e in events]
    first = json.loads(lines[0])
    assert first == {
        "run_id": run.id,
        "seq": 1,
        "at": events[0].at,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "kind": "run_started",
        "detail": {"model": "scripted", "date": "2026-11-05"},
    }
    rows = list(csv.DictReader(io.StringIO(export_events(events, "csv"))))
    assert [r["kind"] for r in rows] == [e.kind for e in events]
    assert json.loads(rows[0]["detail"]) == first["detail"]
    with pytest.raises(UsageError, match="--format must be one of jsonl, csv"):
        export_events(events, "xml")


def test_timeline_times_keep_the_log_order_and_find_the_restarts(
    store: Store, clock: FixedClock
) -> None:
    with pytest.raises(SimulatedCrash):
        start_run(Loop(store, ScriptedModel(seed_turns()), hooks=Hooks(crash_after=2)), OPTIONS)
    run = store.runs.list()[0]
    clock.advance(3)
    resume_run(Loop(store, ScriptedModel(seed_turns()[2:])), run)
    events = store.events.of(run.id)
    xs = spread_times(events)
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    resumed = [i for i, e in enumerate(events) if e.kind == "run_resumed"]
    assert restart_indexes(events) == resumed
    assert xs[resumed[0]] >= 3


def test_a_take_over_then_resume_is_one_restart_not_two() -> None:
    def event(seq: int, kind: str, pid: int) -> Event:
        return Event("r", seq, kind, {}, pid, "h", "2026-11-05T07:30:00+00:00")

    killed_then_resumed = [
        event(1, "run_started", 10),
        event(2, "step_committed", 10),
        event(3, "lease_taken_over", 11),
        event(4, "run_resumed", 11),
        event(5, "run_finished", 11),
    ]
    assert restart_indexes(killed_then_resumed) == [2]
    same_process = [event(1, "run_started", 10), event(2, "run_released", 10)]
    same_process.append(event(3, "run_resumed", 10))
    assert restart_indexes(same_process) == [2]
    assert spread_times(same_process) == [1 / 6, 3 / 6, 5 / 6]


def test_timeline_labels_that_would_overprint_are_stacked() -> None:
    """A resumed run's steps land close together on the time axis: their labels stack
    instead of printing over each other; far apart, or on another lane, they stay level."""
    close = [(0.0, 0), (0.01, 0), (0.02, 0), (0.03, 0)]
    assert label_levels(close, gap=0.05) == [0, 1, 2, 0]
    assert label_levels([(0.0, 0), (1.0, 0)], gap=0.05) == [0, 0]
    assert label_levels([(0.0, 0), (0.01, 1)], gap=0.05) == [0, 0]
