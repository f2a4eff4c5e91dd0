"""The history commands end to end: trace, fork, gc, doctor (and what runs/show say of them)."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import stat
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

from dayflow.models import ModelRequest, ModelResponse
from dayflow.store import open_store
from tests.conftest import Db, db_rows, is_pg
from tests.scripted import ScriptedModel, seed_turns
from tests.test_cli import Harness, _default_factory
from tests.test_crash import dayflow

TOMORROW = "2026-11-06"  # the Harness clock says 2026-11-05


class Scripts:
    """A model factory handing out one scripted model per command, in order."""

    def __init__(self, *turn_lists: list[ModelResponse]) -> None:
        self.queue = [ScriptedModel(turns) for turns in turn_lists]

    def __call__(self, name: str, settings: Any) -> ScriptedModel:
        return self.queue.pop(0)


def _run_ids(cli: Harness) -> list[str]:
    return [r["id"] for r in json.loads(cli("runs", "--json").out)]


def _assert_one_clear_line(res: Any, code: int, message: str) -> None:
    assert res.code == code, (res.code, res.err)
    assert message in res.err
    assert "Traceback" not in res.err + res.out
    assert len(res.err.strip().splitlines()) == 1


@pytest.fixture
def cli(db_path: Path) -> Harness:
    open_store(db_path).close()  # an empty Dayflow database (the read-only commands create none)
    return Harness(db_path)


@pytest.fixture
def seeded(db_path: Path) -> tuple[Harness, str]:
    """A done run of the seed scenario by the scripted model."""
    cli = Harness(db_path, model_fn=Scripts(seed_turns()))
    assert cli("brief", "--model", "scripted").code == 0
    return cli, _run_ids(cli)[0]


# ------------------------------------------------------------------------------------ fork


def test_fork_continues_from_step_1_and_the_link_shows_in_runs_and_show(db_path: Path) -> None:
    scripts = Scripts(seed_turns(), seed_turns()[1:])
    cli = Harness(db_path, model_fn=scripts)
    cli("brief", "--model", "scripted")
    [parent] = _run_ids(cli)
    tasks = json.loads(cli("tasks", "--json").out)

    res = cli("fork", parent[:6], "--from-step", "1", "--json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    fork = doc["run"]["id"]
    assert f"[fork {fork}] of run {parent} at step 1: 1 step(s) copied (no model call)" in res.err
    assert doc["run"]["parent_run_id"] == parent and doc["run"]["forked_at_step"] == 1
    assert doc["run"]["status"] == "done" and doc["brief"].startswith("## Today")
    assert doc["run"]["usage"]["input_tokens"] == 2758 + 3406  # only the fork's own calls
    assert cli.models[-1].calls == 2
    assert json.loads(cli("tasks", "--json").out) == tasks

    listed = cli("runs").out.splitlines()
    assert listed[1].split()[0] == fork and f"fork of {parent}@1" in listed[1]
    assert json.loads(cli("runs", "--json").out)[0]["parent_run_id"] == parent
    shown = cli("show", fork)
    assert f"forked from  {parent} at step 1" in shown.out
    assert "run_forked" in shown.out
    assert json.loads(cli("show", fork, "--json").out)["run"]["forked_at_step"] == 1
    assert f"fork={fork}" in cli("show", parent).out


def test_fork_with_another_model(seeded: tuple[Harness, str]) -> None:
    cli, parent = seeded
    cli.model_fn = Scripts(seed_turns()[2:])
    res = cli("fork", parent, "--from-step", "2", "--model", "claude-other-1")
    assert res.code == 0, res.err
    request: ModelRequest = cli.models[-1].requests[0]
    assert request.model == "claude-other-1"
    assert json.loads(cli("runs", "--json").out)[0]["model"] == "claude-other-1"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--from-step", "9"), 2, "there is no step 9 to fork from"),
        (("--from-step", "3"), 2, "ended the run (end_turn); fork from step 2 instead"),
        (("--from-step", "1", "--model", "claude-haiku-5-5"), 6, "needs ANTHROPIC_API_KEY"),
    ],
)
def test_fork_errors_change_nothing(
    seeded: tuple[Harness, str], args: tuple[str, ...], code: int, message: str
) -> None:
    cli, parent = seeded
    cli.model_fn = _default_factory
    before = db_rows(cli.db, "SELECT COUNT(*) FROM events")
    _assert_one_clear_line(cli("fork", parent, *args), code, message)
    assert db_rows(cli.db, "SELECT COUNT(*) FROM events") == before


def test_fork_needs_a_run_and_a_step(seeded: tuple[Harness, str]) -> None:
    cli, parent = seeded
    _assert_one_clear_line(cli("fork", "ffff00", "--from-step", "1"), 3, "no run matches")
    assert cli("fork", parent).code == 2  # Typer: missing option --from-step
    negative = cli("fork", parent, "--from-step", "-1")
    assert negative.code == 2


# -------------------------------------------------------------------------------------- gc


def test_gc_prunes_to_tombstones_and_says_so(seeded: tuple[Harness, str]) -> None:
    cli, run_id = seeded
    dry = cli("gc", "--before", TOMORROW, "--dry-run", "--json")
    assert dry.code == 0
    doc = json.loads(dry.out)
    assert (
        doc["dry_run"] and doc["action"] == "prune" and [r["id"] for r in doc["runs"]] == [run_id]
    )
    assert json.loads(cli("runs", "--json").out)[0]["pruned_at"] is None

    table = cli("gc", "--before", TOMORROW, "--dry-run")
    assert run_id in table.out and "dry run: would prune 1 run(s); nothing changed" in table.err

    res = cli("gc", "--before", TOMORROW)
    assert res.code == 0 and run_id in res.out
    assert "pruned 1 run(s); database" in res.err
    run = json.loads(cli("runs", "--json").out)[0]
    assert run["pruned_at"] is not None and run["steps"] == 3 and run["status"] == "done"
    assert "pruned" in cli("runs").out.splitlines()[1]
    shown = cli("show", run_id)
    assert (
        shown.code == 0
        and "pruned" in shown.out
        and "read_inbox('(pruned by gc)') ok" in (shown.out)
    )
    _assert_one_clear_line(cli("fork", run_id, "--from-step", "1"), 3, "pruned by `dayflow gc`")
    again = cli("gc", "--keep", "0", "--json")
    assert json.loads(again.out)["runs"] == []
    assert cli("gc", "--keep", "0").err.strip() == "nothing to prune"


def test_gc_redact_keeps_the_steps_but_not_the_inbox(seeded: tuple[Harness, str]) -> None:
    cli, run_id = seeded
    res = cli("gc", "--keep", "0", "--redact", "--json")
    assert res.code == 0
    doc = json.loads(res.out)
    assert doc["action"] == "redact" and doc["runs"][0]["redacted_at"] is not None
    steps = json.loads(cli("show", run_id, "--json").out)["steps"]
    contents = [r["content"] for r in steps[0]["tool_results"]]
    assert contents[:3] == ["[redacted]"] * 3 and contents[3] != "[redacted]"  # read_tasks kept
    assert "redacted" in cli("runs").out


def test_a_pruned_stopped_run_cannot_be_resumed(db_path: Path) -> None:
    cli = Harness(db_path, model_fn=Scripts(seed_turns()))
    assert cli("brief", "--model", "scripted", "--max-steps", "1").code == 7
    [run_id] = _run_ids(cli)
    cli("gc", "--keep", "0")
    cli.model_fn = Scripts([])
    _assert_one_clear_line(cli("resume", run_id), 3, "can be shown but not resumed or forked")
    # And `brief` no longer points at it as something to resume.
    cli.model_fn = Scripts(seed_turns())
    assert "note: run" not in cli("brief", "--model", "scripted").err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "say which runs go: --before DATE, --keep N, or both"),
        (("--before", "last week"), "'last week' is not a date"),
    ],
)
def test_gc_errors(cli: Harness, args: tuple[str, ...], message: str) -> None:
    _assert_one_clear_line(cli("gc", *args), 2, message)


# ---------------------------------------------------------------------------------- doctor


def test_doctor_on_a_healthy_database(seeded: tuple[Harness, str]) -> None:
    cli, _ = seeded
    res = cli("doctor")
    assert res.code == 0 and "no problems found" in res.out
    doc = json.loads(cli("doctor", "--json").out)
    assert doc["healthy"] is True and doc["findings"] == []
    assert doc["schema"] == "0003_history" or doc["schema"] > "0003"
    if not is_pg(cli.db):
        assert "integrity" in doc["checks"] and "permissions" in doc["checks"]
        assert doc["skipped"] == {}
    else:  # issue 19: doctor on PostgreSQL named checks it skips; it says what it checked
        assert "integrity" not in doc["checks"] and "permissions" not in doc["checks"]
        assert set(doc["skipped"]) == {"integrity", "permissions"}
        assert "skipped   integrity (the server enforces its constraints itself)" in res.out
    assert {"schema", "run totals", "tool results", "leases"} <= set(doc["checks"])


def test_doctor_reports_each_problem_with_its_repair_and_fixes_the_safe_ones(
    seeded: tuple[Harness, str],
) -> None:
    cli, run_id = seeded
    with Db(cli.db) as db:
        db.run("UPDATE runs SET output_tokens = output_tokens + 1 WHERE id = ?", run_id)
    files = not is_pg(cli.db)  # a SQLite file's permissions are a problem too
    if files:
        os.chmod(cli.db, 0o640)

    res = cli("doctor")
    assert res.code == 4
    assert "totals_mismatch" in res.out and f"dayflow doctor --recompute-totals {run_id}" in res.out
    # The table wraps a long path (a pytest-xdist worker's tmp_path is longer): the repair's
    # whole command is checked in the JSON.
    assert not files or ("permissions" in res.out and "chmod go-rwx" in res.out)
    assert "problem(s) remain" in res.err
    assert not files or "`dayflow doctor --fix` repairs" in res.err
    doc = json.loads(cli("doctor", "--json").out)
    codes = {f["code"]: f for f in doc["findings"]}
    repairs = [f["fix_command"] for f in doc["findings"] if f["code"] == "permissions"]
    assert not files or f"chmod go-rwx {cli.db}" in repairs
    assert doc["healthy"] is False and codes["totals_mismatch"]["fixable"] is False
    assert not files or codes["permissions"]["fixable"] is True

    fixed = cli("doctor", "--fix", "--json")
    assert fixed.code == 4  # the totals are evidence: never changed by --fix
    assert not files or stat.S_IMODE(cli.db.stat().st_mode) == 0o600
    assert [f["code"] for f in json.loads(fixed.out)["findings"] if not f["fixed"]] == [
        "totals_mismatch"
    ]

    repaired = cli("doctor", "--recompute-totals", run_id[:5])
    assert repaired.code == 0 and "totals_recomputed" in repaired.out
    assert cli("doctor").code == 0


def test_doctor_errors(cli: Harness, tmp_path: Path) -> None:
    _assert_one_clear_line(cli("doctor", "--recompute-totals", "abc"), 3, "no run matches")
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"\x00garbage" * 512)
    _assert_one_clear_line(Harness(garbage)("doctor"), 4, "not a")


# ----------------------------------------------------------------------------------- trace


def test_trace_exports_json_lines_csv_and_files(
    seeded: tuple[Harness, str], tmp_path: Path
) -> None:
    cli, run_id = seeded
    res = cli("trace", run_id)
    assert res.code == 0
    events = [json.loads(line) for line in res.out.splitlines()]
    assert events[0]["kind"] == "run_started" and events[-1]["kind"] == "run_finished"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    rows = list(csv.DictReader(io.StringIO(cli("trace", run_id, "--format", "csv").out)))
    assert [r["kind"] for r in rows] == [e["kind"] for e in events]
    out = tmp_path / "events.csv"
    written = cli("trace", run_id, "--format", "csv", "--output", str(out))
    assert written.code == 0 and written.out == "" and f"to {out}" in written.err
    assert out.read_text().splitlines()[0] == "run_id,seq,at,pid,host,kind,detail"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--format", "xml"), 2, "--format must be one of jsonl, csv"),
        (("--output", "/nonexistent/dir/x.jsonl"), 4, "cannot write /nonexistent/dir/x.jsonl"),
        (("--png", "/nonexistent/dir/x.png"), 4, "cannot write /nonexistent/dir/x.png"),
    ],
)
def test_trace_errors(
    seeded: tuple[Harness, str], args: tuple[str, ...], code: int, message: str
) -> None:
    pytest.importorskip("matplotlib")
    cli, run_id = seeded
    _assert_one_clear_line(cli("trace", run_id, *args), code, message)


def test_trace_of_an_unknown_run(cli: Harness) -> None:
    _assert_one_clear_line(cli("trace", "abc"), 3, "no run matches")


def test_trace_png_without_matplotlib_says_how_to_get_it(
    seeded: tuple[Harness, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    cli, run_id = seeded
    res = cli("trace", run_id, "--png", str(tmp_path / "t.png"))
    _assert_one_clear_line(res, 2, "matplotlib is not installed: pip install 'dayflow[trace]'")
    assert "pip install -e '.[trace]'" in res.err  # the form that works from a clone
    assert not (tmp_path / "t.png").exists() and res.out == ""


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk, after checking the signature."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


@pytest.mark.slow
def test_timeline_png_of_a_real_sigkilled_and_resumed_run(tmp_path: Path) -> None:
    """The picture the README shows: SIGKILL after step 2, `resume` in a new process."""
    pytest.importorskip("matplotlib")
    db = tmp_path / "dayflow.db"
    killed = dayflow(db, "brief", "--date", "2026-11-05", DAYFLOW_KILL_AT="after_complete:2")
    assert killed.code == -signal.SIGKILL
    assert dayflow(db, "resume").code == 0
    [run] = json.loads(dayflow(db, "runs", "--json").out)
    png = tmp_path / "timeline.png"
    res = dayflow(db, "trace", run["id"], "--png", str(png))
    assert res.code == 0, res.err
    assert res.out == "" and f"to {png}" in res.err
    width, height = png_size(png)
    assert 800 <= width <= 2400 and 250 <= height <= 1200, (width, height)
    assert png.stat().st_size > 10_000
    pids = {e["pid"] for e in map(json.loads, dayflow(db, "trace", run["id"]).out.splitlines())}
    assert len(pids) == 2  # the killed process and the one that resumed


def test_help_lists_the_history_commands(cli: Harness) -> None:
    res = cli("--help")
    for word in ("trace", "fork", "gc", "doctor"):
        assert word in res.out
    for command, flags in {
        "trace": ("--format", "--output", "--png"),
        "fork": ("--from-step", "--model", "--budget"),
        "gc": ("--before", "--keep", "--redact", "--dry-run", "--json"),
        "doctor": ("--fix", "--recompute-totals", "--json"),
    }.items():
        out = cli(command, "--help").out
        assert all(flag in out for flag in flags), command
