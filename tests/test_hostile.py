"""What a new user and a hostile tester hit (issue 10): each row through the CLI, with one
clear line and a documented exit code instead of a traceback, a wrong answer or a new file."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from dayflow.store import open_store
from tests.conftest import db_rows, foreign_sqlite, is_pg
from tests.harness import Result, invoke
from tests.scripted import ScriptedModel, seed_turns


def _offline(name: str, settings: Any) -> Any:
    return OfflineModel()


def run(db: Path | None, *args: str, **kw: Any) -> Result:
    return invoke(db, kw.pop("model", _offline), *args, **kw)


def one_line(res: Result, code: int, *words: str) -> None:
    assert res.code == code, (res.code, res.err)
    for word in words:
        assert word in res.err, (word, res.err)
    assert "Traceback" not in res.err + res.out and "internal error" not in res.err
    lines = [x for x in res.err.strip().splitlines() if not x.startswith("No ANTHROPIC_API_KEY")]
    assert len(lines) == 1, res.err


def runs_in(db: Path | str) -> list[Any]:
    if is_pg(db):
        return db_rows(db, "SELECT id FROM runs") if open_store_exists(db) else []
    assert isinstance(db, Path)
    if not db.exists():
        return []
    return sqlite3.connect(db).execute("SELECT id FROM runs").fetchall()


def open_store_exists(db: Path | str) -> bool:
    """Whether the PostgreSQL schema has Dayflow's tables yet."""
    tables = "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()"
    return bool(db_rows(db, tables + " AND table_name = 'runs'"))


def _inbox(tmp_path: Path, body: str, name: str = "inbox.json") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


MESSAGE = (
    '{{"id": "m1", "from": "Sam <sam@x.example>", "subject": {subject}, '
    '"received_at": "2026-11-05T08:00:00+00:00", "unread": {unread}}}'
)


def _message(subject: str = '"Hello"', unread: str = "true") -> str:
    return '{"messages": [' + MESSAGE.format(subject=subject, unread=unread) + "]}"


# --- internal errors T1-T7 ----------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("brief", "--date", "0001-01-01"),
        ("brief", "--date", "9999-12-31"),
        ("runs", "--since", "0001-01-01"),
        ("gc", "--before", "9999-12-31"),
    ],
)
def test_a_date_out_of_range_is_a_usage_error(db_path: Path, args: tuple[str, ...]) -> None:
    open_store(db_path).close()
    one_line(run(db_path, *args), 2, "out of range", "1900-01-01", "9998-12-31")
    assert runs_in(db_path) == []


@pytest.mark.parametrize("day", ["1900-01-01", "9998-12-31"])
def test_a_brief_at_either_end_of_the_date_range_works(db_path: Path, day: str) -> None:
    res = run(db_path, "brief", "--date", day)
    assert res.code == 0, res.err
    assert json.loads(run(db_path, "runs", "--json").out)[0]["brief_date"] == day


def test_an_inbox_nested_too_deeply_is_invalid_json_naming_the_file(
    db_path: Path, tmp_path: Path
) -> None:
    deep = _inbox(tmp_path, '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}")
    one_line(run(db_path, "brief", "--inbox", str(deep)), 4, str(deep), "invalid JSON")
    assert runs_in(db_path) == []


def test_a_number_too_long_for_python_names_the_file_and_the_field(
    db_path: Path, tmp_path: Path
) -> None:
    inbox = _inbox(tmp_path, _message(unread="9" * 5000))
    one_line(run(db_path, "brief", "--inbox", str(inbox)), 4, str(inbox), "'unread'")
    assert runs_in(db_path) == []


@pytest.mark.parametrize("which", ["inbox", "calendar"])
def test_a_lone_surrogate_is_refused_at_validation_and_nothing_is_written(
    db_path: Path, tmp_path: Path, which: str
) -> None:
    if which == "inbox":
        path = _inbox(tmp_path, _message(subject='"Sign \\ud800 today"'))
    else:
        path = _inbox(
            tmp_path,
            '{"events": [{"id": "e1", "title": "Sync \\udfff", '
            '"start": "2026-11-05T09:00:00+00:00", "end": "2026-11-05T09:30:00+00:00"}]}',
        )
    one_line(run(db_path, "brief", f"--{which}", str(path)), 4, str(path), "surrogate")
    assert runs_in(db_path) == []


@pytest.mark.parametrize(
    "args",
    [
        ("runs", "--limit"),
        ("brief", "--max-steps"),
        ("brief", "--budget"),
        ("brief", "--task-cap"),
        ("brief", "--max-tokens"),
        ("brief", "--compact-at"),
        ("brief", "--crash-after"),
        ("resume", "--max-tokens"),
        ("resume", "--max-steps"),
        ("gc", "--keep"),
        ("fork", "abc", "--from-step"),
    ],
)
def test_a_huge_number_is_a_range_error_not_an_overflow(
    db_path: Path, args: tuple[str, ...]
) -> None:
    open_store(db_path).close()
    res = run(db_path, *args, "99999999999999999999")
    assert res.code == 2, res.err
    assert "not in the range" in res.out + res.err
    assert runs_in(db_path) == []


@pytest.mark.parametrize("where", ["under-a-file", "in-proc"])
def test_a_database_that_cannot_be_created_names_the_path(tmp_path: Path, where: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    db = blocker / "x.db" if where == "under-a-file" else Path("/proc/dayflow-test/x.db")
    one_line(run(db, "brief"), 4, str(db.parent), "cannot create")


# --- wrong behaviour --------------------------------------------------------------------------


def _runs_fixture(db_path: Path) -> None:
    """A done run and one stopped with a long reason."""
    assert run(db_path, "brief").code == 0
    assert run(db_path, "brief", "--max-steps", "1").code == 7


@pytest.mark.parametrize("width", [60, 80, 120, None])
def test_runs_never_drop_status_or_reason_silently(db_path: Path, width: int | None) -> None:
    _runs_fixture(db_path)
    res = run(db_path, "runs", terminal_width=width)
    assert res.code == 0
    stopped = next(r for r in json.loads(run(db_path, "runs", "--json").out) if r["reason"])
    for word in stopped["reason"].replace("(", " ").replace(")", " ").split():
        assert word in res.out, (word, res.out)
    assert "stopped" in res.out and stopped["id"] in res.out
    lines = res.out.splitlines()
    if width is not None:
        assert all(len(line) <= width for line in lines), res.out
    missing = [c for c in ("cost", "model", "started", "tokens in/out") if c not in lines[0]]
    if missing:  # nothing disappears without a marker
        assert "not shown at" in res.out and all(c in res.out for c in missing)
    if width is None or width >= 120:
        assert "cost" in lines[0] and "model" in lines[0]


@pytest.mark.parametrize("width", [60, 80, 120, None])
def test_tasks_keep_the_whole_title_at_any_width(db_path: Path, width: int | None) -> None:
    assert run(db_path, "brief").code == 0
    res = run(db_path, "tasks", terminal_width=width)
    titles = [t["title"] for t in json.loads(run(db_path, "tasks", "--json").out)]
    words = " ".join(res.out.split())
    for title in titles:
        for word in title.split():
            assert word in words, (word, res.out)
    if width is not None:
        assert all(len(line) <= width for line in res.out.splitlines()), res.out
    header = res.out.splitlines()[0]
    missing = [c for c in ("key", "run") if c not in header.split()]
    if missing:
        assert "not shown at" in res.out
    if width is None:
        assert not missing


def test_foreign_sqlite_files_are_refused_and_left_untouched(tmp_path: Path) -> None:
    other = foreign_sqlite(tmp_path / "other.db", "notes (x TEXT)")
    empty_foreign = tmp_path / "empty.db"
    conn = sqlite3.connect(empty_foreign)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    for path in (other, empty_foreign):
        before = path.read_bytes()
        for args in (("runs",), ("brief",)):
            one_line(run(path, *args), 4, str(path), "not a Dayflow database")
            assert path.read_bytes() == before
            assert not Path(f"{path}-wal").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("runs",),
        ("tasks",),
        ("tasks", "--done", "t_1"),
        ("show", "abc"),
        ("trace", "abc"),
        ("doctor",),
        ("resume",),
        ("resume", "abc"),
        ("gc", "--keep", "1"),
        ("fork", "abc", "--from-step", "1"),
    ],
)
def test_commands_that_only_read_never_create_a_database(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    db = tmp_path / "typo" / "x.db"
    one_line(run(db, *args), 4, str(db), "no Dayflow database")
    assert not (tmp_path / "typo").exists()


def test_resume_latest_says_which_options_do_not_apply(db_path: Path, tmp_path: Path) -> None:
    assert run(db_path, "brief", "--crash-after", "1").code == 70
    res = run(
        db_path,
        "brief",
        "--resume-latest",
        "--task-cap",
        "1",
        "--sample",
        "large",
        "--max-steps",
        "9",
    )
    assert res.code == 0, res.err
    assert "--sample, --task-cap do not apply to a resumed run" in res.err
    assert "--max-steps" not in res.err  # that one does apply


def test_tasks_done_with_json_prints_the_task(db_path: Path) -> None:
    assert run(db_path, "brief").code == 0
    task = json.loads(run(db_path, "tasks", "--json").out)[0]
    res = run(db_path, "tasks", "--done", task["id"], "--json")
    assert res.code == 0
    doc = json.loads(res.out)
    assert doc["id"] == task["id"] and doc["status"] == "done" and doc["done_at"]


@pytest.mark.parametrize(
    "prices",
    [
        '{"offline": [NaN, 1]}',
        '{"offline": [Infinity, 1]}',
        '{"offline": [1e400, 1]}',
        '{"offline": [-1, 1]}',
        '{"offline": ["cheap", 1]}',
        '{"offline": [1]}',
        '{"offline": [true, 1]}',
        "[]",
        "3",
    ],
)
def test_bad_prices_are_refused(db_path: Path, prices: str) -> None:
    open_store(db_path).close()
    res = run(db_path, "runs", "--json", env={"DAYFLOW_PRICES": prices})
    one_line(res, 2, "DAYFLOW_PRICES")
    assert "No such file" not in res.err


def _refuse_constant(name: str) -> None:
    raise AssertionError(f"{name} in JSON output")


def test_json_output_is_strict_json(db_path: Path) -> None:
    env = {"DAYFLOW_PRICES": '{"offline": [1000000, 1000000]}'}
    assert run(db_path, "brief", env=env).code == 0
    for args in (("runs", "--json"), ("brief", "--json"), ("tasks", "--json")):
        out = run(db_path, *args, env=env).out

        json.loads(out, parse_constant=_refuse_constant)
    cost = json.loads(run(db_path, "runs", "--json", env=env).out)[0]["estimated_cost_usd"]
    assert cost is None or math.isfinite(cost)


def test_a_bogus_tz_falls_back_to_utc_saying_so(db_path: Path) -> None:
    """It fell back in silence: a brief's times in UTC with nothing saying why."""
    res = run(db_path, "brief", env={"TZ": "Bogus/Zone"})
    assert res.code == 0, res.err
    said = [line for line in res.err.splitlines() if "TZ=" in line]
    assert said == [
        "TZ='Bogus/Zone' is not a zone name this machine knows, so times are in UTC; set "
        "DAYFLOW_TZ (an IANA name such as America/Los_Angeles) to choose one"
    ]
    assert json.loads(run(db_path, "runs", "--json").out)[0]["brief_date"] == "2026-11-05"
    assert run(db_path, "runs", env={"TZ": "Bogus/Zone"}).code == 0


def test_a_tz_without_a_slash_that_the_machine_knows_is_that_zone() -> None:
    """TZ=PST8PDT (a zone of the tz database without a '/') was taken for garbage: UTC."""
    from dayflow import config

    assert config.load({"HOME": "/nonexistent", "TZ": "PST8PDT"}).tz == "PST8PDT"
    assert config.load({"HOME": "/nonexistent", "TZ": ":Europe/Berlin"}).tz_ignored is None
    quiet = config.load({"HOME": "/nonexistent", "TZ": "nope", "DAYFLOW_TZ": "UTC"})
    assert quiet.tz == "UTC" and quiet.tz_ignored is None  # DAYFLOW_TZ chose: nothing to say


def test_dayflow_tz_changes_the_times_runs_and_show_print(db_path: Path) -> None:
    assert run(db_path, "brief").code == 0
    run_id = json.loads(run(db_path, "runs", "--json").out)[0]["id"]
    utc = run(db_path, "runs").out
    tokyo = run(db_path, "runs", env={"DAYFLOW_TZ": "Asia/Tokyo"}).out
    assert "07:30Z" in utc  # the harness clock: 2026-11-05 07:30 UTC
    assert "16:30+09:00" in tokyo and "07:30Z" not in tokyo
    shown = run(db_path, "show", run_id, env={"DAYFLOW_TZ": "Asia/Tokyo"}).out
    assert "2026-11-05 16:30:00+09:00" in shown and "07:30:00Z" not in shown


def test_a_piped_brief_is_the_markdown_itself(db_path: Path) -> None:
    res = run(db_path, "brief")
    assert res.code == 0
    text = db_rows(db_path, "SELECT final_text FROM runs")[0][0]
    assert res.out == text + ("" if text.endswith("\n") else "\n")
    assert res.out.startswith("# Daily brief")
    rich = run(db_path, "brief", "--format", "rich").out
    assert "# Daily brief" not in rich and "Daily brief" in rich
    on_terminal = run(db_path, "brief", terminal_width=100).out
    assert "# Daily brief" not in on_terminal
    doc = json.loads(run(db_path, "brief", "--format", "json").out)
    assert doc["brief"].startswith("# Daily brief")
    one_line(run(db_path, "brief", "--format", "yaml"), 2, "--format must be one of")
    one_line(run(db_path, "brief", "--json", "--format", "rich"), 2, "contradict")


def test_an_unknown_sample_is_a_usage_error(db_path: Path) -> None:
    one_line(run(db_path, "brief", "--sample", "bogus"), 2, "--sample", "standard, large")


def test_a_relative_xdg_data_home_is_ignored(tmp_path: Path, monkeypatch: Any) -> None:
    home = tmp_path / "home"
    monkeypatch.chdir(tmp_path)
    res = run(None, "brief", env={"HOME": str(home), "XDG_DATA_HOME": "relative/data"})
    assert res.code == 0, res.err
    assert (home / ".local" / "share" / "dayflow" / "dayflow.db").exists()
    assert not (tmp_path / "relative").exists()


# --- unclear messages ---------------------------------------------------------------------


def test_resume_without_a_key_does_not_advise_an_option_resume_lacks(db_path: Path) -> None:
    scripted = lambda *a: ScriptedModel(seed_turns())  # noqa: E731
    run(db_path, "brief", "--model", "claude-haiku-5-5", "--crash-after", "1", model=scripted)
    from dayflow.cli_base import default_model_factory

    res = run(db_path, "resume", model=default_model_factory)
    one_line(res, 6, "ANTHROPIC_API_KEY", "claude-haiku-5-5", "keeps its model")
    assert "--model offline" not in res.err


def test_resume_of_a_run_driven_elsewhere_says_so_before_asking_for_a_key(db_path: Path) -> None:
    scripted = lambda *a: ScriptedModel(seed_turns())  # noqa: E731
    run(db_path, "brief", "--model", "claude-haiku-5-5", "--crash-after", "1", model=scripted)
    run_id = json.loads(run(db_path, "runs", "--json").out)[0]["id"]
    with open_store(db_path) as store:
        store.leases.claim(run_id)  # this (live) process now drives it
        from dayflow.cli_base import default_model_factory

        res = run(db_path, "resume", run_id, model=default_model_factory)
    one_line(res, 5, f"run {run_id} is being driven by pid")


def test_nothing_to_resume_and_no_matching_runs_say_what_is_true(db_path: Path) -> None:
    open_store(db_path).close()
    one_line(run(db_path, "resume"), 3, "no runs yet")
    assert run(db_path, "brief").code == 0
    one_line(run(db_path, "resume"), 3, "every run is done")
    res = run(db_path, "runs", "--since", "2030-01-01")
    assert res.code == 0 and "no runs match" in res.err and "no runs yet" not in res.err


def test_an_inbox_with_a_byte_order_mark_is_accepted(db_path: Path, tmp_path: Path) -> None:
    inbox = tmp_path / "bom.json"
    inbox.write_bytes(b"\xef\xbb\xbf" + _message().encode())
    assert run(db_path, "brief", "--inbox", str(inbox)).code == 0


def test_the_inbox_can_come_from_standard_input(db_path: Path) -> None:
    res = run(db_path, "brief", "--inbox", "-", stdin=_message(subject='"Stdin hello"'))
    assert res.code == 0, res.err
    assert "standard input" in res.err
    run_id = json.loads(run(db_path, "runs", "--json").out)[0]["id"]
    shown = json.loads(run(db_path, "show", run_id, "--json").out)
    assert "Stdin hello" in json.dumps(shown["steps"])


def test_a_pipe_as_inbox_is_kept_so_a_resume_reads_it_again(db_path: Path) -> None:
    import os

    # `--inbox <(...)`: a pipe whose writer wrote and went. (A writer thread on a FIFO raced
    # the brief's read under load: a FIFO with no writer yet is refused, not waited on.)
    body = _message(subject='"Piped hello"').encode()
    read_end, write_end = os.pipe()
    os.write(write_end, body)
    os.close(write_end)
    try:
        res = run(db_path, "brief", "--inbox", f"/dev/fd/{read_end}", "--crash-after", "1")
    finally:
        os.close(read_end)
    assert res.code == 70, res.err
    res = run(db_path, "resume")  # the pipe is empty now: the kept copy is read
    assert res.code == 0, res.err
    assert "Piped hello" in res.out or "Piped hello" in json.dumps(
        json.loads(
            run(
                db_path, "show", json.loads(run(db_path, "runs", "--json").out)[0]["id"], "--json"
            ).out
        )
    )


@pytest.mark.parametrize(
    "args",
    [
        ("brief", "--date", ""),
        ("brief", "--tz", ""),
        ("brief", "--model", " "),
        ("brief", "--format", ""),
        ("tasks", "--done", ""),
        ("resume", ""),
        ("show", ""),
        ("runs", "--since", ""),
        ("runs", "--status", ""),
        ("gc", "--before", ""),
        ("trace", "abc", "--format", ""),
    ],
)
def test_an_empty_value_is_refused_not_taken_as_the_default(
    db_path: Path, args: tuple[str, ...]
) -> None:
    open_store(db_path).close()
    res = run(db_path, *args)
    assert res.code == 2, (res.code, res.err, res.out)
    assert "must not be empty" in res.out + res.err
    assert runs_in(db_path) == []


# --- cosmetic -----------------------------------------------------------------------------


def test_bidi_controls_from_mail_never_reach_the_terminal(db_path: Path, tmp_path: Path) -> None:
    inbox = _inbox(tmp_path, _message(subject='"Please sign \\u202eFDP.exe today"'))
    res = run(db_path, "brief", "--inbox", str(inbox), "-v")
    assert res.code == 0
    for args in ((), ("--format", "rich"), ("--json",)):
        out = run(db_path, "brief", "--inbox", str(inbox), *args).out
        assert "\u202e" not in out
    assert "\u202e" not in run(db_path, "tasks").out + run(db_path, "tasks", "--json").out
    assert "\u202e" not in res.err


def test_tasks_done_with_an_ambiguous_prefix_lists_the_candidates(db_path: Path) -> None:
    assert run(db_path, "brief").code == 0
    ids = [t["id"] for t in json.loads(run(db_path, "tasks", "--json").out)]
    res = run(db_path, "tasks", "--done", "t_")
    one_line(res, 3, "several tasks", *ids[:3])


def test_doctor_fix_only_takes_away_other_users_access(sqlite_path: Path) -> None:
    import os
    import stat

    db_path = sqlite_path  # a file's mode: SQLite only
    assert run(db_path, "brief").code == 0
    os.chmod(db_path, 0o444)  # the user made it read-only (and readable by all)
    try:
        res = run(db_path, "doctor", "--fix")
        assert "now 400" in res.out + res.err, res.out + res.err
        assert stat.S_IMODE(db_path.stat().st_mode) == 0o400  # still read-only: no write bit added
    finally:
        os.chmod(db_path, 0o600)


not_root = pytest.mark.skipif(
    hasattr(__import__("os"), "geteuid") and __import__("os").geteuid() == 0,
    reason="root bypasses file permissions",
)


@not_root
def test_a_read_only_database_or_directory_is_named_with_the_fix(tmp_path: Path) -> None:
    import os

    db = tmp_path / "ro" / "x.db"
    assert run(db, "brief").code == 0
    os.chmod(db, 0o444)
    try:
        one_line(run(db, "brief"), 4, str(db), "chmod u+rw")
    finally:
        os.chmod(db, 0o600)
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o555)
    try:
        one_line(run(locked / "x.db", "brief"), 4, str(locked), "cannot create")
    finally:
        os.chmod(locked, 0o755)


@pytest.mark.slow  # a loopback API server and real timeouts
def test_a_hung_api_times_out_as_configured_and_each_retry_is_said(db_path: Path) -> None:
    """--timeout (and DAYFLOW_TIMEOUT) bound each request; every retry prints a notice, and
    the failure names the run and the command that continues it."""
    from dayflow.cli_base import default_model_factory
    from tests.fakeapi import FakeAPI, Reply, text

    with FakeAPI([Reply([text("late")], delay=30) for _ in range(3)]) as api:
        env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": api.base_url}
        res = run(
            db_path,
            "brief",
            "--model",
            "claude-haiku-5-5",
            "--timeout",
            "1",
            env=env,
            model=default_model_factory,
        )
        assert len(api.message_requests) == 3
    assert res.code == 6, res.err
    notes = [line for line in res.err.splitlines() if line.startswith("note: ")]
    assert len(notes) == 2 and all("timed out (no answer in 1s)" in n for n in notes)
    assert "attempt 2 of 3" in notes[0] and "attempt 3 of 3" in notes[1]
    run_id = json.loads(run(db_path, "runs", "--json").out)[0]["id"]
    assert f"error: run {run_id} failed" in res.err and f"dayflow resume {run_id}" in res.err
    bad = run(db_path, "runs", env={"DAYFLOW_TIMEOUT": "never"})
    one_line(bad, 2, "DAYFLOW_TIMEOUT")
    assert run(db_path, "brief", "--timeout", "0").code == 2


# --- the offline model (W8-W10, W21) ---------------------------------------------------------


def _steps(db: Path) -> int:
    return int(json.loads(run(db, "runs", "--json").out)[0]["steps"])


def test_the_offline_model_truncates_what_it_sends_and_never_repeats_a_failing_call(
    db_path: Path, tmp_path: Path
) -> None:
    """A 10,800-character subject once made create_task fail on `notes` and the model repeat
    the call until --max-steps; bare "today" / "tomorrow" were "no deadline given"."""
    inbox = tmp_path / "long.json"
    messages = [
        {
            "id": "m1",
            "from": "Sam <sam@x.example>",
            "subject": "Please sign the NDA today " + "x" * 10_800,
            "received_at": "2026-11-05T08:00:00+00:00",
            "snippet": "Please sign the NDA today",
            "unread": True,
        },
        {
            "id": "m2",
            "from": "Vendor <vendor@x.example>",
            "subject": "Call",
            "received_at": "2026-11-05T07:00:00+00:00",
            "snippet": "Could you call the vendor tomorrow?",
            "unread": True,
        },
    ]
    inbox.write_text(json.dumps({"messages": messages}))
    res = run(db_path, "brief", "--inbox", str(inbox), "--date", "2026-11-05")
    assert res.code == 0, res.err
    assert _steps(db_path) <= 6
    tasks = {t["source_id"]: t for t in json.loads(run(db_path, "tasks", "--json").out)}
    assert tasks["inbox:m1"]["due"] == "2026-11-05" and tasks["inbox:m2"]["due"] == "2026-11-06"
    assert len(tasks["inbox:m1"]["notes"]) <= 2000 and len(tasks["inbox:m1"]["title"]) <= 200
    assert "no deadline given" not in res.out and "Could not create" not in res.out
    assert "Team standup" in res.out  # the calendar, compacted away, was read again


def test_the_offline_model_stops_filing_at_the_task_cap_and_says_how_many_were_left(
    db_path: Path, tmp_path: Path
) -> None:
    inbox = tmp_path / "many.json"
    messages = [
        {
            "id": f"r{n:02}",
            "from": "Rui <rui@x.example>",
            "subject": "Quick one",
            "received_at": "2026-11-05T08:00:00+00:00",
            "snippet": f"Could you check item {n} for me?",
            "body": f"Could you check item {n} for me?\n\n" + "y" * 20_000,
            "unread": True,
        }
        for n in range(30)
    ]
    inbox.write_text(json.dumps({"messages": messages}))
    res = run(db_path, "brief", "--inbox", str(inbox), "--date", "2026-11-05", "--task-cap", "3")
    assert res.code == 0, res.err
    assert len(json.loads(run(db_path, "tasks", "--json").out)) == 3
    assert "27 more not filed" in res.out and "Could not create" not in res.out
    assert _steps(db_path) <= 8
    res = run(tmp_path / "uncapped.db", "brief", "--inbox", str(inbox), "--date", "2026-11-05")
    assert res.code == 0 and "10 more not filed" in res.out  # the default cap is 20


def test_the_offline_model_honours_max_tokens_so_the_cut_turn_path_runs_offline(
    db_path: Path,
) -> None:
    res = run(db_path, "brief", "--max-tokens", "50")
    assert res.code == 7, res.err
    assert "max_tokens" in res.err
    stopped = json.loads(run(db_path, "runs", "--json").out)[0]
    assert stopped["status"] == "stopped" and stopped["usage"]["output_tokens"] <= 50
    res = run(db_path, "resume", "--max-tokens", "4096")
    assert res.code == 0, res.err
    assert res.out.startswith("# Daily brief")


def test_a_cut_tool_argument_keeps_its_quotes_balanced() -> None:
    from dayflow.render import short_args

    args = {"title": "Approve Dana's expense report for the Denver offsite", "key": "email:m07"}
    shown = short_args(args, 40)
    assert shown.startswith("{'title': \"Approve Dana") and shown.endswith('…", ...}')
    assert eval(shown.replace(", ...}", "}"))["title"].startswith("Approve Dana's")  # noqa: S307


def test_brief_json_help_does_not_speak_of_a_table(db_path: Path) -> None:
    res = run(db_path, "brief", "--help")
    assert "instead of a table" not in res.out and "--format" in res.out


@pytest.mark.slow  # spawns a process
def test_notices_on_a_piped_stderr_are_never_hard_wrapped(db_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import subprocess_env

    proc = subprocess.run(
        [sys.executable, "-m", "dayflow", "brief", "--db", str(db_path)],
        env=subprocess_env(db_path, COLUMNS="40"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "No ANTHROPIC_API_KEY set: using the built-in offline model (token counts are "
        "estimates)." in proc.stderr.splitlines()
    )


@pytest.mark.parametrize(
    "args",
    [
        ("tasks", "--done", "t_\udcff"),
        ("show", "ab\udcff"),
        ("runs", "--status", "\udcff"),
        ("brief", "--model", "claude-\udcff"),
    ],
)
def test_an_argument_that_is_not_utf8_is_a_usage_error(
    db_path: Path, args: tuple[str, ...]
) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates; SQLite cannot store them."""
    open_store(db_path).close()
    res = run(db_path, *args)
    assert res.code == 2, (res.code, res.err)
    assert "must be UTF-8 text" in res.err
    assert runs_in(db_path) == []


def test_inbox_and_calendar_cannot_both_read_standard_input(db_path: Path) -> None:
    res = run(db_path, "brief", "--inbox", "-", "--calendar", "-", stdin=_message())
    one_line(res, 2, "cannot both read standard input")


@pytest.mark.slow  # spawns processes
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [("runs", "--json"), ("rules", "--json"), ("show", "nope")])
def test_a_stdout_that_cannot_be_written_is_one_line_and_exit_4(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """A full disk under stdout (`> /dev/full`) is an output that cannot be written: one line
    naming it, exit 4, as the EXIT_CODES table says. It was "internal error: OSError" and
    Python's own "Exception ignored" lines with exit 120."""
    import subprocess
    import sys

    from tests.conftest import subprocess_env

    db = tmp_path / "d.db"
    open_store(db).close()
    env = subprocess_env(db) | {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "dayflow", *args, "--db", str(db)],
            env=env, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    if args[0] == "show":  # an error on stderr, nothing on stdout: as before
        assert proc.returncode == 3, proc.stderr
        return
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "error: could not write the output to stdout: [Errno 28] No space left on device"
    ]
