"""Calendars through the CLI: a configured feed and CalDAV account in a brief, a failing calendar
named while the others answer, no secret stored, and a SIGKILL after the calendar read followed
by `resume`, counted at the server: the feed is never asked again for a step already committed."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dayflow.providers.offline import OfflineModel
from tests.calserver import FeedServer
from tests.conftest import python_process, subprocess_env
from tests.davserver import PASSWORD, USER, DavServer
from tests.harness import invoke

pytestmark = pytest.mark.slow

OFFLINE = lambda model, settings: OfflineModel()  # noqa: E731
DAY = "2026-11-05"  # the harness clock is 2026-11-05T07:30Z
FIXTURES = Path(__file__).parent / "ical"
SECRET = "/calendar/ical/alex%40example.org/private-5ecret7oken/basic.ics"


@pytest.fixture
def feeds() -> Iterator[FeedServer]:
    with FeedServer() as server:
        server.feeds[SECRET] = (FIXTURES / "noend.ics").read_bytes()
        yield server


def _config(tmp_path: Path, body: str) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(body)
    return {"DAYFLOW_CONFIG": str(path)}


def _feed_config(tmp_path: Path, url: str, extra: str = "") -> dict[str, str]:
    return _config(tmp_path, f'[[calendar]]\nname = "google"\nkind = "ics"\nurl = "{url}"\n{extra}')


def _child(db: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return python_process(subprocess_env(db, **env), "-m", "dayflow", *args, timeout=120)


def _every_byte(db: Path) -> bytes:
    data = b""
    for path in db.parent.glob(db.name + "*"):
        data += path.read_bytes()
    conn = sqlite3.connect(db)
    data += "\n".join(map(str, conn.iterdump())).encode()
    conn.close()
    return data


def test_a_feed_feeds_the_brief_and_its_secret_address_is_never_stored(
    tmp_path: Path, feeds: FeedServer
) -> None:
    env = _feed_config(tmp_path, feeds.base_url + SECRET)
    db = tmp_path / "d.db"
    res = invoke(db, OFFLINE, "brief", "--date", DAY, "--tz", "Europe/Lisbon", env=env)
    assert res.code == 0, res.err
    assert "14:00–14:45 Interview" in res.out and "16:00–16:00 Parcel arrives" in res.out
    # The two reads of step 1 (today, week) share one fetch; the precheck contacts nobody.
    assert [g.status for g in feeds.gets(SECRET)] == [200]
    shown = [invoke(db, OFFLINE, *args, env=env) for args in (["runs"], ["show", "--json"])]
    for text in [res.out, res.err, *(r.out + r.err for r in shown)]:
        assert "5ecret7oken" not in text
    assert b"5ecret7oken" not in _every_byte(db)
    # A second brief asks again, conditionally, and gets a 304.
    again = invoke(db, OFFLINE, "brief", "--date", DAY, "--tz", "Europe/Lisbon", env=env)
    assert again.code == 0, again.err
    assert [g.status for g in feeds.gets(SECRET)] == [200, 304]
    assert "Interview" in again.out


@pytest.mark.parametrize(
    "point",
    [
        "after_tools",  # the reads returned (and were saved), the step not yet committed
        "after_complete",  # step 1, with its four reads, committed
    ],
)
def test_sigkill_after_the_calendar_read_then_resume_counted_at_the_feed(
    tmp_path: Path, feeds: FeedServer, point: str
) -> None:
    env = _feed_config(tmp_path, feeds.base_url + SECRET)
    db = tmp_path / "d.db"
    killed = _child(db, "brief", "--date", DAY, "--tz", "UTC", DAYFLOW_KILL_AT=f"{point}:1", **env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert [g.status for g in feeds.gets(SECRET)] == [200]  # step 1 read it, then the kill
    resumed = _child(db, "resume", **env)
    assert resumed.returncode == 0, resumed.stderr
    assert [g.status for g in feeds.gets(SECRET)] == [200]  # the saved read was reused
    assert "14:00–14:45 Interview" in resumed.stdout
    runs = json.loads(_child(db, "runs", "--json", **env).stdout)
    assert [r["status"] for r in runs] == ["done"]


def test_a_failing_calendar_is_named_and_the_others_still_answer(
    tmp_path: Path, feeds: FeedServer
) -> None:
    home = tmp_path / "home.ics"
    home.write_bytes((FIXTURES / "allday.ics").read_bytes())
    env = _config(
        tmp_path,
        f'[[calendar]]\nname = "home"\nkind = "ics"\npath = "{home}"\n'
        f'[[calendar]]\nname = "gone"\nkind = "ics"\nurl = "{feeds.base_url}/missing.ics"\n'
        f'[[calendar]]\nname = "slow"\nkind = "ics"\nurl = "{feeds.base_url}/hang.ics"\n'
        "timeout = 0.5\n",
    )
    db = tmp_path / "d.db"
    res = invoke(db, OFFLINE, "brief", "--date", DAY, env=env)
    assert res.code == 0, res.err
    assert "All day Public holiday" in res.out
    assert f"Could not read gone: source 'gone' could not be read: {feeds.base_url}/… " in res.out
    assert "answered HTTP 404 Not Found" in res.out
    assert f"no complete answer from {feeds.base_url}/… within 0.5 s" in res.out

    strict = invoke(tmp_path / "s.db", OFFLINE, "brief", "--date", DAY, "--strict-sources", env=env)
    assert strict.code == 4
    [line] = [x for x in strict.err.splitlines() if x.startswith("error:")]
    assert "gone" in line and "--strict-sources" in line


def test_a_caldav_account_feeds_the_brief_and_is_never_changed(tmp_path: Path) -> None:
    with DavServer(tmp_path / "radicale") as dav:
        dav.make_calendar("personal", "Personal")
        dav.put("personal", "standup.ics", (FIXTURES / "recurrence.ics").read_bytes())
        before, served = dav.snapshot(), len(dav.requests())
        body = (
            f'[[calendar]]\nname = "nextcloud"\nkind = "caldav"\nurl = "{dav.base_url}/"\n'
            f'user = "{USER}"\npassword_env = "NC_PASSWORD"\ncalendars = ["Personal"]\n'
            'security = "plain"\n'  # the test server is http:// on loopback
        )
        env = {**_config(tmp_path, body), "NC_PASSWORD": PASSWORD}
        db = tmp_path / "d.db"
        res = invoke(db, OFFLINE, "brief", "--date", DAY, "--tz", "Europe/Berlin", env=env)
        assert res.code == 0, res.err
        assert "11:00–11:15 Team standup (moved) (Room 2)" in res.out
        assert {m for m, _ in dav.requests()[served:]} == {"PROPFIND", "REPORT"}
        assert dav.snapshot() == before
        assert PASSWORD.encode() not in _every_byte(db)

        wrong = {**env, "NC_PASSWORD": "hunter2"}
        failed = invoke(tmp_path / "w.db", OFFLINE, "brief", "--date", DAY, env=wrong)
        assert failed.code == 0
        assert "refused the user name or password (HTTP 401)" in failed.out
        assert "hunter2" not in failed.out + failed.err
