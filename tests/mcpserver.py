"""An MCP server for the tests, on the SDK's own server class: over stdio
(`python -m tests.mcpserver`) or streamable HTTP on 127.0.0.1 (`serve_http()`).

Every call is appended, one JSON line, to the file $MCP_TEST_LOG (when set), so a test counts
what reached the server. Its tools:

- `list_notifications`, `get_issue` (read-only, deterministic results, structured content);
- `search` (read-only, a top-level anyOf); DOTTED (read-only, a dotted 80-character name);
- `delete_repo` (destructiveHint: true); `mark_read` (a write: readOnlyHint false);
- `slow` (read-only, sleeps $MCP_TEST_SLEEP seconds, 30 by default), `crash` (read-only,
  exits mid-call), `huge` (read-only, 200,000 characters), `fails` (read-only, isError);
- when the file $MCP_TEST_LOG.kill exists, `delete_repo` and `mark_read` remove it and
  SIGKILL the process that started the server while the call is in flight (a kill during a
  write, for real).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server

DOTTED = "acme.tracker/" + "x" * 45 + ".list.open.items.today"
assert len(DOTTED) == 80
READ = types.ToolAnnotations(read_only_hint=True)
OBJECT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def _tools() -> list[types.Tool]:
    number = {"type": "object", "properties": {"number": {"type": "integer"}}}
    search = {
        "type": "object",
        "properties": {"limit": {"type": "integer"}},
        "anyOf": [
            {"properties": {"query": {"type": "string"}}, "required": ["query"]},
            {"properties": {"label": {"type": "string"}}, "required": ["label"]},
        ],
    }
    return [
        types.Tool(
            name="list_notifications",
            description="Unread notifications.",
            input_schema=OBJECT,
            annotations=READ,
        ),
        types.Tool(
            name="get_issue",
            description="One issue by number.",
            input_schema=number,
            annotations=READ,
        ),
        types.Tool(
            name="search", description="Search issues.", input_schema=search, annotations=READ
        ),
        types.Tool(name=DOTTED, description="Open items.", input_schema=OBJECT, annotations=READ),
        types.Tool(
            name="delete_repo",
            description="Delete a repository.",
            input_schema=OBJECT,
            annotations=types.ToolAnnotations(destructive_hint=True),
        ),
        types.Tool(
            name="mark_read",
            description="Mark notifications read.",
            input_schema=OBJECT,
            annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False),
        ),
        types.Tool(name="slow", description="Sleeps.", input_schema=OBJECT, annotations=READ),
        types.Tool(name="crash", description="Exits.", input_schema=OBJECT, annotations=READ),
        types.Tool(name="huge", description="Big.", input_schema=OBJECT, annotations=READ),
        types.Tool(name="fails", description="Errors.", input_schema=OBJECT, annotations=READ),
    ]


def _log(name: str, args: Any) -> None:
    path = os.environ.get("MCP_TEST_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": name, "args": args, "pid": os.getpid()}) + "\n")


def _text(value: str) -> list[Any]:
    return [types.TextContent(type="text", text=value)]


async def _list(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_tools())


async def _call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, args = params.name, params.arguments or {}
    _log(name, args)
    print(f"test server: {name} called", file=sys.stderr, flush=True)
    if name == "list_notifications":
        items = [{"id": "n1", "repo": "acme/api", "title": "Review requested: fix login"}]
        return types.CallToolResult(
            content=_text(json.dumps(items)), structured_content={"notifications": items}
        )
    if name == "get_issue":
        return types.CallToolResult(content=_text(f"Issue {args.get('number')}: flaky CI"))
    if name in ("search", DOTTED):
        return types.CallToolResult(content=_text(f"{name[:20]}: {json.dumps(args)}"))
    if name in ("delete_repo", "mark_read"):
        flag = os.environ.get("MCP_TEST_LOG", "") + ".kill"
        if os.path.exists(flag):  # once: the flag goes with the process it kills
            os.remove(flag)
            os.kill(os.getppid(), signal.SIGKILL)
            await anyio.sleep(30)
        return types.CallToolResult(content=_text(f"{name}: done"))
    if name == "slow":
        await anyio.sleep(float(os.environ.get("MCP_TEST_SLEEP", "30")))
        return types.CallToolResult(content=_text("late"))
    if name == "crash":
        os._exit(3)
    if name == "huge":
        return types.CallToolResult(content=_text("y" * 200_000))
    if name == "fails":
        return types.CallToolResult(content=_text("no such repository"), is_error=True)
    raise ValueError(f"unknown tool {name}")


def make_server() -> Server[Any]:
    return Server("dayflow-test", on_list_tools=_list, on_call_tool=_call)


async def _stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = make_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _http(token: str | None) -> None:
    """Serve over streamable HTTP on a free port of 127.0.0.1, printing the URL first. With
    `token`, a request without `Authorization: Bearer <token>` is answered 401."""
    import uvicorn

    inner: Any = make_server().streamable_http_app()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and token is not None:
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await inner(scope, receive, send)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)  # before the URL is printed: a client may connect before uvicorn runs
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="error")).run(sockets=[sock])


@contextmanager
def serve_http(token: str | None = None, **env: str) -> Iterator[str]:
    """The test server over streamable HTTP in a child process; yields its URL."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    argv = [sys.executable, "-m", "tests.mcpserver", "--http"]
    if token is not None:
        argv += ["--token", token]
    proc = subprocess.Popen(
        argv, cwd=root, stdout=subprocess.PIPE, text=True, env={**os.environ, **env}
    )
    assert proc.stdout is not None
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


if __name__ == "__main__":
    if "--http" in sys.argv:
        _http(sys.argv[sys.argv.index("--token") + 1] if "--token" in sys.argv else None)
    else:
        anyio.run(_stdio)
