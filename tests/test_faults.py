"""Issue 3, part 4: the API fails as APIs do. The whole path, in-process.

Each test drives the real CLI (`brief`, `resume`, `runs`) with the real `AnthropicClient` and
the real SDK against the loopback Messages API (`tests/fakeapi.py`), the offline model answering
behind it so that runs complete. Faults are served at a chosen step of the run (a step is
counted from the request: the number of assistant turns it carries, plus one), so a fault can
hit a run after some of its steps are committed. The client's `sleep` is injected and records
instead of sleeping, so backoff costs nothing.

The clean run these tests compare with: step 1 reads everything, step 2 creates the tasks,
step 3 writes the brief.
"""

from __future__ import annotations

import json
import re
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.anthropic import make_client
from dayflow.providers.offline import OfflineModel
from tests import fakeapi
from tests.conftest import Db, log_kinds
from tests.harness import Result, invoke

pytestmark = pytest.mark.slow  # a loopback Messages API server

DATE = "2026-11-05"
MODEL = "claude-haiku-5-5"
BRIEF = ("brief", "--date", DATE, "--model", MODEL)


# --- the pieces -------------------------------------------------------------------------------


class Sleeps(list[float]):
    """An injected `sleep` that records instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


class FaultsAt:
    """A responder: the offline model, except that the items queued for step k are served,
    in order, to the requests of step k before the offline model answers it."""

    def __init__(self, faults: dict[int, list[fakeapi.Item]] | None = None) -> None:
        self.offline = fakeapi.responder_from_client(OfflineModel())
        self.faults = {k: deque(v) for k, v in (faults or {}).items()}

    def __call__(self, body: dict[str, Any]) -> fakeapi.Item:
        step = 1 + sum(1 for m in body["messages"] if m["role"] == "assistant")
        queue = self.faults.get(step)
        if queue:
            return queue.popleft()
        return self.offline(body)


class Cli:
    """Runs CLI commands in-process; the model is the real `AnthropicClient` on `fake`."""

    def __init__(self, db: Path | str, fake: fakeapi.FakeAPI, **client_kw: Any) -> None:
        self.db, self.fake, self.client_kw = db, fake, client_kw
        self.sleeps = Sleeps()

    def __call__(self, *args: str) -> Result:
        def factory(name: str, settings: Any) -> Any:
            assert name == MODEL
            return make_client("test", self.fake.base_url, sleep=self.sleeps, **self.client_kw)

        return invoke(self.db, factory, *args)

    def runs(self) -> list[dict[str, Any]]:
        res = self("runs", "--json")
        assert res.code == 0, res.err
        return json.loads(res.out)  # type: ignore[no-any-return]


def state(db: Path | str) -> dict[str, Any]:
    """The rows that matter, read straight from the store (the events: the run's log as shown)."""
    conn = Db(db)
    try:
        (run,) = conn.rows("SELECT * FROM runs")
        steps = conn.rows("SELECT * FROM steps ORDER BY n")
        cols = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
        return {
            "status": run["status"],
            "reason": run["reason"],
            "request_id": run["request_id"],
            "final_text": run["final_text"],
            "totals": {c: run[c] for c in cols},
            "step_sums": {c: sum(s[c] for s in steps) for c in cols},
            "steps": [(s["n"], s["state"], s["stop_reason"]) for s in steps],
            "tasks": [
                (r["id"], r["idempotency_key"], r["title"])
                for r in conn.rows("SELECT * FROM tasks ORDER BY id")
            ],
            "events": log_kinds(db),
        }
    finally:
        conn.conn.close()


def bodies(fake: fakeapi.FakeAPI, *, ok: bool | None = None) -> list[bytes]:
    """The raw bodies of the POSTs to /v1/messages (only the answered-200 ones with ok=True)."""
    return [r.body for r in fake.message_requests if ok is None or (r.status == 200) == ok]


SAMPLE_NOTICE = "No sources configured"


def one_line(err: str) -> str:
    """The one error line (retry notices and the sample's notice aside), without the run id
    and resume command every model failure is wrapped in (checked here)."""
    lines = [
        line for line in err.strip().splitlines() if not line.startswith(("note: ", SAMPLE_NOTICE))
    ]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    named = re.fullmatch(
        r"error: run ([0-9a-f]{12}) failed: (.*); `dayflow resume \1` continues it", lines[0]
    )
    assert named, lines[0]
    return "error: " + named.group(2)


@pytest.fixture
def fake() -> Iterator[fakeapi.FakeAPI]:
    with fakeapi.FakeAPI(responder=FaultsAt()) as api:
        yield api


def serve(fake: fakeapi.FakeAPI, faults: dict[int, list[fakeapi.Item]]) -> None:
    fake.responder = FaultsAt(faults)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A run with no faults through the same path: what every recovered run must end as."""
    db = tmp_path_factory.mktemp("clean") / "dayflow.db"
    with fakeapi.FakeAPI(responder=FaultsAt()) as api:
        cli = Cli(db, api)
        res = cli(*BRIEF)
        assert res.code == 0, res.err
        sent = bodies(api)
    result = state(db)
    assert [s[1:] for s in result["steps"]] == [
        ("complete", "tool_use"),
        ("complete", "tool_use"),
        ("complete", "end_turn"),
    ]
    assert len(result["tasks"]) >= 2 and cli.sleeps == []
    return {**result, "bodies": sent, "out": res.out}


def assert_like_clean(
    db: Path | str, fake: fakeapi.FakeAPI, clean: dict[str, Any]
) -> dict[str, Any]:
    """The run ended exactly as the clean one: same steps, tasks, brief, and the successful
    requests were byte for byte the clean run's."""
    now = state(db)
    assert now["status"] == "done" and now["reason"] is None
    assert now["steps"] == clean["steps"]
    assert now["tasks"] == clean["tasks"]
    assert now["final_text"] == clean["final_text"]
    assert now["totals"] == now["step_sums"]
    assert bodies(fake, ok=True) == clean["bodies"]
    assert fake.rejected == []
    return now


# --- faults that recover within the retries ----------------------------------------------------

RECOVERABLE: dict[str, tuple[list[Any], list[float]]] = {
    "429-retry-after-1": ([fakeapi.rate_limited(retry_after=1)], [1.0]),
    "529-529": ([fakeapi.overloaded(), fakeapi.overloaded()], [0.5, 1.0]),
    "500": ([fakeapi.error(500, "api_error", "Internal server error")], [0.5]),
    "503": ([fakeapi.error(503, "api_error", "Service unavailable")], [0.5]),
    "dropped-mid-response": ([fakeapi.Drop()], [0.5]),
    "429-then-529": ([fakeapi.rate_limited(retry_after=2), fakeapi.overloaded()], [2.0, 1.0]),
}


@pytest.mark.parametrize("step", [1, 2])
@pytest.mark.parametrize("name", list(RECOVERABLE))
def test_transient_faults_recover_within_the_retries_like_a_clean_run(
    store_target: Path, fake: fakeapi.FakeAPI, clean: dict[str, Any], name: str, step: int
) -> None:
    faults, expected_sleeps = RECOVERABLE[name]
    serve(fake, {step: list(faults)})
    cli = Cli(store_target, fake)

    res = cli(*BRIEF)

    assert res.code == 0, res.err
    assert res.out == clean["out"]
    now = assert_like_clean(cli.db, fake, clean)
    assert cli.sleeps == expected_sleeps
    # Only the faulted step was sent again, and each retry is the first attempt byte for byte.
    sent = bodies(fake)
    assert len(sent) == len(clean["bodies"]) + len(faults)
    retried = sent[step - 1 : step + len(faults)]
    assert retried == [clean["bodies"][step - 1]] * (len(faults) + 1)
    # A retried call is one step, paid once: no extra step rows, no extra events.
    assert now["events"].count("response_committed") == 3
    assert "run_failed" not in now["events"]


# --- faults that outlast the retries ---------------------------------------------------------


def test_529_three_times_fails_the_run_and_resume_finishes_it_without_repaying(
    store_target: Path, fake: fakeapi.FakeAPI, clean: dict[str, Any]
) -> None:
    """Steps 1 and 2 (the reads and the tasks) are committed; step 3 is overloaded on every
    attempt (max_retries=2: three attempts). The run fails resumable; resume makes one call."""
    serve(fake, {3: [fakeapi.overloaded(), fakeapi.overloaded(), fakeapi.overloaded()]})
    cli = Cli(store_target, fake)

    res = cli(*BRIEF)

    assert res.code == 6
    line = one_line(res.err)
    request_id = "req_fake0005"  # the last of the five POSTs
    assert line == (
        f"error: Anthropic API 529 overloaded_error: Overloaded (request {request_id}) "
        "after 3 attempts"
    )
    assert res.out == ""
    assert cli.sleeps == [0.5, 1.0]
    notes = [line for line in res.err.splitlines() if line.startswith("note: ")]
    assert notes == [
        "note: Anthropic API 529 overloaded_error: Overloaded (request req_fake0003); "
        "retrying in 0.5s (attempt 2 of 3)",
        "note: Anthropic API 529 overloaded_error: Overloaded (request req_fake0004); "
        "retrying in 1s (attempt 3 of 3)",
    ]
    assert len(fake.message_requests) == 2 + 3
    (run,) = cli.runs()
    assert run["status"] == "failed" and run["steps"] == 2
    assert run["request_id"] == request_id
    assert "529" in run["reason"] and request_id in run["reason"]
    failed = state(cli.db)
    assert failed["steps"] == clean["steps"][:2]  # every committed step kept
    assert failed["tasks"] == clean["tasks"]  # and the tasks step 2 created
    assert failed["final_text"] is None
    assert failed["events"][-1] == "run_failed"

    resumed = cli("resume")

    assert resumed.code == 0, resumed.err
    assert f"[resume {run['id']}] replaying 2 committed step(s)" in resumed.err
    assert resumed.out == clean["out"]
    assert len(fake.message_requests) == 2 + 3 + 1  # the committed steps were not paid again
    assert fake.message_requests[-1].body == clean["bodies"][2]
    now = assert_like_clean(cli.db, fake, clean)
    assert now["events"].count("tool_executed") == clean["events"].count("tool_executed")
    assert len({key for _, key, _ in now["tasks"]}) == len(now["tasks"])  # no duplicate task
    (run,) = cli.runs()
    assert run["status"] == "done" and run["reason"] is None and run["steps"] == 3


def test_retry_after_an_hour_is_not_slept_and_the_run_fails_resumable(
    store_target: Path, fake: fakeapi.FakeAPI, clean: dict[str, Any]
) -> None:
    serve(fake, {2: [fakeapi.rate_limited(retry_after=3600)]})
    cli = Cli(store_target, fake)

    started = time.monotonic()
    res = cli(*BRIEF)

    assert time.monotonic() - started < 30
    assert res.code == 6
    line = one_line(res.err)
    assert "429 rate_limit_error" in line and "3600s" in line and "try again later" in line
    assert all(s <= 20.0 for s in cli.sleeps)  # the client's default cap (max_retry_wait)
    assert cli.sleeps == []  # it gave up at once rather than sleep the cap and be refused again
    assert len(fake.message_requests) == 2
    (run,) = cli.runs()
    assert run["status"] == "failed" and run["steps"] == 1
    assert run["request_id"] == "req_fake0002" and "3600s" in run["reason"]

    resumed = cli("resume")

    assert resumed.code == 0, resumed.err
    assert_like_clean(cli.db, fake, clean)
    assert len(fake.message_requests) == 2 + 2


def test_a_response_slower_than_the_timeout_is_retried(
    store_target: Path, fake: fakeapi.FakeAPI, clean: dict[str, Any]
) -> None:
    slow = fakeapi.Reply([fakeapi.text("too late")], delay=30)  # cut short when the fake closes
    serve(fake, {2: [slow]})
    cli = Cli(store_target, fake, timeout=1.0)

    res = cli(*BRIEF)

    assert res.code == 0, res.err
    assert_like_clean(cli.db, fake, clean)
    assert cli.sleeps == [0.5]
    assert len(fake.message_requests) == 3 + 1


def test_a_timeout_on_every_attempt_fails_the_run_with_a_clear_line(
    store_target: Path, fake: fakeapi.FakeAPI
) -> None:
    serve(fake, {1: [fakeapi.Reply([fakeapi.text("late")], delay=30) for _ in range(2)]})
    cli = Cli(store_target, fake, timeout=0.5, max_retries=1)

    res = cli(*BRIEF)

    assert res.code == 6
    assert one_line(res.err) == (
        "error: Anthropic API timed out (no answer in 0.5s) after 2 attempts"
    )
    (run,) = cli.runs()
    assert run["status"] == "failed" and run["steps"] == 0 and "timed out" in run["reason"]


# --- faults that are not retried ---------------------------------------------------------------

NOT_RETRIED = {
    400: ("invalid_request_error", "messages.0.content: Field required", None),
    401: ("authentication_error", "invalid x-api-key", "check ANTHROPIC_API_KEY"),
    403: ("permission_error", "Your key may not use this model", None),
}


@pytest.mark.parametrize("status", list(NOT_RETRIED))
def test_client_errors_are_not_retried_and_named_in_one_line(
    store_target: Path, fake: fakeapi.FakeAPI, status: int
) -> None:
    kind, message, hint = NOT_RETRIED[status]
    fake.enqueue(
        fakeapi.error(status, kind, message)
    )  # no x-should-retry: the status alone decides
    cli = Cli(store_target, fake)

    res = cli(*BRIEF)

    assert res.code == 6
    line = one_line(res.err)
    assert line.startswith(f"error: Anthropic API {status} {kind}: {message}")
    assert "(request req_fake0001)" in line and "attempt" not in line
    if hint:
        assert line.endswith(hint)
    assert len(fake.message_requests) == 1 and cli.sleeps == []
    (run,) = cli.runs()
    assert run["status"] == "failed" and run["steps"] == 0
    assert run["request_id"] == "req_fake0001" and str(status) in run["reason"]
    assert state(cli.db)["events"] == ["run_started", "run_failed"]


def test_a_wrong_key_is_rejected_once_and_the_line_names_the_variable(store_target: Path) -> None:
    with fakeapi.FakeAPI(responder=FaultsAt(), api_key="sk-the-right-one") as api:
        cli = Cli(store_target, api)
        res = cli(*BRIEF)
        assert len(api.message_requests) == 1
    assert res.code == 6
    line = one_line(res.err)
    assert "401 authentication_error" in line and "ANTHROPIC_API_KEY" in line


# --- stop reasons through the SDK --------------------------------------------------------------


def _cut(step: int, item: fakeapi.Reply) -> FaultsAt:
    """The offline model, except that step `step` is answered once with `item`."""
    return FaultsAt({step: [item]})


def test_max_tokens_stops_the_run_without_a_brief_and_resume_finishes_it(
    store_target: Path, fake: fakeapi.FakeAPI, clean: dict[str, Any]
) -> None:
    fake.responder = _cut(3, fakeapi.reply([fakeapi.text("## Today\n- 09:")], "max_tokens"))
    cli = Cli(store_target, fake)

    res = cli(*BRIEF)

    assert res.code == 7
    assert res.out == ""  # no brief printed
    (run,) = cli.runs()
    assert run["status"] == "stopped" and "cut short (max_tokens)" in run["reason"]
    stopped = state(cli.db)
    assert stopped["final_text"] is None
    assert stopped["steps"][-1] == (3, "discarded", "max_tokens")

    resumed = cli("resume")

    assert resumed.code == 0, resumed.err
    assert resumed.out == clean["out"]
    # The cut turn is not sent again: the resumed request is the clean run's third one.
    assert fake.message_requests[-1].body == clean["bodies"][2]
    now = state(cli.db)
    assert now["status"] == "done" and now["final_text"] == clean["final_text"]
    assert [s[1] for s in now["steps"]] == ["complete", "complete", "discarded", "complete"]
    assert now["totals"] == now["step_sums"]  # the cut turn was paid for and is counted
    assert now["tasks"] == clean["tasks"]


REFUSAL = {"type": "refusal", "category": "cyber", "explanation": "Not something I can help with."}


def test_refusal_fails_the_run_and_is_never_the_brief(
    store_target: Path, fake: fakeapi.FakeAPI
) -> None:
    fake.responder = _cut(2, fakeapi.reply([fakeapi.text("I can't help with that.")], "refusal"))
    cli = Cli(store_target, fake)

    res = cli(*BRIEF)

    assert res.code == 6 and res.out == ""
    (run,) = cli.runs()
    assert run["status"] == "failed" and "declined at step 2" in run["reason"]
    assert "I can't help with that." in run["reason"]
    assert state(cli.db)["final_text"] is None


def test_refusal_reason_carries_the_stop_details(store_target: Path, fake: fakeapi.FakeAPI) -> None:
    fake.responder = _cut(2, fakeapi.reply([], "refusal", stop_details=REFUSAL))
    cli = Cli(store_target, fake)

    assert cli(*BRIEF).code == 6

    (run,) = cli.runs()
    assert run["status"] == "failed"
    assert "cyber" in run["reason"] and REFUSAL["explanation"] in run["reason"]


def test_resume_after_a_refusal_does_not_send_the_refused_turn_back(
    store_target: Path, fake: fakeapi.FakeAPI, clean: dict[str, Any]
) -> None:
    fake.responder = _cut(2, fakeapi.reply([], "refusal", stop_details=REFUSAL))
    cli = Cli(store_target, fake)
    assert cli(*BRIEF).code == 6
    refused = len(fake.message_requests)

    cli("resume")

    # Whatever resume does, it must not replay the refused (empty) assistant turn as the last
    # message: the real API rejects an empty assistant turn, and a non-empty one is a prefill.
    after = [r.json for r in fake.message_requests[refused:]]
    assert after, "resume made no call"
    assert after[0]["messages"][-1]["role"] == "user"
    assert all(m["content"] != [] for m in after[0]["messages"])


def test_pause_turn_is_sent_back_unchanged_with_no_new_user_turn(store_target: Path) -> None:
    paused = [fakeapi.text("Still reading the inbox…")]
    brief = "## Today\n- nothing\n\n## One thing\n**Rest.**"
    read = fakeapi.reply(
        [fakeapi.tool_use("toolu_r1", "read_tasks", {"include_done": False})], "tool_use"
    )
    script = [read, fakeapi.reply(paused, "pause_turn"), fakeapi.reply([fakeapi.text(brief)])]
    with fakeapi.FakeAPI(script) as api:
        cli = Cli(store_target, api)
        res = cli(*BRIEF)
        sent = [r.json for r in api.message_requests]
    assert res.code == 0, res.err
    assert len(sent) == 3
    first, second = sent[1:]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user", "assistant"]
    assert fakeapi.strip_cache_control(second["messages"][:3]) == fakeapi.strip_cache_control(
        first["messages"]
    )
    assert fakeapi.strip_cache_control(second["messages"][3]) == {
        "role": "assistant",
        "content": paused,
    }
    assert second["system"] == first["system"] and second["tools"] == first["tools"]
    now = state(cli.db)
    assert now["status"] == "done" and now["final_text"] == brief
    assert now["steps"] == [
        (1, "complete", "tool_use"),
        (2, "complete", "pause_turn"),
        (3, "complete", "end_turn"),
    ]


def test_an_empty_end_turn_is_not_stored_as_a_finished_brief(store_target: Path) -> None:
    """The API documents empty end_turn responses (right after tool results): they are not a
    brief. The run must not end `done` with an empty brief."""
    with fakeapi.FakeAPI(responder=FaultsAt({2: [fakeapi.reply([], "end_turn")]})) as api:
        cli = Cli(store_target, api)
        cli(*BRIEF)
    now = state(cli.db)
    assert not (now["status"] == "done" and not now["final_text"])
