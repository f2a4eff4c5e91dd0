"""Paths that are not regular files where a file is read or a note written: a FIFO blocked
for ever (`--deliver file:`, `tasks sync FILE`, `--config`, an mbox), /dev/zero never ended.
Each is refused in one line naming the path and what it is; nothing waits."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dayflow.errors import SourceError
from dayflow.providers.offline import OfflineModel
from dayflow.sources.mbox import MboxSource
from tests.conftest import subprocess_env
from tests.harness import Result, invoke


def run(db: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return invoke(db, lambda name, settings: OfflineModel(), *args, env=env)


@pytest.fixture(params=["fifo", "socket", "directory", "device"])
def odd(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A path that is not a regular file, and the words that name what it is."""
    path = tmp_path / f"odd-{request.param}"
    held: socket.socket | None = None
    if request.param == "fifo":
        os.mkfifo(path)
        words = "a FIFO (named pipe)"
    elif request.param == "socket":
        held = socket.socket(socket.AF_UNIX)
        held.bind(str(path))
        words = "a socket"
    elif request.param == "directory":
        path.mkdir()
        words = "a directory"
    else:
        path = Path("/dev/zero")  # never ends
        words = "a device"
    try:
        yield path, words
    finally:
        if held is not None:
            held.close()


def test_a_config_that_is_not_a_regular_file_is_refused_in_one_line(
    db_path: Path, odd: tuple[Path, str]
) -> None:
    path, words = odd
    for args in (["sources"], ["brief", "--config", str(path)]):
        env = {"DAYFLOW_CONFIG": str(path)} if args == ["sources"] else None
        result = run(db_path, *args, env=env)
        assert result.code == 4, (args, result.err)
        assert f"{path}: is {words}, not a config file" in result.err
        assert len(result.err.strip().splitlines()) == 1


def test_tasks_sync_of_a_file_that_is_not_regular_is_refused(
    db_path: Path, odd: tuple[Path, str]
) -> None:
    path, words = odd
    result = run(db_path, "tasks", "sync", str(path))
    assert result.code == 4
    assert f"cannot read task file {path}: it is {words}, not a regular file" in result.err


def test_a_note_that_is_not_a_regular_file_fails_the_delivery_resumably(
    db_path: Path, odd: tuple[Path, str]
) -> None:
    path, words = odd
    result = run(db_path, "brief", "--deliver", f"file:{path}")
    assert result.code == 6, result.err
    assert f"file {path}: it is {words}, not a note" in result.err
    assert "One thing" in result.out  # a brief that could not be delivered is printed anyway


def test_an_mbox_that_is_not_a_regular_file_is_one_line(odd: tuple[Path, str]) -> None:
    path, words = odd
    source = MboxSource("old", path)
    with pytest.raises(SourceError) as caught:
        source.page(since=None, after=None, limit=5, unread_only=False)
    assert str(caught.value) in (
        f"old: {path} is {words}, not an mbox file",
        f"old: {path} is a directory, not an mbox file",
    )


# Every path a user can name, in every command, with what the command does with it. A FIFO no
# one writes to or reads from, and /dev/zero (never ends), must each give one line and an exit
# code (no hang, no MemoryError): `test_every_path_a_command_takes_is_in_the_table` walks the
# app, so a new command or option that takes a path cannot be left out of it.
Case = Callable[[str, "World"], tuple[list[str], dict[str, str]]]


@dataclass
class World:
    """A database with one finished run, in an environment of its own."""

    root: Path
    env: dict[str, str]
    run_id: str

    def config(self, text: str) -> dict[str, str]:
        path = self.root / f"c{abs(hash(text))}.toml"
        path.write_text(text)
        return {"DAYFLOW_CONFIG": str(path)}


def _args(*args: str) -> Case:
    def case(odd: str, w: World) -> tuple[list[str], dict[str, str]]:
        given = {"{odd}": odd, "{run}": w.run_id, "{root}": str(w.root)}
        out = list(args)
        for key, value in given.items():
            out = [a.replace(key, value) for a in out]
        return out, {}

    return case


def _entry(table: str, kind: str, key: str = "path", command: str = "sources check") -> Case:
    def case(odd: str, w: World) -> tuple[list[str], dict[str, str]]:
        where = {"path": f"'{odd}'"} if key == "path" else {"path": f"'{w.root}/m.mbox'"}
        if key == "sent":
            where["sent"] = f"'{odd}'"
            (w.root / "m.mbox").write_text("")
        lines = "\n".join(f"{k} = {v}" for k, v in where.items())
        return command.split(), w.config(f"[[{table}]]\nname = 'x'\nkind = '{kind}'\n{lines}\n")

    return case


def _env(name: str, *args: str) -> Case:
    return lambda odd, w: (list(args), {name: odd})


# "command param" (as the app names them) -> the command line that makes it use the path.
COMMAND_PATHS: dict[str, Case] = {
    "brief inbox": _args("brief", "--new", "--inbox", "{odd}"),
    "brief calendar": _args("brief", "--new", "--calendar", "{odd}"),
    "brief db": _args("brief", "--db", "{odd}"),
    "brief deliver": _args("brief", "--new", "--deliver", "file:{odd}"),
    "brief config_file": _args("brief", "--config", "{odd}"),
    "resume db": _args("resume", "{run}", "--db", "{odd}"),
    "runs db": _args("runs", "--db", "{odd}"),
    "show db": _args("show", "{run}", "--db", "{odd}"),
    "trace output": _args("trace", "{run}", "-o", "{odd}"),
    "trace png": _args("trace", "{run}", "--png", "{odd}"),
    "trace db": _args("trace", "{run}", "--db", "{odd}"),
    "fork db": _args("fork", "{run}", "--from-step", "1", "--db", "{odd}"),
    "gc db": _args("gc", "--db", "{odd}"),
    "doctor db": _args("doctor", "--db", "{odd}"),
    "migrate to": _args("migrate", "--to", "{odd}"),
    "migrate db": _args("migrate", "--to", "/nonexistent-dir/x.db", "--db", "{odd}"),
    "tasks db": _args("tasks", "--db", "{odd}"),
    "tasks export output": _args("tasks", "export", "-o", "{odd}"),
    "tasks export db": _args("tasks", "export", "--db", "{odd}"),
    "tasks sync file": _args("tasks", "sync", "{odd}"),
    "tasks sync db": _args("tasks", "sync", "{root}/tasks.md", "--db", "{odd}"),
    "schedule install db": _args(
        "schedule", "install", "--at", "07:30", "--dry-run", "--db", "{odd}"
    ),
    "schedule install deliver": _args(
        "schedule", "install", "--at", "07:30", "--dry-run", "--deliver", "file:{odd}"
    ),
    "schedule status db": _args("schedule", "status", "--db", "{odd}"),
    "init config_file": _args("init", "--config", "{odd}"),
    "sources config_file": _args("sources", "--config", "{odd}"),
    "sources check config_file": _args("sources", "check", "--config", "{odd}"),
    "profiles add config": _args("profiles", "add", "ann", "--config", "{odd}"),
    "profiles add db": _args(
        "profiles", "add", "ann", "--config", "{root}/empty.toml", "--db", "{odd}"
    ),
    "profiles list db": _args("profiles", "list", "--db", "{odd}"),
    "profiles remove db": _args("profiles", "remove", "ann", "--db", "{odd}"),
    "worker db": _args("worker", "--db", "{odd}"),
    "fleet enqueue db": _args("fleet", "enqueue", "--db", "{odd}"),
    "fleet status db": _args("fleet", "status", "--db", "{odd}"),
    "mcp list config_file": _args("mcp", "list", "--config", "{odd}"),
    "mcp check config_file": _args("mcp", "check", "--config", "{odd}"),
    "mcp import file": _args("mcp", "import", "{odd}"),
    "mcp serve db": _args("mcp", "serve", "--db", "{odd}"),
    "man output": _args("man", "runs", "--output", "{odd}"),
    "mute config": _args("mute", "news@lists.example", "--config", "{odd}"),
    "mute db": _args("mute", "news@lists.example", "--db", "{odd}"),
    "important config": _args("important", "boss@example.com", "--config", "{odd}"),
    "important db": _args("important", "boss@example.com", "--db", "{odd}"),
    "snooze config": _args("snooze", "t_nonexistent", "--until", "3d", "--config", "{odd}"),
    "snooze db": _args("snooze", "t_nonexistent", "--until", "3d", "--db", "{odd}"),
    "rules config": _args("rules", "--config", "{odd}"),
    "rules db": _args("rules", "--db", "{odd}"),
    "replay config": _args("replay", "--config", "{odd}"),
    "replay db": _args("replay", "--db", "{odd}"),
    "tasks add db": _args("tasks", "add", "--from", "promise:nonexistent", "--db", "{odd}"),
    "tasks done db": _args("tasks", "done", "t_nonexistent", "--db", "{odd}"),
    "tasks reject config": _args("tasks", "reject", "t_nonexistent", "--config", "{odd}"),
    "tasks reject db": _args("tasks", "reject", "t_nonexistent", "--db", "{odd}"),
    "why db": _args("why", "t_nonexistent", "--db", "{odd}"),
    "view config": _args("view", "--config", "{odd}"),
    "view db": _args("view", "--db", "{odd}"),
}
# Paths named in the environment or in the config file, for each command that reads them.
OTHER_PATHS: dict[str, Case] = {
    "DAYFLOW_CONFIG": _env("DAYFLOW_CONFIG", "sources", "check"),
    "DAYFLOW_DB": _env("DAYFLOW_DB", "runs"),
    "DAYFLOW_DOTENV": _env("DAYFLOW_DOTENV", "runs"),
    "DAYFLOW_PRICES": _env("DAYFLOW_PRICES", "runs"),
    "DAYFLOW_INBOX": _env("DAYFLOW_INBOX", "brief", "--new"),
    "[[inbox]] json": _entry("inbox", "json"),
    "[[inbox]] mbox": _entry("inbox", "mbox"),
    "[[inbox]] maildir": _entry("inbox", "maildir"),
    "[[inbox]] eml": _entry("inbox", "eml"),
    "[[inbox]] mbox sent": _entry("inbox", "mbox", "sent"),
    "[[calendar]] ics": _entry("calendar", "ics"),
    "[[calendar]] json": _entry("calendar", "json"),
    "[[calendar]] ics in a brief": _entry("calendar", "ics", command="brief --new"),
    "[[inbox]] json in a brief": _entry("inbox", "json", command="brief --new"),
    "deliver file: in the config": lambda odd, w: (
        ["brief", "--new"],
        w.config(f"deliver = ['file:{odd}']\n"),
    ),
    "[smtp] cafile": lambda odd, w: (
        ["brief", "--new", "--deliver", "smtp"],
        w.config(f"[smtp]\nhost = '127.0.0.1'\nport = 9\nto = 'a@b.example'\ncafile = '{odd}'\n"),
    ),
}
# Refused as not a PostgreSQL URL before anything is opened (the line need not name it).
NOT_OPENED = {"worker db", "fleet enqueue db", "fleet status db"}
# The options that name no file, though their names might suggest one.
NOT_PATHS = {"brief since", "brief sample", "doctor recompute_totals"}
PATH_WORDS = ("db", "config", "file", "output", "png", "to", "deliver", "inbox", "calendar")


def _path_params() -> set[str]:
    import typer

    from dayflow.cli import app

    found: set[str] = set()

    def walk(command: Any, path: list[str]) -> None:
        for param in command.params:
            name = " ".join([*path, param.name])
            pathy = type(param.type).__name__ == "TyperPath" or any(
                word in param.name.split("_") for word in PATH_WORDS
            )
            if pathy and name not in NOT_PATHS:
                found.add(name)
        if hasattr(command, "list_commands"):  # a group: its commands are built when asked for
            ctx = typer.Context(command)
            for sub in command.list_commands(ctx):
                walk(command.get_command(ctx, sub), [*path, sub])

    walk(typer.main.get_command(app), [])
    return found


def test_every_path_a_command_takes_is_in_the_table() -> None:
    """A new command, or a new option naming a file, fails here until the table tries it."""
    assert _path_params() == set(COMMAND_PATHS)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("paths")
    env = subprocess_env(
        root / "db.sqlite",
        HOME=str(root / "home"),
        XDG_DATA_HOME=str(root / "xdg"),
        XDG_CONFIG_HOME=str(root / "xdg-config"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_STATE_HOME=str(root / "state"),
    )
    for name in ("ANTHROPIC_API_KEY", "DAYFLOW_CONFIG", "DAYFLOW_MODEL"):
        env.pop(name, None)
    made = subprocess.run(
        [sys.executable, "-m", "dayflow", "brief"], env=env, capture_output=True, timeout=120
    )
    assert made.returncode == 0, made.stderr
    exported = [sys.executable, "-m", "dayflow", "tasks", "export", "-o", str(root / "tasks.md")]
    assert subprocess.run(exported, env=env, capture_output=True).returncode == 0
    (root / "empty.toml").write_text("")
    listed = subprocess.run(
        [sys.executable, "-m", "dayflow", "runs", "--json"], env=env, capture_output=True
    )
    return World(root, env, json.loads(listed.stdout)[0]["id"])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMAND_PATHS) + sorted(OTHER_PATHS))
def test_no_command_hangs_on_or_reads_without_end_a_path_it_is_given(
    world: World, name: str
) -> None:
    """Run under `timeout`: a FIFO that no one opens, and /dev/zero, each end in seconds with
    one line naming the path (a write into /dev/zero, a device, may succeed: it is a sink)."""
    fifo = world.root / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    case = COMMAND_PATHS.get(name) or OTHER_PATHS[name]
    for odd in (str(fifo), "/dev/zero"):
        args, extra = case(odd, world)
        done = subprocess.run(
            ["timeout", "-s", "KILL", "30", sys.executable, "-m", "dayflow", *args],
            env=world.env | extra,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        said = done.stderr + done.stdout
        assert done.returncode not in (124, 137, -9), f"{name} {odd}: hung\n{said}"
        assert "Traceback" not in said and "internal error" not in said, (name, odd, said)
        naming = [line for line in said.splitlines() if odd in line]
        if done.returncode != 0:
            assert done.returncode in (2, 4, 6), (name, odd, done.returncode, said)
            if name in NOT_OPENED:
                assert said.count("error:") == 1, (name, odd, said)
            else:
                assert len(naming) == 1, (name, odd, said)
        elif odd != "/dev/zero" and not name.startswith("schedule install"):
            # Only a .env file is optional: skipped, with a warning that names it.
            assert naming and naming[0].startswith("warning: cannot read"), (name, odd, said)
