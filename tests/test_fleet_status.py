"""`fleet status` says what a person can act on: a brief whose worker was killed is `lost` (and
since when, and that the next worker retakes it), not `running` until someone retakes it."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import claude_env, dayflow_command, db_rows
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
        env = claude_env(url, api.base_url, tmp_path)
        log = tmp_path / "worker.log"
        args = ["worker", "--concurrency", "1", "--heartbeat", "2", "--poll", "0.5"]
        with log.open("wb") as out:
            worker = subprocess.Popen(dayflow_command(*args), env=env, stdout=out, stderr=out)
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


def test_without_a_date_each_profile_is_shown_and_queued_for_its_own_today(
    fleet_db: str,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    """At 07:30 UTC on 5 November it is still 4 November in Los Angeles: lee's brief of
    today is the 4th's (due at 07:00 there, passed), not the 5th's (later)."""
    url, config = fleet_db, tmp_path / "sample.toml"
    lee = ("lee", "--config", str(config), "--tz", "America/Los_Angeles", "--at", "07:00")
    assert _run(url, "profiles", "add", *lee).code == 0
    shown = json.loads(_run(url, "fleet", "status", "--json").out)
    rows = {p["profile"]: p for p in shown["profiles"]}
    assert shown["date"] is None and rows["ann"]["day"] == "2026-11-05"
    assert (rows["lee"]["day"], rows["lee"]["state"]) == ("2026-11-04", "due")
    assert rows["lee"]["due_at"] == "2026-11-04T07:00:00.000-08:00"
    text = _run(url, "fleet", "status").out
    assert text.startswith("each profile's today (2026-11-04 to 2026-11-05): 4 due"), text
    queued = _run(url, "fleet", "enqueue")
    assert "4 brief(s) for each profile's today queued" in queued.err, queued.err
    after = json.loads(_run(url, "fleet", "status", "--date", "2026-11-04", "--json").out)
    assert [p["profile"] for p in after["profiles"] if p["queued_at"]] == ["lee"]


def test_a_past_day_nobody_queued_is_missed_with_the_command_that_writes_it(
    fleet_db: str,  # noqa: F811 (the fixture)
) -> None:
    """A worker queues each profile's today only: a day that ended with no brief (no worker
    ran from its due time to its midnight) is never written unless asked, so status says
    `missed` and how to ask, rather than `due` forever."""
    url = fleet_db
    past = json.loads(_run(url, "fleet", "status", "--date", "2026-11-03", "--json").out)
    assert past["counts"]["missed"] == 3 and past["counts"]["due"] == 0
    (detail,) = {p["detail"] for p in past["profiles"]}
    assert detail.endswith("`dayflow fleet enqueue --date 2026-11-03` writes it")
    text = _run(url, "fleet", "status", "--date", "2026-11-03").out
    assert "\nann: missed: no brief was written and its day is over" in text, text
    assert _run(url, "fleet", "enqueue", "--date", "2026-11-03").code == 0
    queued = json.loads(_run(url, "fleet", "status", "--date", "2026-11-03", "--json").out)
    assert queued["counts"]["due"] == 3 and queued["counts"]["missed"] == 0
