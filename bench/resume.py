"""Resume cost at N steps: the rebuild against its floor, and `dayflow resume` to its first call.

The run is built with the store API (the workload's steps, compaction off so the whole history
is sent) and left interrupted. Then, interleaved per round:

- in process: `rebuild_messages` against the raw floor (one SELECT of the step rows on a plain
  connection plus `json.loads`) on the same warm file; the whole resume up to its first model
  call (open the store, find the run, `resume_run`), on a fresh copy; and `store.runs.get`,
  which the loop calls before every model call, on this run and on a one-step run;
- in a subprocess: `dayflow resume RUN` against a loopback Messages API (this module's
  `FakeMessages`, through the real `anthropic` SDK), timed from just before the process is
  spawned to the moment the request's headers arrive, next to `python -c "import typer, rich"`
  and `python -c "import anthropic"` in the same round.

Each resume is checked: exactly one model call, the request's messages (cache markers removed)
equal to the steps that were stored, and the run's totals grown by that one call's usage only.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from time import perf_counter_ns
from typing import Any

from bench.persist import MODEL, disk_bytes, new_run, response, store_step
from bench.workload import USER_MSG, Step
from dayflow.agent import Loop, rebuild_messages, resume_run
from dayflow.models import Limits, ModelRequest, ModelResponse, Usage
from dayflow.store import open_store
from tests.fakeapi import strip_cache_control
from tests.httpkit import Loopback

REPLY_USAGE = {"input_tokens": 11, "output_tokens": 7}


class FakeMessages:
    """A loopback `POST /v1/messages` that stamps each request's arrival (headers read, body
    not yet) and answers one short end_turn message."""

    def __init__(self) -> None:
        self.arrivals: list[int] = []
        self.bodies: list[dict[str, Any]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                arrived = perf_counter_ns()
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                api.arrivals.append(arrived)
                api.bodies.append(body)
                reply = json.dumps(
                    {
                        "id": "msg_bench",
                        "type": "message",
                        "role": "assistant",
                        "model": body["model"],
                        "content": [{"type": "text", "text": "## Today\nResumed."}],
                        "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": REPLY_USAGE,
                    }
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("request-id", "req_bench")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self._http = Loopback(Handler)

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def __enter__(self) -> FakeMessages:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()


def build_interrupted(path: Path, workload: tuple[Step, ...]) -> tuple[str, list[dict[str, Any]]]:
    """Store `workload` as an interrupted run; return its id and the messages it holds."""
    with open_store(path) as store:
        run, lease = store.runs.create(new_run(len(workload)))
        for step in workload:
            store_step(store, lease, step, response(step))
        store.leases.release(lease, "interrupted", "bench")
    disk_bytes(path)  # fold the WAL in, so a copy of the main file is the whole database
    expected = [USER_MSG]
    for step in workload:
        expected.extend(step.messages())
    return run.id, expected


def raw_rebuild(conn: sqlite3.Connection, run_id: str) -> list[dict[str, Any]]:
    """The floor: one SELECT of the step rows and `json.loads` of each payload."""
    messages: list[dict[str, Any]] = [USER_MSG]
    rows = conn.execute(
        "SELECT assistant_json, tool_results_json FROM steps WHERE run_id = ? ORDER BY n",
        (run_id,),
    ).fetchall()
    for assistant, results in rows:
        messages.append({"role": "assistant", "content": json.loads(assistant)})
        messages.append({"role": "user", "content": json.loads(results)})
    return messages


class FirstCall:
    """A model that stamps the time of its first call and ends the run with a short brief."""

    def __init__(self) -> None:
        self.at: int | None = None

    def create(self, request: ModelRequest) -> ModelResponse:
        if self.at is None:
            self.at = perf_counter_ns()
        brief = [{"type": "text", "text": "## Today\nResumed."}]
        usage = Usage(REPLY_USAGE["input_tokens"], REPLY_USAGE["output_tokens"])
        return ModelResponse(brief, "end_turn", usage, MODEL)

    def count_tokens(self, request: ModelRequest) -> int | None:
        return None


def resume_in_process(pristine: Path, run_id: str, tmp: Path) -> int:
    """ns from opening the store to the first model call of `resume_run`, on a fresh copy."""
    db = tmp / "in-process.db"
    shutil.copyfile(pristine, db)
    model = FirstCall()
    t0 = perf_counter_ns()
    with open_store(db) as store:
        run = store.runs.find(run_id)
        result = resume_run(Loop(store, model), run, Limits(max_steps=run.steps + 1))
    assert model.at is not None and result.calls == 1 and result.run.status == "done"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return model.at - t0


def measure_rebuild(
    path: Path, run_id: str, expected: list[Any], one: tuple[Path, str], rounds: int, tmp: Path
) -> list[dict[str, int]]:
    """Per round, in a shuffled order: the rebuild, its floor, the whole in-process resume up
    to its first model call, and `store.runs.get` on this run and on a one-step run (`one`)."""
    out = []
    with open_store(path) as store, open_store(one[0]) as small:
        raw = sqlite3.connect(path)
        run = store.runs.get(run_id)
        assert rebuild_messages(store, run) == expected, "the rebuild differs from what was stored"
        assert raw_rebuild(raw, run_id) == expected
        tasks = {
            "dayflow": lambda: rebuild_messages(store, run),
            "floor": lambda: raw_rebuild(raw, run_id),
            "get_run": lambda: store.runs.get(run_id),
            "get_run_one": lambda: small.runs.get(one[1]),
        }
        for _ in range(rounds):
            times: dict[str, int] = {}
            for name in random.sample([*tasks, "in_process"], len(tasks) + 1):
                if name == "in_process":
                    times[name] = resume_in_process(path, run_id, tmp)
                    continue
                t0 = perf_counter_ns()
                tasks[name]()
                times[name] = perf_counter_ns() - t0
            out.append(times)
        raw.close()
    return out


def measure_cli(
    pristine: Path, run_id: str, expected: list[Any], rounds: int, tmp: Path
) -> list[dict[str, int]]:
    """Per round: ns from spawn to the first request of `dayflow resume`, and the baselines."""
    dayflow = str(Path(sys.executable).with_name("dayflow"))
    with open_store(pristine) as store:
        before = store.runs.get(run_id)
    out = []
    with FakeMessages() as api:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(tmp),
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_BASE_URL": api.base_url,
            "NO_COLOR": "1",
            "COLUMNS": "200",
        }
        baselines = {
            "typer_rich": [sys.executable, "-c", "import typer, rich"],
            "anthropic": [sys.executable, "-c", "import anthropic"],
        }
        for r in range(rounds):
            times: dict[str, int] = {}
            for name in random.sample(["resume", *baselines], 1 + len(baselines)):
                if name != "resume":
                    t0 = perf_counter_ns()
                    subprocess.run(baselines[name], env=env, cwd=tmp, check=True)
                    times[name] = perf_counter_ns() - t0
                    continue
                db = tmp / f"resume-{r}.db"
                shutil.copyfile(pristine, db)
                calls = len(api.arrivals)
                args = [dayflow, "resume", run_id, "--db", str(db)]
                args += ["--max-steps", str(before.steps + 1)]
                t0 = perf_counter_ns()
                proc = subprocess.run(args, env=env, cwd=tmp, capture_output=True, text=True)
                times["resume_total"] = perf_counter_ns() - t0
                assert proc.returncode == 0, proc.stderr
                assert len(api.arrivals) == calls + 1, "resume made more than one model call"
                times["resume"] = api.arrivals[-1] - t0
                assert strip_cache_control(api.bodies[-1]["messages"]) == expected
                with open_store(db) as store:
                    after = store.runs.get(run_id)
                new = Usage(REPLY_USAGE["input_tokens"], REPLY_USAGE["output_tokens"])
                assert after.status == "done" and after.steps == before.steps + 1
                assert after.usage == before.usage + new, "tokens were spent on committed steps"
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{db}{suffix}").unlink(missing_ok=True)
            out.append(times)
    return out
