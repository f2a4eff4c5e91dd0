"""Settings read outside the one configuration (issue 31.6): each was read a second way, so a
value given the ordinary way was ignored by one command. `DAYFLOW_HOST` in `.env` never reached
the leases (`store/values.py` read `os.environ`), and `sources check` took its day from
`DAYFLOW_TZ` or UTC while `brief` also honours an IANA `$TZ`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import db_rows, subprocess_env
from tests.harness import invoke, offline_model


def test_dayflow_host_in_dotenv_names_this_machine_in_the_leases(tmp_path: Path) -> None:
    dotenv = tmp_path / "xdg-config" / "dayflow" / ".env"
    dotenv.parent.mkdir(parents=True)
    dotenv.write_text("DAYFLOW_HOST=laptop-from-dotenv\n")
    db = tmp_path / "db.sqlite"
    env = subprocess_env(db, XDG_CONFIG_HOME=str(tmp_path / "xdg-config"), HOME=str(tmp_path))
    for name in ("DAYFLOW_HOST", "DAYFLOW_CONFIG", "ANTHROPIC_API_KEY"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "dayflow", "brief"], env=env, capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    hosts = {row[0] for row in db_rows(db, "SELECT host FROM events")}
    assert hosts == {"laptop-from-dotenv"}


def test_sources_check_reads_the_same_day_as_the_brief_under_an_iana_tz(
    db_path: Path | str, tmp_path: Path
) -> None:
    """At 20:00 UTC on 5 November it is already the 6th in Tokyo: both say the 6th."""
    config = tmp_path / "config.toml"
    calendar = tmp_path / "cal.json"
    calendar.write_text('{"events": []}')
    config.write_text(f"[[calendar]]\nname = 'home'\nkind = 'json'\npath = '{calendar}'\n")
    env = {"TZ": "Asia/Tokyo", "DAYFLOW_CONFIG": str(config)}
    at = "2026-11-05T20:00:00+00:00"
    checked = invoke(db_path, offline_model, "sources", "check", "--json", env=env, clock=at)
    assert checked.code == 0, checked.err
    assert json.loads(checked.out)["date"] == "2026-11-06"
    brief = invoke(db_path, offline_model, "brief", env=env, clock=at)
    assert brief.code == 0, brief.err
    runs = invoke(db_path, offline_model, "runs", "--json", env=env, clock=at)
    assert json.loads(runs.out)[0]["brief_date"] == "2026-11-06"


def test_dayflow_pg_pgbouncer_in_dotenv_reaches_the_store(tmp_path: Path) -> None:
    """The store read DAYFLOW_PG_PGBOUNCER from the process only: a `.env` value was ignored,
    and behind PgBouncer in transaction mode prepared statements then fail."""
    from dayflow.config import Config
    from dayflow.store.postgres_sql import split_options

    dotenv = tmp_path / "dayflow" / ".env"
    dotenv.parent.mkdir()
    dotenv.write_text("DAYFLOW_PG_PGBOUNCER=1\nDAYFLOW_HOST=box-7\n")
    url = "postgresql://postgres@127.0.0.1:5432/test"
    environ = {"XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path), "DAYFLOW_DB": url}
    settings = Config(environ=environ).settings()
    assert split_options(str(settings.db_path))[1] is True
    assert settings.host == "box-7"
    given = Config(environ=environ | {"DAYFLOW_DB": url + "?dayflow_pgbouncer=0"}).settings()
    assert split_options(str(given.db_path))[1] is False  # the URL's own word wins
    plain = Config(env={"DAYFLOW_DB": url}).settings()
    assert plain.db_path == url and plain.host == ""
