"""The Message Batches path (dayflow.batching): rounds of many runs' calls as one batch each,
through the real SDK against a loopback server that speaks the Batches API (tests.fakebatches),
with the offline model answering behind it. The kill tests SIGKILL a real driver process."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bench.batches import queued_run
from dayflow.agent import Loop, RunResult, resume_run
from dayflow.batching import Rounds, batch_api, custom_id, drive_runs, next_cutoff
from dayflow.clock import SystemClock
from dayflow.errors import UsageError
from dayflow.models import DONE
from dayflow.pricing import PRICES, estimate_cost, run_cost
from dayflow.providers.anthropic import AnthropicClient
from dayflow.providers.offline import OfflineModel
from dayflow.store import open_store
from tests import forkserver
from tests.conftest import db_rows, pg_schema, subprocess_env
from tests.fakeapi import FakeAPI, error, overloaded, responder_from_client
from tests.fakebatches import FakeBatchAPI
from tests.harness import invoke

MODEL = "claude-haiku-5-5"
DATE = "2026-11-05"


@pytest.fixture
def fake() -> Iterator[FakeBatchAPI]:
    with FakeBatchAPI(responder=responder_from_client(OfflineModel())) as api:
        yield api


def _no_model(*a: Any) -> Any:
    raise AssertionError("show makes no model call")


def queue_runs(target: Path | str, k: int, sample: str = "standard") -> list[str]:
    """`k` new runs of the day, made but not driven (as a fleet's worker would find them)."""
    with open_store(target) as store:
        return [queued_run(store, sample, max_steps=40) for _ in range(k)]


def in_an_hour() -> datetime:
    return SystemClock().now() + timedelta(hours=1)


class SwitchClock:
    """The wall clock, or a time past any cut-off once `past()` says so."""

    def __init__(self, past: Any) -> None:
        self.past = past

    def now(self) -> datetime:
        now = SystemClock().now()
        return now + timedelta(days=1) if self.past() else now


def drive(
    target: Path | str,
    fake: FakeAPI,
    run_ids: list[str],
    *,
    clock: Any = None,
    cutoff: datetime | None = None,
) -> tuple[list[RunResult | BaseException], int]:
    client = AnthropicClient(api_key="test", base_url=fake.base_url, max_retries=0)
    return drive_with(target, client, run_ids, clock=clock, cutoff=cutoff)


def drive_with(
    target: Path | str,
    client: AnthropicClient,
    run_ids: list[str],
    *,
    clock: Any = None,
    cutoff: datetime | None = None,
) -> tuple[list[RunResult | BaseException], int]:
    """Resume the runs in batched rounds, `client` both the Batches API and the normal one."""
    with open_store(target) as own:
        rounds = Rounds(
            own, client, client, clock=clock or SystemClock(), cutoff=cutoff, poll_every=0.02
        )
        results = drive_runs(
            run_ids,
            rounds,
            open_store=lambda: open_store(target),
            loop_for=lambda store, model: Loop(store=store, client=model),
        )
    return results, rounds.rounds


def steps_of(target: Path | str, run_id: str) -> list[Any]:
    with open_store(target) as store:
        return store.steps.of(run_id)


def test_three_runs_go_through_one_batch_per_round_at_half_the_price(
    db_path: Path | str, fake: FakeBatchAPI
) -> None:
    runs = queue_runs(db_path, 3)
    results, rounds = drive(db_path, fake, runs)
    assert all(isinstance(r, RunResult) and r.run.status == DONE for r in results), results
    assert not fake.message_requests  # nothing on the normal API
    steps = {r: steps_of(db_path, r) for r in runs}
    assert rounds == fake.creates == max(len(s) for s in steps.values()) >= 3
    for batch in fake.batches.values():  # every waiting run's next request, in one batch
        ids = sorted(r["custom_id"] for r in batch.requests)
        n = int(ids[0].rsplit("-", 1)[1])
        assert ids == sorted(custom_id(r, n) for r in runs if len(steps[r]) >= n)
    with open_store(db_path) as store:
        for run_id in runs:
            run = store.runs.get(run_id)
            assert all(s.batch_id in fake.batches for s in steps[run_id])
            assert run.batch_usage == run.usage and run.final_text
            full = estimate_cost(MODEL, run.usage, PRICES)
            assert full and run_cost(run, PRICES) == pytest.approx(full / 2)
    shown = json.loads(invoke(db_path, _no_model, "show", runs[0], "--json").out)
    assert [s["batch_id"] for s in shown["steps"]] == [s.batch_id for s in steps[runs[0]]]
    with open_store(db_path) as store:
        first = store.runs.get(runs[0])
    assert shown["run"]["estimated_cost_usd"] == pytest.approx(run_cost(first, PRICES))
    table = invoke(db_path, _no_model, "show", runs[0]).out
    assert table.count(" batch ") >= len(steps[runs[0]])  # each step marked in the table


def test_a_batch_sends_the_bytes_the_normal_call_would_send(tmp_path: Path) -> None:
    """The same run, once on the normal API and once in batches: each request's params are
    the same JSON value (the SDK orders the top-level keys of `messages.create` its own way;
    every value, the messages and blocks in their order, is the same), and the two runs end
    with the same steps."""
    with FakeAPI(responder=responder_from_client(OfflineModel())) as normal:
        plain = AnthropicClient(api_key="test", base_url=normal.base_url, max_retries=0)
        (one,) = queue_runs(tmp_path / "a.db", 1)
        with open_store(tmp_path / "a.db") as store:
            resume_run(Loop(store=store, client=plain), store.runs.get(one))
        sent = [r.body for r in normal.message_requests]
    with FakeBatchAPI(responder=responder_from_client(OfflineModel())) as fake:
        (two,) = queue_runs(tmp_path / "b.db", 1)
        drive(tmp_path / "b.db", fake, [two])
        batched = [item["params"] for item in fake.batch_items]
    assert len(sent) == len(batched) >= 3
    for body, params in zip(sent, batched, strict=True):
        assert json.dumps(json.loads(body), sort_keys=True) == json.dumps(params, sort_keys=True)
    a, b = steps_of(tmp_path / "a.db", one), steps_of(tmp_path / "b.db", two)
    assert [(s.assistant, s.tool_results, s.stop_reason) for s in a] == [
        (s.assistant, s.tool_results, s.stop_reason) for s in b
    ]
    assert [s.batch_id for s in a] == [None] * len(a) and all(s.batch_id for s in b)


@pytest.mark.parametrize("kind", ["errored", "expired"])
def test_an_item_the_batch_did_not_answer_goes_to_the_normal_api(
    db_path: Path | str, fake: FakeBatchAPI, kind: str
) -> None:
    runs = queue_runs(db_path, 2)
    failing = custom_id(runs[0], 2)
    fake.outcome = lambda cid: kind if cid == failing else "succeeded"
    results, _ = drive(db_path, fake, runs)
    assert all(isinstance(r, RunResult) and r.run.status == DONE for r in results), results
    assert len(fake.message_requests) == 1  # that one item, on the normal API
    assert json.loads(fake.message_requests[0].body) == next(
        i["params"] for i in fake.batch_items if i["custom_id"] == failing
    )
    batch_ids = [s.batch_id for s in steps_of(db_path, runs[0])]
    assert batch_ids[1] is None and all(batch_ids[:1] + batch_ids[2:])
    with open_store(db_path) as store:
        events = [e for e in store.events.of(runs[0]) if e.kind == "batch_fallback"]
    assert [e.detail["step"] for e in events] == [2] and kind in events[0].detail["reason"]


def test_runs_still_waiting_at_the_cut_off_finish_on_the_normal_api(
    db_path: Path | str, fake: FakeBatchAPI
) -> None:
    """The first round's batch ends before the cut-off; every later call is a normal one."""
    runs = queue_runs(db_path, 2)
    clock = SwitchClock(lambda: any(b.status == "ended" for b in fake.batches.values()))
    results, rounds = drive(
        db_path, fake, runs, clock=clock, cutoff=SystemClock().now() + timedelta(hours=1)
    )
    assert all(isinstance(r, RunResult) and r.run.status == DONE for r in results), results
    assert rounds == fake.creates == 1
    for run_id in runs:
        steps = steps_of(db_path, run_id)
        assert steps[0].batch_id == "msgbatch_fake0001"
        assert [s.batch_id for s in steps[1:]] == [None] * (len(steps) - 1)
    assert len(fake.message_requests) == sum(len(steps_of(db_path, r)) - 1 for r in runs)


def test_a_batch_in_progress_at_the_cut_off_is_canceled_and_answered_normally(
    db_path: Path | str, fake: FakeBatchAPI
) -> None:
    runs = queue_runs(db_path, 2)
    fake.held = True  # never ends on its own
    clock = SwitchClock(lambda: bool(fake.batches))  # the cut-off passes once it is submitted
    results, rounds = drive(
        db_path, fake, runs, clock=clock, cutoff=SystemClock().now() + timedelta(hours=1)
    )
    assert all(isinstance(r, RunResult) and r.run.status == DONE for r in results), results
    (batch,) = fake.batches.values()
    assert rounds == 1 and batch.canceled and batch.counts()["canceled"] == 2
    for run_id in runs:
        assert [s.batch_id for s in steps_of(db_path, run_id)] == [None] * len(
            steps_of(db_path, run_id)
        )


# --- a real kill -9 of the driver -------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def driver(target: Path | str, fake: FakeAPI, runs: list[str], *extra: str) -> list[str]:
    """The argv of a batch driver in a child process (tests.batchdriver), forked from the fork
    server (tests/forkserver.py): a real process that skips the SDK's imports."""
    return forkserver.command(str(target), fake.base_url, *runs, *extra, module="tests.batchdriver")


def finish(target: Path | str, fake: FakeAPI, runs: list[str]) -> dict[str, Any]:
    """Drive the runs to their end in a fresh child process; its JSON summary."""
    proc = subprocess.run(
        driver(target, fake, runs),
        env=subprocess_env(target),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def wait_for(check: Any, what: str) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def assert_each_step_submitted_once_and_paid_once(
    target: Path | str, fake: FakeBatchAPI, runs: list[str]
) -> None:
    submitted = [item["custom_id"] for item in fake.batch_items]
    assert len(submitted) == len(set(submitted))  # no request in two batches
    assert not fake.message_requests  # and none on the normal API
    with open_store(target) as store:
        for run_id in runs:
            run = store.runs.get(run_id)
            steps = store.steps.of(run_id)
            assert run.status == DONE and all(s.batch_id for s in steps)
            assert sorted(custom_id(run_id, s.n) for s in steps) == sorted(
                c for c in submitted if c.startswith(run_id + "-")
            )
            total = steps[0].usage
            for step in steps[1:]:
                total = total + step.usage
            assert run.usage == run.batch_usage == total  # each answer counted once


@pytest.mark.slow
def test_a_driver_killed_while_its_batch_runs_polls_the_same_batch_after(
    db_path: Path | str, fake: FakeBatchAPI
) -> None:
    runs = queue_runs(db_path, 3)
    fake.held = True
    child = subprocess.Popen(
        driver(db_path, fake, runs),
        env=subprocess_env(db_path),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        recorded = "SELECT COUNT(*) FROM batch_requests"
        wait_for(lambda: db_rows(db_path, recorded)[0][0] == 3, "the batch to be recorded")
        assert fake.batches["msgbatch_fake0001"].status == "in_progress"
    finally:
        child.kill()  # SIGKILL: no finally, no atexit in the child
        child.wait()
        # Forked, the driver is the stand-in's child, killed as the stand-in dies: its end of
        # stdout closes only once it is gone too.
        assert child.stdout is not None
        child.stdout.read()
        child.stdout.close()
    assert fake.creates == 1 and all(not steps_of(db_path, r) for r in runs)
    fake.release()
    out = finish(db_path, fake, runs)
    assert all(r["status"] == DONE for r in out["runs"].values()), out
    assert fake.creates == out["batches"] + 1  # the first round was not submitted again
    for run_id in runs:
        assert steps_of(db_path, run_id)[0].batch_id == "msgbatch_fake0001"
    assert_each_step_submitted_once_and_paid_once(db_path, fake, runs)


@pytest.mark.slow
def test_a_driver_killed_after_some_results_are_committed_pays_no_step_twice(
    db_path: Path | str, fake: FakeBatchAPI
) -> None:
    """The first run to commit its step 2 SIGKILLs the driver (the others may or may not have
    committed theirs); the next driver polls the round's batch again for the rest."""
    runs = queue_runs(db_path, 3)
    killed = subprocess.run(
        driver(db_path, fake, runs, "--kill-at", "after_pending:2"),
        env=subprocess_env(db_path),
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert killed.returncode == -9, killed.stderr
    assert fake.creates == 2
    assert any(len(steps_of(db_path, r)) == 2 for r in runs)
    out = finish(db_path, fake, runs)
    assert all(r["status"] == DONE for r in out["runs"].values()), out
    assert fake.creates == out["batches"] + 2
    assert_each_step_submitted_once_and_paid_once(db_path, fake, runs)


def test_a_refused_create_is_retried_only_when_it_surely_made_nothing(
    tmp_path: Path, fake: FakeBatchAPI
) -> None:
    """A 529 made no batch: asked again. A 500 may have made one: never asked again (a second
    batch would pay every request twice); that round goes to the normal API instead."""
    runs = queue_runs(tmp_path / "d.db", 2)
    fake.create_faults = [overloaded(), error(500, "api_error", "Internal error")]
    client = AnthropicClient(
        api_key="test", base_url=fake.base_url, max_retries=2, sleep=lambda s: None
    )
    results, rounds = drive_with(tmp_path / "d.db", client, runs)
    assert all(isinstance(r, RunResult) and r.run.status == DONE for r in results), results
    creates = [r for r in fake.requests if r.path == "/v1/messages/batches"]
    assert [r.status for r in creates[:2]] == [529, 500] and creates[2].status == 200
    assert len(fake.message_requests) == 2  # the first round, on the normal API
    for run_id in runs:
        batch_ids = [s.batch_id for s in steps_of(tmp_path / "d.db", run_id)]
        assert batch_ids[0] is None and all(batch_ids[1:])
    assert rounds == fake.creates == len(creates) - 2


def test_batch_needs_the_anthropic_api(fake: FakeBatchAPI) -> None:
    client = AnthropicClient(api_key="test", base_url=fake.base_url)
    assert batch_api(client) is client
    for model, provider in ((OfflineModel(), "anthropic"), (client, "local")):
        with pytest.raises(UsageError, match="--batch needs the Anthropic API"):
            batch_api(model, provider)


def test_the_next_cut_off_is_the_next_time_it_is_that_time_in_utc_or_the_zone_named() -> None:
    now = datetime.fromisoformat("2026-11-05T07:30:00+01:00")  # 06:30 UTC
    assert next_cutoff("07:00", now) == datetime.fromisoformat("2026-11-05T07:00:00+00:00")
    assert next_cutoff("06:30", now) == datetime.fromisoformat("2026-11-06T06:30:00+00:00")
    # A zone's wall time: 07:00 in Paris has passed (it is 07:30 there), 08:00 has not.
    paris = next_cutoff("07:00 Europe/Paris", now)
    assert paris == datetime.fromisoformat("2026-11-06T07:00:00+01:00") and paris.hour == 7
    assert next_cutoff("08:00 Europe/Paris", now) == datetime.fromisoformat(
        "2026-11-05T07:00:00+00:00"
    )
    # Across a DST change the wall time holds, not the UTC one; a skipped time is just after.
    spring = datetime.fromisoformat("2026-03-28T12:00:00+00:00")
    assert next_cutoff("02:30 Europe/Paris", spring) == datetime.fromisoformat(
        "2026-03-29T03:30:00+02:00"
    )
    for bad in ("7:00", "24:00", "07:60", "07:00\n", "", "Europe/Paris 07:00"):
        with pytest.raises(UsageError, match="--batch-cutoff must be HH:MM"):
            next_cutoff(bad, now)
    for bad in ("07:00 ", "07:00 Mars/Olympus", "07:00 ../../etc/passwd"):
        with pytest.raises(UsageError, match="unknown timezone"):
            next_cutoff(bad, now)


# --- dayflow worker --batch (a fleet's queue needs PostgreSQL) --------------------------------


@pytest.mark.postgres
def test_a_worker_with_batch_writes_each_profiles_brief_through_batches(
    pg_server: Any, tmp_path: Path, fake: FakeBatchAPI
) -> None:
    from dayflow.cli_base import default_model_factory

    config = tmp_path / "sample.toml"
    config.write_text("")
    env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.base_url}
    with pg_schema(pg_server) as url:
        for name in ("ann", "bob", "cat"):
            args = ("profiles", "add", name, "--config", str(config), "--at", "00:00")
            assert invoke(url, _no_model, *args).code == 0
        worker = ("worker", "--until-idle", "--poll", "0.2", "--batch", "--batch-poll", "0.5")
        done = invoke(url, default_model_factory, *worker, env=env | {"DAYFLOW_MODEL": MODEL})
        assert done.code == 0, done.err
        assert "3 brief(s) driven" in done.err and "batching model calls" in done.err
        runs = db_rows(url, "SELECT id, status FROM runs")
        steps = db_rows(url, "SELECT run_id, n, batch_id FROM steps")
        recorded = db_rows(url, "SELECT COUNT(*) FROM batch_requests")[0][0]
        # A profile purged takes its runs' batch records with it.
        assert invoke(url, _no_model, "profiles", "remove", "ann", "--purge").code == 0
        left = db_rows(url, "SELECT COUNT(*) FROM batch_requests")[0][0]
    assert len(runs) == 3 and all(status == DONE for _, status in runs)
    assert all(batch_id in fake.batches for _, _, batch_id in steps)
    assert not fake.message_requests and len(fake.batch_items) == len(steps)
    assert fake.creates < len(steps)  # the briefs' calls went in shared rounds
    assert recorded == len(steps) and 0 < left < recorded


class _BrokenPolls:
    """A Batches API whose polls fail in a way the coordinator does not expect (a bug)."""

    def __init__(self, api: AnthropicClient) -> None:
        self.api = api

    def submit_batch(self, requests: Any) -> str:
        return self.api.submit_batch(requests)

    def batch_status(self, batch_id: str) -> str:
        raise RuntimeError("poll exploded")

    def batch_results(self, batch_id: str) -> Any:
        raise AssertionError("never reached")

    def cancel_batch(self, batch_id: str) -> None:
        raise AssertionError("never reached")


def test_a_coordinator_that_fails_leaves_every_drive_to_the_normal_api(
    tmp_path: Path, fake: FakeBatchAPI
) -> None:
    """No drive waits for ever on a coordinator that is gone: each finishes on the normal API,
    and the coordinator's error comes out once they have."""
    runs = queue_runs(tmp_path / "e.db", 2)
    client = AnthropicClient(api_key="test", base_url=fake.base_url, max_retries=0)
    with open_store(tmp_path / "e.db") as own:
        rounds = Rounds(own, _BrokenPolls(client), client, clock=SystemClock(), poll_every=0.02)
        with pytest.raises(RuntimeError, match="poll exploded"):
            drive_runs(
                runs,
                rounds,
                open_store=lambda: open_store(tmp_path / "e.db"),
                loop_for=lambda store, model: Loop(store=store, client=model),
            )
    with open_store(tmp_path / "e.db") as store:
        assert all(store.runs.get(r).status == DONE for r in runs)
    assert fake.creates == 1 and len(fake.message_requests) == sum(
        len(steps_of(tmp_path / "e.db", r)) for r in runs
    )
