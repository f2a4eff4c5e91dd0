"""dayflow.mcp.servers and .runtime against real servers: the stdio test server (a child
process on the SDK's server class) and the HTTP one on 127.0.0.1."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dayflow.mcp.config import ServerSpec
from dayflow.mcp.servers import Servers
from tests.mcpserver import DOTTED, serve_http

pytestmark = pytest.mark.slow  # starts real MCP servers

ROOT = str(Path(__file__).resolve().parent.parent)
ALL = ("list_notifications", "get_issue", "search", DOTTED, "slow", "crash", "huge", "fails")


def stdio_spec(name: str = "gh", **kw: object) -> ServerSpec:
    fields: dict[str, object] = {
        "command": sys.executable,
        "args": ("-m", "tests.mcpserver"),
        "cwd": ROOT,
        "env": (("MCP_TEST_LOG", "${MCP_TEST_LOG}"), ("MCP_TEST_SLEEP", "30")),
        "allow_tools": ALL,
    }
    fields.update(kw)
    return ServerSpec(name=name, **fields)  # type: ignore[arg-type]


def calls_logged(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [json.loads(line)["tool"] for line in log.read_text().splitlines()]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "calls.jsonl"


@pytest.fixture
def servers_of(log: Path) -> Iterator[object]:
    made: list[Servers] = []

    def make(*specs: ServerSpec, verbose: bool = False, **env: str) -> Servers:
        servers = Servers(
            {"MCP_TEST_LOG": str(log), **env}, specs_of=lambda _: specs, verbose=verbose
        )
        made.append(servers)
        return servers

    yield make
    for s in made:
        s.close()


def test_a_started_server_offers_its_allowed_tools_and_answers_calls(
    servers_of: object, log: Path
) -> None:
    servers = servers_of(stdio_spec())  # type: ignore[operator]
    prepared = servers.prepare(None)
    names = [o.name for o in prepared.offer.offered]
    assert "mcp__gh__list_notifications" in names and len(names) == len(ALL)
    assert prepared.down == ()
    search = next(o for o in prepared.offer.offered if o.tool == "search")
    assert "anyOf" not in search.definition["input_schema"]
    content, is_error = servers.call(None, "gh", "list_notifications", {})
    assert not is_error and json.loads(content)["notifications"][0]["id"] == "n1"
    content, is_error = servers.call(None, "gh", "fails", {})
    assert is_error and content == "Error: no such repository"
    content, _ = servers.call(None, "gh", "huge", {})
    assert len(content) <= 60_000 and "[cut:" in content
    assert calls_logged(log) == ["list_notifications", "fails", "huge"]


def test_a_call_past_tool_timeout_makes_the_server_unavailable_and_it_is_not_waited_on_again(
    servers_of: object, log: Path
) -> None:
    servers = servers_of(stdio_spec(tool_timeout=1.0))  # type: ignore[operator]
    content, is_error = servers.call(None, "gh", "slow", {})
    assert is_error and "the MCP server gh did not answer within 1 s" in content
    assert "say in the brief that it could not be read" in content
    content, is_error = servers.call(None, "gh", "list_notifications", {})
    assert is_error and "did not answer within 1 s" in content
    assert calls_logged(log) == ["slow"]


def test_a_server_that_crashes_mid_call_is_named_unavailable(servers_of: object, log: Path) -> None:
    servers = servers_of(stdio_spec())  # type: ignore[operator]
    content, is_error = servers.call(None, "gh", "crash", {})
    assert is_error and "the MCP server gh closed the connection during a call" in content
    assert servers.call(None, "gh", "get_issue", {"number": 1})[1] is True
    assert calls_logged(log) == ["crash"]


def test_servers_that_do_not_start_are_named_with_why_and_the_rest_still_offered(
    servers_of: object,
) -> None:
    hang = ServerSpec(
        name="hang",
        command=sys.executable,
        args=("-c", "import time; time.sleep(60)"),
        startup_timeout=1.0,
    )
    missing = ServerSpec(name="nope", command="/nonexistent/mcp-server")
    quits = ServerSpec(name="quits", command=sys.executable, args=("-c", "raise SystemExit(3)"))
    novar = stdio_spec("novar", env=(("T", "${NOT_SET_ANYWHERE}"),))
    servers = servers_of(stdio_spec(), hang, missing, novar, quits)  # type: ignore[operator]
    prepared = servers.prepare(None)
    down = dict(prepared.down)
    assert down["hang"] == "did not start within 1 s"
    assert "its command was not found" in down["nope"]
    assert down["quits"] == "closed the connection before answering (it may have exited at once)"
    assert down["novar"] == (
        "could not start: the environment variable NOT_SET_ANYWHERE (env.T) is not set"
    )
    assert {o.server for o in prepared.offer.offered} == {"gh"}
    note = prepared.prompt_note()
    assert note is not None and "hang (did not start within 1 s)" in note


def test_a_stdio_servers_stderr_stays_out_of_the_terminal_unless_verbose(
    servers_of: object, capfd: pytest.CaptureFixture[str]
) -> None:
    quiet = servers_of(stdio_spec())  # type: ignore[operator]
    quiet.call(None, "gh", "get_issue", {"number": 7})
    quiet.close()
    assert "test server: get_issue called" not in capfd.readouterr().err
    loud = servers_of(stdio_spec(), verbose=True)  # type: ignore[operator]
    loud.call(None, "gh", "get_issue", {"number": 7})
    loud.close()
    assert "test server: get_issue called" in capfd.readouterr().err


def test_an_http_server_gets_the_token_from_token_env_and_a_wrong_one_is_unavailable(
    servers_of: object, log: Path
) -> None:
    with serve_http(token="s3cret", MCP_TEST_LOG=str(log)) as url:
        spec = ServerSpec(name="web", url=url, token_env="WEB_TOKEN", allow_tools=ALL)
        good = servers_of(spec, WEB_TOKEN="s3cret")  # type: ignore[operator]
        content, is_error = good.call(None, "web", "get_issue", {"number": 3})
        assert (content, is_error) == ("Issue 3: flaky CI", False)
        bad = servers_of(spec, WEB_TOKEN="wrong")  # type: ignore[operator]
        prepared = bad.prepare(None)
        assert [name for name, _ in prepared.down] == ["web"]
        assert "wrong" not in json.dumps(prepared.down)
        good.close()
        bad.close()
    assert calls_logged(log) == ["get_issue"]


def test_without_the_sdk_a_configured_server_is_unavailable_saying_how_to_install(
    servers_of: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` raises ImportError
    servers = servers_of(stdio_spec())  # type: ignore[operator]
    prepared = servers.prepare(None)
    assert prepared.down == (("gh", "MCP servers need the mcp extra: pip install 'dayflow[mcp]'"),)


def raw_spec(tools: list[Any], results: dict[str, Any] | None = None, **kw: Any) -> ServerSpec:
    """The hostile raw server (tests/mcpraw.py) listing `tools`, answering `results`."""
    env = (("MCP_RAW_TOOLS", json.dumps(tools)), ("MCP_RAW_RESULTS", json.dumps(results or {})))
    fields: dict[str, Any] = {"command": sys.executable, "args": ("-m", "tests.mcpraw")}
    fields |= {"cwd": ROOT, "env": env, "allow_tools": ("ok", "bad", "broken")} | kw
    return ServerSpec(name="raw", **fields)


OK_TOOL = {"name": "ok", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
BAD_TOOLS = [
    OK_TOOL,
    {"name": "bad", "inputSchema": "not a schema", "annotations": {"readOnlyHint": True}},
    {"description": "no name at all", "inputSchema": {"type": "object"}},
]


def test_a_malformed_tool_is_left_out_with_why_and_its_server_still_offers_the_rest(
    servers_of: object,
) -> None:
    servers = servers_of(raw_spec(BAD_TOOLS))  # type: ignore[operator]
    prepared = servers.prepare(None)
    assert prepared.down == ()
    assert [o.tool for o in prepared.offer.offered] == ["ok"]
    why = {r.tool: r.reason for r in prepared.offer.refused}
    assert why["bad"].startswith("the server listed it malformed (inputSchema: Input should be")
    assert why["#3"] == "the server listed it malformed (name: Field required)"
    notices = prepared.notices()  # the allowed one is named; the unasked-for one is not
    assert any(n.startswith("MCP tool raw/bad not offered: the server listed it") for n in notices)
    assert not any("#3" in n for n in notices)
    assert servers.call(None, "raw", "ok", {}) == ("ok: fine", False)
    content, is_error = servers.call(None, "raw", "bad", {})
    assert is_error and "was not called: the server now lists it malformed" in content


@pytest.mark.parametrize(
    "result",
    [
        {"isError": "yes"},  # no content, a string for a boolean
        {"content": [{"type": "text", "text": 5}]},
        {"content": [{"type": "hologram"}]},
        {"content": [], "structuredContent": [1, 2]},
    ],
)
def test_a_malformed_result_is_that_calls_error_and_the_server_answers_the_next(
    servers_of: object, result: dict[str, Any]
) -> None:
    tools = [OK_TOOL, {**OK_TOOL, "name": "broken"}]
    servers = servers_of(raw_spec(tools, {"broken": result}))  # type: ignore[operator]
    content, is_error = servers.call(None, "raw", "broken", {})
    assert is_error and content.startswith("Error: broken returned a result that is not valid MCP")
    assert "unavailable" not in content
    assert servers.call(None, "raw", "ok", {}) == ("ok: fine", False)


def test_mcp_check_and_list_name_a_malformed_tool_and_cut_a_5000_character_name(
    tmp_path: Path,
) -> None:
    from tests.conftest import python_process, subprocess_env

    long = "n" * 5000
    tools = [*BAD_TOOLS, {**OK_TOOL, "name": long}]
    config = tmp_path / "config.toml"
    config.write_text(
        f"""[mcp_servers.raw]
command = {json.dumps(sys.executable)}
args = ["-m", "tests.mcpraw"]
cwd = {json.dumps(ROOT)}
env = {{ MCP_RAW_TOOLS = {json.dumps(json.dumps(tools))} }}
allow_tools = ["ok", "bad"]
"""
    )
    env = subprocess_env(tmp_path / "d.db", DAYFLOW_CONFIG=str(config))
    checked = python_process(env, "-m", "dayflow", "mcp", "check", timeout=120, cwd=Path(ROOT))
    assert checked.returncode == 0, checked.stderr
    lines = checked.stdout.splitlines()
    assert "started in" in lines[0] and "2 tool(s), 2 malformed" in lines[0]
    assert "  bad: left out: the server listed it malformed (inputSchema: " in checked.stdout
    assert "  #3: left out: the server listed it malformed (name: Field required)" in lines
    listed = python_process(env, "-m", "dayflow", "mcp", "list", timeout=120, cwd=Path(ROOT))
    assert listed.returncode == 0, listed.stderr
    assert long not in listed.stdout
    assert f"  {'n' * 79}…: refused: not in allow_tools" in listed.stdout.splitlines()
    assert "  bad: refused: the server listed it malformed (inputSchema: " in listed.stdout
