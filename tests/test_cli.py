from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dayflow.cli import app
from dayflow.providers.offline import OfflineModel
from dayflow.store import open_store
from tests.conftest import (
    Db,
    db_rows,
    foreign_sqlite,
    is_pg,
    parse_python,
    python_process,
    subprocess_env,
)
from tests.harness import Result, invoke
from tests.scripted import ScriptedModel, seed_turns

runner = CliRunner()


class Harness:
    """Runs CLI commands in-process with a fixed clock and the model `model_fn` builds."""

    def __init__(self, db: Path, model_fn: Any = None, env: dict[str, str] | None = None) -> None:
        self.db = db
        self.models: list[Any] = []
        self.model_fn = model_fn or (lambda name, settings: OfflineModel())
        self.env = env if env is not None else {}

    def __call__(self, *args: str) -> Result:
        def factory(name: str, settings: Any) -> Any:
            model = self.model_fn(name, settings)
            self.models.append(model)
            return model

        return invoke(self.db, factory, *args, env=self.env)


@pytest.fixture
def cli(db_path: Path) -> Harness:
    return Harness(db_path)


def test_seed_scenario_crash_resume_and_tasks(cli: Harness) -> None:
    crashed = cli("brief", "-v", "--crash-after", "2")
    assert crashed.code == 70
    assert "[step 1] stop=tool_use" in crashed.err
    assert "    -> read_inbox({'limit': 50})" in crashed.err
    assert "    -> read_calendar({'range': 'today'})" in crashed.err
    assert "    -> read_tasks({'include_done': False})" in crashed.err
    assert "[step 2] stop=tool_use" in crashed.err
    assert (
        "create_task({'title': 'Send edits on partnership one-pager to Sam', ...})" in crashed.err
    )
    assert crashed.err.rstrip().endswith("simulated crash after step 2")

    listed = cli("runs")
    row = listed.out.splitlines()[1].split()
    run_id = row[0]
    assert row[1] == "interrupted" and row[5] == "2"
    tasks_before = json.loads(cli("tasks", "--json").out)

    resumed = cli("resume", "-v")
    assert resumed.code == 0
    assert f"[resume {run_id}] replaying 2 committed step(s)" in resumed.err
    assert "[step 3] stop=end_turn" in resumed.err
    assert f"[resumed {run_id} · finished at step 3" in resumed.err
    assert "Today" in resumed.out and "One thing" in resumed.out
    assert len(cli.models[-1].__dict__) >= 0  # a fresh model object was built for the resume

    row = cli("runs").out.splitlines()[1].split()
    assert row[:2] == [run_id, "done"] and row[5] == "3"
    assert json.loads(cli("tasks", "--json").out) == tasks_before


@pytest.mark.slow  # spawns a process
def test_tasks_listed_from_another_process_carry_the_same_ids(cli: Harness) -> None:
    assert cli("brief").code == 0
    here = json.loads(cli("tasks", "--json").out)
    proc = subprocess.run(
        [sys.executable, "-m", "dayflow", "tasks", "--json"],
        env=subprocess_env(cli.db),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert [t["id"] for t in json.loads(proc.stdout)] == [t["id"] for t in here]
    assert len(here) >= 2


def test_resuming_a_finished_run_prints_its_brief_without_a_model(db_path: Path) -> None:
    cli = Harness(db_path)
    first = cli("brief")
    run_id = json.loads(cli("runs", "--json").out)[0]["id"]
    never = Harness(db_path, model_fn=lambda *a: pytest.fail("a model was built"))
    again = never("resume", run_id[:5])
    assert again.code == 0 and "already done" in again.err
    assert again.out == first.out


def test_brief_with_scripted_model_and_json_output(db_path: Path) -> None:
    cli = Harness(db_path, model_fn=lambda *a: ScriptedModel(seed_turns()))
    res = cli("brief", "--json", "--date", "2026-11-05", "--model", "scripted")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["run"]["status"] == "done" and doc["brief"].startswith("## Today")
    assert doc["run"]["usage"]["input_tokens"] == 1200 + 2758 + 3406


@pytest.mark.parametrize("date", ["2026-11-05", "2026-11-07", "2026-11-09", None])
def test_the_sample_brief_shows_every_section_with_content(cli: Harness, date: str | None) -> None:
    """The quick start's brief (the bundled sample, on its own day, a weekend, a Monday or
    today) shows owed replies, a wait, each meeting's mail and a conflict, never "not known";
    the sample's real requests are still its tasks, and a question answered from its sent
    mail (Tomas's coffee) is neither a task nor owed (issue 31.7)."""
    res = cli("brief", "--format", "markdown", *(["--date", date] if date else []))
    assert res.code == 0, res.err
    brief = res.out
    assert "not known" not in brief
    owed = brief.split("## You owe replies")[1].split("## Waiting on others")[0]
    assert '- Reply to Sam Okafor (sam@northwind.example): "Re: Partnership one-pager' in owed
    assert "Tomas" not in brief
    waiting = brief.split("## Waiting on others")[1].split("## Tasks created")[0]
    assert '- Lena Fischer (lena.fischer@lumen-labs.example): "Pilot customer list"' in waiting
    today = brief.split("## Today")[1].split("## Needs action")[0]
    assert '  - Mail: "Pilot customer list" (latest from you,' in today
    conflict = "- Conflict: 1:1 with Dana and Interview: backend candidate overlap, 11:15–11:30."
    assert conflict in today
    titles = sorted(t["title"] for t in json.loads(cli("tasks", "--json").out))
    assert titles == [
        "Approve Dana's expense report for Denver offsite",
        "Confirm vendor comparison for Priya",
        "RSVP for team dinner",
        "Send edits on partnership one-pager to Sam",
        "Sign and return field trip permission form",
    ]


def test_offline_notice_is_shown_when_no_key(cli: Harness) -> None:
    res = cli("brief")
    assert "No ANTHROPIC_API_KEY set: using the built-in offline model" in res.err


def test_runs_filters_and_json(cli: Harness) -> None:
    cli("brief", "--crash-after", "1")
    cli("brief")
    all_runs = json.loads(cli("runs", "--json").out)
    assert [r["status"] for r in all_runs] == ["done", "interrupted"]
    only = json.loads(cli("runs", "--json", "--status", "interrupted").out)
    assert len(only) == 1 and only[0]["status"] == "interrupted"
    assert len(json.loads(cli("runs", "--json", "--limit", "1").out)) == 1
    assert json.loads(cli("runs", "--json", "--since", "2999-01-01").out) == []
    assert "dayflow resume" in cli("runs").err


def test_brief_warns_about_an_unfinished_run_of_today_and_can_resume_it(cli: Harness) -> None:
    cli("brief", "--crash-after", "1")
    run_id = json.loads(cli("runs", "--json").out)[0]["id"]
    warned = cli("brief", "--crash-after", "1")
    assert f"note: run {run_id}" in warned.err
    latest = json.loads(cli("runs", "--json").out)[0]["id"]
    res = cli("brief", "--resume-latest")
    assert res.code == 0 and f"[resume {latest}]" in res.err


def test_tasks_done_and_all(cli: Harness) -> None:
    cli("brief")
    tasks = json.loads(cli("tasks", "--json").out)
    res = cli("tasks", "--done", tasks[0]["id"])
    assert res.code == 0 and "done:" in res.err
    assert len(json.loads(cli("tasks", "--json").out)) == len(tasks) - 1
    assert len(json.loads(cli("tasks", "--json", "--all").out)) == len(tasks)
    assert cli("tasks", "--done", "t_nope").code == 3


def test_show_prints_steps_events_and_brief(cli: Harness) -> None:
    cli("brief", "--crash-after", "2")
    cli("resume")
    run_id = json.loads(cli("runs", "--json").out)[0]["id"]
    res = cli("show", run_id)
    assert res.code == 0
    for word in (
        "run_started",
        "run_resumed",
        "tool_executed",
        "step_committed",
        "new process",
        "read_inbox",
        "Brief",
    ):
        assert word in res.out
    doc = json.loads(cli("show", run_id, "--json").out)
    assert [s["n"] for s in doc["steps"]] == [1, 2, 3]
    assert doc["run"]["status"] == "done"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("resume", "ffff00"), 3, "no run matches"),
        (("show", "zz"), 3, "not a run id"),
        (("resume",), 3, "nothing to resume"),
        (("brief", "--date", "tomorrow"), 2, "not a date"),
        (("brief", "--tz", "Mars/Olympus"), 2, "unknown timezone"),
        (("runs", "--status", "weird"), 2, "--status must be one of"),
        (("brief", "--model", "claude-haiku-5-5"), 6, "needs ANTHROPIC_API_KEY"),
    ],
)
def test_bad_input_gets_one_clear_line_and_a_nonzero_exit(
    db_path: Path, args: tuple[str, ...], code: int, message: str
) -> None:
    open_store(db_path).close()  # an empty Dayflow database: the commands that only read need one
    cli = Harness(db_path, model_fn=_default_factory)
    res = cli(*args)
    assert res.code == code
    assert message in res.err
    assert "Traceback" not in res.err + res.out
    assert len(res.err.strip().splitlines()) == 1


def _default_factory(name: str, settings: Any) -> Any:
    from dayflow.cli_base import default_model_factory

    return default_model_factory(name, settings)


def test_ambiguous_run_prefix(cli: Harness) -> None:
    cli("brief")
    cli("brief")
    with Db(cli.db) as db:
        # Rename the runs to share a prefix, with foreign keys off.
        db.run(
            "SET session_replication_role = replica"
            if is_pg(cli.db)
            else "PRAGMA foreign_keys = OFF"
        )
        ids = [r[0] for r in db.rows("SELECT id FROM runs")]
        for new, old in zip(("abc000000001", "abc000000002"), ids, strict=True):
            db.run("UPDATE runs SET id = ? WHERE id = ?", new, old)
    res = cli("show", "abc")
    assert res.code == 3 and "several runs" in res.err


def test_malformed_inbox_is_reported_and_nothing_is_written(cli: Harness, tmp_path: Path) -> None:
    bad = tmp_path / "inbox.json"
    bad.write_text("{not json")
    res = cli("brief", "--inbox", str(bad))
    assert res.code == 4 and "inbox.json" in res.err
    if isinstance(cli.db, Path):  # issue 19.7: a first brief that cannot start makes no file
        assert not cli.db.exists()
    else:
        assert json.loads(cli("runs", "--json").out) == []


@pytest.mark.parametrize(
    ("args", "env", "code", "said"),
    [
        (["--config", "/nonexistent/dayflow.toml"], {}, 4, "does not exist"),
        (["--inbox", "/nonexistent/inbox.json"], {}, 4, "/nonexistent/inbox.json"),
        (["--calendar", "/nonexistent/cal.json"], {}, 4, "/nonexistent/cal.json"),
        (["--model", "claude-haiku-5-5"], {}, 6, "needs ANTHROPIC_API_KEY"),
        (["--inbox", "-", "--calendar", "-"], {}, 2, "cannot both read standard input"),
        (["--deliver", "smtp"], {}, 2, "needs an [smtp] table"),
        (["--sample", "huge"], {}, 2, "--sample must be one of"),
        (["--tz", "Mars/Olympus"], {}, 2, "unknown timezone"),
        ([], {"DAYFLOW_CONFIG": "CFG"}, 4, "missing 'path'"),
    ],
)
def test_a_first_brief_that_cannot_start_creates_no_database(
    tmp_path: Path, args: list[str], env: dict[str, str], code: int, said: str
) -> None:
    """Issue 19.7: `brief --config /nonexistent.toml`, a bad --inbox or a Claude model with no
    key left an empty database behind (and its lock file); each is now refused first."""
    from dayflow.cli_base import default_model_factory

    bad = tmp_path / "bad.toml"
    bad.write_text('[[inbox]]\nname = "x"\nkind = "maildir"\n')
    db = tmp_path / "data" / "dayflow.db"
    env = {k: str(bad) if v == "CFG" else v for k, v in env.items()}
    res = Harness(db, model_fn=default_model_factory, env={"HOME": str(tmp_path), **env})(
        "brief", *args
    )
    assert res.code == code and said in res.err, res.err
    assert not db.exists() and not db.with_suffix(".db.lock").exists()


def test_a_file_that_is_not_a_dayflow_database(tmp_path: Path) -> None:
    other = foreign_sqlite(tmp_path / "photos.db", "photos (id INTEGER)")
    res = Harness(other)("runs")
    assert res.code == 4 and "not a Dayflow database" in res.err
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"\x00garbage" * 512)
    res = Harness(garbage)("tasks")
    assert res.code == 4 and "Traceback" not in res.err


def test_resume_of_a_claude_run_without_a_key_changes_nothing(db_path: Path) -> None:
    scripted = Harness(db_path, model_fn=lambda *a: ScriptedModel(seed_turns()))
    scripted("brief", "--model", "claude-haiku-5-5", "--crash-after", "1")
    before = db_rows(db_path, "SELECT * FROM events ORDER BY run_id, seq")
    res = Harness(db_path, model_fn=_default_factory)("resume")
    assert res.code == 6 and "ANTHROPIC_API_KEY" in res.err
    assert db_rows(db_path, "SELECT * FROM events ORDER BY run_id, seq") == before


def test_version() -> None:
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.startswith("dayflow ")


def test_help_explains_every_command_and_exit_codes() -> None:
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0
    for word in ("brief", "runs", "resume", "tasks", "show", "Exit codes"):
        assert word in res.stdout
    res = runner.invoke(app, ["brief", "--help"])
    for flag in ("--crash-after", "--date", "--budget", "--max-steps", "--db", "--model"):
        assert flag in res.stdout


def test_an_unknown_profile_exits_with_the_code_help_and_the_readme_give_it(
    tmp_path: Path,
) -> None:
    """`--profile ghost` exits 3, which --help called "no such run/task" and the README's table
    did not list at all."""
    res = invoke(tmp_path / "d.db", lambda *_: OfflineModel(), "rules", "--profile", "ghost")
    assert res.code == 3 and "no profile 'ghost'" in res.err
    assert "3 no such run/task/profile" in runner.invoke(app, ["--help"]).stdout
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    (row,) = [line for line in readme.splitlines() if line.startswith("| 3 |")]
    assert "profile" in row and "promise" in row


@pytest.mark.slow  # spawns a process
def test_help_runs_and_tasks_do_not_import_the_sdk(db_path: Path) -> None:
    code = (
        "import sys; from dayflow.cli import main; sys.argv=['dayflow'] + sys.argv[1:];\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "assert 'anthropic' not in sys.modules, 'anthropic imported'\n"
        "for lib in ('icalendar', 'recurring_ical_events', 'x_wr_timezone', 'urllib.request'):\n"
        "    assert lib not in sys.modules, lib + ' imported'\n"
    )
    for args in (["--help"], ["runs"], ["tasks"], ["brief"]):
        proc = python_process(subprocess_env(db_path), "-c", code, *args, timeout=60)
        assert proc.returncode == 0, (args, proc.stderr)


def test_show_json_lists_the_compactions_of_a_long_run(cli: Harness) -> None:
    assert cli("brief", "--sample", "large", "--compact-at", "6000").code == 0
    run_id = json.loads(cli("runs", "--json").out)[0]["id"]
    doc = json.loads(cli("show", run_id, "--json").out)
    assert doc["compactions"], "the large sample compacts at 6000 tokens"
    first = doc["compactions"][0]
    assert first["tokens_after"] < first["tokens_before"]
    steps = json.loads(cli("runs", "--json").out)[0]["steps"]
    assert len(doc["steps"]) == steps > first["through_step"]  # all kept, the compacted too
    assert "compacted" in cli("show", run_id).out


def test_today_is_the_users_day_not_utcs(db_path: Path) -> None:
    """The harness clock says 2026-11-05 07:30 UTC: already the 5th in Tokyo, still the 4th
    in Los Angeles."""
    cli = Harness(db_path)
    assert cli("brief", "--tz", "America/Los_Angeles").code == 0
    assert cli("brief", "--tz", "Asia/Tokyo").code == 0
    dates = [r["brief_date"] for r in json.loads(cli("runs", "--json").out)]
    assert dates == ["2026-11-05", "2026-11-04"]


def test_command_modules_import_the_shared_base_never_cli_py() -> None:
    """No import cycle: `cli.py` imports the command modules, none of them imports `cli.py`
    (they share `cli_base.py`), and the help lists the commands they register."""
    import ast

    package = Path(__file__).resolve().parents[1] / "dayflow"
    modules = sorted(package.glob("cli_*.py"))
    assert any(m.name == "cli_history.py" for m in modules)
    for module in modules:
        tree = parse_python(module.read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
            a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names
        }
        assert "dayflow.cli" not in imported, f"{module.name} imports dayflow.cli"
    res = runner.invoke(app, ["--help"])
    for word in ("trace", "fork", "gc", "doctor"):
        assert word in res.stdout


def test_the_spinner_says_how_long_the_model_has_been_thinking() -> None:
    """A local model on a CPU may take minutes a step: the wait is shown, in seconds."""
    from dayflow.app.trace import _Waiting

    ticks = iter([100.0, 100.4, 172.9])
    waiting = _Waiting(3, clock=lambda: next(ticks))
    assert waiting.__rich__() == "step 3: waiting for the model… 0 s"
    assert waiting.__rich__() == "step 3: waiting for the model… 72 s"
