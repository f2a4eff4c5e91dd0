from __future__ import annotations

import ast
import contextlib
import gc
import json
import os
import secrets
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

from dayflow.clock import FixedClock
from dayflow.config_files import ENV_VARS
from dayflow.errors import ConfigFileError
from dayflow.sources.config import SourcesConfig, parse_config
from dayflow.store import Store, open_store

# Every variable that could point a test at a real key, model or database: each one Dayflow
# reads (`config_files.ENV_VARS`) but the base URL, which `_no_real_api` points at a closed port.
_GUARDED = ("ANTHROPIC_BASE_URL",)
_SCRUB = tuple(name for name in ENV_VARS if name not in _GUARDED)

# The PostgreSQL half of the suite runs against this server (CI sets it, see .ci/run); unset, it
# is skipped with one line; set and unreachable, it fails.
PG_ENV = "DAYFLOW_TEST_PG"
PG_HOWTO = (
    "PostgreSQL tests left out: run them with "
    "DAYFLOW_TEST_PG=postgresql://postgres@127.0.0.1:5432/test python -m pytest"
)


def parse_python(source: str) -> ast.Module:
    """`ast.parse(source)` with the garbage collector paused. On CPython 3.11 a finalizer that
    raises while the tree is being built (an earlier test's object collected just then) calls
    the unraisable hook, whose traceback formatting parses again, and the shared depth counter
    comes back wrong: `SystemError: AST constructor recursion depth mismatch` (python/cpython
    #106905; seen once in CI). Every test that reads our source parses through here."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source)
    finally:
        if was_on:
            gc.enable()


@pytest.fixture(autouse=True)
def _no_real_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test can reach the real Anthropic API or the user's real database: the key is gone,
    the base URL points at a closed loopback port, and any connection to a host other than
    loopback fails the test at once."""
    for name in _SCRUB:
        monkeypatch.delenv(name, raising=False)
    real_connect = socket.socket.connect

    def loopback_only(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and address[0] not in ("127.0.0.1", "::1", "localhost"):
            pytest.fail(f"test tried to connect to {address!r}: only loopback is allowed")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock("2026-11-05T07:30:00+00:00")


def _pg_url() -> str:
    return os.environ.get(PG_ENV, "").strip()


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without DAYFLOW_TEST_PG, leave out every PostgreSQL test (the `postgresql` half of
    `store_target` and the tests marked `postgres`); the summary says so in one line. Under
    pytest-xdist, the tests of a module that share a module-scoped fixture (an uncrashed
    baseline, a server) go to one worker (`--dist loadgroup`), which computes it once."""
    if config.pluginmanager.hasplugin("xdist"):
        for item in items:
            if item.get_closest_marker("xdist_group") is None and _uses_module_fixture(item):
                item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
        # The longest single tests first: a worker that took one near the end would finish
        # minutes after the other (xdist hands out scopes in this order, after its groups).
        items.sort(key=lambda item: item.nodeid.split("::", 1)[0] not in LONGEST_FIRST)
    if _pg_url():
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_pg = callspec is not None and callspec.params.get("store_target") == "postgresql"
        (drop if on_pg or item.get_closest_marker("postgres") else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        config.stash[_PG_LEFT_OUT] = len(drop)
        # Under pytest-xdist this runs in each worker: the controller prints the line.
        workeroutput = getattr(config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[_PG_LEFT_OUT_KEY] = len(drop)


# The single tests of a minute or more under load (`--durations`), started first under xdist.
LONGEST_FIRST = ("tests/test_fleet_chaos.py",)


def _uses_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    return any(d.scope == "module" for chain in defs for d in chain)


_PG_LEFT_OUT = pytest.StashKey[int]()
_PG_LEFT_OUT_KEY = "dayflow_pg_left_out"


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist's controller: a worker's count of left-out PostgreSQL tests (each worker
    collects the whole suite, so every one counts the same)."""
    left_out = getattr(node, "workeroutput", {}).get(_PG_LEFT_OUT_KEY, 0)
    if left_out:
        node.config.stash[_PG_LEFT_OUT] = left_out


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left_out = config.stash.get(_PG_LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(f"{left_out} {PG_HOWTO}")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """An admin connection to the test server named by DAYFLOW_TEST_PG."""
    url = _pg_url()
    if not url:
        pytest.skip(PG_HOWTO)
    import psycopg

    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        pytest.fail(f"{PG_ENV}={url}: cannot reach the PostgreSQL server: {exc}")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker:
        # Each pytest-xdist worker has a database of its own (`test_gw0`, `test_gw1`, ...,
        # kept for the next session): a database-wide lock (the store's migration lock) or a
        # NOTIFY channel (the fleet's queue) of one worker's test never reaches the other's.
        url = worker_db_url(conn, url, worker)
        conn.close()
        conn = psycopg.connect(url, autocommit=True, connect_timeout=5)
    conn.execute("SET lock_timeout = '20s'")
    conn.url = url  # type: ignore[attr-defined]
    yield conn
    conn.close()


def worker_db_url(admin: Any, url: str, worker: str) -> str:
    """`url` with its database name suffixed by `worker` (`gw0`), created if it is missing
    (a concurrent session of the suite may be creating it at the same moment)."""
    import psycopg

    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'postgres'}_{worker}"
    exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    if exists is None:
        with contextlib.suppress(psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
            admin.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path="/" + name))


def pg_schema_url(url: str, schema: str) -> str:
    """`url` with its connections' search_path (and application_name) set to `schema`."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in ("options", "application_name")]
    query += [("options", f"-csearch_path={schema}"), ("application_name", schema)]
    return urlunsplit(parts._replace(query=urlencode(query)))


@contextlib.contextmanager
def pg_schema(admin: Any) -> Iterator[str]:
    """A fresh schema with a random name on the test server, as a store URL; dropped after
    (other test sessions share the server), with any connection still using it."""
    schema = "dayflow_t_" + secrets.token_hex(6)
    admin.execute(f"CREATE SCHEMA {schema}")
    try:
        yield pg_schema_url(admin.url, schema)
    finally:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = %s AND pid <> pg_backend_pid()",
            (schema,),
        )
        admin.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path | str]:
    """Where a test's store lives: a SQLite file, then a fresh PostgreSQL schema (the one
    fixture parameter that runs the suite against both backends)."""
    if request.param == "sqlite":
        yield tmp_path / "dayflow.db"
        return
    with pg_schema(request.getfixturevalue("pg_server")) as url:
        yield url


@pytest.fixture
def db_path(store_target: Path | str) -> Path | str:
    """The store target under its old name: a Path for SQLite, a URL for PostgreSQL."""
    return store_target


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    """A SQLite file, for the tests of what only SQLite has (file modes, PRAGMAs, WAL)."""
    return tmp_path / "dayflow.db"


@pytest.fixture
def store(store_target: Path | str, clock: FixedClock) -> Iterator[Store]:
    with open_store(store_target, clock=clock) as s:
        yield s


def is_pg(target: Path | str) -> bool:
    return isinstance(target, str) and target.startswith("postgresql://")


class Db:
    """Raw SQL on a test's store, whichever the backend (qmark placeholders, the subset both
    engines share). Autocommit on both."""

    def __init__(self, target: Path | str) -> None:
        if is_pg(target):
            from dayflow.store.postgres import PgDatabase

            self.conn: Any = PgDatabase(str(target))
        else:
            self.conn = sqlite3.connect(target, isolation_level=None)
            self.conn.row_factory = sqlite3.Row

    def __enter__(self) -> Db:
        return self

    def __exit__(self, *exc: object) -> None:
        self.conn.close()

    def rows(self, sql: str, *args: Any) -> list[Any]:
        return list(self.conn.execute(sql, args).fetchall())

    def one(self, sql: str, *args: Any) -> Any:
        return self.conn.execute(sql, args).fetchone()

    def run(self, sql: str, *args: Any) -> int:
        return int(self.conn.execute(sql, args).rowcount)


# The tasks table as it was before migration 0009 (a key unique in the whole database).
_TASKS_0001 = """CREATE TABLE tasks_old (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, due TEXT,
    status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','done')),
    source_id TEXT, notes TEXT, idempotency_key TEXT NOT NULL UNIQUE,
    run_id TEXT REFERENCES runs(id), created_at TEXT NOT NULL, done_at TEXT)"""
_TASK_COLUMNS = (
    "id, title, due, status, source_id, notes, idempotency_key, run_id, created_at, done_at"
)


def undo_refusals(target: Path | str) -> None:
    """Take the store at `target` back to its schema before refusals were data (migration
    0011), its rows kept: what a database written by an older Dayflow holds."""
    undo_evidence(target)
    with Db(target) as db:
        db.run("ALTER TABLE tool_effects DROP COLUMN refused_by")
        db.run("DELETE FROM schema_migrations WHERE name = '0011_effect_refusals'")


def undo_evidence(target: Path | str) -> None:
    """Take the store at `target` back to its schema before tasks carried evidence (migration
    0012), its rows kept."""
    with Db(target) as db:
        db.run("ALTER TABLE tasks DROP COLUMN evidence")
        db.run("ALTER TABLE tasks DROP COLUMN due_kind")
        db.run("DELETE FROM schema_migrations WHERE name = '0012_task_evidence'")


def undo_profiles(target: Path | str) -> None:
    """Take the store at `target` back to its schema before profiles (migrations 0009-0010), its
    rows kept: what a database written by an older Dayflow holds."""
    undo_refusals(target)
    with Db(target) as db:
        for statement in (
            "DROP INDEX runs_profile_created",  # 0010, on the profile column
            "DELETE FROM schema_migrations WHERE name = '0010_runs_by_profile'",
            "DROP TABLE profiles",
            "DROP INDEX runs_profile_day",
            "ALTER TABLE runs DROP COLUMN profile",
            "DROP INDEX tasks_status",
        ):
            db.run(statement)
        if is_pg(target):
            db.run("ALTER TABLE tasks DROP COLUMN profile")  # its UNIQUE (profile, key) goes too
            db.run(
                "ALTER TABLE tasks ADD CONSTRAINT tasks_idempotency_key_key "
                "UNIQUE (idempotency_key)"
            )
        else:
            db.run(_TASKS_0001)
            db.run(f"INSERT INTO tasks_old SELECT {_TASK_COLUMNS} FROM tasks ORDER BY rowid")
            db.run("DROP TABLE tasks")
            db.run("ALTER TABLE tasks_old RENAME TO tasks")
        db.run("CREATE INDEX tasks_status ON tasks(status, due)")
        db.run("DELETE FROM schema_migrations WHERE name = '0009_profiles'")


def expire_leases(target: Path | str, clock: FixedClock) -> None:
    """Make every lease on `target` expired: SQLite's leases run on the injected clock,
    PostgreSQL's on the server's (so the test moves the expiry itself)."""
    if is_pg(target):
        with Db(target) as db:
            db.run("UPDATE runs SET lease_expires_at = '2000-01-01T00:00:00.000+00:00'")
    else:
        clock.advance(16 * 60)


def db_rows(target: Path | str, sql: str, *args: Any) -> list[Any]:
    """The rows of one query on the store at `target`."""
    with Db(target) as db:
        return db.rows(sql, *args)


def log_kinds(target: Path | str) -> list[str]:
    """The kinds of the events in the log of each run of `target` as the store shows it (the
    stored events and those its step rows record), runs in the order they were created."""
    ids = [r[0] for r in db_rows(target, "SELECT id FROM runs ORDER BY created_at, id")]
    with open_store(target) as s:
        return [e.kind for run_id in ids for e in s.events.of(run_id)]


def subprocess_env(db: Path | str, **extra: str) -> dict[str, str]:
    """An environment for running `python -m dayflow` in a child process of a test."""
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    env.update({"DAYFLOW_DB": str(db), "COLUMNS": "200", "NO_COLOR": "1"})
    env.update(extra)
    return env


def claude_env(db: Path | str, base_url: str, home: Path) -> dict[str, str]:
    """The environment of a child `python -m dayflow` whose Claude is the loopback fake API at
    `base_url`, with `home` as its HOME (state under `home/state`)."""
    return subprocess_env(
        db,
        ANTHROPIC_API_KEY="test",
        ANTHROPIC_BASE_URL=base_url,
        DAYFLOW_MODEL="claude-haiku-5-5",
        XDG_STATE_HOME=str(home / "state"),
        HOME=str(home),
    )


def dayflow_command(*args: str) -> list[str]:
    """The argv of `python -m dayflow ARGS` for a child process: a real process of its own
    (it exits, or SIGKILLs itself, as that command would), forked from this worker's fork
    server, which imported the CLI and the SDK once (tests/forkserver.py). A test that compares
    a pid the child prints with `Popen.pid` runs `sys.executable -m dayflow` itself."""
    from tests import forkserver

    return forkserver.command(*args)


def dayflow_process(
    db: Path | str, cfg: Path, *args: str, timeout: float = 180, **env: str
) -> subprocess.CompletedProcess[str]:
    """`python -m dayflow ARGS` in a child process, on database `db` with config file `cfg`."""
    return subprocess.run(
        dayflow_command(*args),
        env=subprocess_env(db, DAYFLOW_CONFIG=str(cfg), **env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def every_view(
    db: Path | str, cfg: Path, *more: list[str], **env: str
) -> list[subprocess.CompletedProcess[str]]:
    """Every command that shows what the newest run of `db` stored (`runs`, `show`, `trace`,
    `tasks`, `sources` and `sources check`, with and without `--json`), then `more`: each run
    in a child process with `env`, for a test that no secret reaches any output."""
    run_id = json.loads(dayflow_process(db, cfg, "runs", "--json").stdout)[0]["id"]
    commands = [
        ["runs", "--json"],
        ["show", run_id],
        ["show", run_id, "--json"],
        ["trace", run_id],
        ["tasks", "--json"],
        ["sources", "--json"],
        ["sources", "check", "--json"],
        ["sources", "check"],
        *more,
    ]
    return [dayflow_process(db, cfg, *args, timeout=180, **env) for args in commands]


def python_process(
    env: dict[str, str], *argv: str, timeout: float, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`python ARGV` run to its end in a child process with environment `env`, its output kept
    as text (its exit code is the caller's to check)."""
    return subprocess.run(
        [sys.executable, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
    )


def dayflow_child(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """`python -m dayflow ARGS` started in a child process with environment `env` (for the test
    to kill or wait for), stdout and stderr piped as text."""
    return subprocess.Popen(
        dayflow_command(*args),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def foreign_sqlite(path: Path, table: str) -> Path:
    """An SQLite file another application wrote: one table (`table`, its DDL), no Dayflow
    schema."""
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE {table}")
    conn.commit()
    conn.close()
    return path


CONFIG_PATH = Path("/cfg/config.toml")


def parse_sources(text: str, path: Path = CONFIG_PATH) -> SourcesConfig:
    """The config file `text` as if read from `path` (relative paths are made absolute there)."""
    return parse_config(text.encode(), path)


def config_problems(text: str) -> list[str]:
    """The lines of the one error that the config file `text` is refused with."""
    with pytest.raises(ConfigFileError) as caught:
        parse_sources(text)
    return str(caught.value).splitlines()


def call_tool(name: str, env: Any, args: Any) -> tuple[Any, bool]:
    """Tool `name` as `tools.execute` runs it, without the store: arguments validated, then the
    handler; a ToolError becomes the is_error text the model reads. Returns (content, is_error),
    the content as the handler returned it."""
    from dayflow import tools

    tool = tools.TOOLS[name]
    try:
        tools.validate(tool.input_schema, args)
        return tool.handler(args, env), False
    except tools.ToolError as err:
        return tools.error_text(str(err)), True
