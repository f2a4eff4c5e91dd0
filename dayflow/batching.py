"""Many runs' model calls through the Message Batches API, in rounds: half the price.

Each run is driven by the normal loop (`agent.start_run` / `resume_run`), in a thread of its own
with a store of its own, and given `Rounds.client` as its model. That client's `create` posts
the request and waits. When every run being driven is waiting (none is running its tools),
the coordinator (`Rounds.serve`, in the caller's thread, with its own store) submits all the new
requests as one batch, then polls it; each result goes back to the run that asked, whose loop
commits it exactly as a normal answer (`steps.begin`: the same step row, the same bytes; only
the step's `batch_id` and the price differ), runs the tools and posts its next request, which
joins the next round.

Where a kill -9 can land (the write-ahead order, as in `agent`):
- before `batches.create` answers: nothing is recorded, so the next driver submits the round
  again. If the API had taken the lost create, that batch is paid for and never read: the one
  window where a kill re-pays (a whole round, where a normal call re-pays one call);
- after the create answers, `store.steps.record_batch` commits every item's (run, step, batch,
  custom_id, digest) in one transaction, before any poll: the next driver's loop asks for the
  same step with the same request (resume rebuilds it byte for byte; the digest checks it),
  finds the record and polls that batch again; it submits nothing;
- after some results are committed: those runs are past that step; the rest find their record,
  and the ended batch's results are read again (reading is free): no step is paid twice.
A request whose record does not match (a resume under a new --max-tokens) goes to the normal API.

The normal API (`fallback`, any `ModelClient`) answers, in the run's own thread, what a batch
did not: an errored, expired or canceled item, a round the Batches API refused, and every call
once the cut-off has passed (a batch still in progress then is canceled; what it finished is
kept, the rest goes to the normal API).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from datetime import time as wall_time
from typing import TypeVar, cast

from dayflow.agent import Loop, RunResult, resume_run
from dayflow.clock import Clock
from dayflow.errors import ModelError, StoreError, UsageError
from dayflow.models import ModelRequest, ModelResponse
from dayflow.providers import SUCCEEDED, BatchAPI, ModelClient
from dayflow.store import BatchItem, Store

_T = TypeVar("_T")
DEFAULT_POLL_EVERY = 30.0  # seconds between polls of a batch in progress
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_HHMM = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")


def batch_api(client: ModelClient, provider: str = "anthropic") -> BatchAPI:
    """The Message Batches API behind `client` (the Anthropic API's client), or a UsageError
    where there is none (the offline model, a local server)."""
    names = ("submit_batch", "batch_status", "batch_results", "cancel_batch")
    if provider != "anthropic" or not all(callable(getattr(client, n, None)) for n in names):
        raise UsageError(
            "--batch needs the Anthropic API (its Message Batches API): the offline model and "
            "local model servers have none"
        )
    return cast(BatchAPI, client)


def next_cutoff(text: str, now: datetime) -> datetime:
    """The next time after `now` that it is `text` ("HH:MM", 24-hour, UTC; or "HH:MM ZONE",
    an IANA zone's wall time, DST included): when a worker's batching ends. Aware, in the
    zone it names."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    hhmm, space, tz = text.partition(" ")
    match = _HHMM.fullmatch(hhmm)
    if match is None:
        raise UsageError(
            f"--batch-cutoff must be HH:MM (24-hour, UTC) or HH:MM ZONE, not {text[:40]!r}"
        )
    try:
        where = ZoneInfo(tz) if space else UTC
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"--batch-cutoff: unknown timezone {tz[:60]!r}") from None
    today = now.astimezone(where).date()
    for day in (today, today + timedelta(days=1), today + timedelta(days=2)):
        wall = datetime.combine(day, wall_time(int(match[1]), int(match[2])), tzinfo=where)
        at = wall.astimezone(UTC).astimezone(where)  # a time a DST gap skips: just after it
        if at > now:
            return at
    raise AssertionError("unreachable: a wall time recurs within two days")


def request_digest(request: ModelRequest) -> str:
    """A digest of everything the request sends (not who asked): a resumed run's request must
    match the one recorded with its batch to take that batch's answer."""
    sent = [request.model, request.system, request.tools, request.messages, request.max_tokens]
    text = json.dumps(sent, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def custom_id(run_id: str, step: int) -> str:
    """The request's id within its batch: the run and the step, when they fit the API's
    pattern, else a digest of them."""
    plain = f"{run_id}-{step}"
    if _CUSTOM_ID.match(plain):
        return plain
    return "h" + hashlib.sha256(plain.encode()).hexdigest()[:40]


@dataclass
class _Post:
    """One run's request, waiting for its answer (or to be told to use the normal API)."""

    request: ModelRequest
    item: BatchItem
    done: threading.Event = field(default_factory=threading.Event)
    response: ModelResponse | None = None
    why_not: str | None = None  # set: answer it on the normal API, for this reason


@dataclass
class _Flight:
    """A submitted batch and the posts waiting for it."""

    posts: list[_Post]
    canceled: bool = False


class _Left:
    """A driver thread finished (its run is done, stopped or failed)."""


class Rounds:
    """The coordinator: it owns `store` (its own connection) and talks to `api`; the runs'
    threads talk to it only through `client` and `driving()`."""

    def __init__(
        self,
        store: Store,
        api: BatchAPI,
        fallback: ModelClient,
        *,
        clock: Clock,
        cutoff: datetime | None = None,
        poll_every: float = DEFAULT_POLL_EVERY,
        gather: float = 0.0,
        report: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.store, self.api, self.fallback, self.clock = store, api, fallback, clock
        self.cutoff, self.poll_every, self.report = cutoff, poll_every, report
        # Seconds a round waits for drives that start late (a worker's, fed by a queue) once
        # the first of its requests is in: 0 where every drive is counted before it starts.
        self.gather = gather
        self._first_waiting = 0.0
        self.client = _RoundsClient(self)
        self.rounds = 0  # batches submitted by this coordinator
        self._inbox: queue.Queue[_Post | _Left] = queue.Queue()
        self._lock = threading.Lock()
        self._driving = 0
        self._waiting: list[_Post] = []
        self._flights: dict[str, _Flight] = {}
        self._outstanding = 0  # posts not yet answered
        self._broken: str | None = None  # set: the coordinator stopped, and why

    @contextmanager
    def driving(self) -> Iterator[None]:
        """Wrap each drive that uses `client`: a round is submitted only when every drive
        inside is waiting for its answer. (`enter` before the drive's thread starts, and
        `leave` when it ends, say the same.)"""
        self.enter()
        try:
            yield
        finally:
            self.leave()

    def enter(self, drives: int = 1) -> None:
        """Count `drives` more drives that use `client`."""
        with self._lock:
            self._driving += drives

    def leave(self) -> None:
        """One drive has ended."""
        with self._lock:
            self._driving -= 1
        self._inbox.put(_Left())

    def serve(self, until: Callable[[], bool]) -> None:
        """Coordinate rounds until `until()` holds and nothing is waiting (call it in the
        thread that owns `store`)."""
        try:
            self._serve(until)
        except BaseException as exc:
            # No drive may wait for ever on a coordinator that is gone: each is answered by
            # the normal API from here on.
            self._broken = f"the batch coordinator stopped ({type(exc).__name__}: {exc})"
            self._release_all(self._broken)
            raise

    def _serve(self, until: Callable[[], bool]) -> None:
        next_poll = time.monotonic()
        while True:
            try:
                message = self._inbox.get(timeout=self.poll_every if self._flights else 0.2)
            except queue.Empty:
                message = None
            if isinstance(message, _Post):
                self._take(message)
            if self._past_cutoff():
                self._cut_off()
            elif self._waiting and self._all_waiting():
                self._submit()
            if self._flights and time.monotonic() >= next_poll:
                self._poll()
                next_poll = time.monotonic() + self.poll_every
            if until() and not self._outstanding and self._inbox.empty():
                return

    # ------------------------------------------------------------------ called by drivers

    def post(self, request: ModelRequest) -> ModelResponse:
        """Called by a run's thread (through `client`): the answer to `request`."""
        if request.run_id is None or request.step is None or self._broken:
            return self.fallback.create(request)  # not a run's call, or no coordinator
        item = BatchItem(
            request.run_id,
            request.step,
            custom_id(request.run_id, request.step),
            request_digest(request),
        )
        post = _Post(request, item)
        with self._lock:  # counted and queued at once: `_all_waiting` sees both or neither
            self._outstanding += 1
            self._inbox.put(post)
        if self._broken:  # it stopped while this was being posted
            self._release_all(self._broken)
        post.done.wait()
        if post.response is not None:
            return post.response
        return self.fallback.create(request)

    # --------------------------------------------------------------- the coordinator's own

    def _all_waiting(self) -> bool:
        if time.monotonic() - self._first_waiting < self.gather:
            return False
        with self._lock:
            return self._outstanding >= self._driving and self._inbox.empty()

    def _past_cutoff(self) -> bool:
        return self.cutoff is not None and self.clock.now() >= self.cutoff

    def _take(self, post: _Post) -> None:
        """A new post: poll the batch its step was submitted in, if any; else it waits for
        the next round."""
        item = post.item
        found = self.store.steps.batch_of(item.run_id, item.step_n)
        if found is None:
            if self._past_cutoff():
                return self._answer(post, None, "past the cut-off")
            if not self._waiting:
                self._first_waiting = time.monotonic()
            self._waiting.append(post)
            return None
        batch_id, recorded = found
        if recorded.digest != item.digest:
            why = f"its request differs from the one sent in batch {batch_id}"
            return self._answer(post, None, why, batch_id)
        post.item = recorded
        self._flights.setdefault(batch_id, _Flight([])).posts.append(post)
        return None

    def _submit(self) -> None:
        posts, self._waiting = self._waiting, []
        try:
            batch_id = self.api.submit_batch([(p.item.custom_id, p.request) for p in posts])
        except ModelError as err:
            for post in posts:
                self._answer(post, None, f"the Batches API refused the round: {err}")
            return
        try:
            self.store.steps.record_batch(batch_id, [p.item for p in posts])
        except StoreError as err:
            # Paid for already: read it from memory while this process lives (only a kill
            # before the store is back would submit these requests again).
            self.report(f"batch {batch_id}: not recorded ({err}); polled from memory")
        self.rounds += 1
        self._flights[batch_id] = _Flight(posts)
        self.report(f"batch {batch_id}: {len(posts)} request(s) submitted")

    def _poll(self) -> None:
        for batch_id, flight in list(self._flights.items()):
            try:
                if self.api.batch_status(batch_id) != "ended":
                    continue
                outcomes = self.api.batch_results(batch_id)
            except ModelError as err:
                self.report(f"batch {batch_id}: {err}; polling again")
                continue
            del self._flights[batch_id]
            for post in flight.posts:
                outcome = outcomes.get(post.item.custom_id)
                if outcome is not None and outcome.kind == SUCCEEDED:
                    self._answer(post, outcome.response)
                else:
                    kind = "missing" if outcome is None else outcome.kind
                    detail = f" ({outcome.detail})" if outcome and outcome.detail else ""
                    self._answer(post, None, f"batch item {kind}{detail}", batch_id)

    def _cut_off(self) -> None:
        """Past the cut-off: what waits goes to the normal API; batches in progress are
        canceled (their finished items are still taken when they end)."""
        for post in self._waiting:
            self._answer(post, None, "past the cut-off")
        self._waiting = []
        for batch_id, flight in self._flights.items():
            if not flight.canceled:
                flight.canceled = True
                try:
                    self.api.cancel_batch(batch_id)
                except ModelError as err:  # it ends on its own then; polled all the same
                    self.report(f"batch {batch_id}: cancel failed: {err}")
                else:
                    self.report(f"batch {batch_id}: canceled at the cut-off")

    def _release_all(self, why: str) -> None:
        """Send every post not yet answered to the normal API."""
        with self._lock:
            posts = self._waiting + [p for f in self._flights.values() for p in f.posts]
            self._waiting, self._flights = [], {}
            while True:
                try:
                    message = self._inbox.get_nowait()
                except queue.Empty:
                    break
                if isinstance(message, _Post):
                    posts.append(message)
        for post in posts:
            with self._lock:
                if post.done.is_set():
                    continue
                post.why_not = why
                self._outstanding -= 1
                post.done.set()

    def _answer(
        self,
        post: _Post,
        response: ModelResponse | None,
        why_not: str | None = None,
        batch_id: str | None = None,
    ) -> None:
        if response is None:
            detail = {"step": post.item.step_n, "reason": why_not}
            if batch_id is not None:
                detail["batch_id"] = batch_id
            with contextlib.suppress(StoreError):  # a note: the answer matters more
                self.store.events.add(post.item.run_id, "batch_fallback", detail)
        post.response, post.why_not = response, why_not
        with self._lock:
            self._outstanding -= 1  # running again (its tools, or the normal API) from here
        post.done.set()


class _RoundsClient:
    """The `ModelClient` each run's loop is given (shared by every thread)."""

    def __init__(self, rounds: Rounds) -> None:
        self._rounds = rounds

    def create(self, request: ModelRequest) -> ModelResponse:
        return self._rounds.post(request)

    def count_tokens(self, request: ModelRequest) -> int | None:
        return self._rounds.fallback.count_tokens(request)


@contextmanager
def rounds_in_background(
    open_store: Callable[[], Store],
    make: Callable[[Store], Rounds],
    report: Callable[[str], None] = lambda line: None,
) -> Iterator[Rounds]:
    """The `Rounds` that `make` builds on a store of its own (`open_store`), coordinating in a
    thread of its own for as long as the block runs, for drives that start and end on their
    own (a worker's): wrap each in `rounds.driving()` and give it `rounds.client`. Leaving the
    block waits for every post."""
    ready, stop = threading.Event(), threading.Event()
    made: list[Rounds | BaseException] = []

    def serve() -> None:
        try:
            with open_store() as store:
                rounds = make(store)
                made.append(rounds)
                ready.set()
                rounds.serve(until=stop.is_set)
        except BaseException as exc:
            if not made:
                made.append(exc)
            ready.set()
            if not isinstance(exc, Exception):
                raise
            report(f"batch rounds stopped: {exc}")

    thread = threading.Thread(target=serve, name="batch-rounds", daemon=True)
    thread.start()
    ready.wait()
    if isinstance(made[0], BaseException):
        thread.join()
        raise made[0]
    try:
        yield made[0]
    finally:
        stop.set()
        thread.join()


def drive_together(
    drives: Sequence[Callable[[ModelClient], _T]], rounds: Rounds
) -> list[_T | BaseException]:
    """Run each drive (a callable given the model client to use: a run's whole loop) in a
    thread of its own with `rounds.client`, its calls batched in rounds, coordinated in this
    thread until every drive has returned; each one's result (or the error it raised), in
    order. Every drive counts as driving before any starts, so the first round has them all."""
    results: list[_T | BaseException | None] = [None] * len(drives)

    def one(i: int) -> None:
        try:
            results[i] = drives[i](rounds.client)
        except BaseException as exc:  # the run's own drive has recorded what it could
            results[i] = exc
        finally:
            rounds.leave()

    threads = [
        threading.Thread(target=one, args=(i,), name=f"batched-{i}", daemon=True)
        for i in range(len(drives))
    ]
    rounds.enter(len(threads))
    for thread in threads:
        thread.start()
    try:
        rounds.serve(until=lambda: not any(t.is_alive() for t in threads))
    finally:  # a coordinator that failed left each drive to the normal API: let them finish
        for thread in threads:
            thread.join()
    return [r if r is not None else RuntimeError("not driven") for r in results]


def drive_runs(
    run_ids: Sequence[str],
    rounds: Rounds,
    *,
    open_store: Callable[[], Store],
    loop_for: Callable[[Store, ModelClient], Loop],
) -> list[RunResult | BaseException]:
    """Resume each run of `run_ids` through `drive_together` (each with a store of its own
    from `open_store()` and the loop `loop_for` builds); each run's result (or the error that
    ended its drive), in order. `rounds.rounds` counts the batches submitted."""

    def resume(run_id: str) -> Callable[[ModelClient], RunResult]:
        def drive(client: ModelClient) -> RunResult:
            with open_store() as store:
                return resume_run(loop_for(store, client), store.runs.get(run_id))

        return drive

    return drive_together([resume(r) for r in run_ids], rounds)
