"""`dayflow profiles` and `--profile NAME` on every command: a profile sees its own runs and
tasks and never another's, whichever command or tool asks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from tests.harness import Result, invoke


def _offline(*a: Any) -> OfflineModel:
    return OfflineModel()


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A database with the default profile's brief and ann's (Paris), both of the sample."""
    db = tmp_path / "dayflow.db"
    config = tmp_path / "ann.toml"
    config.write_text("# ann's config: the sample inbox\n")
    assert invoke(db, _offline, "brief").code == 0
    added = invoke(db, _offline, "profiles", "add", "ann", "--config", str(config))
    assert added.code == 0, added.err
    assert invoke(db, _offline, "brief", "--profile", "ann").code == 0
    ids = {}
    for who, flag in (("default", ()), ("ann", ("--profile", "ann"))):
        runs = json.loads(invoke(db, _offline, "runs", "--json", *flag).out)
        tasks = json.loads(invoke(db, _offline, "tasks", "--all", "--json", *flag).out)
        ids[who] = {"runs": [r["id"] for r in runs], "tasks": tasks}
    return db, ids


def test_each_profile_lists_only_its_own_runs_and_tasks_of_the_same_mail(
    two: tuple[Path, dict[str, Any]],
) -> None:
    """The same sample mail in two people's inboxes: two briefs, two sets of tasks under the
    same keys with different ids."""
    _, ids = two
    mine, anns = ids["default"], ids["ann"]
    assert len(mine["runs"]) == len(anns["runs"]) == 1 and mine["runs"] != anns["runs"]
    keys = sorted(t["idempotency_key"] for t in mine["tasks"])
    assert keys and keys == sorted(t["idempotency_key"] for t in anns["tasks"])
    assert not {t["id"] for t in mine["tasks"]} & {t["id"] for t in anns["tasks"]}


def _as(db: Path, who: str, *args: str) -> Result:
    flag = () if who == "default" else ("--profile", "ann")
    return invoke(db, _offline, *args, *flag)


@pytest.mark.parametrize("who", ["default", "ann"])
def test_no_command_reaches_another_profiles_run_or_task(
    two: tuple[Path, dict[str, Any]], who: str
) -> None:
    db, ids = two
    other = "ann" if who == "default" else "default"
    run, task = ids[other]["runs"][0], ids[other]["tasks"][0]["id"]
    for args in (
        ("show", run),
        ("show", run[:6]),
        ("resume", run),
        ("fork", run, "--from-step", "1"),
        ("trace", run),
        ("tasks", "--done", task),
    ):
        result = _as(db, who, *args)
        assert result.code == 3, (args, result)
        assert "no run" in result.err or "no task" in result.err
    own = ids[who]["runs"][0]
    assert _as(db, who, "show", own).code == 0
    for listing in (("doctor",), ("gc", "--dry-run", "--json"), ("runs",), ("tasks", "--all")):
        result = _as(db, who, *listing)
        assert run not in result.out + result.err and task not in result.out, listing
    # The day's brief is each one's own: --ensure-today prints it, no new run.
    again = _as(db, who, "brief", "--ensure-today", "--json")
    assert again.code == 0 and json.loads(again.out)["run"]["id"] == own
    assert [r["id"] for r in json.loads(_as(db, who, "runs", "--json").out)] == [own]


def test_an_unknown_or_malformed_profile_is_one_line_and_its_exit_code(tmp_path: Path) -> None:
    db = tmp_path / "dayflow.db"
    assert invoke(db, _offline, "brief").code == 0
    missing = invoke(db, _offline, "runs", "--profile", "carl")
    assert missing.code == 3 and missing.err.strip() == (
        "error: no profile 'carl' (see `dayflow profiles list`)"
    )
    for hostile in ("Ann", "../x", "a b", "", "x" * 41, "ann\n", "-", "ann;drop"):
        result = invoke(db, _offline, "tasks", "--profile", hostile)
        assert result.code == 2 and "cannot name a profile" in result.err, hostile


def test_profiles_add_list_remove_and_their_refusals(tmp_path: Path) -> None:
    db, config = tmp_path / "dayflow.db", tmp_path / "bob.toml"
    config.write_text("")
    add = ("profiles", "add", "bob", "--config", str(config))
    ok = invoke(db, _offline, *add, "--tz", "America/New_York", "--at", "06:45", "--weekdays")
    assert ok.code == 0 and "06:45 America/New_York, Monday to Friday" in ok.err
    assert invoke(db, _offline, *add).code == 2  # the name is taken
    for bad, says in (
        (("--at", "7:30"), "--at must be a time HH:MM"),
        (("--at", "24:00"), "--at must be a time HH:MM"),
        (("--tz", "Mars/Olympus"), "unknown timezone"),
    ):
        result = invoke(db, _offline, "profiles", "add", "eve", "--config", str(config), *bad)
        assert result.code == 2 and says in result.err
    nofile = invoke(db, _offline, "profiles", "add", "eve", "--config", str(tmp_path / "no"))
    assert nofile.code == 2 and "no such file" in nofile.err
    folder = invoke(db, _offline, "profiles", "add", "eve", "--config", str(tmp_path))
    assert folder.code == 2 and "a directory, not a config file" in folder.err
    listed = json.loads(invoke(db, _offline, "profiles", "list", "--json").out)
    assert listed == [
        {
            "name": "bob",
            "config": str(config),
            "tz": "America/New_York",
            "at": "06:45",
            "weekdays": "12345",
        }
    ]
    table = invoke(db, _offline, "profiles", "list").out
    assert table.split("\n")[1].split()[:4] == ["bob", "06:45", "America/New_York", "Mon-Fri"]
    assert invoke(db, _offline, "brief", "--profile", "bob").code == 0
    assert invoke(db, _offline, "profiles", "remove", "bob").code == 0
    assert invoke(db, _offline, "runs", "--profile", "bob").code == 3  # no such profile
    assert invoke(db, _offline, *add).code == 0  # added again: its history is back
    assert len(json.loads(invoke(db, _offline, "runs", "--json", "--profile", "bob").out)) == 1
    purged = invoke(db, _offline, "profiles", "remove", "bob", "--purge")
    assert purged.code == 0 and "1 run(s) deleted" in purged.err
    assert invoke(db, _offline, "profiles", "remove", "bob").code == 3
    assert json.loads(invoke(db, _offline, "profiles", "list", "--json").out) == []


def test_the_config_commands_read_the_profiles_own_config_file(tmp_path: Path) -> None:
    """`sources`, `sources check`, `init` and `mcp list` with --profile use that profile's
    config file (they used the environment's, silently), and an unknown profile is exit 3."""
    db, mail = tmp_path / "dayflow.db", tmp_path / "ann-mail"
    for sub in ("cur", "new", "tmp"):
        (mail / sub).mkdir(parents=True)
    config = tmp_path / "ann.toml"
    config.write_text(f'[[inbox]]\nname = "annmail"\nkind = "maildir"\npath = "{mail}"\n')
    assert invoke(db, _offline, "brief").code == 0  # the default profile: no config file
    assert invoke(db, _offline, "profiles", "add", "ann", "--config", str(config)).code == 0
    listed = invoke(db, _offline, "sources", "--json", "--profile", "ann")
    assert listed.code == 0, listed.err
    assert json.loads(listed.out)["config"] == str(config)
    checked = invoke(db, _offline, "sources", "check", "--profile", "ann")
    assert checked.code == 0, checked.err
    assert checked.out.startswith("annmail ") and "0 message(s)" in checked.out
    made = invoke(db, _offline, "init", "--profile", "ann")  # ann's file, never overwritten
    assert made.code == 2 and f"{config} already exists" in made.err
    mcp = invoke(db, _offline, "mcp", "list", "--profile", "ann")
    assert mcp.code == 0 and str(config) in mcp.out + mcp.err
    for args in (("sources",), ("sources", "check"), ("init",), ("mcp", "list")):
        got = invoke(db, _offline, *args, "--profile", "nobody")
        assert got.code == 3 and "no profile 'nobody'" in got.err, (args, got.err)
        assert len(got.err.strip().splitlines()) == 1 and "Traceback" not in got.err


def test_a_profile_in_another_database_is_read_there_by_every_command(tmp_path: Path) -> None:
    """--db X --profile ann: ann's row is in X, not in the default database (which does not
    exist here), whichever the command reads first, its settings or its config."""
    db, config = tmp_path / "x.db", tmp_path / "ann.toml"
    config.write_text("# ann: the sample\n")
    env = {"DAYFLOW_DB": str(tmp_path / "none.db")}
    assert invoke(db, _offline, "brief", "--db", str(db), env=env).code == 0
    added = invoke(db, _offline, "profiles", "add", "ann", "--config", str(config), "--db",
                   str(db), env=env)  # fmt: skip
    assert added.code == 0, added.err
    for args in (("schedule", "status"), ("runs",), ("tasks",), ("doctor",)):
        got = invoke(db, _offline, *args, "--db", str(db), "--profile", "ann", env=env)
        assert got.code == 0, (args, got.err)
        assert "no Dayflow database" not in got.err, args
