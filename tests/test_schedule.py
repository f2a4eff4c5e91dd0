"""`dayflow schedule`: against fake systemctl / crontab / launchctl on PATH that record what
they were asked. PATH holds only the fakes, so the machine's real crontab and systemd are out
of reach; HOME is the test's own directory."""

from __future__ import annotations

import json
import os
import plistlib
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dayflow import schedule, schedule_parse
from dayflow.clock import FixedClock
from dayflow.store import open_store
from tests.harness import Result, invoke, offline_model

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
        return invoke(db, offline_model, *args, env={**self.env, **env})

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


@pytest.mark.slow  # spawns systemd-analyze
@pytest.mark.parametrize("name", ["plain", "it's", 'a"b', "a\\b", "tab\tx", "a$b", "a${X}b", "50%"])
def test_a_dayflow_installed_under_a_hostile_path_gives_a_unit_systemd_loads(
    tmp_path: Path, name: str
) -> None:
    """systemd refuses a quote, backslash or tab in an executable's name and never expands $
    there: such a path runs through /usr/bin/env (systemd 252 says which it loads)."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed on this machine")
    exe = tmp_path / name / "dayflow"
    exe.parent.mkdir()
    exe.symlink_to(sys.executable)
    job = schedule.Job(7, 30, False, (str(exe), "brief"), (("DAYFLOW_DB", f"/{name}.db"),), exe)
    service, timer = schedule.systemd_units(job)
    (tmp_path / "dayflow-brief.service").write_text(service)
    (tmp_path / "dayflow-brief.timer").write_text(timer)
    proc = subprocess.run(
        [analyze, "verify", "--man=no", "dayflow-brief.service", "dayflow-brief.timer"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    argv, env = schedule_parse.read_service(service)
    assert argv[-2:] == [str(exe), "brief"] and env == [("DAYFLOW_DB", f"/{name}.db")]


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


# Paths a user can really have, each hostile to one quoting layer: sh, cron's %, systemd's
# C escapes, specifiers and $ variables.
HOSTILE = [
    "it's",
    'say "hi"',
    "back\\slash",
    "tab\there",
    "$HOME",
    "${HOME}",
    "100%",
    "a\\%b",
    "a\\\\%%b",
    "$(touch pwned)",
    "`id`;x",
    "semi;colon & amp",
    "%h %n",
]


def _cron_runs(line: str) -> str:
    """What cron hands to sh, as crontab(5) and cronie's do_command say (written here apart
    from dayflow's own reader): a backslash before % is dropped, a bare % ends the command."""
    command = line.split(None, 5)[5]
    out: list[str] = []
    escaped = False
    for c in command:
        if escaped:
            if c == "%":
                out[-1] = "%"
            else:
                out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
            out.append(c)
        elif c == "%":
            break
        else:
            out.append(c)
    return "".join(out)


@pytest.mark.slow  # runs /bin/sh
@pytest.mark.parametrize("name", HOSTILE)
def test_a_cron_line_runs_exactly_the_hostile_paths_under_sh(tmp_path: Path, name: str) -> None:
    dump = tmp_path / "dump.py"
    dump.write_text(
        "import json, os, sys\n"
        "json.dump({'argv': sys.argv[1:], 'db': os.environ.get('DAYFLOW_DB')}, "
        "open(os.environ['DUMP_TO'], 'w'))\n"
    )
    out = tmp_path / "out.json"
    job = schedule.Job(
        hour=7,
        minute=30,
        weekdays=False,
        argv=(sys.executable, str(dump), f"/x/{name}/y", name),
        env=(("DAYFLOW_DB", f"/db/{name}.db"), ("DUMP_TO", str(out))),
        log=tmp_path / f"log {name}",
    )
    line = schedule.cron_block(job).splitlines()[1]
    proc = subprocess.run(
        ["/bin/sh", "-c", _cron_runs(line)], cwd=tmp_path, capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text()) == {"argv": [f"/x/{name}/y", name], "db": f"/db/{name}.db"}
    assert (tmp_path / f"log {name}").exists()
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("role", ["DAYFLOW_DB", "DAYFLOW_CONFIG", "HOME"])
@pytest.mark.parametrize("backend", ["systemd", "cron"])
def test_hostile_paths_as_database_config_and_home_read_back_as_written(
    machine: Machine, tmp_path: Path, role: str, backend: str
) -> None:
    for name in ["".join(HOSTILE)]:  # every hostile piece in one path: one install each
        odd = tmp_path / name / "x"
        env = {"HOME": str(odd)} if role == "HOME" else {}
        db = odd / "dayflow.db" if role == "DAYFLOW_DB" else tmp_path / "dayflow.db"
        if role == "DAYFLOW_CONFIG":
            env["DAYFLOW_CONFIG"] = str(odd / "config.toml")
        args = ["schedule", "install", "--at", "07:30", "--backend", backend]
        notes = tmp_path / name.replace("$", "") / "notes"  # `--deliver` refuses a $VAR
        result = machine(db, *args, "--deliver", f"file:{notes}/{{date}}.md", **env)
        assert result.code == 0, (name, result.err)
        home = Path(env.get("HOME", machine.home))
        want_env = {"DAYFLOW_DB": str(db), "DAYFLOW_TZ": "Europe/Berlin"}
        if role == "DAYFLOW_CONFIG":
            want_env["DAYFLOW_CONFIG"] = str(odd / "config.toml")
        if backend == "systemd":
            unit = (home / ".config/systemd/user/dayflow-brief.service").read_text()
            argv, pairs = schedule_parse.read_service(unit)
            assert dict(pairs) == want_env, name
        else:
            line = machine.crontab.read_text().splitlines()[1]
            words = shlex.split(_cron_runs(line))
            pairs = [(k, v) for k, _, v in (w.partition("=") for w in words[: len(want_env)])]
            assert dict(pairs) == want_env, name
            argv = words[len(want_env) : -3]
            assert words[-3:] == [">>", str(home / ".local/state/dayflow/schedule.log"), "2>&1"]
        assert argv[1:] == [
            "brief",
            "--ensure-today",
            "--deliver",
            f"file:{notes}/{{date}}.md",
        ]


@pytest.mark.parametrize("bad", ["line\nbreak", "carriage\rreturn", "bell\x07", "del\x7f"])
def test_a_path_no_scheduler_can_hold_is_refused_in_one_line_before_anything(
    machine: Machine, tmp_path: Path, bad: str
) -> None:
    result = machine(tmp_path / bad / "x.db", "schedule", "install", "--at", "07:30")
    assert result.code == 2
    assert result.err.count("\n") == 1 and "cannot schedule DAYFLOW_DB" in result.err
    assert machine.calls() == []  # not even a scheduler asked


def test_a_refused_install_leaves_the_old_schedule_byte_identical(
    machine: Machine, db_path: Path, tmp_path: Path
) -> None:
    assert machine(db_path, "schedule", "install", "--at", "07:30").code == 0
    units = {p.name: p.read_bytes() for p in machine.unit_dir.iterdir()}
    before = len(machine.calls())
    refused = machine(
        tmp_path / "a\nb" / "x.db", "schedule", "install", "--at", "08:00", "--backend", "cron"
    )
    assert refused.code == 2
    assert {p.name: p.read_bytes() for p in machine.unit_dir.iterdir()} == units
    assert machine.calls()[before:] == []  # nothing disabled, nothing reloaded
    assert not machine.crontab.exists()


def test_a_unit_systemd_analyze_refuses_leaves_the_old_crontab_byte_identical(
    machine: Machine, db_path: Path
) -> None:
    machine.crontab.write_text("MAILTO=me\n")
    assert machine(db_path, "schedule", "install", "--at", "07:30", "--backend", "cron").code == 0
    table = machine.crontab.read_bytes()
    analyze = machine.bin / "systemd-analyze"
    analyze.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "sys.stderr.write(sys.argv[-1] + ':9: Invalid escape sequence\\n')\nsys.exit(1)\n"
    )
    analyze.chmod(0o755)
    refused = machine(db_path, "schedule", "install", "--at", "08:00", "--backend", "systemd")
    assert refused.code == 1
    assert "systemd-analyze refuses" in refused.err and "nothing was changed" in refused.err
    assert "dayflow-brief.timer:9: Invalid escape sequence" in refused.err
    assert machine.crontab.read_bytes() == table
    assert not machine.unit_dir.exists()


def test_the_readers_follow_the_schedulers_rules() -> None:
    assert schedule_parse.systemd_exec('"/bin/x" "a\\\\b" "50%%" "$$HOME" \'it"s\' c\\td') == [
        "/bin/x",
        "a\\b",
        "50%",
        "$HOME",
        'it"s',
        "c\td",
    ]
    for expanding in ('"/bin/x" "$HOME"', '"/bin/x" "${HOME}"', '"/bin/x" "%h"'):
        with pytest.raises(ValueError):
            schedule_parse.systemd_exec(expanding)
    assert schedule_parse.systemd_environment('"A=$HOME" "B=50%%"') == [
        ("A", "$HOME"),
        ("B", "50%"),
    ]
    assert schedule_parse.cron_command("0 7 * * * echo '\\'\\%''") == "echo '\\'%''"
    with pytest.raises(ValueError):  # the old escaping: \\% is a backslash, then a bare %
        schedule_parse.cron_command("0 7 * * * echo 'a\\\\%b'")


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
    assert f"today's brief (2026-11-05): run {run.id} done (of the bundled sample)" in status.out


def test_status_does_not_count_a_sample_run_once_the_config_names_real_mail(
    machine: Machine, db_path: Path, tmp_path: Path
) -> None:
    """`dayflow brief` once with no config (the quick start's sample), then a config with
    the user's own mail: the scheduled brief will not take the sample run for today's (the
    brief itself does not), so neither does status."""
    assert machine(db_path, "schedule", "install", "--at", "07:30").code == 0
    assert machine(db_path, "brief").code == 0  # no config yet: the bundled sample
    config = tmp_path / "config.toml"
    config.write_text(f'[[inbox]]\nname = "work"\nkind = "maildir"\npath = "{tmp_path}/mail"\n')
    status = machine(db_path, "schedule", "status", DAYFLOW_CONFIG=str(config))
    assert status.code == 0, status.err
    assert "today's brief (2026-11-05): none yet" in status.out, status.out


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


def test_dry_run_without_any_scheduler_prints_what_to_run_and_exits_0(
    tmp_path: Path, db_path: Path
) -> None:
    bare = Machine(tmp_path / "bare", ("systemctl",))
    result = bare(db_path, "schedule", "install", "--at", "07:30", "--dry-run", FAKE_NO_SESSION="1")
    assert result.code == 0, result.err
    assert "brief --ensure-today" in result.out and "crontab -e" in result.out
    assert result.err.startswith("dry run: cannot install a schedule here")
    assert ["crontab", "-"] not in bare.calls()


@pytest.mark.parametrize("backend", ["systemd", "cron", "launchd"])
def test_dry_run_exits_0_with_each_backend_and_writes_nothing(
    machine: Machine, db_path: Path, backend: str
) -> None:
    result = machine(
        db_path, "schedule", "install", "--at", "07:30", "--dry-run", "--backend", backend
    )
    assert result.code == 0, result.err
    assert "brief" in result.out and "--ensure-today" in result.out
    assert not machine.unit_dir.exists() and not machine.crontab.exists()
    assert not (machine.home / "Library").exists()


def test_the_job_pins_the_dotenv_and_endpoint_a_scheduled_run_needs_but_never_the_key(
    machine: Machine, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = machine(
        db_path,
        "schedule",
        "install",
        "--at",
        "07:30",
        DAYFLOW_DOTENV="./keys.env",
        DAYFLOW_CONFIG="conf/config.toml",
        ANTHROPIC_BASE_URL="https://proxy.example/anthropic",
        ANTHROPIC_API_KEY="sk-ant-secret-value",
        XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        DAYFLOW_MODEL="claude-haiku-5-5",
        DAYFLOW_PROVIDER="anthropic",
        DAYFLOW_PG_PGBOUNCER="1",
    )
    assert result.code == 0, result.err
    unit = tmp_path / "xdg" / "systemd" / "user" / "dayflow-brief.service"
    _, env = schedule_parse.read_service(unit.read_text())
    pinned = dict(env)
    assert pinned["DAYFLOW_DOTENV"] == str(tmp_path / "keys.env")
    assert pinned["DAYFLOW_CONFIG"] == str(tmp_path / "conf" / "config.toml")
    assert pinned["ANTHROPIC_BASE_URL"] == "https://proxy.example/anthropic"
    assert pinned["XDG_CONFIG_HOME"] == str(tmp_path / "xdg")
    assert pinned["DAYFLOW_MODEL"] == "claude-haiku-5-5"
    # The model server chosen in this shell is the timer's too (a local one stays local).
    assert pinned["DAYFLOW_PROVIDER"] == "anthropic"
    assert pinned["DAYFLOW_PG_PGBOUNCER"] == "1"
    assert "ANTHROPIC_API_KEY" not in pinned
    assert "sk-ant-secret-value" not in unit.read_text() + result.out
    # The key came from this shell, which a timer does not have: said, not pinned.
    assert "ANTHROPIC_API_KEY is set in this shell only" in result.err
    assert str(tmp_path / "xdg" / "dayflow" / ".env") in result.err


@pytest.mark.parametrize(
    "url", ["https://me:pw-secret@proxy.example/", "https://proxy.example/?key=pw-secret"]
)
def test_an_endpoint_holding_a_secret_is_never_pinned(
    machine: Machine, db_path: Path, url: str
) -> None:
    result = machine(db_path, "schedule", "install", "--at", "07:30", ANTHROPIC_BASE_URL=url)
    assert result.code == 2 and "ANTHROPIC_BASE_URL holds a password or key" in result.err
    assert "pw-secret" not in result.out + result.err
    assert not machine.unit_dir.exists()


def test_a_timer_that_cannot_be_written_is_exit_4_as_any_unwritable_output(
    machine: Machine, db_path: Path
) -> None:
    """It was exit 1 where `trace -o` said 2 and `tasks export -o` 4: one code, the file's."""
    (machine.home / ".config").mkdir()
    (machine.home / ".config" / "systemd").write_text("a file where the folder goes")
    result = machine(db_path, "schedule", "install", "--at", "07:30")
    assert result.code == 4, result.err
    assert result.err.count("\n") == 1 and "cannot create" in result.err
    assert "brief --ensure-today" in result.out  # what to run by hand
