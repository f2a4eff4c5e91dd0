"""Real processes, real SIGKILLs, the real SDK against the loopback Messages API.

Each child is `python -m dayflow ...` with `DAYFLOW_KILL_AT=POINT:STEP`, which makes the process
SIGKILL itself at that point of that step: no `finally`, no atexit, nothing flushed. A fresh
process then resumes the run, and the invariants are checked against an uncrashed baseline.
Each child is forked from a server that imported the CLI and the SDK once (tests/forkserver.py):
a process of its own all the same, which only skips the imports.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dayflow.models import KILL_POINTS
from dayflow.providers.offline import OfflineModel
from tests import fakeapi
from tests.conftest import Db, dayflow_child, dayflow_command, subprocess_env

pytestmark = pytest.mark.slow  # real processes killed with SIGKILL

DATE = "2026-11-05"


@dataclass
class Outcome:
    code: int
    out: str
    err: str


LOCAL_MODEL = "qwen3:8b"


def dayflow(db: Path | str, *args: str, api: fakeapi.FakeAPI | None = None, **env: str) -> Outcome:
    """`dayflow ARGS` in a child process. With `api`, the model is served there: Claude with a
    key, or, when `api` is local-shaped, `brief --provider local` with no key at all, and a
    resume given nothing (the run keeps its provider, model and server)."""
    extra = dict(env)
    if api is not None and api.local is not None:
        if args[0] == "brief":
            args = (*args, "--provider", "local", "--model", LOCAL_MODEL)
            extra.update(ANTHROPIC_BASE_URL=api.base_url)
    elif api is not None:
        extra.update(ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=api.base_url)
    proc = subprocess.run(
        dayflow_command(*args),
        env=subprocess_env(db, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def api() -> Iterator[fakeapi.FakeAPI]:
    with fakeapi.FakeAPI(responder=fakeapi.responder_from_client(OfflineModel())) as fake:
        yield fake


def _state(db: Path | str) -> dict[str, Any]:
    conn = Db(db)
    run = conn.one("SELECT * FROM runs")
    steps = conn.rows("SELECT * FROM steps ORDER BY n")
    tasks = [
        {"id": r[0], "idempotency_key": r[1]}
        for r in conn.rows("SELECT id, idempotency_key FROM tasks ORDER BY id")
    ]
    sums = {
        col: sum(s[col] for s in steps)
        for col in ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
    }
    state = {
        "status": run["status"],
        "final_text": run["final_text"],
        "totals": {col: run[col] for col in sums},
        "step_sums": sums,
        "steps": [(s["n"], s["state"], s["stop_reason"]) for s in steps],
        "tasks": tasks,
        "events": [r[0] for r in conn.rows("SELECT kind FROM events ORDER BY seq")],
    }
    conn.conn.close()
    return state


def _baseline(db: Path, local: fakeapi.Local | None) -> dict[str, Any]:
    with fakeapi.FakeAPI(
        responder=fakeapi.responder_from_client(OfflineModel()), local=local
    ) as fake:
        res = dayflow(db, "brief", "--date", DATE, api=fake)
        assert res.code == 0, res.err
        bodies = [r.body for r in fake.message_requests]
    state = _state(db)
    state["bodies"] = bodies
    state["out"] = res.out
    return state


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An uncrashed run through the same API and model: what every crashed run must end as."""
    return _baseline(tmp_path_factory.mktemp("baseline") / "dayflow.db", None)


@pytest.fixture(scope="module")
def local_baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same uncrashed run against a local-shaped server (tool turns said to be end_turn,
    blank text blocks, call_ ids, no cache counts, no count_tokens)."""
    return _baseline(tmp_path_factory.mktemp("local-baseline") / "dayflow.db", fakeapi.LOCAL_SHAPED)


def test_sigkill_after_step_2_then_resume_in_a_new_process(store_target: Path) -> None:
    """The issue's scenario with a real kill and the offline model: no duplicate task."""
    db = store_target
    killed = dayflow(db, "brief", "-v", "--date", DATE, DAYFLOW_KILL_AT="after_complete:2")
    assert killed.code == -signal.SIGKILL
    assert "[step 2] stop=tool_use" in killed.err
    runs = json.loads(dayflow(db, "runs", "--json").out)
    assert [r["status"] for r in runs] == ["interrupted"] and runs[0]["steps"] == 2
    before = json.loads(dayflow(db, "tasks", "--json").out)
    resumed = dayflow(db, "resume", "-v")
    assert resumed.code == 0, resumed.err
    assert f"[resume {runs[0]['id']}] replaying 2 committed step(s)" in resumed.err
    assert "[step 3] stop=end_turn" in resumed.err
    after = json.loads(dayflow(db, "tasks", "--json").out)
    assert after == before and len({t["idempotency_key"] for t in after}) == len(after)
    assert json.loads(dayflow(db, "runs", "--json").out)[0]["status"] == "done"


# Step 1 runs four reads; step 2 creates the tasks; step 3 writes the brief.
MATRIX = [(point, step) for point in KILL_POINTS for step in (1, 2)] + [("before_pending", 3)]


@pytest.mark.parametrize(("point", "step"), MATRIX, ids=[f"{p}-{s}" for p, s in MATRIX])
def test_kill_at_every_point_then_resume_ends_as_the_uncrashed_run(
    store_target: Path, api: fakeapi.FakeAPI, baseline: dict[str, Any], point: str, step: int
) -> None:
    _kill_then_resume(store_target, api, baseline, point, step)


# A representative set against a local-shaped server (the whole matrix is slow): a kill with
# the response committed, one between two task creations, one after the tools, and the
# final call in flight.
LOCAL_MATRIX = [("after_pending", 1), ("between_tools", 2), ("after_tools", 2)]
LOCAL_MATRIX += [("before_pending", 3)]


@pytest.mark.parametrize(("point", "step"), LOCAL_MATRIX, ids=[f"{p}-{s}" for p, s in LOCAL_MATRIX])
def test_kill_then_resume_against_a_local_shaped_server_ends_as_its_uncrashed_run(
    store_target: Path,
    local_baseline: dict[str, Any],
    baseline: dict[str, Any],
    point: str,
    step: int,
) -> None:
    assert local_baseline["final_text"] == baseline["final_text"]  # the quirks change nothing
    assert local_baseline["tasks"] == baseline["tasks"]
    assert all(json.loads(b)["model"] == LOCAL_MODEL for b in local_baseline["bodies"])
    with fakeapi.FakeAPI(
        responder=fakeapi.responder_from_client(OfflineModel()), local=fakeapi.LOCAL_SHAPED
    ) as fake:
        _kill_then_resume(store_target, fake, local_baseline, point, step)


def _kill_then_resume(
    db: Path | str, api: fakeapi.FakeAPI, baseline: dict[str, Any], point: str, step: int
) -> None:
    killed = dayflow(db, "brief", "--date", DATE, api=api, DAYFLOW_KILL_AT=f"{point}:{step}")
    assert killed.code == -signal.SIGKILL, killed.err
    paid_before_kill = len(api.message_requests)
    resumed = dayflow(db, "resume", api=api)
    assert resumed.code == 0, resumed.err
    assert resumed.out == baseline["out"]

    state = _state(db)
    assert state["status"] == "done"
    assert state["final_text"] == baseline["final_text"]
    assert state["tasks"] == baseline["tasks"]  # same tasks, same ids, none twice
    assert state["totals"] == state["step_sums"]  # totals equal the sum of the step rows
    assert state["steps"] == baseline["steps"]
    # Paid calls: the one in flight when killed before its write is paid again; nothing else.
    repaid = 1 if point == "before_pending" else 0
    assert len(api.message_requests) == len(baseline["bodies"]) + repaid
    assert paid_before_kill == step
    # What the resumed process sent is byte for byte what the uncrashed run sent.
    sent = [r.body for r in api.message_requests]
    assert sent[:paid_before_kill] == baseline["bodies"][:step]
    assert sent[paid_before_kill:] == baseline["bodies"][step - repaid :]
    # Every call is logged as executed once: a create in the transaction that made the task, a
    # read with the step that sent its result (a read lost with the killed process ran again).
    executed = state["events"].count("tool_executed")
    assert executed == baseline["events"].count("tool_executed")


def test_kill_between_two_task_creations_creates_each_task_once(
    store_target: Path, api: fakeapi.FakeAPI, baseline: dict[str, Any]
) -> None:
    db = store_target
    killed = dayflow(db, "brief", "--date", DATE, api=api, DAYFLOW_KILL_AT="between_tools:2")
    assert killed.code == -signal.SIGKILL
    partial = _state(db)
    assert len(partial["tasks"]) == 1 and partial["steps"][-1][1] == "pending"
    assert dayflow(db, "resume", api=api).code == 0
    state = _state(db)
    assert state["tasks"] == baseline["tasks"]
    assert "tool_reused" in state["events"]


def test_resume_through_the_sdk_continues_the_exact_conversation(
    store_target: Path, api: fakeapi.FakeAPI, baseline: dict[str, Any]
) -> None:
    """The request on resume begins with exactly the messages sent and received before,
    with the same system prompt, tools and model."""
    db = store_target
    crashed = dayflow(db, "brief", "--date", DATE, "--crash-after", "2", api=api)
    assert crashed.code == 70 and "simulated crash after step 2" in crashed.err
    assert dayflow(db, "resume", api=api).code == 0
    second, third = (r.json for r in api.message_requests[1:3])
    assert third["system"] == second["system"] and third["tools"] == second["tools"]
    assert third["model"] == second["model"] == "claude-haiku-5-5"
    strip = fakeapi.strip_cache_control
    assert strip(third["messages"][: len(second["messages"])]) == strip(second["messages"])
    assert api.rejected == []
    assert api.message_requests[2].body == baseline["bodies"][2]


@pytest.mark.parametrize("n", [2, 4, 8])
def test_n_processes_resuming_one_run_only_one_drives(store_target: Path, n: int) -> None:
    db = store_target
    slow = fakeapi.slowed(fakeapi.responder_from_client(OfflineModel()), 1.5)
    with fakeapi.FakeAPI(responder=slow) as fake:
        assert dayflow(db, "brief", "--date", DATE, "--crash-after", "1", api=fake).code == 70
        env = subprocess_env(db, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake.base_url)
        procs = [dayflow_child(env, "resume") for _ in range(n)]
        results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    drivers = [r for r in results if r[0] == 0 and "[resume " in r[2]]
    assert len(drivers) == 1, results
    for code, _out, err in results:
        if (code, _out, err) in drivers:
            continue
        busy = code == 5 and "is being driven by pid" in err
        # arrived after the driver finished (picked the run before, or found none left)
        late = (code == 0 and "already done" in err) or (
            code == 3 and "nothing to resume: every run is done" in err
        )
        assert busy or late, (code, err)
    state = _state(db)
    assert state["status"] == "done"
    assert state["events"].count("run_resumed") == 1
    assert [s[0] for s in state["steps"]] == [1, 2, 3]
    assert len({t["idempotency_key"] for t in state["tasks"]}) == len(state["tasks"])


def test_n_separate_briefs_on_one_store_all_finish(store_target: Path) -> None:
    db = store_target
    dayflow(db, "runs")  # create the file once, as a user's first command would
    env = subprocess_env(db)
    procs = [dayflow_child(env, "brief", "--date", DATE) for _ in range(8)]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    assert all(code == 0 for code, _, _ in results), [err for _, _, err in results]
    runs = json.loads(dayflow(db, "runs", "--json").out)
    assert len(runs) == 8 and {r["status"] for r in runs} == {"done"}
    tasks = json.loads(dayflow(db, "tasks", "--json").out)
    assert len(tasks) == len({t["idempotency_key"] for t in tasks})


def test_budget_stops_at_the_same_total_across_a_kill_and_a_resume(
    tmp_path: Path, store_target: Path
) -> None:
    # Small enough that the guard refuses step 2's call outright (a call it admits with a cut
    # max_tokens ends as a cut turn instead, which is another stop).
    budget = "5000"
    clean_db, crash_db = tmp_path / "clean.db", store_target
    clean = dayflow(clean_db, "brief", "--date", DATE, "--budget", budget)
    assert clean.code == 7 and "stopped by --budget 5000" in clean.err
    killed = dayflow(
        crash_db, "brief", "--date", DATE, "--budget", budget, DAYFLOW_KILL_AT="after_complete:1"
    )
    assert killed.code == -signal.SIGKILL
    resumed = dayflow(crash_db, "resume")
    assert resumed.code == 7 and "stopped by --budget 5000" in resumed.err
    a, b = _state(clean_db), _state(crash_db)
    assert a["status"] == b["status"] == "stopped"
    assert a["totals"] == b["totals"] and a["steps"] == b["steps"]
    assert sum(a["totals"].values()) <= 5000
    # Raising the budget on resume finishes the run.
    assert dayflow(crash_db, "resume", "--budget", "100000").code == 0
    assert _state(crash_db)["status"] == "done"


def test_long_run_killed_after_a_compaction_resends_the_same_bytes(
    tmp_path: Path, store_target: Path
) -> None:
    """SIGKILL the large-inbox run at a step after its first compaction; on resume every
    request equals, byte for byte, the request the uncrashed run sent at that step."""
    args = ("brief", "--date", DATE, "--sample", "large")
    slow_reader = OfflineModel(opens_per_turn=1)  # one thread a turn: 30+ steps, compacted
    clean_db, crash_db = tmp_path / "clean.db", store_target
    with fakeapi.FakeAPI(responder=fakeapi.responder_from_client(slow_reader)) as fake:
        assert dayflow(clean_db, *args, api=fake).code == 0
        clean = [r.body for r in fake.message_requests]
    conn = sqlite3.connect(clean_db)
    first = conn.execute("SELECT MIN(before_step) FROM compactions").fetchone()[0]
    conn.close()
    assert first is not None and len(clean) >= 30
    kill_step = first + 1
    with fakeapi.FakeAPI(responder=fakeapi.responder_from_client(slow_reader)) as fake:
        killed = dayflow(crash_db, *args, api=fake, DAYFLOW_KILL_AT=f"after_complete:{kill_step}")
        assert killed.code == -signal.SIGKILL
        assert dayflow(crash_db, "resume", api=fake).code == 0
        sent = [r.body for r in fake.message_requests]
    assert sent[:kill_step] == clean[:kill_step]
    assert sent[kill_step:] == clean[kill_step:]  # the first resumed request included
    assert _state(crash_db)["final_text"] == _state(clean_db)["final_text"]
    assert _state(crash_db)["tasks"] == _state(clean_db)["tasks"]


def _long_inbox(path: Path) -> Path:
    """Three long messages: a threshold of 2,000 tokens compacts their listing away."""
    messages = [
        {"id": f"m{i}", "from": f"Person {i} <p{i}@example.org>", "subject": f"Ask number {i}",
         "received_at": f"2026-11-05T0{6 - i}:00:00+00:00",
         "body": f"Could you do thing {i} by Friday? " + "Background. " * 400}
        for i in (1, 2, 3)
    ]  # fmt: skip
    path.write_text(json.dumps({"messages": messages}))
    return path


FORGETFUL_FILING_STEP = 5  # forgetful_filer(): list, open two, then file from the ids alone


@pytest.fixture(scope="module")
def forgetful_baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The uncrashed run of a model that files by source_id alone after a compaction."""
    from tests.scripted import ScriptedModel, forgetful_filer

    root = tmp_path_factory.mktemp("forgetful")
    args = _forgetful_args(_long_inbox(root / "inbox.json"))
    model = ScriptedModel(fn=forgetful_filer())
    with fakeapi.FakeAPI(responder=fakeapi.responder_from_client(model)) as fake:
        res = dayflow(root / "dayflow.db", *args, api=fake)
        assert res.code == 0, res.err
        bodies = [r.body for r in fake.message_requests]
    state = _state(root / "dayflow.db")
    assert len(state["tasks"]) == 3 and "compacted" in state["events"]
    return state | {"bodies": bodies}


def _forgetful_args(inbox: Path) -> tuple[str, ...]:
    return ("brief", "--date", DATE, "--inbox", str(inbox), "--since", "2026-11-01",
            "--compact-at", "2000")  # fmt: skip


@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_kill_across_a_compaction_files_each_source_id_task_once(
    tmp_path: Path, store_target: Path, forgetful_baseline: dict[str, Any], point: str
) -> None:
    """Issue 31.2: SIGKILL at each point of the step that files by source_id alone (after a
    compaction took the keys out of view); the resume resolves the same keys from the saved
    rows, so each task is filed once and every request is the uncrashed run's."""
    from tests.scripted import ScriptedModel, forgetful_filer

    args = _forgetful_args(_long_inbox(tmp_path / "inbox.json"))
    model = ScriptedModel(fn=forgetful_filer())
    with fakeapi.FakeAPI(responder=fakeapi.responder_from_client(model)) as fake:
        kill = f"{point}:{FORGETFUL_FILING_STEP}"
        killed = dayflow(store_target, *args, api=fake, DAYFLOW_KILL_AT=kill)
        assert killed.code == -signal.SIGKILL, killed.err
        resumed = dayflow(store_target, "resume", api=fake)
        assert resumed.code == 0, resumed.err
        sent = [r.body for r in fake.message_requests]
    state = _state(store_target)
    assert state["tasks"] == forgetful_baseline["tasks"]
    assert state["final_text"] == forgetful_baseline["final_text"]
    # A call lost with the killed process is made again, with the same bytes.
    repaid = 1 if point == "before_pending" else 0
    assert sent[:FORGETFUL_FILING_STEP] == forgetful_baseline["bodies"][:FORGETFUL_FILING_STEP]
    assert (
        sent[FORGETFUL_FILING_STEP:]
        == (forgetful_baseline["bodies"][FORGETFUL_FILING_STEP - repaid :])
    )
