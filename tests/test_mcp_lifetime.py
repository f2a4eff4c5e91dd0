"""MCP servers never outlive Dayflow: real stdio server processes (tests/mcpraw.py) that ignore
SIGTERM, ignore their stdin's end, sleep before answering and start a helper of their own; each
test finds every pid it started afterwards and checks that none is left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dayflow.mcp.config import ServerSpec
from dayflow.mcp.servers import Servers
from tests.conftest import subprocess_env
from tests.fakeapi import FakeAPI, error

pytestmark = pytest.mark.slow  # real server processes, real signals

ROOT = Path(__file__).resolve().parent.parent
STUBBORN = {"MCP_RAW_IGNORE_TERM": "1", "MCP_RAW_KEEP": "1", "MCP_RAW_CHILD": "1"}


def raw_spec(pids: Path, env: dict[str, str], startup: float = 20.0) -> ServerSpec:
    return ServerSpec(
        name="raw",
        command=sys.executable,
        args=("-m", "tests.mcpraw"),
        cwd=str(ROOT),
        env=(("MCP_RAW_PIDS", str(pids)), *env.items()),
        allow_tools=("ok",),
        startup_timeout=startup,
    )


def started(pids: Path, count: int, within: float = 30.0) -> list[int]:
    """The pids the servers wrote, once `count` of them have (a server and its helper)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        lines = pids.read_text().split("\n") if pids.exists() else []
        found = [int(line.split()[0]) for line in lines if line.strip()]
        if len(found) >= count:
            return found
        time.sleep(0.05)
    raise AssertionError(f"only {pids.read_text() if pids.exists() else 'no'} pids")


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for a reaper is dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def left(pids: list[int], within: float = 1.0) -> list[int]:
    deadline = time.monotonic() + within
    while (alive_ := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive_


@pytest.fixture
def reap() -> Iterator[list[int]]:
    """Pids a test started: whatever it leaves behind is killed afterwards (and fails it)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_server_still_starting_at_startup_timeout_is_stopped_with_its_helper_in_seconds(
    tmp_path: Path, reap: list[int]
) -> None:
    """It sleeps before reading a line, ignores SIGTERM and started a helper: at the timeout
    the caller goes on at once, and the group is terminated, then killed, within seconds."""
    pids = tmp_path / "pids"
    servers = Servers(
        {}, specs_of=lambda _: (raw_spec(pids, {"MCP_RAW_SLEEP": "600", **STUBBORN}, startup=2.0),)
    )
    servers.hub(None, servers.specs(None))  # the SDK imported before the clock starts
    began = time.monotonic()
    prepared = servers.prepare(None)
    waited = time.monotonic() - began
    reap += started(pids, 2)
    assert dict(prepared.down) == {"raw": "did not start within 2 s"}
    assert waited < 2.0 + 1.5
    assert left(reap, within=4.0) == []  # stopped meanwhile: stdin closed, SIGTERM, SIGKILL
    began = time.monotonic()
    servers.close()
    assert time.monotonic() - began < 2.0


def test_a_started_server_that_ignores_sigterm_and_its_stdin_is_killed_at_close(
    tmp_path: Path, reap: list[int]
) -> None:
    pids = tmp_path / "pids"
    servers = Servers({}, specs_of=lambda _: (raw_spec(pids, STUBBORN),))
    assert servers.call(None, "raw", "ok", {}) == ("ok: fine", False)
    reap += started(pids, 2)
    assert len({os.getpgid(p) for p in reap}) == 1  # the helper is in the server's group
    began = time.monotonic()
    servers.close()
    assert time.monotonic() - began < 4.0
    assert left(reap) == []


def mcp_config(tmp_path: Path, **env: str) -> Path:
    config = tmp_path / "config.toml"
    pairs = {"MCP_RAW_PIDS": str(tmp_path / "pids"), **env}
    table = ", ".join(f"{k} = {json.dumps(v)}" for k, v in pairs.items())
    config.write_text(
        f"""
[mcp_servers.raw]
command = {json.dumps(sys.executable)}
args = ["-m", "tests.mcpraw"]
cwd = {json.dumps(str(ROOT))}
env = {{ {table} }}
allow_tools = ["ok"]
startup_timeout = 3
"""
    )
    return config


def child(tmp_path: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "dayflow", *args],
        env=subprocess_env(tmp_path / "d.db", **env),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_mcp_check_with_a_server_hung_at_start_takes_seconds_and_leaves_no_process(
    tmp_path: Path, reap: list[int]
) -> None:
    config = mcp_config(tmp_path, MCP_RAW_SLEEP="600", **STUBBORN)
    began = time.monotonic()
    proc = child(tmp_path, "mcp", "check", "--config", str(config))
    out, err = proc.communicate(timeout=60)
    took = time.monotonic() - began
    reap += started(tmp_path / "pids", 2, within=1)
    assert proc.returncode == 4, err
    assert "raw: " in out and "not started: did not start within 3 s" in out
    assert took < 3 + 9  # start-up and the SDK's import, the timeout, and the stop (was 19 s)
    assert left(reap) == []


def test_ctrl_c_while_a_server_starts_stops_it_and_its_helper(
    tmp_path: Path, reap: list[int]
) -> None:
    config = mcp_config(tmp_path, MCP_RAW_SLEEP="600", **STUBBORN)
    config.write_text(config.read_text().replace("startup_timeout = 3", "startup_timeout = 60"))
    proc = child(tmp_path, "mcp", "check", "--config", str(config))
    reap += started(tmp_path / "pids", 2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert left(reap) == []


def test_a_brief_that_fails_on_the_model_leaves_no_server_behind(
    tmp_path: Path, reap: list[int]
) -> None:
    config = mcp_config(tmp_path, **STUBBORN)
    with FakeAPI([error(400, "invalid_request_error", "bad request")]) as api:
        proc = child(
            tmp_path,
            *("brief", "--date", "2026-11-05", "--model", "claude-haiku-5-5"),
            ANTHROPIC_API_KEY="test",
            ANTHROPIC_BASE_URL=api.base_url,
            DAYFLOW_CONFIG=str(config),
        )
        _, err = proc.communicate(timeout=120)
    reap += started(tmp_path / "pids", 2, within=1)
    assert proc.returncode != 0 and "bad request" in err, err
    assert left(reap) == []


CALLER = """
import sys, time
from dayflow.mcp.config import ServerSpec
from dayflow.mcp.servers import Servers
spec = ServerSpec(name="raw", command=sys.executable, args=("-m", "tests.mcpraw"),
                  env=tuple(dict(a.split("=", 1) for a in sys.argv[1:]).items()),
                  allow_tools=("ok",), tool_timeout=120)
servers = Servers({}, specs_of=lambda _: (spec,))
try:
    print(servers.call(None, "raw", "ok", {}), flush=True)
except KeyboardInterrupt:
    began = time.monotonic()
    servers.close()
    print(f"closed in {time.monotonic() - began:.1f} s", flush=True)
"""


def test_ctrl_c_during_a_call_stops_the_server_at_once_not_after_the_call(
    tmp_path: Path, reap: list[int]
) -> None:
    """The server answers calls after 60 s and ignores SIGTERM: Ctrl-C while the caller
    waits for it stops it (and its helper) in seconds, without waiting for its answer."""
    pids = tmp_path / "pids"
    env = {"MCP_RAW_PIDS": str(pids), "MCP_RAW_CALL_SLEEP": "60", **STUBBORN}
    proc = subprocess.Popen(
        [sys.executable, "-c", CALLER, *(f"{k}={v}" for k, v in env.items())],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    reap += started(pids, 2)
    time.sleep(1.0)  # the call is in flight
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.startswith("closed in ") and float(out.split()[2]) < 4.0, out
    assert left(reap) == []


def test_a_stop_that_outlasts_the_close_wait_leaves_no_transport_for_the_collector(
    tmp_path: Path, reap: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server slow to stop (it ignores its stdin and SIGTERM: ~3 s) past `_CLOSE_WAIT`: the
    loop is not closed under its task. Before, its process transport was left open and a
    later test's collection raised "unclosed transport" and "Event loop is closed" (a failed
    CI run)."""
    import asyncio.base_subprocess
    import gc

    from dayflow.mcp import runtime

    monkeypatch.setattr(runtime, "_CLOSE_WAIT", 1.0)
    pids = tmp_path / "pids"
    servers = Servers({}, specs_of=lambda _: (raw_spec(pids, STUBBORN),))
    assert servers.call(None, "raw", "ok", {}) == ("ok: fine", False)
    reap += started(pids, 2)
    servers.close()
    assert left(reap) == []
    gc.collect()
    transports = [
        o
        for o in gc.get_objects()
        if isinstance(o, asyncio.base_subprocess.BaseSubprocessTransport) and not o.is_closing()
    ]
    assert transports == []
