"""MCP tools in a brief, end to end: `python -m dayflow` child processes, the real SDKs
(Anthropic's against the loopback Messages API, MCP's against the stdio test server), and real
SIGKILLs. The test server logs every call it gets, so a test counts what reached it."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Db, python_process, subprocess_env
from tests.fakeapi import FakeAPI, Reply
from tests.mcpserver import DOTTED

pytestmark = pytest.mark.slow  # real processes, real servers, real kills

ROOT = Path(__file__).resolve().parent.parent
DATE = "2026-11-05"
ALLOWED = ["list_notifications", "get_issue", "search", DOTTED, "delete_repo", "slow"]


def write_config(
    tmp: Path, *, allow: list[str] = ALLOWED, extra: str = "", writes: bool = False
) -> Path:
    path = tmp / "config.toml"
    path.write_text(
        f"""
[mcp_servers.gh]
command = {json.dumps(sys.executable)}
args = ["-m", "tests.mcpserver"]
cwd = {json.dumps(str(ROOT))}
env = {{ MCP_TEST_LOG = "${{MCP_TEST_LOG}}", MCP_TEST_SLEEP = "30" }}
allow_tools = {json.dumps(allow)}
allow_writes = {json.dumps(writes)}
tool_timeout = 5
{extra}
"""
    )
    return path


def script(first: list[tuple[str, dict[str, Any]]]) -> Any:
    """A model as a function of the request: step 1 makes the `first` calls; step 2 writes a
    brief quoting each tool result it was sent (so the brief shows what reached the model)."""

    def respond(request: dict[str, Any]) -> Reply:
        turns = [m for m in request["messages"] if m["role"] == "assistant"]
        if not turns:
            uses = [
                {"type": "tool_use", "id": f"toolu_0{i}", "name": name, "input": args}
                for i, (name, args) in enumerate(first)
            ]
            return Reply([{"type": "text", "text": "Reading."}, *uses], "tool_use")
        results = [b for b in request["messages"][-1]["content"] if b["type"] == "tool_result"]
        seen = [f"- {b['tool_use_id']}: {str(b['content'])[:120]}" for b in results]
        return Reply([{"type": "text", "text": "## Today\n" + "\n".join(seen)}])

    return respond


FIRST = [
    ("mcp__gh__list_notifications", {}),
    ("read_inbox", {"limit": 5}),
    ("mcp__gh__get_issue", {"number": 7}),
]


def run(db: Path, config: Path, log: Path, api: FakeAPI, *args: str, **env: str) -> Any:
    extra = {
        "ANTHROPIC_API_KEY": "test",
        "ANTHROPIC_BASE_URL": api.base_url,
        "MCP_TEST_LOG": str(log),
        "DAYFLOW_CONFIG": str(config),
        **env,
    }
    return python_process(
        subprocess_env(db, **extra), "-m", "dayflow", *args, timeout=180, cwd=ROOT
    )


def brief(db: Path, config: Path, log: Path, api: FakeAPI, **env: str) -> Any:
    args = ("brief", "--date", DATE, "--model", "claude-haiku-5-5", "-v")
    return run(db, config, log, api, *args, **env)


def calls(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()]


def final_text(db: Path) -> str:
    return str(Db(db).one("SELECT final_text FROM runs")[0])


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with FakeAPI(responder=script(FIRST)) as fake:
        yield fake


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An uncrashed run: its requests' bytes, its brief and the calls the server got."""
    tmp = tmp_path_factory.mktemp("mcp-baseline")
    log = tmp / "calls.jsonl"
    with FakeAPI(responder=script(FIRST)) as fake:
        done = brief(tmp / "d.db", write_config(tmp), log, fake)
        assert done.returncode == 0, done.stderr
        bodies = [r.body for r in fake.message_requests]
    # What the run stored names its servers and tools, never an env value given to them.
    rows = json.dumps([list(r) for r in Db(tmp / "d.db").rows("SELECT * FROM runs")])
    assert "mcp_tools" in rows and str(log) not in rows and "MCP_TEST_LOG" not in rows
    return {
        "bodies": bodies,
        "text": final_text(tmp / "d.db"),
        "calls": calls(log),
        "err": done.stderr,
    }


def test_only_allowed_mcp_tools_are_offered_and_their_results_reach_the_model(
    baseline: dict[str, Any],
) -> None:
    first = json.loads(baseline["bodies"][0])
    names = [t["name"] for t in first["tools"]]
    mcp = [n for n in names if n.startswith("mcp__")]
    assert mcp[:3] == ["mcp__gh__list_notifications", "mcp__gh__get_issue", "mcp__gh__search"]
    assert len(mcp) == 5 and all(len(n) <= 64 for n in mcp)  # the dotted one, reduced
    assert not any("delete_repo" in n or "crash" in n or "mark_read" in n for n in names)
    assert "not offered: says destructiveHint: true" in baseline["err"]
    search = next(t for t in first["tools"] if t["name"] == "mcp__gh__search")
    assert "anyOf" not in search["input_schema"]
    assert "mcp__<server>__<tool>" in first["system"][0]["text"]
    assert baseline["calls"] == ["list_notifications", "get_issue"]
    assert "toolu_00: " + '{"notifications":[{"id":"n1"' in baseline["text"]
    assert "toolu_02: Issue 7: flaky CI" in baseline["text"]


@pytest.mark.parametrize(
    ("point", "more"),
    [("after_tools:1", []), ("after_complete:1", []), ("between_tools:1", ["get_issue"])],
)
def test_a_kill_after_an_mcp_call_then_resume_never_calls_it_again_and_sends_the_same_bytes(
    tmp_path: Path, api: FakeAPI, baseline: dict[str, Any], point: str, more: list[str]
) -> None:
    db, log, config = tmp_path / "d.db", tmp_path / "calls.jsonl", write_config(tmp_path)
    killed = brief(db, config, log, api, DAYFLOW_KILL_AT=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    before = calls(log)
    resumed = run(db, config, log, api, "resume")
    assert resumed.returncode == 0, resumed.stderr
    assert calls(log)[len(before) :] == more  # the saved calls are never made again
    assert calls(log) == baseline["calls"]
    assert [r.body for r in api.message_requests] == baseline["bodies"]
    assert final_text(db) == baseline["text"]


def test_a_write_killed_during_its_call_is_uncertain_on_resume_and_never_called_again(
    tmp_path: Path,
) -> None:
    db, log = tmp_path / "d.db", tmp_path / "calls.jsonl"
    config = write_config(tmp_path, allow=["delete_repo"], writes=True)
    Path(f"{log}.kill").touch()  # the server kills its parent during the call
    with FakeAPI(
        responder=script([("mcp__gh__delete_repo", {}), ("read_inbox", {"limit": 1})])
    ) as fake:
        killed = brief(db, config, log, fake)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert calls(log) == ["delete_repo"]
        resumed = run(db, config, log, fake, "resume")
        assert resumed.returncode == 0, resumed.stderr
    assert calls(log) == ["delete_repo"]
    assert "mcp: mcp__gh__delete_repo: uncertain: a process was killed" in resumed.stderr
    assert "toolu_00: Error: uncertain: a process was killed while mcp__gh__delete_repo" in (
        final_text(db)
    )


def test_servers_that_fail_to_start_or_time_out_are_named_and_the_brief_is_written(
    tmp_path: Path,
) -> None:
    db, log = tmp_path / "d.db", tmp_path / "calls.jsonl"
    broken = '[mcp_servers.jira]\ncommand = "/nonexistent/jira-mcp"\nallow_tools = ["x"]\n'
    config = write_config(tmp_path, extra=broken)
    with FakeAPI(responder=script([("mcp__gh__slow", {}), ("read_inbox", {"limit": 1})])) as fake:
        done = brief(db, config, log, fake)
        system = json.loads(fake.message_requests[0].body)["system"][0]["text"]
    assert done.returncode == 0, done.stderr
    assert "mcp: MCP server jira is unavailable: could not start" in done.stderr
    assert "could not be started, so their sources are unavailable: jira (could not start" in (
        system
    )
    text = final_text(db)
    assert "Error: the MCP server gh did not answer within 5 s; it is unavailable" in text


def test_the_offline_model_starts_no_mcp_server_and_says_so_once_even_after_a_kill(
    tmp_path: Path,
) -> None:
    """It never calls an MCP tool, so no server is started for it (each would cost its start
    for nothing); its request offers none, and a resume sends the same request."""
    log, pids = tmp_path / "calls.jsonl", tmp_path / "pids"
    raw = (
        f"[mcp_servers.raw]\ncommand = {json.dumps(sys.executable)}\n"
        f'args = ["-m", "tests.mcpraw"]\ncwd = {json.dumps(str(ROOT))}\n'
        f'env = {{ MCP_RAW_PIDS = {json.dumps(str(pids))} }}\nallow_tools = ["ok"]\n'
    )
    config = write_config(tmp_path, extra=raw)
    args = ("brief", "--date", DATE, "--model", "offline")
    with FakeAPI() as fake:  # never asked: the offline model answers in process
        done = run(tmp_path / "d.db", config, log, fake, *args)
        killed = run(
            tmp_path / "k.db", config, log, fake, *args, DAYFLOW_KILL_AT="after_complete:1"
        )
        resumed = run(tmp_path / "k.db", config, log, fake, "resume")
    assert done.returncode == 0, done.stderr
    assert killed.returncode == -signal.SIGKILL and resumed.returncode == 0, resumed.stderr
    assert not pids.exists() and calls(log) == []  # neither server was started
    note = "MCP tools need a model (Claude or local): the offline model did not start gh, raw"
    assert done.stdout.count(note) == 1 and done.stdout.count("MCP tools need a model") == 1
    assert fake.message_requests == []
    rows = [Db(tmp_path / db).one("SELECT system, tools_json FROM runs") for db in ("d.db", "k.db")]
    assert rows[0][0] == rows[1][0] and rows[0][1] == rows[1][1]
    assert "mcp__" not in rows[0][1] and "gh, raw" in rows[0][0]
    assert final_text(tmp_path / "k.db") == final_text(tmp_path / "d.db")


def test_mcp_list_shows_each_tool_offered_or_refused_and_check_fails_on_a_dead_server(
    tmp_path: Path, api: FakeAPI
) -> None:
    log = tmp_path / "calls.jsonl"
    config = write_config(tmp_path)
    listed = run(tmp_path / "d.db", config, log, api, "mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    doc = json.loads(listed.stdout)
    verdicts = {t["tool"]: t["verdict"] for t in doc["tools"]}
    assert verdicts["list_notifications"] == "offered as mcp__gh__list_notifications (read)"
    assert verdicts["delete_repo"].startswith("refused: says destructiveHint: true")
    assert verdicts["mark_read"] == "refused: not in allow_tools"
    assert doc["servers"][0]["error"] is None and doc["servers"][0]["seconds"] > 0
    assert calls(log) == []  # listing calls no tool
    broken = '[mcp_servers.jira]\ncommand = "/nonexistent/jira-mcp"\nallow_tools = []\n'
    checked = run(tmp_path / "d.db", write_config(tmp_path, extra=broken), log, api, "mcp", "check")
    assert checked.returncode == 4
    assert "gh: " in checked.stdout and "started in" in checked.stdout
    assert "jira: /nonexistent/jira-mcp: not started: could not start" in checked.stdout
    assert checked.stderr.strip().splitlines()[-1] == ("error: 1 MCP server(s) did not start: jira")


def test_a_server_printing_garbage_on_stdout_puts_no_traceback_on_the_terminal(
    tmp_path: Path, api: FakeAPI
) -> None:
    """The SDK logs each line that is not JSON-RPC with a traceback; Dayflow keeps its log
    records off stderr (one line each with -v) and the server still answers."""
    noisy = "print('Hello, not JSON-RPC'); print('\\x1b[31m{\"half\":'); " + (
        "import runpy; runpy.run_module('tests.mcpserver', run_name='__main__')"
    )
    config = write_config(tmp_path)
    old = 'args = ["-m", "tests.mcpserver"]'
    config.write_text(config.read_text().replace(old, f'args = ["-c", {json.dumps(noisy)}]'))
    log = tmp_path / "calls.jsonl"
    quiet = run(tmp_path / "d.db", config, log, api, "mcp", "check")
    assert quiet.returncode == 0, quiet.stderr
    assert "gh: " in quiet.stdout and "started in" in quiet.stdout
    assert "Traceback" not in quiet.stderr and "JSONRPC" not in quiet.stderr
    loud = run(tmp_path / "d.db", config, log, api, "mcp", "check", "-v")
    assert loud.returncode == 0, loud.stderr
    assert "Traceback" not in loud.stderr and "\x1b" not in loud.stderr
    assert "MCP: Failed to parse JSONRPC message from server" in loud.stderr


@pytest.mark.parametrize(
    ("now", "why"),
    [
        ({"writes": False}, "says destructiveHint: true, so it may change something"),
        ({"allow": ["get_issue"], "writes": True}, "no longer in [mcp_servers.gh] allow_tools"),
    ],
)
def test_a_resume_asks_the_config_again_and_never_calls_a_write_it_took_back(
    tmp_path: Path, now: dict[str, Any], why: str
) -> None:
    """A run killed before its write was called, resumed after the user took `allow_writes`
    (or the tool) back: the write is refused, not made, and the brief is still written."""
    db, log = tmp_path / "d.db", tmp_path / "calls.jsonl"
    config = write_config(tmp_path, allow=["delete_repo", "get_issue"], writes=True)
    first = [("read_inbox", {"limit": 1}), ("mcp__gh__delete_repo", {})]
    with FakeAPI(responder=script(first)) as fake:
        killed = brief(db, config, log, fake, DAYFLOW_KILL_AT="after_pending:1")
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        write_config(tmp_path, **now)
        resumed = run(db, config, log, fake, "resume")
    assert resumed.returncode == 0, resumed.stderr
    assert calls(log) == []
    text = final_text(db)
    assert "toolu_01: Error: delete_repo of the MCP server gh was not called: it " in text
    assert why in text


def test_a_servers_tool_names_reach_the_terminal_escaped(tmp_path: Path, api: FakeAPI) -> None:
    """A server names its tools: an ESC or a bidi override in a name is shown as an escape by
    `mcp list` and `check`, and in a brief's notices, never obeyed by the terminal."""
    evil = "\x1b[31mred\u202e"
    program = (
        "import anyio, mcp_types, tests.mcpserver as m; old = m._tools; "
        "m._tools = lambda: [*old(), mcp_types.Tool(name='\\x1b[31mred\\u202e', "
        "description='x', input_schema=m.OBJECT)]; anyio.run(m._stdio)"
    )
    config = write_config(tmp_path, allow=["get_issue", evil])
    old = 'args = ["-m", "tests.mcpserver"]'
    config.write_text(config.read_text().replace(old, f'args = ["-c", {json.dumps(program)}]'))
    log = tmp_path / "calls.jsonl"
    listed = run(tmp_path / "d.db", config, log, api, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    assert "  \\u001b[31mred\\u202e: refused: does not say readOnlyHint: true" in listed.stdout
    done = brief(tmp_path / "d.db", config, log, api)
    assert done.returncode == 0, done.stderr
    assert "mcp: MCP tool gh/\\u001b[31mred\\u202e not offered: does not say" in done.stderr
    for out in (listed.stdout, listed.stderr, done.stdout, done.stderr):
        assert "\x1b" not in out and "\u202e" not in out
