"""A correction killed with a real SIGKILL at each write of `rules.toml`: the next process finds
the old file or the new one, never a torn one, and the same command again ends where an
unkilled one would have (one rule, the rejected task gone)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from dayflow.rules import KILL_POINTS, read_rules
from tests.conftest import subprocess_env
from tests.test_rules_cli import INBOX1, Profile

OLD = 'profile = "default"\n\n[[rule]]\nid = "r1"\nkind = "mute"\nmatch = "old.example"\n'


def _dayflow(
    user: Profile, *args: str, kill: str | None = None
) -> subprocess.CompletedProcess[str]:
    extra = {"DAYFLOW_CONFIG": user.env["DAYFLOW_CONFIG"], "HOME": str(user.dir)}
    if kill is not None:
        extra["DAYFLOW_KILL_AT"] = f"{kill}:1"
    return subprocess.run(
        [sys.executable, "-m", "dayflow", *args],
        env=subprocess_env(user.db, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _matches(user: Profile) -> list[str]:
    reading = read_rules(user.rules_file, "default", today=date(2026, 11, 5))
    assert reading.whole and not reading.problems, reading.problems
    return [r.match or r.key for r in reading.rules.rules]


@pytest.mark.slow
@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_mute_killed_at_any_write_leaves_the_old_file_or_the_new_one(
    tmp_path: Path, sqlite_path: Path, point: str
) -> None:
    user = Profile(tmp_path, sqlite_path)
    assert user.brief("2026-11-05", INBOX1).code == 0  # the database exists
    user.rules_file.write_text(OLD)
    killed = _dayflow(user, "mute", "acme.example", kill=point)
    assert killed.returncode == -signal.SIGKILL
    found = _matches(user)
    assert found == (
        ["old.example", "acme.example"] if point == "rules_renamed" else ["old.example"]
    )
    again = _dayflow(user, "mute", "acme.example")
    assert again.returncode == 0, again.stderr
    assert _matches(user) == ["old.example", "acme.example"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".rules")) in (
        [],
        [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")],
    )


@pytest.mark.slow
@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_reject_killed_at_any_write_ends_with_one_rule_and_the_task_gone_when_run_again(
    tmp_path: Path, db_path: Path | str, point: str
) -> None:
    user = Profile(tmp_path, db_path)
    assert user.brief("2026-11-05", INBOX1).code == 0
    task = user.tasks()["Review capacity report"]
    killed = _dayflow(user, "tasks", "reject", task, kill=point)
    assert killed.returncode == -signal.SIGKILL
    # Killed before the rename: no rule and the task still listed; after it: the rule in
    # force and the task still listed (it is deleted after the rule is written).
    assert task in user.tasks().values()
    rules_before = _matches(user) if user.rules_file.exists() else []
    assert rules_before == (["reports@ops.example"] if point == "rules_renamed" else [])
    again = _dayflow(user, "tasks", "reject", task)
    assert again.returncode == 0, again.stderr
    assert _matches(user) == ["reports@ops.example"]
    assert task not in user.tasks().values()
    listed = json.loads(user.run("rules", "--json").out)["rules"]
    assert [r["item"] for r in listed] == [task]
