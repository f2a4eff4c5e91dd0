"""What only the PostgreSQL backend has to get right: text that cannot hold NUL, payloads kept
byte for byte, migrations racing, the lease fence under READ COMMITTED, a dropped connection,
server-clock leases and PgBouncer's transaction mode. Every test gets a fresh schema."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from psycopg import pq

from dayflow.clock import FixedClock
from dayflow.errors import LeaseLost, RunBusy, StoreError
from dayflow.models import ModelRequest, ModelResponse
from dayflow.sources.inbox import legacy_inbox
from dayflow.store import Lease, Store, open_store
from dayflow.store.postgres import PgDatabase
from dayflow.store.postgres_sql import NUL_MARK, decode_text, encode_text
from dayflow.store.rows import dump
from dayflow.store.sql import ConnectionLost, DatabaseError
from tests.conftest import Db, db_rows, pg_schema
from tests.harness import invoke
from tests.scripted import ScriptedModel, seed_turns, text, tool_use, turn
from tests.test_agent import _new_run

pytestmark = pytest.mark.postgres


@pytest.fixture
def url(pg_server: Any) -> Iterator[str]:
    with pg_schema(pg_server) as u:
        yield u


@pytest.fixture
def pg(url: str, clock: FixedClock) -> Iterator[Store]:
    with open_store(url, clock=clock) as s:
        yield s


def _lease_renewed_after(url: str, before: str) -> Callable[[], bool]:
    """Whether the run's lease now expires later than `before` (a renewal happened)."""
    return lambda: bool(db_rows(url, "SELECT lease_expires_at FROM runs")[0][0] > before)


def _wait_until(check: Callable[[], bool], what: str) -> None:
    """Poll a condition on the server (not a timed assert: the bound only stops a hang)."""
    for _ in range(2000):
        if check():
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"never happened: {what}")


def _waiting_on_a_lock(admin: Any, backend_pid: int) -> bool:
    row = admin.execute(
        "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (backend_pid,)
    ).fetchone()
    return row is not None and row[0] == "Lock"


def _until_it_waits(
    act: Callable[[], object], admin: Any, db: Any, what: str
) -> tuple[threading.Thread, list[BaseException | None]]:
    """`act` started on a thread, returned once its connection `db` waits on a row lock; the
    thread, and the list that will hold what `act` ended with (None: it returned)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            act()
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    _wait_until(lambda: _waiting_on_a_lock(admin, db.backend_pid), what)
    return thread, outcome


# ---------------------------------------------------------------------------- text and bytes


@pytest.mark.parametrize(
    "value",
    ["plain", "", "a\x00b", "\x00", NUL_MARK, NUL_MARK + "x\x00", '"\\u0000"', "\ud7ff\U0001f600"],
)
def test_every_string_round_trips_through_the_text_encoding(value: str) -> None:
    stored = encode_text(value)
    assert "\x00" not in stored and decode_text(stored) == value
    if "\x00" not in value and not value.startswith(NUL_MARK):
        assert stored == value  # everything else is stored byte for byte


def test_a_nul_in_a_tool_result_and_a_task_round_trips_exactly(pg: Store, url: str) -> None:
    run, lease = pg.runs.create(_new_run())
    pg.steps.begin(lease, 1, turn(tool_use("read_inbox", {}, "toolu_n")), 1)
    content = 'from: a\x00b <x@y>\n\u0000 and "\\u0000"'
    pg.steps.save_effect(lease, 1, "toolu_n", "read_inbox", lambda: (content, False))
    assert pg.steps.get_effect(run.id, "toolu_n").content == content  # type: ignore[union-attr]
    task, _ = pg.tasks.create(title="pay\x00rent", idempotency_key="k\x00", run_id=run.id)
    assert pg.tasks.find(task.id).title == "pay\x00rent"
    assert pg.tasks.list()[0].idempotency_key == "k\x00"
    result = [{"type": "tool_result", "tool_use_id": "toolu_n", "content": content}]
    pg.steps.complete(lease, 1, result)
    assert pg.steps.of(run.id)[0].tool_results == result
    # In the step row the NUL is JSON's six characters, stored verbatim.
    (raw,) = db_rows(url, "SELECT tool_results_json FROM steps")[0]
    assert raw == dump(result) and "\\u0000" in raw


def test_payloads_are_text_stored_byte_for_byte_with_their_key_order(pg: Store, url: str) -> None:
    run, lease = pg.runs.create(_new_run())
    blocks: list[dict[str, Any]] = [
        {"type": "tool_use", "id": "toolu_z", "name": "read_inbox", "input": {"z": 1, "a": [2]}},
        {"type": "text", "text": "é ✓ 😀 \\n"},
    ]
    pg.steps.begin(lease, 1, turn(*blocks), 1)
    (raw,) = db_rows(url, "SELECT assistant_json FROM steps")[0]
    assert raw == dump(blocks) and raw.index('"z"') < raw.index('"a"')
    types = {
        r[0]: r[1]
        for r in db_rows(
            url,
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND column_name LIKE '%json'",
        )
    }
    assert types and set(types.values()) == {"text"}


# ------------------------------------------------------------------------------- migrations


def test_two_processes_migrating_a_blank_schema_at_once_queue_on_the_lock(
    url: str, pg_server: Any
) -> None:
    """A third session holds the migration lock; both openers block on it (seen in
    pg_stat_activity), then both succeed and every migration is recorded once."""
    from dayflow.store.postgres_schema import MIGRATION_LOCK, MIGRATIONS

    holder = PgDatabase(url)
    holder_tx = holder.transaction()
    holder_tx.__enter__()
    holder.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            open_store(url).close()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(2)]
    for t in threads:
        t.start()

    def both_waiting() -> bool:
        rows = pg_server.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'advisory' "
            "AND application_name = %s",
            (url.rsplit("application_name=", 1)[1],),
        ).fetchone()
        return rows[0] == 2

    _wait_until(both_waiting, "both openers waiting on the migration lock")
    holder_tx.__exit__(None, None, None)
    holder.close()
    for t in threads:
        t.join()
    assert errors == []
    names = [r[0] for r in db_rows(url, "SELECT name FROM schema_migrations ORDER BY rowid")]
    assert names == [name for name, _ in MIGRATIONS]


def test_a_schema_holding_other_tables_is_refused_untouched(url: str) -> None:
    with Db(url) as db:
        db.run("CREATE TABLE photos (id INTEGER)")
    with pytest.raises(Exception, match="not Dayflow's"):
        open_store(url)
    tables = db_rows(
        url,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()",
    )
    assert [t[0] for t in tables] == ["photos"]


# ------------------------------------------------------------------------------------ leases


def _race_a_takeover(
    url: str, admin: Any, pg: Store, run_id: str, write: Callable[[], object]
) -> list[BaseException | None]:
    """B takes the run over in a transaction it holds open while A's `write` runs in a thread;
    once A waits on B's row lock, B commits. What A's write ended with (None: it succeeded)."""
    thief = PgDatabase(url)
    with thief.transaction():
        thief.execute(
            "UPDATE runs SET lease_token = 'B', owner_host = 'host-b', version = version + 1 "
            "WHERE id = ?",
            (run_id,),
        )
        waiting = "A's write waiting on B's row lock"
        writer, outcome = _until_it_waits(write, admin, pg.db, waiting)
    writer.join()
    thief.close()
    return outcome


def test_a_write_in_flight_when_the_run_is_taken_over_changes_nothing(
    pg: Store, url: str, pg_server: Any
) -> None:
    """The fence race, deterministic: B's take-over holds the run row (uncommitted) while A's
    save_effect runs; A's lease check waits on the row lock, and once B commits it sees B's
    token and raises LeaseLost: A's effect never lands after the take-over (under READ
    COMMITTED a check that did not lock the row would have let it)."""
    run, lease = pg.runs.create(_new_run())
    pg.steps.begin(lease, 1, turn(tool_use("create_task", {"title": "x"}, "toolu_f")), 1)
    produced: list[bool] = []
    outcome = _race_a_takeover(
        url,
        pg_server,
        pg,
        run.id,
        lambda: pg.steps.save_effect(
            lease,
            1,
            "toolu_f",
            "create_task",
            lambda: (produced.append(True), ("done", False))[1],  # type: ignore[func-returns-value]
        ),
    )
    assert len(outcome) == 1 and isinstance(outcome[0], LeaseLost)
    assert produced == [] and pg.steps.effects(run.id) == []
    assert "tool_executed" not in [e.kind for e in pg.events.of(run.id)]


def test_a_step_completion_in_flight_when_the_run_is_taken_over_changes_nothing(
    pg: Store, url: str, pg_server: Any
) -> None:
    """The fence race for the pipelined completion: B's take-over holds the run row while A's
    complete_step (one round trip) runs; A's lease check waits on the lock, then sees B's token
    and the server raises: LeaseLost, and the step stays pending with no result."""
    run, lease = pg.runs.create(_new_run())
    pg.steps.begin(lease, 1, turn(tool_use("read_inbox", {}, "toolu_r")), 1)
    results = [{"type": "tool_result", "tool_use_id": "toolu_r", "content": "[]"}]
    outcome = _race_a_takeover(
        url, pg_server, pg, run.id, lambda: pg.steps.complete(lease, 1, results, effects=False)
    )
    assert len(outcome) == 1 and isinstance(outcome[0], LeaseLost)
    assert [(s.state, s.tool_results) for s in pg.steps.of(run.id)] == [("pending", None)]
    assert not pg.db.in_transaction  # the failed batch was rolled back
    assert pg.runs.get(run.id).status == "running"


def test_a_step_is_two_statements_each_its_own_transaction(pg: Store) -> None:
    """libpq's protocol trace: begin_step is one statement (the run's totals and lease as a
    CTE beside the step's INSERT, the lease checked by the server) and complete_step another
    (the step's UPDATE fenced by the lease), each in autocommit: two waits in all. The last
    step, which also ends the run, is one pipeline (BEGIN to COMMIT, one wait). A lost lease
    and a step not pending are raised by the server (SQLSTATEs DF001, DF002) and are the same
    errors as on SQLite."""
    run, lease = pg.runs.create(_new_run())
    conn = pg.db._conn  # type: ignore[attr-defined]

    def traced(write: Callable[[], None]) -> list[str]:
        with tempfile.TemporaryFile("w+") as trace:
            conn.pgconn.trace(trace.fileno())
            conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
            write()
            conn.pgconn.untrace()
            trace.seek(0)
            return [line.split("\t")[2] for line in trace.read().splitlines() if line[:2] == "F\t"]

    results = [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "[]"}]
    sent = traced(lambda: pg.steps.begin(lease, 1, turn(tool_use("read_inbox", {}, "toolu_a")), 1))
    sent += traced(lambda: pg.steps.complete(lease, 1, results, effects=False))
    assert (sent.count("Bind"), sent.count("Sync"), "Query" in sent) == (2, 2, False)
    pg.steps.begin(lease, 2, turn(text("## Today")), 1)
    last = traced(lambda: pg.steps.complete(lease, 2, None, final_text="## Today"))
    # BEGIN, the run done, the step, its run_finished event, COMMIT
    assert (last.count("Bind"), last.count("Sync")) == (5, 1)
    assert pg.runs.get(run.id).status == "done"
    assert [e.kind for e in pg.events.of(run.id)][-3:] == [
        "response_committed",
        "step_committed",
        "run_finished",
    ]
    other, other_lease = pg.runs.create(_new_run())
    with pytest.raises(LeaseLost):
        pg.steps.begin(Lease(other.id, "stale"), 1, turn(text("x")), 1)
    pg.steps.begin(other_lease, 1, turn(text("x")), 1)
    with pytest.raises(LeaseLost):
        pg.steps.complete(Lease(other.id, "stale"), 1, None)
    with pytest.raises(StoreError, match="step 2 is not pending"):
        pg.steps.complete(other_lease, 2, None)
    assert [(s.n, s.state) for s in pg.steps.of(other.id)] == [(1, "pending")]
    assert pg.runs.get(other.id).usage.output_tokens == 20


def test_a_claim_waits_for_the_write_in_flight_and_then_sees_its_renewal(
    pg: Store, url: str, pg_server: Any
) -> None:
    """A's save_effect holds the run row (inside `produce`) with its lease expired; B's claim
    locks the row with SELECT ... FOR UPDATE, so it waits, then reads the lease A's write
    renewed, and is refused."""
    run, lease = pg.runs.create(_new_run())
    pg.steps.begin(lease, 1, turn(tool_use("create_task", {"title": "x"}, "toolu_c")), 1)
    with Db(url) as db:
        db.run("UPDATE runs SET lease_expires_at = '2000-01-01T00:00:00.000+00:00'")
    other = open_store(url, owner=_owner("host-b"))
    inside, go = threading.Event(), threading.Event()

    def produce() -> tuple[str, bool]:
        inside.set()
        go.wait()
        return "done", False

    writer = threading.Thread(
        target=pg.steps.save_effect, args=(lease, 1, "toolu_c", "create_task", produce)
    )
    writer.start()
    inside.wait()
    claimer, claimed = _until_it_waits(
        lambda: other.leases.claim(run.id),
        pg_server,
        other.db,
        "B's claim waiting on the row A's write holds",
    )
    go.set()
    writer.join()
    claimer.join()
    other.close()
    assert len(claimed) == 1 and isinstance(claimed[0], RunBusy)
    assert "host" in str(claimed[0]) and [e.content for e in pg.steps.effects(run.id)] == ["done"]


def test_events_from_concurrent_writers_are_numbered_without_gaps(url: str) -> None:
    with open_store(url) as s:
        run, _ = s.runs.create(_new_run())
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            with open_store(url) as s:
                for i in range(15):
                    s.events.add(run.id, f"w{k}", {"i": i})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    seqs = [r[0] for r in db_rows(url, "SELECT seq FROM events ORDER BY seq")]
    assert seqs == list(range(1, 1 + 1 + 4 * 15))


def test_leases_run_on_the_servers_clock_not_the_hosts(url: str) -> None:
    """A host whose clock is 25 days behind still writes a lease that ends one TTL after the
    server's now, and sees a lease the server considers expired as expired."""
    wrong = FixedClock("2026-11-05T07:30:00+00:00")
    with open_store(url, clock=wrong) as s:
        run, _ = s.runs.create(_new_run())
        expires, server_now = db_rows(url, "SELECT lease_expires_at, clock_timestamp() FROM runs")[
            0
        ]
        expiry = datetime.fromisoformat(expires)
        assert server_now - timedelta(seconds=5) < expiry - timedelta(seconds=30) < server_now
        assert s.runs.get(run.id).status == "running"
        past = (
            (server_now - timedelta(seconds=1)).astimezone(UTC).isoformat(timespec="milliseconds")
        )
        with Db(url) as db:
            db.run("UPDATE runs SET lease_expires_at = ?, owner_host = 'elsewhere'", past)
        assert s.runs.get(run.id).status == "interrupted"


def test_the_heartbeat_keeps_a_short_lease_alive_through_a_long_model_call(url: str) -> None:
    """With a 1-second lease, a model call that outlasts several TTLs keeps the run: another
    host cannot claim it during the call, and the step commits after it."""
    short = url + "&dayflow_lease_ttl=1"
    with open_store(short) as s:
        run, lease = s.runs.create(_new_run())
        other = open_store(short, owner=_owner("host-b"))
        refused: list[BaseException] = []
        with s.leases.keep_alive(lease):
            for _ in range(3):  # three TTLs, each past the previous renewal
                before = db_rows(url, "SELECT lease_expires_at FROM runs")[0][0]
                _wait_until(_lease_renewed_after(url, before), "a renewal")
                try:
                    other.leases.claim(run.id)
                except RunBusy as exc:
                    refused.append(exc)
        other.close()
        s.steps.begin(lease, 1, turn(text("ok")), 1)
    assert len(refused) == 3


def test_the_heartbeat_keeps_the_lease_through_a_slow_source_read(url: str) -> None:
    """A read tool whose source takes several TTLs (a slow IMAP server) keeps the run too:
    another host cannot claim it while the read is in flight, and the run finishes."""
    from dayflow.agent import BriefOptions, Loop, json_sources, start_run
    from dayflow.providers.offline import OfflineModel

    short = url + "&dayflow_lease_ttl=1"
    refused: list[BaseException] = []

    class SlowInbox:
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def messages(self) -> list[dict[str, Any]]:
            runs = db_rows(url, "SELECT id FROM runs")
            if not runs or refused:  # the precheck before the run, or the read done already
                return self._inner.messages()
            (run_id,) = runs[0]
            with open_store(short, owner=_owner("host-b")) as other:
                for _ in range(3):  # three TTLs, each past the previous renewal
                    before = db_rows(url, "SELECT lease_expires_at FROM runs")[0][0]
                    _wait_until(
                        _lease_renewed_after(url, before),
                        "a renewal during the read",
                    )
                    try:
                        other.leases.claim(run_id)
                    except RunBusy as exc:
                        refused.append(exc)
            return self._inner.messages()

    def slow_sources(settings: Any, brief_date: Any) -> Any:
        inbox, calendar = json_sources(settings, brief_date)
        return legacy_inbox(SlowInbox(inbox)), calendar

    with open_store(short) as s:
        loop = Loop(s, OfflineModel(), sources=slow_sources)
        result = start_run(loop, BriefOptions(brief_date=date(2026, 11, 5)))
    assert result.run.status == "done" and result.text
    assert len(refused) == 3


# ------------------------------------------------------------------- a connection that drops


def test_a_connection_dropped_inside_a_transaction_fails_that_write_and_the_next_reconnects(
    pg: Store, url: str, pg_server: Any
) -> None:
    run, lease = pg.runs.create(_new_run())
    db = pg.db
    with pytest.raises(ConnectionLost), db.transaction():
        db.execute("UPDATE runs SET reason = 'half' WHERE id = ?", (run.id,))
        pg_server.execute("SELECT pg_terminate_backend(%s)", (db.backend_pid,))  # type: ignore[attr-defined]
        db.execute("UPDATE runs SET reason = 'written' WHERE id = ?", (run.id,))
    assert pg.runs.get(run.id).reason is None  # the server rolled the transaction back
    pg.steps.begin(lease, 1, turn(text("after")), 1)  # a fresh connection, same lease
    assert [s.n for s in pg.steps.of(run.id)] == [1]


def test_a_step_right_after_the_server_dropped_the_idle_connection_is_written_once(
    pg: Store, pg_server: Any
) -> None:
    """The server terminates the idle connection just before each step's first transaction:
    seen by the poll before the batch (the connection is reopened), or only by the batch's
    unanswered BEGIN (nothing of it ran: it is sent again on a fresh connection). Either way
    each step is written once, and the run's totals are the sum of its steps."""
    run, lease = pg.runs.create(_new_run())
    db = pg.db
    for n in range(1, 13):
        pg_server.execute("SELECT pg_terminate_backend(%s)", (db.backend_pid,))  # type: ignore[attr-defined]
        pg.steps.begin(lease, n, turn(tool_use("read_inbox", {}, f"toolu_{n}")), 1)
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "[]"}
        pg.steps.complete(lease, n, [result], effects=False)
    steps = pg.steps.of(run.id)
    assert [(s.n, s.state) for s in steps] == [(n, "complete") for n in range(1, 13)]
    assert pg.runs.get(run.id).usage.output_tokens == sum(s.usage.output_tokens for s in steps)


def test_a_run_survives_the_server_dropping_its_connection_between_steps(
    url: str, pg_server: Any
) -> None:
    """pg_terminate_backend of every connection of the run while its second model call is in
    flight: the next transaction reconnects, the run finishes, no step lost, no task twice."""
    turns = seed_turns()
    schema = url.rsplit("application_name=", 1)[1]
    calls = 0

    def model(request: ModelRequest) -> ModelResponse:
        nonlocal calls
        calls += 1
        if calls == 2:
            killed = pg_server.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = %s AND pid <> pg_backend_pid()",
                (schema,),
            ).fetchone()[0]
            assert killed >= 1
        return turns.pop(0)

    res = invoke(
        url, lambda name, settings: ScriptedModel(fn=model), "brief", "--model", "scripted"
    )
    assert res.code == 0, res.err
    (status, steps, tasks) = db_rows(
        url,
        "SELECT status, (SELECT COUNT(*) FROM steps), (SELECT COUNT(*) FROM tasks) FROM runs",
    )[0]
    assert (status, steps, tasks) == ("done", 3, 2)


# -------------------------------------------------------------------------------- PgBouncer


def test_pgbouncer_mode_prepares_no_statement_on_the_server(url: str) -> None:
    """Behind PgBouncer in transaction mode a prepared statement may be gone on the next
    transaction's server connection: with `dayflow_pgbouncer=1` psycopg prepares none."""
    sql = "SELECT id FROM runs WHERE id = ?"
    open_store(url).close()
    plain = PgDatabase(url)
    bouncer = PgDatabase(url + "&dayflow_pgbouncer=1")
    for db in (plain, bouncer):
        for _ in range(8):
            db.execute(sql, ("x",))
    prepared = "SELECT count(*) FROM pg_prepared_statements"
    assert plain.execute(prepared).fetchall()[0][0] >= 1  # psycopg prepares after 5 runs
    assert bouncer.prepare_threshold is None
    assert bouncer.execute(prepared).fetchall()[0][0] == 0
    plain.close()
    bouncer.close()


def test_pgbouncer_mode_pipelines_the_steps_without_preparing_them(url: str) -> None:
    """The pipelined step transactions (and the server-side lease check) work with prepared
    statements off: eight steps, and the connection has prepared nothing."""
    with open_store(url + "&dayflow_pgbouncer=1") as store:
        run, lease = store.runs.create(_new_run())
        for n in range(1, 9):
            store.steps.begin(lease, n, turn(tool_use("read_inbox", {}, f"toolu_{n}")), 1)
            result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "[]"}
            store.steps.complete(lease, n, [result], effects=False)
        with pytest.raises(LeaseLost):
            store.steps.begin(Lease(run.id, "stale"), 9, turn(text("x")), 1)
        prepared = "SELECT count(*) FROM pg_prepared_statements"
        assert store.db.execute(prepared).fetchall()[0][0] == 0  # type: ignore[attr-defined]
        assert [s.state for s in store.steps.of(run.id)] == ["complete"] * 8


def test_a_bad_lease_ttl_option_is_one_clear_error(url: str) -> None:
    with pytest.raises(Exception, match="dayflow_lease_ttl must be"):
        open_store(url + "&dayflow_lease_ttl=0")


def test_an_unreachable_server_is_one_line_naming_it_without_the_password(tmp_path: Path) -> None:
    res = invoke(
        tmp_path / "unused.db",
        lambda *a: None,
        "runs",
        "--db",
        "postgresql://someone:s3cret@127.0.0.1:1/nodb",
    )
    assert res.code == 4 and res.err.count("\n") == 1
    assert "cannot connect" in res.err and "s3cret" not in res.err and "***" in res.err


def _owner(host: str) -> Any:
    from dayflow.store import Owner

    return Owner(99999, host, None)


# --------------------------------------------------------------------------- two hosts, one DB


@pytest.mark.slow
def test_two_hosts_share_one_database_and_a_dead_hosts_run_is_taken_over(url: str) -> None:
    """Host A's brief commits step 1 and is in its second model call (its 2-second lease kept
    alive by the heartbeat); host B's resume exits 5 naming A's host and pid. A is SIGKILLed;
    once the lease has expired on the server's clock, B's resume finishes the run. `show`
    names the host of each step."""
    import json
    import signal
    import subprocess
    import sys
    from dataclasses import replace

    from dayflow.providers.offline import OfflineModel
    from tests.conftest import subprocess_env
    from tests.fakeapi import FakeAPI, Reply, responder_from_client
    from tests.test_crash import dayflow

    short = url + "&dayflow_lease_ttl=2"
    offline = responder_from_client(OfflineModel())
    calls = 0

    def second_call_hangs(body: dict[str, Any]) -> Any:
        nonlocal calls
        calls += 1
        item = offline(body)
        return replace(item, delay=60) if calls == 2 and isinstance(item, Reply) else item

    with FakeAPI(responder=second_call_hangs) as api:
        keys = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": api.base_url}
        a = subprocess.Popen(
            [sys.executable, "-m", "dayflow", "brief", "--date", "2026-11-05"],
            env=subprocess_env(short, DAYFLOW_HOST="host-a", **keys),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_until(lambda: len(api.message_requests) >= 2, "A in its second model call")
            first = db_rows(url, "SELECT lease_expires_at FROM runs")[0][0]
            _wait_until(
                lambda: db_rows(url, "SELECT lease_expires_at FROM runs")[0][0] > first,
                "A's heartbeat renewing the lease",
            )
            (run_id,) = db_rows(url, "SELECT id FROM runs")[0]
            busy = dayflow(short, "resume", run_id, api=api, DAYFLOW_HOST="host-b")
            assert busy.code == 5, busy.err
            assert f"is being driven by pid {a.pid} on host host-a" in busy.err
        finally:
            a.send_signal(signal.SIGKILL)
            a.wait()

        def expired() -> bool:
            expires, now = db_rows(url, "SELECT lease_expires_at, clock_timestamp() FROM runs")[0]
            return datetime.fromisoformat(expires) < now

        _wait_until(expired, "A's lease expiring on the server's clock")
        taken = dayflow(short, "resume", run_id, api=api, DAYFLOW_HOST="host-b")
        assert taken.code == 0, taken.err
        (run,) = json.loads(dayflow(short, "runs", "--json").out)
        assert run["status"] == "done" and run["host"] == "host-b"
        shown = json.loads(dayflow(short, "show", run["id"], "--json").out)
        hosts = [s["host"] for s in shown["steps"]]
        assert hosts[0] == "host-a" and set(hosts[1:]) == {"host-b"} and len(hosts) == 3
        table = dayflow(short, "show", run["id"]).out
        assert "host-a" in table and "host-b" in table
        kinds = [e["kind"] for e in shown["events"]]
        assert "lease_taken_over" in kinds


def _commit_waits(url: str, durability: str, clock: FixedClock, monkeypatch: Any) -> list[bool]:
    """For each write of a three-step run (each step's response and completion, the last one
    ending the run): whether it asked the server to wait for its disk."""
    import psycopg

    sent: list[str] = []
    real = psycopg.Connection.execute

    def spy(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(str(query))
        return real(self, query, *args, **kwargs)

    waits = []
    with open_store(url, clock=clock, durability=durability) as store:
        run, lease = store.runs.create(_new_run())
        monkeypatch.setattr(psycopg.Connection, "execute", spy)
        read = turn(tool_use("read_message", {"id": "m"}))
        result = [{"type": "tool_result", "tool_use_id": "x"}]
        writes: list[Callable[[], None]] = [
            lambda: store.steps.begin(lease, 1, read, 1),
            # one statement (the reads saved nothing), then a pipeline (an effect was saved)
            lambda: store.steps.complete(lease, 1, result, effects=False),
            lambda: store.steps.begin(lease, 2, read, 1),
            lambda: store.steps.complete(lease, 2, result, effects=True),
            lambda: store.steps.begin(lease, 3, turn(text("brief")), 1),
            lambda: store.steps.complete(lease, 3, None, final_text="brief"),
        ]
        for write in writes:
            sent.clear()
            write()
            waits.append(not any("synchronous_commit" in q for q in sent))
        monkeypatch.undo()
        assert [s.state for s in store.steps.of(run.id)] == ["complete"] * 3
    return waits


def test_only_a_completion_that_can_be_redone_skips_the_disk_wait(
    url: str, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Durability NORMAL: a completion that does not end the run commits without waiting for
    the server's disk (`synchronous_commit` off for that transaction only); the responses and
    the run's end wait. FULL: every commit waits."""
    normal = [True, False, True, False, True, True]
    assert _commit_waits(url, "NORMAL", clock, monkeypatch) == normal
    assert _commit_waits(url, "FULL", clock, monkeypatch) == [True] * 6


def _lose_completion(target: str, run_id: str, n: int) -> None:
    """What a crash of the database server does to a completion that had not reached its disk
    (PostgreSQL, durability NORMAL): the step is pending again, its results and events gone."""
    with Db(target) as db:
        after = db.one(
            "SELECT completed_after_seq FROM steps WHERE run_id = ? AND n = ?", run_id, n
        )[0]
        db.run("DELETE FROM events WHERE run_id = ? AND seq > ?", run_id, after)
        db.run(
            "UPDATE steps SET state = 'pending', tool_results_json = NULL, completed_at = NULL, "
            "completed_after_seq = NULL WHERE run_id = ? AND n = ?",
            run_id,
            n,
        )


def test_a_completion_the_database_lost_is_written_again_by_its_driver(pg: Store, url: str) -> None:
    """The next step's response finds the step before it pending (the server lost its
    completion): the driver still holds what it wrote, writes it again with an event saying
    so, and keeps the paid response; the run reads as if nothing had happened."""
    store = pg
    run, lease = store.runs.create(_new_run())
    use = tool_use("read_message", {"id": "m1"}, "tu_1")
    results = [{"type": "tool_result", "tool_use_id": "tu_1", "content": "body\u0000"}]
    store.steps.begin(lease, 1, turn(use), 1)
    store.steps.complete(lease, 1, results, effects=False)
    _lose_completion(url, run.id, 1)
    assert [s.state for s in store.steps.of(run.id)] == ["pending"]

    store.steps.begin(lease, 2, turn(text("brief")), 1)
    first, second = store.steps.of(run.id)
    assert (first.state, first.tool_results, second.state) == ("complete", results, "pending")
    rewritten = [e for e in store.events.of(run.id) if e.kind == "step_completion_rewritten"]
    assert [e.detail["step"] for e in rewritten] == [1]
    assert "lost" in rewritten[0].detail["reason"]
    assert store.runs.get(run.id).usage.input_tokens == 200  # both responses, each counted once


def test_a_step_never_follows_a_pending_one_written_by_another_process(
    url: str, clock: FixedClock
) -> None:
    """A process that did not write the lost completion has nothing to write again: the
    response is refused with one line naming the step, and nothing of it is stored (the run
    is then resumed from the pending step)."""
    with open_store(url, clock=clock) as first:
        run, lease = first.runs.create(_new_run())
        first.steps.begin(lease, 1, turn(tool_use("read_message", {"id": "m1"}, "tu_1")), 1)
        first.steps.complete(lease, 1, [{"type": "tool_result", "tool_use_id": "tu_1"}])
    _lose_completion(url, run.id, 1)
    with open_store(url, clock=clock) as other:
        with pytest.raises(StoreError, match=r"step 1 is not complete in the database"):
            other.steps.begin(lease, 2, turn(text("brief")), 1)
        assert [s.n for s in other.steps.of(run.id)] == [1]
        assert other.runs.get(run.id).usage.input_tokens == 100  # the refused usage not added


def test_a_steps_writes_are_prepared_whatever_the_size_of_its_numbers(pg: Store) -> None:
    """psycopg prepares a statement after five uses of the same SQL *and parameter types*; an
    int goes as int2, int4 or int8 by its size, so token counts that change size from step to
    step would keep a step's writes unprepared (planned afresh each time). Every int is sent
    as int8: by the eighth step both writes run as prepared statements (no Parse sent)."""
    run, lease = pg.runs.create(_new_run())
    conn = pg.db._conn  # type: ignore[attr-defined]
    read = tool_use("read_inbox", {}, "toolu_a")
    results = [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "[]"}]
    sizes = [(100, 20), (40_000, 70_000)]  # int2-sized, then int4-sized counts, alternately
    for n in range(1, 8):
        pg.steps.begin(lease, n, turn(read, usage=sizes[n % 2]), 1)
        pg.steps.complete(lease, n, results, effects=False)
    with tempfile.TemporaryFile("w+") as trace:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        pg.steps.begin(lease, 8, turn(read, usage=sizes[0]), 1)
        pg.steps.complete(lease, 8, results, effects=False)
        conn.pgconn.untrace()
        trace.seek(0)
        sent = [line.split("\t")[2] for line in trace.read().splitlines() if line[:2] == "F\t"]
    assert sent.count("Bind") == 2 and "Parse" not in sent, sent
    assert pg.runs.get(run.id).usage.input_tokens == 4 * 100 + 4 * 40_000


def test_an_int_beyond_int8_is_the_servers_refusal_not_an_overflow(pg: Store) -> None:
    """Every int is sent as int8; one beyond it (a usage count from a broken API, say) goes as
    numeric, so the server refuses it as it did before (a DatabaseError: one line, exit 4),
    instead of psycopg raising OverflowError before sending."""
    run, lease = pg.runs.create(_new_run())
    with pytest.raises(DatabaseError, match="out of range"):
        pg.steps.begin(lease, 1, turn(text("x"), usage=(2**63, 1)), 1)
    pg.steps.begin(lease, 1, turn(text("x"), usage=(2**63 - 1, 1)), 1)
    assert pg.runs.get(run.id).usage.input_tokens == 2**63 - 1
