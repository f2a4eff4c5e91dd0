"""`fleet status` says what a person can act on: a brief whose worker was killed is `lost` (and
since when, and that the next worker retakes it), not `running` until someone retakes it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import db_rows, subprocess_env
from tests.fakeapi import FakeAPI, Reply
from tests.scripted import text
from tests.test_fleet import _run, _until, fleet_db  # noqa: F401 (fleet_db: a fixture)

pytestmark = pytest.mark.postgres


def _hangs(body: dict[str, Any]) -> Reply:
    """Every call answered a minute later (cut short when the server closes): a worker is
    always in the middle of a brief's model call when it is killed."""
    return Reply([text("# Brief")], "end_turn", delay=60.0)


def test_a_killed_workers_brief_is_shown_lost_with_its_lease_expiry_not_running(
    fleet_db: str,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    url = fleet_db + "&dayflow_lease_ttl=1"
    with FakeAPI(responder=_hangs) as api:
        env = subprocess_env(
            url,
            ANTHROPIC_API_KEY="test",
            ANTHROPIC_BASE_URL=api.base_url,
            DAYFLOW_MODEL="claude-haiku-5-5",
            XDG_STATE_HOME=str(tmp_path / "state"),
            HOME=str(tmp_path),
        )
        log = tmp_path / "worker.log"
        args = ["worker", "--concurrency", "1", "--heartbeat", "2", "--poll", "0.5"]
        with log.open("wb") as out:
            worker = subprocess.Popen(
                [sys.executable, "-m", "dayflow", *args], env=env, stdout=out, stderr=out
            )
        try:
            # On the real clock every profile is due (00:00 UTC): the worker queues them.
            _until(lambda: api.message_requests, "the worker is in a brief's model call")
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait()
    ((profile, day),) = db_rows(url, "SELECT profile, brief_date FROM runs")
    time.sleep(2.5)  # its run's lease (1 s) expires; its held jobs' beats go stale
    shown = _run(url, "fleet", "status", "--date", day, "--heartbeat", "2", "--json")
    assert shown.code == 0, shown.err
    lines = {p["profile"]: p for p in json.loads(shown.out)["profiles"]}
    lost = lines[profile]
    assert lost["state"] == "lost" and lost["run_id"] is not None, lost
    assert lost["detail"].startswith("lease expired ") and lost["detail"].endswith(
        " s ago, the next worker retakes it"
    )
    # Nothing is `running`: the job it held beyond the brief is lost too (it never began).
    assert all(p["state"] in ("lost", "due") for p in lines.values()), lines
    for other in (p for p in lines.values() if p["state"] == "lost" and p is not lost):
        assert other["run_id"] is None and other["detail"].startswith("its worker stopped beating")
    table = _run(url, "fleet", "status", "--date", day, "--heartbeat", "2").out
    assert f"\n{profile}: lost: lease expired " in table and "running" not in table, table
