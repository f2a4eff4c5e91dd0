"""The fork server of the crash tests' children (tests/forkserver.py): each child is still a
process of its own that ends as `python -m dayflow` would, killed by its own SIGKILL too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dayflow.providers.offline import OfflineModel
from tests import fakeapi, forkserver
from tests.conftest import Db, subprocess_env

pytestmark = pytest.mark.slow  # real processes

DATE = "2026-11-05"


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


def writers(db: Path) -> set[int]:
    """The pids that wrote the run's events: the dayflow processes themselves."""
    with Db(db) as conn:
        return {r[0] for r in conn.rows("SELECT pid FROM events")}


def test_the_server_starts_here() -> None:
    """Where it cannot, every child is exec'd (correct, but 3 s slower each): CI must see it."""
    assert forkserver.ready()
    assert forkserver.command("runs")[:4] == [sys.executable, "-I", "-S", str(forkserver.CLIENT)]


def test_a_forked_child_is_its_own_process_and_ends_as_the_execd_one(tmp_path: Path) -> None:
    """The same outputs and exit codes as `python -m dayflow`, a self-SIGKILL seen as one, the
    working directory and environment its own; the process that wrote the run is not the
    stand-in the test started (it was forked), and it is gone."""
    results = {}
    for how in ("forked", "execd"):
        db = tmp_path / how / "dayflow.db"
        db.parent.mkdir()
        env = subprocess_env(Path("dayflow.db"))  # relative: resolved in the child's cwd
        argv = forkserver.command if how == "forked" else forkserver.exec_command
        os.chdir(db.parent)
        killed = run(
            argv("brief", "-v", "--date", DATE), {**env, "DAYFLOW_KILL_AT": "after_complete:2"}
        )
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert db.exists()
        resumed = run(argv("resume"), env)
        listed = run(argv("runs", "--json"), env)
        bad = run(argv("runs", "--no-such-option"), env)
        results[how] = (killed, resumed, listed, bad)
        if how == "forked":
            assert os.getpid() not in writers(db) and killed.args[1:3] == ["-I", "-S"]
    forked, execd = results["forked"], results["execd"]
    assert [p.returncode for p in forked] == [p.returncode for p in execd] == [-9, 0, 0, 2]
    assert forked[1].stdout == execd[1].stdout  # the same brief, from the resumed run
    assert forked[3].stderr == execd[3].stderr  # usage errors word for word
    runs = [json.loads(p[2].stdout)[0] for p in (forked, execd)]
    assert [r["status"] for r in runs] == ["done", "done"]
    assert runs[0]["steps"] == runs[1]["steps"]


def test_killing_the_stand_in_kills_the_dayflow_process(tmp_path: Path) -> None:
    """`Popen.kill()` (a timeout's too) reaches the forked process: it is SIGKILLed."""
    db = tmp_path / "dayflow.db"
    slow = fakeapi.slowed(fakeapi.responder_from_client(OfflineModel()), 30)
    with fakeapi.FakeAPI(responder=slow) as fake:
        env = subprocess_env(db, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake.base_url)
        proc = subprocess.Popen(
            forkserver.command("brief", "--date", DATE),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        while not fake.message_requests:  # the dayflow process is calling the model
            time.sleep(0.05)
        (pid,) = writers(db)
        assert pid != proc.pid
        proc.kill()
        proc.communicate(timeout=60)  # its pipes close: the dayflow process is gone
        assert proc.returncode == -signal.SIGKILL
        assert gone(pid)


def gone(pid: int) -> bool:
    """Whether `pid` is dead (a zombie until its waiter reaps it, moments later)."""
    for _ in range(600):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_a_child_whose_locale_differs_is_execd_in_the_stand_ins_place(tmp_path: Path) -> None:
    """The preloaded imports read the locale: a child with another one is not forked."""
    db = tmp_path / "dayflow.db"
    env = {
        **subprocess_env(db),
        "LC_ALL": "C.UTF-8" if os.environ.get("LC_ALL") != "C.UTF-8" else "C",
    }
    proc = subprocess.Popen(
        forkserver.command("brief", "--date", DATE), env=env, stdout=subprocess.PIPE, text=True
    )
    proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert writers(db) == {proc.pid}  # the process the test started wrote the run itself
