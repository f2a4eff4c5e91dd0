"""`dayflow schedule`: against fake systemctl / crontab / launchctl on PATH that record what
they were asked. PATH holds only the fakes, so the machine's real crontab and systemd are out
of reach; HOME is the test's own directory."""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dayflow import schedule
from dayflow.clock import FixedClock
from dayflow.providers.offline import OfflineModel
from dayflow.store import open_store
from tests.harness import Result, invoke

FAKE = """#!{python}
import json, os, sys
name = os.path.basename(sys.argv[0])
args = sys.argv[1:]
stdin = sys.stdin.read() if args == ["-"] else None
with open(os.environ["FAKE_LOG"], "a") as fh:
    fh.write(json.dumps([name, *args]) + "\\n")
if name == "crontab":
    table = os.environ["FAKE_CRONTAB"]
    if args == ["-l"]:
        if not os.path.exists(table):
            sys.stderr.write("no crontab for tester\\n")
            sys.exit(1)
        sys.stdout.write(open(table).read())
    elif args == ["-"]:
        open(table, "w").write(stdin)
    sys.exit(0)
if name == "systemctl":
    if "show-environment" in args:
        if os.environ.get("FAKE_NO_SESSION"):
            sys.stderr.write("Failed to connect to bus: No medium found\\n")
            sys.exit(1)
        print("HOME=/home/tester")
    elif "show" in args and any(a.endswith(".timer") for a in args):
        print("NextElapseUSecRealtime=Fri 2026-11-06 07:30:00 UTC")
        print("ActiveState=" + os.environ.get("FAKE_TIMER_STATE", "active"))
        print("UnitFileState=enabled")
    elif "show" in args:
        print("Result=" + os.environ.get("FAKE_RESULT", "success"))
        print("ExecMainStatus=" + os.environ.get("FAKE_STATUS", "0"))
        print("ExecMainExitTimestamp=Thu 2026-11-05 07:30:04 UTC")
    elif os.environ.get("FAKE_ENABLE_FAILS") and "enable" in args:
        sys.stderr.write("Failed to enable unit: Access denied\\n")
        sys.exit(1)
sys.exit(0)
"""


class Machine:
    def __init__(self, root: Path, tools: tuple[str, ...]) -> None:
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir(parents=True)
        self.home = root / "home"
        self.home.mkdir()
        self.log = root / "calls.jsonl"
        self.crontab = root / "crontab.txt"
        for tool in tools:
            path = self.bin / tool
            path.write_text(FAKE.format(python=sys.executable))
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
        self.env = {
            "PATH": str(self.bin),
            "HOME": str(self.home),
            "FAKE_LOG": str(self.log),
            "FAKE_CRONTAB": str(self.crontab),
            "DAYFLOW_TZ": "Europe/Berlin",
        }

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def __call__(self, db: Path, *args: str, **env: str) -> Result:
        return invoke(db, lambda n, s: OfflineModel(), *args, env={**self.env, **env})

    @property
    def unit_dir(self) -> Path:
        return self.home / ".config" / "systemd" / "user"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """SQLite only: a schedule pins the database file's absolute path and `status` looks at the
    file (a PostgreSQL URL is not pinned correctly yet)."""
    return tmp_path / "dayflow.db"


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path / "machine", ("systemctl", "crontab", "launchctl"))


def test_systemd_timer_is_persistent_and_runs_this_dayflow_by_absolute_path(
    machine: Machine, db_path: Path
) -> None:
    result = machine(db_path, "schedule", "install", "--at", "07:30", "--weekdays")
    assert result.code == 0, result.err
    service = (machine.unit_dir / "dayflow-brief.service").read_text()
    timer = (machine.unit_dir / "dayflow-brief.timer").read_text()
    assert "OnCalendar=Mon..Fri *-*-* 07:30:00\n" in timer
    assert "Persistent=true\n" in timer and "WantedBy=timers.target\n" in timer
    exec_line = next(line for line in service.splitlines() if line.startswith("ExecStart="))
    first = exec_line.split('"')[1]
    assert Path(first).is_absolute() and os.access(first, os.X_OK)
    assert exec_line.endswith('"brief" "--ensure-today"')
    assert f'Environment="DAYFLOW_DB={db_path.absolute()}"' in service
    assert 'Environment="DAYFLOW_TZ=Europe/Berlin"' in service
    assert "ANTHROPIC_API_KEY" not in service
    assert machine.calls() == [
        ["systemctl", "--user", "show-environment"],
        ["crontab", "-l"],
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", "dayflow-brief.timer"],
    ]
    assert "installed: systemd" in result.err


@pytest.mark.slow  # spawns a process
def test_generated_units_pass_systemd_analyze_verify(machine: Machine, tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed on this machine")
    odd_db = tmp_path / "a dir with spaces" / "50% $HOME" / "dayflow.db"
    result = machine(
        odd_db, "schedule", "install", "--at", "6:05", "--deliver", "file:~/notes/{date}.md"
    )
    assert result.code == 0, result.err
    units = [machine.unit_dir / "dayflow-brief.timer", machine.unit_dir / "dayflow-brief.service"]
    proc = subprocess.run(
        [analyze, "verify", *map(str, units)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    service = units[1].read_text()
    assert "50%% $HOME" in service  # a specifier escaped, no variable expansion in Environment=
    notes = Path("~/notes").expanduser()
    assert f'"--deliver" "file:{notes}/{{date}}.md"' in service  # absolute: a timer's cwd differs


def test_without_a_systemd_user_session_cron_is_used_and_the_rest_of_the_crontab_kept(
    machine: Machine, db_path: Path
) -> None:
    machine.crontab.write_text("MAILTO=me\n15 * * * * /usr/bin/backup\n")
    first = machine(db_path, "schedule", "install", "--at", "07:30", FAKE_NO_SESSION="1")
    assert first.code == 0, first.err
    again = machine(db_path, "schedule", "install", "--at", "08:00", FAKE_NO_SESSION="1")
    assert again.code == 0
    table = machine.crontab.read_text()
    assert table.startswith("MAILTO=me\n15 * * * * /usr/bin/backup\n")
    assert table.count(schedule.CRON_BEGIN) == 1
    line = table.splitlines()[3]
    assert line.startswith("0 8 * * * ") and "brief --ensure-today" in line
    assert f"DAYFLOW_DB={db_path.absolute()}" in line
    assert line.endswith(f">> {machine.home}/.local/state/dayflow/schedule.log 2>&1")
    assert "cron does not run a brief missed" in again.err
    assert not machine.unit_dir.exists()

    removed = machine(db_path, "schedule", "remove", FAKE_NO_SESSION="1")
    assert removed.code == 0 and "removed: cron" in removed.err
    assert machine.crontab.read_text() == "MAILTO=me\n15 * * * * /usr/bin/backup\n"


def test_a_percent_in_a_path_is_escaped_for_cron(machine: Machine, tmp_path: Path) -> None:
    db = tmp_path / "100%" / "x.db"
    assert machine(db, "schedule", "install", "--at", "07:30", FAKE_NO_SESSION="1").code == 0
    line = machine.crontab.read_text().splitlines()[1]
    assert "100\\%" in line and "100%" not in line.replace("100\\%", "")


def test_launchd_agent_runs_at_the_time_on_weekdays(machine: Machine, db_path: Path) -> None:
    result = machine(
        db_path, "schedule", "install", "--at", "07:30", "--weekdays", "--backend", "launchd"
    )
    assert result.code == 0, result.err
    plist_path = machine.home / "Library" / "LaunchAgents" / "dev.dayflow.brief.plist"
    plist = plistlib.loads(plist_path.read_bytes())
    assert plist["Label"] == "dev.dayflow.brief"
    assert plist["ProgramArguments"][1:] == ["brief", "--ensure-today"]
    assert Path(plist["ProgramArguments"][0]).is_absolute()
    assert plist["EnvironmentVariables"]["DAYFLOW_DB"] == str(db_path.absolute())
    assert plist["StartCalendarInterval"] == [
        {"Weekday": d, "Hour": 7, "Minute": 30} for d in range(1, 6)
    ]
    uid = os.getuid()
    assert ["launchctl", "bootstrap", f"gui/{uid}", str(plist_path)] in machine.calls()

    assert machine(db_path, "schedule", "remove").code == 0
    assert not plist_path.exists()
    assert ["launchctl", "bootout", f"gui/{uid}/dev.dayflow.brief"] in machine.calls()


def test_no_scheduler_at_all_says_what_to_run_by_hand(tmp_path: Path, db_path: Path) -> None:
    bare = Machine(tmp_path / "bare", ("systemctl",))
    result = bare(db_path, "schedule", "install", "--at", "07:30", FAKE_NO_SESSION="1")
    assert result.code == 1
    assert result.err.count("\n") == 1
    assert "no systemd user session (Failed to connect to bus" in result.err
    assert "no `crontab` command" in result.err
    assert "brief --ensure-today" in result.out and "crontab -e" in result.out
    assert f"DAYFLOW_DB={db_path.absolute()}" in result.out


def test_a_failing_systemctl_enable_says_what_to_run_by_hand(
    machine: Machine, db_path: Path
) -> None:
    result = machine(db_path, "schedule", "install", "--at", "07:30", FAKE_ENABLE_FAILS="1")
    assert result.code == 1
    assert "Access denied" in result.err
    assert "systemctl --user enable --now dayflow-brief.timer" in result.err
    assert "brief --ensure-today" in result.out


def test_status_shows_the_timer_its_last_run_and_todays_brief(
    machine: Machine, db_path: Path
) -> None:
    assert machine(db_path, "schedule", "install", "--at", "07:30").code == 0
    none_yet = machine(db_path, "schedule", "status")
    assert none_yet.code == 0
    assert "systemd: " in none_yet.out and "OnCalendar=*-*-* 07:30:00" in none_yet.out
    assert "next run: Fri 2026-11-06 07:30:00 UTC" in none_yet.out
    assert "last run: success (exit status 0)" in none_yet.out
    assert machine(db_path, "brief").code == 0
    with open_store(db_path, clock=FixedClock()) as store:
        run = store.runs.list(limit=1)[0]
    status = machine(db_path, "schedule", "status")
    assert f"today's brief (2026-11-05): run {run.id} done" in status.out


def test_status_and_remove_with_nothing_installed(machine: Machine, db_path: Path) -> None:
    status = machine(db_path, "schedule", "status")
    assert status.code == 0 and "no schedule installed" in status.err
    assert not db_path.exists()
    removed = machine(db_path, "schedule", "remove")
    assert removed.code == 0 and "nothing to remove" in removed.err


def test_switching_scheduler_removes_the_old_one(machine: Machine, db_path: Path) -> None:
    assert machine(db_path, "schedule", "install", "--at", "07:30").code == 0
    assert machine(db_path, "schedule", "install", "--at", "07:30", "--backend", "cron").code == 0
    assert not (machine.unit_dir / "dayflow-brief.timer").exists()
    assert schedule.CRON_BEGIN in machine.crontab.read_text()


@pytest.mark.parametrize("at", ["7", "24:00", "07:60", "", "0730", "-1:30", "07:30pm"])
def test_a_bad_time_is_a_usage_error(machine: Machine, db_path: Path, at: str) -> None:
    result = machine(db_path, "schedule", "install", "--at", at)
    assert result.code == 2 and "is not a time of day" in result.err
    assert machine.calls() == []


def test_dry_run_prints_the_units_and_changes_nothing(machine: Machine, db_path: Path) -> None:
    result = machine(db_path, "schedule", "install", "--at", "07:30", "--dry-run")
    assert result.code == 0
    assert "Persistent=true" in result.out and "ExecStart=" in result.out
    assert not machine.unit_dir.exists()
    assert ["systemctl", "--user", "daemon-reload"] not in machine.calls()


def test_status_says_when_the_last_run_failed_or_the_timer_is_stopped(
    machine: Machine, db_path: Path
) -> None:
    assert machine(db_path, "schedule", "install", "--at", "07:30").code == 0
    status = machine(
        db_path,
        "schedule",
        "status",
        FAKE_RESULT="exit-code",
        FAKE_STATUS="6",
        FAKE_TIMER_STATE="inactive",
    )
    assert status.code == 0
    assert "last run: exit-code (exit status 6)" in status.out
    assert "journalctl --user -u dayflow-brief.service" in status.out
    assert "next run: none: the timer is inactive (enabled)" in status.out
    assert "systemctl --user enable --now dayflow-brief.timer" in status.out


def test_cron_status_shows_the_last_line_of_the_jobs_log(machine: Machine, db_path: Path) -> None:
    assert machine(db_path, "schedule", "install", "--at", "07:30", FAKE_NO_SESSION="1").code == 0
    none_yet = machine(db_path, "schedule", "status", FAKE_NO_SESSION="1")
    assert "cron: crontab: 30 7 * * * " in none_yet.out
    assert "last run: not run yet (no log)" in none_yet.out
    log = machine.home / ".local" / "state" / "dayflow" / "schedule.log"
    log.write_text("...\nerror: delivery failed: smtp to smtp.example.org:587: timed out\n")
    status = machine(db_path, "schedule", "status", FAKE_NO_SESSION="1")
    assert f"last run: last line of {log}: error: delivery failed: smtp to" in status.out


def test_a_postgresql_history_is_pinned_as_its_url(machine: Machine) -> None:
    """A schedule for a history on a server pins the URL as written (a Path would fold it)."""
    url = "postgresql://me@127.0.0.1:1/dayflow?application_name=home"
    result = machine(url, "schedule", "install", "--at", "07:30", "--dry-run")  # type: ignore[arg-type]
    assert result.code == 0, result.err
    assert f"DAYFLOW_DB={url}" in result.out.replace("'", "")


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://me:s3cret-pw@127.0.0.1:1/dayflow",
        "postgresql://me@127.0.0.1:1/dayflow?password=s3cret-pw",
    ],
)
def test_a_database_url_with_a_password_is_never_written_into_a_job(
    machine: Machine, url: str
) -> None:
    result = machine(url, "schedule", "install", "--at", "07:30")  # type: ignore[arg-type]
    assert result.code == 2 and "~/.pgpass" in result.err
    assert "s3cret-pw" not in result.out + result.err
    assert machine.calls() == []  # no scheduler was even asked
    assert not machine.unit_dir.exists() and not machine.crontab.exists()
