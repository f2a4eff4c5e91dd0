"""`dayflow tasks export` and `dayflow tasks sync` through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dayflow.clock import FixedClock
from dayflow.providers.offline import OfflineModel
from dayflow.store import open_store
from tests.conftest import subprocess_env
from tests.harness import Result, invoke


def run(db: Path, *args: str) -> Result:
    return invoke(db, lambda name, settings: OfflineModel(), *args)


@pytest.fixture
def db(db_path: Path) -> Path:
    with open_store(db_path, clock=FixedClock()) as store:
        store.tasks.create(
            title="Send edits to Sam", idempotency_key="email:m12", run_id=None, due="2026-11-05"
        )
        store.tasks.create(title="RSVP for dinner", idempotency_key="email:m13", run_id=None)
        store.tasks.create(
            title="Sign the NDA", idempotency_key="email:m20", run_id=None, due="2026-11-09"
        )
    return db_path


def ids(db: Path) -> dict[str, str]:
    """title -> status of every task."""
    return {t["title"]: t["status"] for t in json.loads(run(db, "tasks", "--all", "--json").out)}


@pytest.mark.parametrize("fmt", ["markdown", "todo.txt", "ics", "json"])
def test_exporting_twice_with_no_change_is_byte_identical(
    db: Path, tmp_path: Path, fmt: str
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert run(db, "tasks", "export", "--format", fmt, "-o", str(first)).code == 0
    assert run(db, "tasks", "export", "--format", fmt, "-o", str(second)).code == 0
    assert first.read_bytes() == second.read_bytes()
    assert b"t_" in first.read_bytes()


@pytest.mark.slow
def test_an_export_from_another_process_is_byte_identical(db: Path, tmp_path: Path) -> None:
    here = tmp_path / "here.md"
    assert run(db, "tasks", "export", "-o", str(here)).code == 0
    proc = subprocess.run(
        [sys.executable, "-m", "dayflow", "tasks", "export"],
        env=subprocess_env(db),
        capture_output=True,
        check=True,
    )
    assert proc.stdout == here.read_bytes()


def test_export_writes_stdout_by_default_and_only_open_tasks_unless_all(db: Path) -> None:
    task = json.loads(run(db, "tasks", "--json").out)[0]
    run(db, "tasks", "--done", task["id"])
    open_only = run(db, "tasks", "export", "--format", "todo.txt")
    assert open_only.code == 0
    assert len(open_only.out.splitlines()) == 2 and task["id"] not in open_only.out
    everything = run(db, "tasks", "export", "--format", "todo.txt", "--all")
    assert f"x 2026-11-05 2026-11-05 {task['title']}" in everything.out


def test_an_unwritable_export_path_is_one_line_and_exit_4(db: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for target in (blocker / "tasks.md", tmp_path, tmp_path / "missing" / "dir" / "t.md"):
        result = run(db, "tasks", "export", "-o", str(target))
        assert result.code == 4
        assert result.err.count("\n") == 1 and result.err.startswith(
            f"error: cannot write {target}"
        )


def test_export_refuses_an_unknown_format_with_exit_2(db: Path) -> None:
    result = run(db, "tasks", "export", "--format", "docx")
    assert result.code == 2 and "--format must be one of" in result.err


def test_an_export_replaces_the_file_and_keeps_its_mode(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "tasks.md"
    target.write_text("old")
    target.chmod(0o640)
    assert run(db, "tasks", "export", "-o", str(target)).code == 0
    assert target.stat().st_mode & 0o777 == 0o640
    assert "Send edits to Sam" in target.read_text()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tasks.md")] == []


@pytest.mark.parametrize("fmt", ["markdown", "todo.txt"])
def test_sync_marks_done_what_the_user_ticked_and_nothing_else(
    db: Path, tmp_path: Path, fmt: str
) -> None:
    file = tmp_path / "list"
    run(db, "tasks", "export", "--format", fmt, "-o", str(file))
    lines = file.read_text().splitlines()
    i = next(n for n, line in enumerate(lines) if "RSVP for dinner" in line)
    lines[i] = lines[i].replace("- [ ]", "- [x]") if fmt == "markdown" else "x " + lines[i]
    file.write_text("\n".join(lines) + "\n- [x] my own thing\nx 2026-01-01 mine too\n")
    result = run(db, "tasks", "sync", str(file))
    assert result.code == 0, result.err
    assert ids(db) == {
        "Send edits to Sam": "open",
        "RSVP for dinner": "done",
        "Sign the NDA": "open",
    }
    assert "marked 1 done, 2 still open" in result.err
    again = run(db, "tasks", "sync", str(file))
    assert again.code == 0 and "marked 0 done" in again.err


def test_sync_dry_run_changes_nothing(db: Path, tmp_path: Path) -> None:
    file = tmp_path / "t.md"
    run(db, "tasks", "export", "-o", str(file))
    file.write_text(file.read_text().replace("- [ ]", "- [x]"))
    result = run(db, "tasks", "sync", str(file), "--dry-run")
    assert result.code == 0 and "would mark 3 done" in result.err
    assert set(ids(db).values()) == {"open"}


def test_a_file_that_is_not_dayflows_says_so_and_changes_nothing(db: Path, tmp_path: Path) -> None:
    before = ids(db)
    cases = {
        "notes.md": "# my notes\n- [x] Send edits to Sam\n",
        "todo.txt": "x 2026-11-05 RSVP for dinner\n",
        "tasks.ics": run(db, "tasks", "export", "--format", "ics").out,
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        result = run(db, "tasks", "sync", str(path))
        assert result.code == 4
        assert result.err == (
            f"error: {path} is not a task list Dayflow exported (no line carries a Dayflow task"
            " id; `dayflow tasks export --format markdown|todo.txt` writes one); nothing changed\n"
        )
    assert ids(db) == before


def test_a_file_from_another_database_changes_nothing(db: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with open_store(other, clock=FixedClock()) as store:
        store.tasks.create(title="Elsewhere", idempotency_key="email:zz", run_id=None)
    file = tmp_path / "t.md"
    run(other, "tasks", "export", "-o", str(file))
    file.write_text(file.read_text().replace("- [ ]", "- [x]"))
    result = run(db, "tasks", "sync", str(file))
    assert result.code == 4 and "none of them in" in result.err and "nothing changed" in result.err
    assert set(ids(db).values()) == {"open"}


def test_sync_of_an_unreadable_file_names_it(db: Path, tmp_path: Path) -> None:
    missing = run(db, "tasks", "sync", str(tmp_path / "nope.md"))
    assert missing.code == 4 and f"cannot read task file {tmp_path / 'nope.md'}" in missing.err
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"- [x] \xff\xfe")
    result = run(db, "tasks", "sync", str(binary))
    assert result.code == 4 and "is not UTF-8 text" in result.err
    assert set(ids(db).values()) == {"open"}


def test_sync_accepts_a_bom_and_crlf_lines(db: Path, tmp_path: Path) -> None:
    file = tmp_path / "t.md"
    run(db, "tasks", "export", "-o", str(file))
    text = file.read_text().replace("- [ ] Sign", "- [x] Sign").replace("\n", "\r\n")
    file.write_bytes("\ufeff".encode() + text.encode())
    assert run(db, "tasks", "sync", str(file)).code == 0
    assert ids(db)["Sign the NDA"] == "done"


def test_sync_says_when_a_done_task_is_unticked_in_the_file(db: Path, tmp_path: Path) -> None:
    file = tmp_path / "t.md"
    run(db, "tasks", "export", "-o", str(file))
    task = json.loads(run(db, "tasks", "--json").out)[0]
    run(db, "tasks", "--done", task["id"])
    result = run(db, "tasks", "sync", str(file))
    assert result.code == 0 and "1 task(s) done in Dayflow are unticked in the file" in result.err
    assert ids(db)[task["title"]] == "done"


def test_plain_tasks_still_lists_and_marks_done(db: Path) -> None:
    listed = run(db, "tasks")
    assert listed.code == 0 and "Send edits to Sam" in listed.out
    assert run(db, "tasks", "nonsense").code == 2


def test_an_export_through_a_symlink_writes_its_target_and_keeps_the_link(
    db: Path, tmp_path: Path
) -> None:
    real = tmp_path / "vault" / "tasks.md"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "linked.md"
    link.symlink_to(real)
    assert run(db, "tasks", "export", "-o", str(link)).code == 0
    assert link.is_symlink() and "Send edits to Sam" in real.read_text()


def test_an_export_into_a_fifo_writes_into_it_and_never_replaces_it(
    db: Path, tmp_path: Path
) -> None:
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    result = run(db, "tasks", "export", "--format", "todo.txt", "-o", str(fifo))
    reader.join(timeout=30)
    assert result.code == 0
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert b"dayflow:t_" in got[0]


def test_a_huge_task_id_is_one_short_line_on_both_backends(db: Path) -> None:
    res = run(db, "tasks", "--done", "t_" + "a" * 100_000)
    assert res.code == 3 and res.err.count("\n") == 1 and len(res.err) < 200, res.err[:300]
    assert "no task matches" in res.err


def test_a_task_id_prefix_in_capitals_finds_the_task_on_both_backends(db: Path) -> None:
    (first, *_) = json.loads(run(db, "tasks", "--json").out)
    done = run(db, "tasks", "--done", first["id"][:6].upper())
    assert done.code == 0, done.err
    assert ids(db)[first["title"]] == "done"
