"""A PostgreSQL server that restarts or goes away under a run, on a private server.

The shared test server cannot be restarted (other sessions use it), so these tests start their
own (`tests/pgcluster.py`): `initdb` in a temporary directory, `pg_ctl` on a free loopback
port. Each `dayflow` is a real process speaking the real SDK to a loopback Messages API whose
second answer is held until the server has crashed (`pg_ctl stop -m immediate`: no checkpoint,
connections cut, WAL replayed at the next start). Every run must end as the uncrashed run
(`tests/test_crash.py`'s baseline): same brief, same tasks, every step, totals equal to the sum
of the steps.

They run with the PostgreSQL half of the suite (DAYFLOW_TEST_PG set). Where this machine has no
PostgreSQL server binaries they are skipped, unless DAYFLOW_TEST_PG_CLUSTER=required (CI sets
it), where that is a failure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from dayflow.providers.offline import OfflineModel
from tests.fakeapi import FakeAPI, responder_from_client
from tests.pgcluster import Cluster, cluster_or_skip
from tests.test_crash import DATE, _state, baseline, dayflow

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
__all__ = ["baseline"]  # the uncrashed run every test compares with (a module fixture)


@pytest.fixture(scope="module")
def cluster(pg_server: Any) -> Iterator[Cluster]:
    with cluster_or_skip() as c:
        yield c


_databases = iter(range(1, 1000))


@pytest.fixture
def target(cluster: Cluster) -> str:
    """A fresh database on the private server, as a store URL."""
    name = f"run{next(_databases)}"
    with psycopg.connect(cluster.url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return cluster.url.rsplit("/", 1)[0] + "/" + name


def _on_call(n: int, action: Callable[[], None]) -> Callable[[dict[str, Any]], Any]:
    """The offline model behind the loopback API, running `action` before answering call n."""
    offline = responder_from_client(OfflineModel())
    calls = 0

    def respond(body: dict[str, Any]) -> Any:
        nonlocal calls
        calls += 1
        if calls == n:
            action()
        return offline(body)

    return respond


def _without_events(state: dict[str, Any]) -> dict[str, Any]:
    """The run's state without its event log (which says what happened, restarts included)
    and the baseline's request bodies and output (compared on their own)."""
    return {k: v for k, v in state.items() if k not in ("events", "bodies", "out")}


def test_a_server_crash_and_restart_during_a_model_call_loses_nothing(
    cluster: Cluster, target: str, baseline: dict[str, Any]
) -> None:
    """The server crashes and comes back while the second model call is in flight: the next
    write reconnects, the run finishes in the same process as if nothing had happened (the
    first step's completion, which did not wait for the disk, is written again if the crash
    lost it)."""
    with FakeAPI(responder=_on_call(2, lambda: cluster.restart("immediate"))) as api:
        res = dayflow(target, "brief", "--date", DATE, api=api)
        assert res.code == 0, res.err
        assert len(api.message_requests) == len(baseline["bodies"])  # nothing paid twice
        assert [r.body for r in api.message_requests] == baseline["bodies"]
    assert res.out == baseline["out"]
    state = _state(target)
    assert _without_events(state) == _without_events(baseline)
    assert state["totals"] == state["step_sums"]


def test_a_server_down_when_the_response_arrives_fails_resumably_then_resume_finishes(
    cluster: Cluster, target: str, baseline: dict[str, Any]
) -> None:
    """The server crashes during the second model call and is still down when the answer
    arrives: the response cannot be written ahead, so the run stops with one line naming the
    server (exit 4) and nothing half-written. Once the server is back, `resume` in a new
    process re-pays that one call, and the run ends as the uncrashed one: no step lost, no task
    twice."""
    try:
        with FakeAPI(responder=_on_call(2, lambda: cluster.stop("immediate"))) as api:
            failed = dayflow(target, "brief", "--date", DATE, api=api)
            assert failed.code == 4, failed.err
            # The run's header names the fake API's address (a non-default endpoint is always
            # said, issue 32.2); past it, the failure is one line.
            said = [line for line in failed.err.splitlines() if not line.startswith("Claude at ")]
            assert len(said) == 1 and "Traceback" not in failed.err, failed.err
            assert "127.0.0.1" in failed.err and "connect" in failed.err
            paid = len(api.message_requests)
            assert paid == 2
            print(failed.err)
    finally:
        cluster.start()
    state = _state(target)
    assert state["status"] == "running" and [s[0] for s in state["steps"]] == [1]
    with FakeAPI(responder=responder_from_client(OfflineModel())) as api:
        resumed = dayflow(target, "resume", api=api)
        assert resumed.code == 0, resumed.err
        repaid = len(api.message_requests)
        assert [r.body for r in api.message_requests] == baseline["bodies"][1:]
    assert paid + repaid == len(baseline["bodies"]) + 1  # only the lost response, once more
    assert resumed.out == baseline["out"]
    after = _state(target)
    assert _without_events(after) == _without_events(baseline)
    tasks = [t["idempotency_key"] for t in after["tasks"]]
    assert len(tasks) == len(set(tasks)) == len(baseline["tasks"])


def test_a_server_crash_between_steps_while_idle_is_invisible_to_the_next_command(
    cluster: Cluster, target: str, baseline: dict[str, Any]
) -> None:
    """A finished history on a server that crashed and restarted: `runs`, `show` and `tasks`
    read it as it was (the WAL replayed every committed step)."""
    with FakeAPI(responder=responder_from_client(OfflineModel())) as api:
        assert dayflow(target, "brief", "--date", DATE, api=api).code == 0
    before = _state(target)
    cluster.restart("immediate")
    assert _state(target) == before
    listed = dayflow(target, "runs")
    assert listed.code == 0 and "done" in listed.out, listed.err


@pytest.mark.parametrize("durability", ["NORMAL", "FULL"])
def test_a_server_crash_right_after_a_completion(
    target: str, cluster: Cluster, durability: str
) -> None:
    """The server crashes (no checkpoint, unwritten WAL gone) right after a step's completion.
    FULL: the completion had reached the disk, and is there after the restart. NORMAL: it may
    be lost (it did not wait for the disk); either way the same process's next response is
    kept, the lost completion written again first, so the run goes on with nothing missing."""
    from dayflow.store import open_store
    from tests.scripted import text, tool_use, turn
    from tests.test_agent import _new_run

    result = [{"type": "tool_result", "tool_use_id": "tu_1", "content": "read"}]
    with open_store(target, durability=durability) as store:
        run, lease = store.runs.create(_new_run())
        store.steps.begin(lease, 1, turn(tool_use("read_message", {"id": "m"}, "tu_1")), 1)
        store.steps.complete(lease, 1, result, effects=False)
        cluster.restart("immediate")
        with psycopg.connect(target) as conn:
            row = conn.execute("SELECT state FROM steps WHERE run_id = %s", (run.id,)).fetchone()
        lost = row == ("pending",)
        if durability == "FULL":
            assert not lost
        store.steps.begin(lease, 2, turn(text("brief")), 1)
        store.steps.complete(lease, 2, None, final_text="brief")
        steps = store.steps.of(run.id)
        assert [(s.n, s.state) for s in steps] == [(1, "complete"), (2, "complete")]
        assert steps[0].tool_results == result
        kinds = [e.kind for e in store.events.of(run.id)]
        assert kinds.count("step_completion_rewritten") == int(lost)
    print(f"{durability}: completion {'lost and written again' if lost else 'kept'}")
