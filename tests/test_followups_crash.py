"""read_followups is a read: killed with SIGKILL around it, a resumed run sends the model the
same bytes as an uncrashed one, and a step that committed its result never reads the mail
again (mail that arrives meanwhile changes nothing in that run)."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from tests.fakeapi import FakeAPI, responder_from_client
from tests.mailkit import deliver, thread_mail
from tests.test_crash import _state, dayflow
from tests.test_sent_mail import ALEX, BOB, at, week

pytestmark = pytest.mark.slow  # real processes killed with SIGKILL

DAY = "2026-11-18"
# A fixed window for read_inbox: "the last 24 hours" of a brief for a past day is counted from
# the clock's time of day, so two runs made seconds apart would list from different times.
SINCE = ("--since", "2026-11-11")


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI(responder=responder_from_client(OfflineModel())) as fake:
        yield fake


def _config(root: Path) -> dict[str, str]:
    inbox, sent = week(root / "mail")
    path = root / "config.toml"
    path.write_text(
        f'me = ["alex@example.org"]\n[[inbox]]\nname = "work"\nkind = "maildir"\n'
        f'path = "{inbox}"\nsent = "{sent}"\n[[calendar]]\nname = "none"\nkind = "ics"\n'
        f'path = "{root / "cal.ics"}"\n'
    )
    (root / "cal.ics").write_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n")
    return {"DAYFLOW_CONFIG": str(path)}


def _followups_result(body: bytes) -> Any:
    """The read_followups tool_result a request carries (None when none yet)."""
    names: dict[str, str] = {}
    found = None
    for message in json.loads(body)["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_use":
                names[block["id"]] = block["name"]
            if block.get("type") == "tool_result" and names.get(block["tool_use_id"]) == (
                "read_followups"
            ):
                found = block["content"]
    return found


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("followups-baseline")
    env = _config(root)
    with FakeAPI(responder=responder_from_client(OfflineModel())) as fake:
        res = dayflow(root / "d.db", "brief", "--date", DAY, *SINCE, api=fake, **env)
        assert res.code == 0, res.err
        bodies = [r.body for r in fake.message_requests]
    state = _state(root / "d.db")
    assert "Reply to Bob Stone" in state["final_text"]
    return {"bodies": bodies, "state": state, "out": res.out}


# Step 1 runs the reads, read_followups last of them; step 2 files the tasks.
POINTS = [("between_tools", 1), ("after_tools", 1), ("after_pending", 1), ("after_complete", 1)]


@pytest.mark.parametrize(("point", "step"), POINTS, ids=[f"{p}-{s}" for p, s in POINTS])
def test_a_kill_around_read_followups_resumes_with_the_same_bytes(
    tmp_path: Path, api: FakeAPI, baseline: dict[str, Any], point: str, step: int
) -> None:
    env = _config(tmp_path)
    db = tmp_path / "d.db"
    killed = dayflow(db, "brief", "--date", DAY, *SINCE, api=api, DAYFLOW_KILL_AT=f"{point}:{step}",
                     **env)  # fmt: skip
    assert killed.code == -signal.SIGKILL, killed.err
    resumed = dayflow(db, "resume", api=api, **env)
    assert resumed.code == 0, resumed.err
    assert resumed.out == baseline["out"]
    state = _state(db)
    assert state["final_text"] == baseline["state"]["final_text"]
    assert state["tasks"] == baseline["state"]["tasks"]
    sent = [r.body for r in api.message_requests]
    assert sent == baseline["bodies"]  # no call repaid: every kill is after its request's write


def test_a_committed_read_is_not_read_again_when_mail_arrives_before_the_resume(
    tmp_path: Path, api: FakeAPI, baseline: dict[str, Any]
) -> None:
    env = _config(tmp_path)
    db = tmp_path / "d.db"
    kill = {"DAYFLOW_KILL_AT": "after_complete:1"}
    killed = dayflow(db, "brief", "--date", DAY, *SINCE, api=api, **kill, **env)
    assert killed.code == -signal.SIGKILL, killed.err
    # Alex answers Bob after the kill: a fresh read would owe Bob nothing.
    reply = thread_mail("late@y", sender=ALEX, to=BOB, subject="Re: Budget", body="Sent.",
                        when=at(18, 6), reply_to="bob1@x")  # fmt: skip
    deliver(tmp_path / "mail" / "Sent", reply, at(18, 6))
    resumed = dayflow(db, "resume", api=api, **env)
    assert resumed.code == 0, resumed.err
    assert _state(db)["final_text"] == baseline["state"]["final_text"]
    assert "Reply to Bob Stone" in resumed.out
    results = [_followups_result(r.body) for r in api.message_requests]
    assert results[-1] == _followups_result(baseline["bodies"][-1])
    # A new brief reads the mail again and owes Bob nothing.
    fresh = dayflow(tmp_path / "other.db", "brief", "--date", DAY, *SINCE, api=api, **env)
    assert fresh.code == 0 and "Reply to Bob Stone" not in fresh.out
