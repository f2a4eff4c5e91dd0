"""The brief queue on PostgreSQL: the one module that imports pgqueuer (`dayflow[fleet]`).

Why pgqueuer (issue 25 compared it with procrastinate; the figures are in the commit that
added it): a job whose worker was killed -9 is picked again by another worker once its
heartbeat is stale, with nothing to run by hand (procrastinate needs a periodic task of one's
own to retry stalled jobs); its de-duplication key holds while a job is queued *and* while it
is being run (procrastinate's queueing lock only while queued); and its per-entrypoint
concurrency limit is kept by the database across every worker, which is what a limit per API
key needs. Its cost is import time (pydantic models), paid only by `worker` and `fleet`.

What a job means stays Dayflow's: its payload names a (profile, day) (`BriefJob`), its
de-duplication key is that pair, and its entrypoint names the API key its calls go to
(`brief.<key id>`), so the database caps the briefs in flight per key. Who drives the run is
decided by the run's lease and the day's lock, never by the queue: a job picked twice (a
heartbeat that came late) finds the day's run done, or driven, and changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

import psycopg
from pgqueuer import errors as pgq_errors
from pgqueuer.adapters.drivers.psycopg import PsycopgDriver
from pgqueuer.core.qm import QueueManager
from pgqueuer.ports.driver import NotifyCallback
from pgqueuer.queries import Queries
from pgqueuer.types import QueueExecutionMode

from dayflow.errors import StoreError
from dayflow.fleet.profiles import BriefJob
from dayflow.frozen import Frozen

ENTRYPOINT_PREFIX = "brief."
RetryRequested = pgq_errors.RetryRequested


class QueueLost(StoreError):
    """The queue's connection failed (a server restart): the worker connects again."""


class Waiting(Frozen):
    """A job in the queue: the brief it asks for, whether a worker holds it, since when, and
    when its worker last beat for it (the database's clock; a held job whose worker died
    stops beating, and is retaken once its beat is older than the taker's --heartbeat)."""

    job: BriefJob
    picked: bool
    created: datetime
    attempts: int
    heartbeat: datetime
    # When it may be taken (the database's clock): later than now for a job put back with a
    # delay (a rate limit), which no worker takes before then.
    execute_after: datetime | None = None

    def deferred(self, now: datetime) -> bool:
        """Whether it is waiting for its delay to pass (not held, not yet takeable)."""
        return not self.picked and self.execute_after is not None and self.execute_after > now


def connection_url(url: str) -> str:
    """The URL psycopg connects with: Dayflow's own options (`dayflow_*`) removed."""
    from dayflow.store.postgres_sql import split_options

    return split_options(url)[0]


class SplitDriver:
    """pgqueuer's psycopg driver on two connections: one for its statements, one for LISTEN.

    On one connection, the driver's NOTIFY watcher holds the connection's lock for up to a
    second at a time (`notifies(timeout=1.0)`), so every dequeue, heartbeat and completion
    waited for it: a worker took about one job a second, whatever its concurrency (measured:
    80 jobs of 0.6 s, 8 at once, 44.6 s on one connection, 7.4 s on two)."""

    def __init__(
        self, statements: psycopg.AsyncConnection[Any], listen: psycopg.AsyncConnection[Any]
    ):
        self._do, self._listen = PsycopgDriver(statements), PsycopgDriver(listen)

    async def fetch(self, query: str, *args: object) -> list[dict[str, object]]:
        return await self._do.fetch(query, *args)

    async def execute(self, query: str, *args: object) -> str:
        return await self._do.execute(query, *args)

    async def notify(self, channel: str, payload: str) -> None:
        await self._do.notify(channel, payload)

    async def add_listener(self, channel: str, callback: NotifyCallback) -> None:
        await self._listen.add_listener(channel, callback)

    async def remove_listener(self, channel: str, callback: NotifyCallback) -> None:
        await self._listen.remove_listener(channel, callback)

    @property
    def shutdown(self) -> asyncio.Event:
        return self._listen.shutdown

    @property
    def tm(self) -> Any:
        return self._listen.tm

    async def __aenter__(self) -> SplitDriver:
        await self._listen.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._listen.__aexit__(*exc)


@contextlib.asynccontextmanager
async def connect(url: str) -> AsyncIterator[Queries]:
    """The queue of the database at `url` (its tables made on first use, in the URL's
    schema), on two autocommit connections (`SplitDriver`)."""
    conns: list[psycopg.AsyncConnection[Any]] = []
    try:
        try:
            for _ in range(2):
                conns.append(
                    await psycopg.AsyncConnection.connect(connection_url(url), autocommit=True)
                )
        except psycopg.Error as exc:
            raise QueueLost(f"cannot reach the queue's database: {_first_line(exc)}") from None
        queries = Queries(SplitDriver(conns[0], conns[1]))
        # Under the library's own lock: workers starting together may race here.
        await _lost_as(queries.apply_upgrade())
        yield queries
    finally:
        for conn in conns:
            with contextlib.suppress(psycopg.Error, OSError):
                await conn.close()


async def enqueue(queries: Queries, jobs: Iterable[tuple[BriefJob, str]]) -> int:
    """Queue each (job, entrypoint) unless a job with its key is queued or running; how many
    were queued."""
    pairs = list(jobs)
    if not pairs:
        return 0
    payloads: list[bytes | None] = [job.payload() for job, _ in pairs]
    keys: list[str | None] = [job.key for job, _ in pairs]
    ids = await queries.enqueue(
        [entrypoint for _, entrypoint in pairs],
        payloads,
        [0] * len(pairs),
        dedupe_key=keys,
        on_conflict="skip",
    )
    return sum(1 for i in ids if i is not None)


async def waiting(queries: Queries) -> list[Waiting]:
    """The jobs queued or being run, oldest first."""
    out: list[Waiting] = []
    offset = 0
    while True:
        page = await queries.browse_queue(limit=500, offset=offset, statuses=["queued", "picked"])
        for row in page:
            if not str(row.entrypoint).startswith(ENTRYPOINT_PREFIX):
                continue  # another application's jobs in the same queue tables
            job = BriefJob.from_payload(row.payload)
            picked = row.status == "picked"
            out.append(
                Waiting(job, picked, row.created, row.attempts, row.heartbeat, row.execute_after)
            )
        if len(page) < 500:
            return sorted(out, key=lambda w: w.created)
        offset += len(page)


Handler = Callable[[BriefJob, int], Awaitable[None]]


async def work(
    queries: Queries,
    entrypoints: dict[str, int],
    handle: Handler,
    *,
    concurrency: int,
    until_idle: bool,
    heartbeat: timedelta,
    poll: timedelta,
    stop: asyncio.Event,
) -> None:
    """Take jobs of `entrypoints` (name -> the most run at once across every worker, 0: no
    limit) and await `handle(job, attempts)` for each, `concurrency` at a time in this process,
    until `stop` is set (or, `until_idle`, the queue has nothing left that is due). A handler
    raising `RetryRequested` puts its job back, due after the delay."""
    qm = QueueManager(queries)
    for name, limit in entrypoints.items():

        async def run(job: Any) -> None:
            await handle(BriefJob.from_payload(job.payload), int(job.attempts))

        qm.entrypoint(name, concurrency_limit=limit)(run)

    async def stopper() -> None:
        await stop.wait()
        qm.shutdown.set()

    watch = asyncio.create_task(stopper())
    # A few jobs more than it runs are held (picked, their heartbeats kept), so a brief that
    # ends is followed at once by the next rather than at the next poll; they are taken in
    # batches (the library insists on at least twice the batch held). A killed worker's held
    # jobs are retaken once their heartbeat is stale; none of them had started.
    held = concurrency + max(1, concurrency // 4)
    try:
        await _lost_as(
            qm.run(
                dequeue_timeout=poll,
                batch_size=max(1, held // 2),
                max_concurrent_tasks=held,
                heartbeat_timeout=heartbeat,
                mode=QueueExecutionMode.drain if until_idle else QueueExecutionMode.continuous,
                # The LISTEN connection alone dropped (its health check fails): start afresh
                # on two new connections rather than poll on without notifications.
                shutdown_on_listener_failure=True,
            )
        )
    finally:
        watch.cancel()


async def _lost_as(work: Awaitable[Any]) -> None:
    """`work`, a failed connection under it raised as QueueLost."""
    try:
        await work
    except (psycopg.Error, OSError) as exc:
        raise QueueLost(f"lost the queue's database: {_first_line(exc)}") from exc
    except pgq_errors.FailingListenerError as exc:
        raise QueueLost("lost the queue's notifications (its LISTEN connection)") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
