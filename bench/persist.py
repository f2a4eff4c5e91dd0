"""Per-step persistence cost and bytes on disk: Dayflow against the floor and two libraries.

Each contender is a generator over the same workload steps, on a fresh SQLite file (WAL, the
same `synchronous` setting): it sets itself up, then yields the time of each step (measured
inside it, around exactly that step's work) and finally returns the bytes its steps added.
`run_rounds` drives all of a round's contenders in lockstep, spread evenly over the round's
length in a shuffled order per tick, so every contender's steps (an N=40 run's too, beside an
N=1000 one) share the same stretch of time on this noisy machine.

- `floor`: the least any durable store can do: serialise the step (assistant blocks and tool
  results) and INSERT it as one row in one `BEGIN IMMEDIATE … COMMIT` transaction.
- `dayflow_store`: Dayflow's store calls for a step, with the workload's payloads:
  `steps.begin` (pending step + the run's token totals) and `steps.complete` (the tool results,
  the calls' events, the lease renewal), two transactions, as in the loop for read-only calls
  (a call with a local effect, `create_task`, would add one `steps.save_effect` transaction).
- `dayflow_loop`: Dayflow's real loop (`start_run`, in a thread) against a zero-latency model
  whose turns are the workload's assistant turns and which hands out one turn per step; its
  `read_message` tool reads an in-memory inbox of three messages sized like the payload
  classes. A step is the time from one model call's return to the next call: both writes, the
  tool calls, the lease checks and the next request. Compaction off.
- `dayflow_loop_compacting`: the same with compaction at `--compact-at 6000` (a long run's
  setting); not a persistence figure (compaction is model-context work), shown apart.
- `langgraph`: `SqliteSaver.put` once per step of a checkpoint whose `messages` channel holds
  the whole message list (what a graph with an `add_messages` channel checkpoints), the step's
  token counts in the checkpoint metadata. One `put` per step, no `put_writes`: less than a
  real two-node graph writes.
- `session`: the OpenAI Agents SDK's `SQLiteSession.add_items` once per step, with the step as
  Responses items (an assistant message, the function calls, their outputs), awaited on one
  event loop. It keeps no token counts, no write-ahead of the response and no events.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import sqlite3
import statistics
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from time import perf_counter_ns
from typing import Any

from bench.compaction_tokens import LONG_RUN_COMPACT_AT
from bench.workload import USER_MSG, Step, dumps, payload
from dayflow import tools as toolbox
from dayflow.agent import SYSTEM_PROMPT, BriefOptions, Loop, start_run
from dayflow.models import Limits, ModelRequest, ModelResponse, RunSettings, Usage
from dayflow.sources.inbox import Inbox, legacy_inbox
from dayflow.store import Lease, NewRun, Store, open_store

MODEL = "claude-haiku-5-5"

Steps = Generator[int, None, int]  # yields ns per step, returns the bytes the steps added
Contender = Callable[[Path, tuple[Step, ...], str], Steps]


@dataclass(frozen=True)
class Result:
    times: list[int]  # ns per step
    bytes_added: int  # on-disk bytes the steps added (after a WAL checkpoint)

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def disk_bytes(path: Path) -> int:
    """The database's size with its WAL folded in (a TRUNCATE checkpoint first)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    wal = Path(f"{path}-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def floor(path: Path, workload: tuple[Step, ...], synchronous: str) -> Steps:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    conn.execute(
        "CREATE TABLE steps (run_id TEXT, n INTEGER, assistant_json TEXT, tool_results_json TEXT,"
        " input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER,"
        " PRIMARY KEY (run_id, n)) WITHOUT ROWID"
    )
    before = disk_bytes(path)
    for step in workload:
        t0 = perf_counter_ns()
        row = step.row()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO steps VALUES (?,?,?,?,?,?,?)", row)
        conn.execute("COMMIT")
        yield perf_counter_ns() - t0
    conn.close()
    return disk_bytes(path) - before


def new_run(steps: int) -> NewRun:
    """The run every Dayflow contender stores its steps under."""
    return NewRun(
        model=MODEL,
        brief_date="2026-11-05",
        system=SYSTEM_PROMPT,
        tools=toolbox.definitions(),
        user_msg=USER_MSG,
        max_tokens=4096,
        max_steps=steps + 1,
        budget=None,
        task_cap=20,
        # Compaction off: a resume of this run sends (and so rebuilds) its whole history.
        settings=RunSettings(compact_at=0),
    )


def response(step: Step) -> ModelResponse:
    usage = Usage(step.input_tokens, step.output_tokens, 0, step.cache_read_tokens)
    return ModelResponse(step.assistant, "tool_use", usage, MODEL, f"req_{step.n:05d}")


def store_step(store: Store, lease: Lease, step: Step, resp: ModelResponse) -> None:
    """Write one step as the loop does: begin (the response, written ahead), then complete
    (the reads' results, their events, the lease renewal); the workload's calls are reads,
    which save no effect of their own."""
    store.steps.begin(lease, step.n, resp, 0)
    events = [
        ("tool_executed", {"step": step.n, "tool": use["name"], "ok": True})
        for use in step.assistant[1:]
    ]
    store.steps.complete(lease, step.n, step.results, events=events, effects=False)


def dayflow_store(path: Path, workload: tuple[Step, ...], synchronous: str) -> Steps:
    with open_store(path, durability=synchronous) as store:
        run, lease = store.runs.create(new_run(len(workload)))
        before = disk_bytes(path)
        for step in workload:
            resp = response(step)  # the provider's work, not the store's
            t0 = perf_counter_ns()
            store_step(store, lease, step, resp)
            yield perf_counter_ns() - t0
    return disk_bytes(path) - before


class _Inbox:
    """Three messages, one per payload size class, as `read_message` returns them."""

    def __init__(self) -> None:
        rng = random.Random(0)
        self._messages = []
        for cls, size in (("s", 200), ("m", 2_000), ("l", 20_000)):
            message = json.loads(payload(rng, f"msg-{cls}", size))["message"]
            self._messages.append(message | {"snippet": message["body"][:200]})

    def messages(self) -> list[dict[str, Any]]:
        return self._messages  # read_message only reads them: no copy needed


class _Calendar:
    def events(self, first: Any = None, last: Any = None) -> list[dict[str, Any]]:
        return []


_SOURCES = (_Inbox(), _Calendar())


def loop_sources(settings: RunSettings, day: date) -> tuple[Inbox, _Calendar]:
    return legacy_inbox(_SOURCES[0]), _SOURCES[1]  # a fresh Inbox a run, as the loop opens


class SteppedModel:
    """A zero-latency model that the driving thread lets through one turn at a time.

    `step()` lets the loop's thread have its next turn and returns how long the loop then
    worked until it called the model again; the waiting in between is not counted. It keeps
    no copy of the requests (tests/scripted.py deep-copies each, which would grow with N)."""

    def __init__(self, turns: list[ModelResponse]) -> None:
        self._turns = iter(turns)
        self._go = threading.Semaphore(0)
        self._done = threading.Semaphore(0)
        self._started: int | None = None
        self._last = 0
        self._ended: BaseException | str | None = None

    def create(self, request: ModelRequest) -> ModelResponse:
        now = perf_counter_ns()
        if self._started is not None:
            self._last = now - self._started
            self._done.release()
        self._go.acquire()
        self._started = perf_counter_ns()
        return next(self._turns)

    def count_tokens(self, request: ModelRequest) -> int | None:
        return None

    def step(self) -> int:
        self._go.release()
        if not self._done.acquire(timeout=120) or self._ended is not None:
            raise RuntimeError(f"the loop ended before its last turn: {self._ended!r}")
        return self._last

    def last_turn(self) -> None:
        """Let the loop make its final call (the brief, which ends the run)."""
        self._go.release()

    def ended(self, why: BaseException | str) -> None:
        """Called by the loop's thread when it returns or fails: wakes a waiting `step()`."""
        self._ended = why
        self._done.release()


def dayflow_loop(
    path: Path, workload: tuple[Step, ...], synchronous: str, compact_at: int = 0
) -> Steps:
    final = ModelResponse([{"type": "text", "text": "## Today\nNothing."}], "end_turn", Usage(), "")
    model = SteppedModel([response(step) for step in workload] + [final])
    results = []

    def drive() -> None:
        try:
            with open_store(path, durability=synchronous) as store:
                options = BriefOptions(
                    date(2026, 11, 5),
                    model=MODEL,
                    limits=Limits(max_steps=len(workload) + 1),
                    settings=RunSettings(compact_at=compact_at),
                )
                results.append(start_run(Loop(store, model, sources=loop_sources), options))
        except BaseException as exc:
            model.ended(exc)
        else:
            model.ended("returned")

    thread = threading.Thread(target=drive, name="dayflow-loop", daemon=True)
    thread.start()
    for _ in workload:
        yield model.step()
    model.last_turn()
    thread.join(timeout=120)
    result = results[0] if results else None
    assert result is not None and result.run.status == "done", result
    assert result.calls == len(workload) + 1
    return 0  # bytes are measured on the store path, whose payloads are the workload's own


def dayflow_loop_compacting(path: Path, workload: tuple[Step, ...], synchronous: str) -> Steps:
    """The loop with compaction at a long run's threshold (`--compact-at 6000`): the workload's
    steps are large, so it compacts every few steps, which is what this figure is about."""
    return dayflow_loop(path, workload, synchronous, compact_at=LONG_RUN_COMPACT_AT)


def langgraph_puts(saver: Any, workload: tuple[Step, ...]) -> Generator[int, None, None]:
    """One `put` per step of a checkpoint whose `messages` channel holds the whole list (what
    an `add_messages` channel checkpoints), timed: the same on every LangGraph saver."""
    from langgraph.checkpoint.base import empty_checkpoint

    config: Any = {"configurable": {"thread_id": "bench", "checkpoint_ns": ""}}
    messages: list[dict[str, Any]] = [USER_MSG]
    version = None
    for step in workload:
        t0 = perf_counter_ns()
        messages.extend(step.messages())
        version = saver.get_next_version(version, None)
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": messages}
        checkpoint["channel_versions"] = {"messages": version}
        usage = {"input_tokens": step.input_tokens, "output_tokens": step.output_tokens}
        metadata: Any = {"source": "loop", "step": step.n, "usage": usage}
        config = saver.put(config, checkpoint, metadata, {"messages": version})
        yield perf_counter_ns() - t0


def langgraph(path: Path, workload: tuple[Step, ...], synchronous: str) -> Steps:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()  # sets WAL
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    before = disk_bytes(path)
    yield from langgraph_puts(saver, workload)
    conn.close()
    return disk_bytes(path) - before


def responses_items(step: Step) -> list[dict[str, Any]]:
    """The step as the Agents SDK keeps it: Responses API input items."""
    text = step.assistant[0]["text"]
    items: list[dict[str, Any]] = [
        {
            "type": "message",
            "id": f"msg_{step.n:05d}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    ]
    for use in step.assistant[1:]:
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{use['id']}",
                "call_id": use["id"],
                "name": use["name"],
                "arguments": dumps(use["input"]),
                "status": "completed",
            }
        )
    for result in step.results:
        output = {"call_id": result["tool_use_id"], "output": result["content"]}
        items.append({"type": "function_call_output", **output})
    return items


def session(path: Path, workload: tuple[Step, ...], synchronous: str) -> Steps:
    from agents import SQLiteSession

    class Session(SQLiteSession):
        # The SDK sets WAL on each connection it opens; add the same synchronous setting.
        @staticmethod
        def _configure_connection(conn: sqlite3.Connection) -> None:
            SQLiteSession._configure_connection(conn)
            conn.execute(f"PRAGMA synchronous = {synchronous}")

    store = Session("bench", path)
    loop = asyncio.new_event_loop()

    async def add(items: list[dict[str, Any]]) -> int:
        t0 = perf_counter_ns()
        await store.add_items(items)
        return perf_counter_ns() - t0

    try:
        loop.run_until_complete(store.get_items())  # open the worker thread's connection
        before = disk_bytes(path)
        for step in workload:
            yield loop.run_until_complete(add(responses_items(step)))
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
        store.close()
    return disk_bytes(path) - before


CONTENDERS: dict[str, Contender] = {
    "floor": floor,
    "dayflow_store": dayflow_store,
    "dayflow_loop": dayflow_loop,
    "dayflow_loop_compacting": dayflow_loop_compacting,
    "langgraph": langgraph,
    "session": session,
}

Key = tuple[str, int]  # (contender, N)


def lockstep(runs: dict[Key, Steps], rng: random.Random) -> dict[Key, Result]:
    """Advance every run in step with the longest: at tick i of T, a run of N steps has done
    ceil(i·N/T); within a tick the runs go in a shuffled order."""
    times: dict[Key, list[int]] = {key: [] for key in runs}
    ticks = max(n for _, n in runs)
    for i in range(1, ticks + 1):
        order = list(runs)
        rng.shuffle(order)
        for key in order:
            while len(times[key]) < -(-i * key[1] // ticks):
                times[key].append(next(runs[key]))
    out = {}
    for key, steps in runs.items():
        try:
            next(steps)
        except StopIteration as stop:
            out[key] = Result(times[key], stop.value)
        else:
            raise AssertionError(f"{key} has more steps than its workload")
    return out


def run_rounds(
    plan: list[Key],
    workloads: dict[int, tuple[Step, ...]],
    rounds: int,
    synchronous: str,
    tmp: Path,
    seed: int,
) -> list[dict[Key, Result]]:
    """Run every (contender, N) of `plan` once per round, all of a round in lockstep."""
    rng = random.Random(seed)
    out = []
    for r in range(rounds):
        paths = {key: tmp / f"{key[0]}-{key[1]}-{synchronous}-{r}.db" for key in plan}
        runs = {key: CONTENDERS[key[0]](paths[key], workloads[key[1]], synchronous) for key in plan}
        gc.collect()
        out.append(lockstep(runs, rng))
        for path in paths.values():
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
    return out


class _Marking:
    """A zero-latency model that notes how many statements had run at each of its calls."""

    def __init__(self, turns: list[ModelResponse], statements: list[str]) -> None:
        self._turns = iter(turns)
        self._statements = statements
        self.marks: list[int] = []

    def create(self, request: ModelRequest) -> ModelResponse:
        self.marks.append(len(self._statements))
        return next(self._turns)

    def count_tokens(self, request: ModelRequest) -> int | None:
        return None


def sql_per_step(workload: tuple[Step, ...], tmp: Path) -> dict[str, tuple[float, float]]:
    """Transactions and SQL statements per step of the store path and of the loop, counted
    with SQLite's trace callback in an untimed run."""

    def per_step(statements: list[str]) -> tuple[float, float]:
        begins = sum(1 for s in statements if s.lstrip().upper().startswith("BEGIN"))
        return begins / len(workload), len(statements) / len(workload)

    out = {}
    statements: list[str] = []
    with open_store(tmp / "count-store.db") as store:
        run, lease = store.runs.create(new_run(len(workload)))
        store.db.conn.set_trace_callback(statements.append)
        for step in workload:
            store_step(store, lease, step, response(step))
    out["dayflow_store"] = per_step(statements)
    final = ModelResponse([{"type": "text", "text": "## Today\nNothing."}], "end_turn", Usage(), "")
    loop_statements: list[str] = []
    model = _Marking([response(step) for step in workload] + [final], loop_statements)
    with open_store(tmp / "count-loop.db") as store:
        store.db.conn.set_trace_callback(loop_statements.append)
        options = BriefOptions(
            date(2026, 11, 5),
            model=MODEL,
            limits=Limits(max_steps=len(workload) + 1),
            settings=RunSettings(compact_at=0),
        )
        start_run(Loop(store, model, sources=loop_sources), options)
    out["dayflow_loop"] = per_step(loop_statements[model.marks[0] : model.marks[-1]])
    for name in ("count-store.db", "count-loop.db"):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{tmp / name}{suffix}").unlink(missing_ok=True)
    return out


def dayflow_breakdown(workload: tuple[Step, ...], tmp: Path) -> list[tuple[str, int]]:
    """Where Dayflow's bytes go for `workload` (store path, NORMAL): bytes per table and index
    (SQLite's dbstat), largest first."""
    path = tmp / "breakdown.db"
    lockstep(
        {("dayflow_store", len(workload)): dayflow_store(path, workload, "NORMAL")},
        random.Random(0),
    )
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    finally:
        conn.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return [(name, int(size)) for name, size in rows]
