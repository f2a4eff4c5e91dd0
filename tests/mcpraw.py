"""A hostile MCP server for the tests, with no SDK: newline-delimited JSON-RPC on stdio, its
answers written as raw JSON so they can be anything a broken server sends
(`python -m tests.mcpraw`).

Its behaviour comes from the environment:

- MCP_RAW_TOOLS: the `tools` list its tools/list answers (JSON, any shape); MCP_RAW_RESULTS:
  an object of tool name to the raw `result` of a tools/call (any shape), default a text;
- MCP_RAW_PIDS: a file it appends "pid pgid" to as it starts (a test finds it afterwards);
- MCP_RAW_IGNORE_TERM=1: it ignores SIGTERM; MCP_RAW_KEEP=1: it stays up when its stdin
  closes (only a signal ends it); MCP_RAW_SLEEP: seconds it sleeps before reading a line;
  MCP_RAW_CALL_SLEEP: seconds it sleeps before answering a tools/call;
- MCP_RAW_CHILD=1: it starts a child (the same program, sleeping) in its process group,
  whose pid it also writes, as a server's own helper process would be.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

OBJECT = {"type": "object", "properties": {}}
READ = {"readOnlyHint": True}
DEFAULT_TOOLS: list[Any] = [
    {"name": "ok", "description": "Fine.", "inputSchema": OBJECT, "annotations": READ}
]


def _note_pid() -> None:
    path = os.environ.get("MCP_RAW_PIDS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()} {os.getpgid(0)}\n")


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:  # a notification
        return None
    if method == "initialize":
        version = (request.get("params") or {}).get("protocolVersion", "2025-06-18")
        result: Any = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": json.loads(os.environ.get("MCP_RAW_TOOLS", "null")) or DEFAULT_TOOLS}
    elif method == "tools/call":
        time.sleep(float(os.environ.get("MCP_RAW_CALL_SLEEP", "0")))
        name = (request.get("params") or {}).get("name")
        results = json.loads(os.environ.get("MCP_RAW_RESULTS", "{}"))
        result = results.get(name, {"content": [{"type": "text", "text": f"{name}: fine"}]})
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no method"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    _note_pid()
    if os.environ.get("MCP_RAW_IGNORE_TERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.environ.get("MCP_RAW_CHILD") == "1":
        env = {k: v for k, v in os.environ.items() if k != "MCP_RAW_CHILD"}
        env["MCP_RAW_SLEEP"] = "600"
        subprocess.Popen([sys.executable, "-m", "tests.mcpraw"], env=env, stdin=subprocess.PIPE)
    time.sleep(float(os.environ.get("MCP_RAW_SLEEP", "0")))
    for line in sys.stdin:
        if line.strip():
            answer = _answer(json.loads(line))
            if answer is not None:
                _send(answer)
    while os.environ.get("MCP_RAW_KEEP") == "1":
        time.sleep(1)


if __name__ == "__main__":
    main()
