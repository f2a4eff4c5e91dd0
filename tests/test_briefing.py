"""The brief's room (dayflow.briefing): a sample run is never the day's brief, the first brief's
mail window and --since, one full brief per day across hosts, and the room's own fences."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from tests.conftest import dayflow_child, pg_schema, subprocess_env
from tests.harness import Result, invoke
from tests.mailkit import message, write_maildir

OFFLINE = lambda model, settings: OfflineModel()  # noqa: E731
DAY = "2026-11-05"  # the harness clock is 2026-11-05T07:30Z


def _maildir_config(tmp_path: Path) -> dict[str, str]:
    """A config with one real Maildir holding a request from five days ago and one from
    this morning; the environment naming it."""
    md = write_maildir(tmp_path / "Mail", 0)
    for n, (name, when) in enumerate(
        [
            ("old", dt.datetime(2026, 10, 31, 9, 0, tzinfo=dt.UTC)),
            ("fresh", dt.datetime(2026, 11, 5, 6, 0, tzinfo=dt.UTC)),
        ]
    ):
        raw = message(
            n,
            sender=f"{name.title()} Person <{name}@example.org>",
            when=when,
            message_id=f"<{name}@x>",
        )
        (md / "new" / f"{int(when.timestamp())}.M{n}P1Q1.host").write_bytes(raw)
    path = tmp_path / "config.toml"
    path.write_text(f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{md}"\n')
    return {"DAYFLOW_CONFIG": str(path)}


def _runs(db: Path) -> list[dict[str, Any]]:
    return json.loads(invoke(db, OFFLINE, "runs", "--json").out or "[]")


def _settings(db: Path | str) -> list[Any]:
    from dayflow.store import open_store

    with open_store(db) as store:
        return [r.settings for r in store.runs.list(limit=None)]


def _brief(db: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return invoke(db, OFFLINE, "brief", *args, env=env)


def test_the_first_real_brief_after_the_sample_is_a_full_brief_not_an_update(
    tmp_path: Path,
) -> None:
    """Issue 19.8: quick start (the sample brief), then `init` and a real source: the next
    plain `brief` wrote an "update since the sample run" and --ensure-today printed the sample
    brief. A sample run is never the day's brief of the user's mail."""
    db = tmp_path / "d.db"
    assert _brief(db).code == 0  # the quick start: the bundled sample
    env = _maildir_config(tmp_path)
    real = _brief(db, env=env)
    assert real.code == 0, real.err
    assert "writing an update" not in real.err and "exists: run" not in real.err
    newest = _settings(db)[0]
    assert newest.update_of is None and newest.sources is not None
    ensured = _brief(db, "--ensure-today", env=env)
    assert ensured.code == 0 and "already done" in ensured.err
    assert "Fresh" in ensured.out  # the real brief, not the sample's
    assert len(_runs(db)) == 2
    # ...and a second sample brief of the day is still an update of the first one
    sample_again = _brief(db)
    assert "writing an update" in sample_again.err


def test_ensure_today_after_the_sample_starts_the_real_brief(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    assert _brief(db, "--ensure-today").code == 0
    env = _maildir_config(tmp_path)
    ensured = _brief(db, "--ensure-today", env=env)
    assert ensured.code == 0, ensured.err
    assert "already done" not in ensured.err and "Fresh" in ensured.out
    assert [s.reads_sample for s in _settings(db)] == [False, True]


def test_a_sample_run_of_yesterday_does_not_start_todays_mail_window(tmp_path: Path) -> None:
    """The mail window starts at the last brief *of the user's mail*: a sample brief written
    yesterday read none of it."""
    db = tmp_path / "d.db"
    assert invoke(db, OFFLINE, "brief", clock="2026-11-04T07:30Z").code == 0
    res = _brief(db, env=_maildir_config(tmp_path))
    assert res.code == 0, res.err
    assert _settings(db)[0].mail_since == "2026-11-04T07:30:00+00:00"  # 24 hours, not the sample
    assert (
        "note: no brief of an earlier day read these inboxes, so this one read the last 24 hours "
        "of mail "
        "(since 2026-11-04 07:30); `dayflow brief --since 3d` (or --since YYYY-MM-DD) reaches "
        "further back"
    ) in res.err


def test_a_same_day_update_says_nothing_of_the_last_24_hours(tmp_path: Path) -> None:
    """A second brief of the day reads since the day's brief: the first brief's note that no
    earlier brief read the inboxes (so it read the last 24 hours) is not said again."""
    db = tmp_path / "d.db"
    env = _maildir_config(tmp_path)
    first = _brief(db, env=env)
    assert first.code == 0 and "last 24 hours" in first.err, first.err
    again = _brief(db, env=env)
    assert again.code == 0, again.err
    assert "writing an update with only what arrived since" in again.err
    assert "no earlier brief" not in again.err and "last 24 hours" not in again.err
    assert _settings(db)[0].update_of is not None


def test_a_second_full_brief_of_the_day_does_not_say_no_earlier_brief_read_the_inboxes(
    tmp_path: Path,
) -> None:
    """`brief --new` after the day's brief reads the last 24 hours again (the window starts
    at a brief of an earlier day), but its note said "no earlier brief read these inboxes",
    which the day's first brief had just done."""
    db = tmp_path / "d.db"
    env = _maildir_config(tmp_path)
    assert _brief(db, env=env).code == 0
    again = _brief(db, "--new", env=env)
    assert again.code == 0, again.err
    assert "no earlier brief" not in again.err
    assert "note: no brief of an earlier day read these inboxes" in again.err


@pytest.mark.parametrize(
    ("since", "window"),
    [
        ("7d", "2026-10-29T07:30:00+00:00"),
        ("36h", "2026-11-03T19:30:00+00:00"),
        ("2w", "2026-10-22T07:30:00+00:00"),
        ("2026-10-30", "2026-10-30T00:00:00+00:00"),
    ],
)
def test_since_reaches_back_past_the_first_briefs_24_hours(
    tmp_path: Path, since: str, window: str
) -> None:
    db = tmp_path / "d.db"
    res = _brief(db, "--since", since, env=_maildir_config(tmp_path))
    assert res.code == 0, res.err
    assert _settings(db)[0].mail_since == window
    assert "last 24 hours" not in res.err
    if since in ("7d", "2w", "2026-10-30"):
        assert "Old" in res.out


def test_since_on_a_day_with_a_brief_writes_a_full_one(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    env = _maildir_config(tmp_path)
    assert _brief(db, env=env).code == 0
    again = _brief(db, "--since", "7d", env=env)
    assert again.code == 0, again.err
    assert "; writing a full new one (--since)" in again.err
    assert _settings(db)[0].update_of is None


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--since", "yesterday"], "give a day (YYYY-MM-DD) or a span before the brief"),
        (["--since", "0d"], "give 1h to 10 years"),
        (["--since", "99999w"], "give 1h to 10 years"),
        (["--since", "2026-11-06"], "that is not before the brief (2026-11-05 07:30)"),
        (["--since", "2026-11-03", "--date", "2026-11-02"], "not before the brief (2026-11-02"),
        (["--since", ""], "must not be empty"),
        (["--since", "3d", "--ensure-today"], "--since and --ensure-today cannot be used together"),
        (["--since", "3d", "--since-last"], "--since and --since-last cannot be used together"),
        (["--since", "3d", "--resume-latest"], "cannot be used together"),
    ],
)
def test_a_bad_since_is_a_usage_error(tmp_path: Path, args: list[str], said: str) -> None:
    res = _brief(tmp_path / "d.db", *args, env=_maildir_config(tmp_path))
    assert res.code == 2 and said in res.err, res.err
    assert not (tmp_path / "d.db").exists()


def test_since_with_the_sample_says_the_inbox_is_read_whole(tmp_path: Path) -> None:
    res = _brief(tmp_path / "d.db", "--since", "3d")
    assert res.code == 0
    assert "note: --since applies to the config's inboxes; this brief's inbox is read whole" in (
        res.err
    )


def test_the_core_imports_neither_typer_nor_rich() -> None:
    """The room is a library: the CLI renders what it returns."""
    probe = (
        "import sys, dayflow.briefing, dayflow.briefing.flow, dayflow.briefing.day; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_brief_command_fits_on_a_screen() -> None:
    """Issue 18.1: the CLI parses, calls dayflow.briefing and renders."""
    import inspect

    from dayflow import cli_brief

    source = inspect.getsource(cli_brief.brief)
    body = source[source.index('    """Read the inbox') :]
    assert len(body.splitlines()) <= 60


@pytest.mark.postgres
def test_two_hosts_starting_a_plain_brief_at_once_write_one_full_brief(
    pg_server: Any, tmp_path: Path
) -> None:
    """Issue 19.13: two machines sharing PostgreSQL each hold their own day lock (a file on
    each machine), so both look, find no run for the day, and go to create it; a plain `brief`
    wrote two full briefs. The store's day lock makes one of them the day's brief and the
    other shows it. Both processes are held at that lock until both are there (not timed)."""
    from dayflow.store import open_store
    from dayflow.store.postgres import POSTGRES, PgDatabase

    with pg_schema(pg_server) as url:
        with open_store(url) as setup:
            setup.runs.list()  # the schema exists
        app_name = url.rsplit("application_name=", 1)[1]
        gate = PgDatabase(url)
        procs = []
        with gate.transaction():
            gate.execute(POSTGRES.day_lock, (DAY,))
            for host in ("host-a", "host-b"):
                env = subprocess_env(
                    url, XDG_DATA_HOME=str(tmp_path / host), DAYFLOW_HOST=host, HOME=str(tmp_path)
                )
                procs.append(dayflow_child(env, "brief", "--date", DAY))
            for _ in range(3000):  # until both wait on the day's lock in create_run
                waiting = pg_server.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND application_name = %s AND query LIKE %s",
                    (app_name, "%':day:'%"),
                ).fetchone()[0]
                if waiting == 2 or any(p.poll() is not None for p in procs):
                    break
                time.sleep(0.02)
            assert waiting == 2, [p.communicate() for p in procs if p.poll() is not None]
        gate.close()
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        with open_store(url) as store:
            (only,) = store.runs.list(limit=None)
        assert only.status == "done"
        losers = [err for _, err in outs if "another dayflow started the brief" in err]
        assert len(losers) == 1 and f"(run {only.id})" in losers[0]
        assert outs[0][0] == outs[1][0]  # both print the one brief


def _killed_reading(tmp_path: Path, db: Path, cwd: Path) -> None:
    """A brief started in `cwd` with `--config c.toml` (relative), SIGKILLed after step 1's
    response is written and before its reads: its resume must read the config's sources."""
    repo = Path(__file__).resolve().parent.parent
    (cwd / "c.toml").write_text(
        f'[[inbox]]\nname = "j"\nkind = "json"\npath = "{repo / "fixtures" / "inbox.json"}"\n'
    )
    proc = subprocess.run(
        [sys.executable, "-m", "dayflow", "brief", "--config", "c.toml", "--date", DAY],
        cwd=cwd,
        env=subprocess_env(db, DAYFLOW_KILL_AT="after_pending:1", HOME=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr


@pytest.mark.slow  # spawns a process
def test_a_relative_config_is_stored_absolute_so_resume_works_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19.21: a relative --config was stored relative, so `resume` from another
    directory could not find it."""
    (tmp_path / "a").mkdir()
    db = tmp_path / "d.db"
    _killed_reading(tmp_path, db, tmp_path / "a")
    (kept,) = _settings(db)
    assert kept.sources["config"] == kept.config == str(tmp_path / "a" / "c.toml")
    monkeypatch.chdir(tmp_path)
    res = invoke(db, OFFLINE, "resume")
    assert res.code == 0, res.err
    assert "One thing" in res.out


@pytest.mark.slow  # spawns a process
def test_a_kept_config_gone_at_resume_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    db = tmp_path / "d.db"
    _killed_reading(tmp_path, db, tmp_path / "a")
    (tmp_path / "a" / "c.toml").rename(tmp_path / "a" / "moved.toml")
    res = invoke(db, OFFLINE, "resume")
    assert res.code == 4
    lines = [x for x in res.err.splitlines() if not x.startswith("[resume ")]
    assert lines == [
        f"error: the run's config file {tmp_path / 'a' / 'c.toml'} does not exist any more "
        "(moved or deleted? put it back to resume the run; a new brief reads the config there "
        "is now)"
    ]
    (tmp_path / "a" / "moved.toml").rename(tmp_path / "a" / "c.toml")
    assert invoke(db, OFFLINE, "resume").code == 0  # put back: it resumes


@pytest.mark.parametrize("option", ["--config", "--db"])
def test_an_empty_config_or_database_value_is_a_usage_error(tmp_path: Path, option: str) -> None:
    """`--config "$CFG"` with CFG unset named the current directory ('is a directory'), and
    `--db "$DB"` silently used the default database."""
    res = invoke(None, OFFLINE, "brief", option, "", env={"HOME": str(tmp_path)})
    assert res.code == 2 and "must not be empty" in res.err
    assert not (tmp_path / ".local").exists()
