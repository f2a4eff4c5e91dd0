"""What passes between the MCP client and a server, below the SDK's session: a stdio server's
process, owned from start to end, and a listing checked one tool at a time. Imported only by
`dayflow.mcp.runtime`, inside the hub's event loop.

- **A stdio server is a process group** (its own session, so the terminal's Ctrl-C is ours to
  pass on, not the terminal's): stopping it closes its stdin, gives it `GRACE` seconds, then
  SIGTERMs the group, then SIGKILLs it `TERM_WAIT` seconds later, shielded from cancellation
  (a server still starting at `startup_timeout` is stopped the same way), and a helper
  process it left in its group goes too. Each group is in `Groups` from its start until it
  is gone, and `Groups.kill_all` (the hub's close, and the interpreter's exit) kills whatever
  is left, without the event loop: no server outlives Dayflow unless it left its group.
- **A tools/list answer is checked tool by tool**: a tool the SDK's types refuse (a schema
  that is not an object, no name...) is taken out of the answer and named with the reason, so
  one malformed tool never takes its server down (the SDK validates the whole listing at
  once).
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, TextIO

import anyio
import mcp_types as types
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage
from mcp_types import methods
from pydantic import ValidationError

GRACE = 1.0  # seconds a server has to exit once its stdin is closed
TERM_WAIT = 1.0  # seconds between SIGTERM and SIGKILL of its process group
MAX_LINE = 32 * 1024 * 1024  # characters of one JSON-RPC line from a server
_POLL = 0.02
_FALLBACK_VERSION = "2025-11-25"
log = logging.getLogger("mcp.dayflow")  # under the `mcp` logger: runtime.quiet_sdk_logs


class Groups:
    """The process groups of the stdio servers this process started and that may be alive;
    thread-safe. `kill_all` runs at the interpreter's exit too."""

    def __init__(self) -> None:
        self._alive: set[int] = set()
        self._lock = threading.Lock()
        atexit.register(self.kill_all)

    def add(self, pgid: int) -> None:
        with self._lock:
            self._alive.add(pgid)

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._alive.discard(pgid)

    def alive(self) -> list[int]:
        with self._lock:
            return sorted(self._alive)

    def kill_all(self) -> None:
        """SIGTERM every group still alive, then SIGKILL what is left after TERM_WAIT."""
        groups = [g for g in self.alive() if _signal(g, signal.SIGTERM)]
        deadline = time.monotonic() + TERM_WAIT
        while groups and time.monotonic() < deadline:
            time.sleep(_POLL)
            groups = [g for g in groups if _signal(g, 0)]
        for pgid in groups:
            _signal(pgid, signal.SIGKILL)
        for pgid in self.alive():
            self.discard(pgid)

    def close(self) -> None:
        """Kill what is left, and leave the interpreter's exit alone."""
        self.kill_all()
        atexit.unregister(self.kill_all)


def _signal(pgid: int, sig: int) -> bool:
    """Send `sig` to the group; whether it (still) exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member we may not signal: it is not ours to wait for
        return sig != 0
    return True


@asynccontextmanager
async def stdio(
    params: StdioServerParameters, errlog: TextIO, groups: Groups
) -> AsyncIterator[tuple[Any, Any]]:
    """A stdio server's process as the SDK's transport streams (read, write), stopped as the
    module says when the context ends, however it ends."""
    process = await anyio.open_process(
        [params.command, *params.args],
        env=get_default_environment() | (params.env or {}),
        cwd=params.cwd,
        stderr=errlog,
        start_new_session=True,  # its own group: the pgid is its pid
    )
    groups.add(process.pid)
    to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        assert process.stdout is not None
        buffer = b""
        async with to_session:
            try:
                async for chunk in process.stdout:
                    *lines, buffer = (buffer + chunk).split(b"\n")
                    if len(buffer) > MAX_LINE:
                        raise ValueError(f"a line over {MAX_LINE:,} bytes")
                    for line in lines:
                        if line.strip():
                            await to_session.send(_parse(line))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                pass  # the session or the pipe is gone: the session sees the stream end
            except ValueError as err:
                log.warning("Stopped reading the MCP server's stdout: %s", err)

    async def write() -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for item in from_session:
                    text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((text + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await to_session.aclose()  # the session sees the connection end, not a hang

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            try:
                yield from_server, to_server
            finally:
                with anyio.CancelScope(shield=True):
                    await _stop(process, groups)
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process, groups)  # a spawn that failed between: stopped all the same
            for stream in (from_server, to_server, to_session, from_session):
                await stream.aclose()


async def _stop(process: Any, groups: Groups) -> None:
    """Close stdin, wait GRACE; SIGTERM the group, wait TERM_WAIT; SIGKILL it; reap. A group
    already gone (killed by `Groups.kill_all`) is only reaped: its pipes closed and its exit
    seen by the loop, so its transport closes here and not in a collector later."""
    pgid = process.pid
    if pgid in groups.alive():
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
        await _wait(lambda: process.returncode is not None, GRACE)
        if _signal(pgid, 0):  # the server itself, or a helper it left in its group
            _signal(pgid, signal.SIGTERM)
            if not await _wait(lambda: not _signal(pgid, 0), TERM_WAIT):
                _signal(pgid, signal.SIGKILL)
            await _wait(lambda: not _signal(pgid, 0), TERM_WAIT)  # until reaped: a zombie counts
        groups.discard(pgid)
    for pipe in (process.stdin, process.stdout):
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await pipe.aclose()
    await _wait(lambda: process.returncode is not None, TERM_WAIT)  # the loop saw it end


async def _wait(done: Any, seconds: float) -> bool:
    deadline = anyio.current_time() + seconds
    while not done():
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(_POLL)
    return True


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        log.warning("Failed to parse JSONRPC message from server: %s", str(exc).splitlines()[0])
        return exc


@asynccontextmanager
async def checked(transport: Any, dropped: list[tuple[str, str]]) -> AsyncIterator[tuple[Any, Any]]:
    """`transport`'s streams, with each tools/list answer checked tool by tool: the tools the
    SDK's types refuse are taken out, and put in `dropped` as (name, why)."""
    seen = _Seen()
    async with transport as (read, write):
        yield _Reading(read, seen, dropped), _Writing(write, seen)


class _Seen:
    """The ids of the requests whose answers are checked, and the version in use."""

    def __init__(self) -> None:
        self.listings: set[Any] = set()
        self.init: set[Any] = set()
        self.version = _FALLBACK_VERSION


class _Writing:
    def __init__(self, inner: Any, seen: _Seen) -> None:
        self._inner, self._seen = inner, seen

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, types.JSONRPCRequest):
            if message.method == "tools/list":
                self._seen.listings.add(message.id)
            elif message.method == "initialize":
                self._seen.init.add(message.id)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Writing:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Reading:
    def __init__(self, inner: Any, seen: _Seen, dropped: list[tuple[str, str]]) -> None:
        self._inner, self._seen, self._dropped = inner, seen, dropped

    async def receive(self) -> SessionMessage | Exception:
        item = await self._inner.receive()
        if isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCResponse):
            message, seen = item.message, self._seen
            if message.id in seen.init:
                seen.init.discard(message.id)
                version = message.result.get("protocolVersion")
                seen.version = version if isinstance(version, str) else seen.version
            elif message.id in seen.listings:
                seen.listings.discard(message.id)
                result = _kept(message.result, seen.version, self._dropped)
                fixed = types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
                return SessionMessage(fixed, metadata=item.metadata)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _Reading:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _Reading:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _kept(result: dict[str, Any], version: str, dropped: list[tuple[str, str]]) -> dict[str, Any]:
    """`result` (a tools/list answer) without the tools the SDK's types refuse, each named
    with why in `dropped`; unchanged when its `tools` is not a list (the SDK says why)."""
    tools = result.get("tools")
    if not isinstance(tools, list):
        return result
    kept = []
    for i, tool in enumerate(tools):
        why = _malformed(tool, version)
        if why is None:
            kept.append(tool)
            continue
        name = tool.get("name") if isinstance(tool, dict) else None
        dropped.append((name if isinstance(name, str) and name else f"#{i + 1}", why))
    return {**result, "tools": kept}


def _malformed(tool: Any, version: str) -> str | None:
    """Why the SDK's types refuse `tool` (one line), or None."""
    one = {"tools": [tool]}
    try:
        methods.validate_server_result("tools/list", version, one)
    except ValidationError as err:  # (a ValueError: caught first)
        return problem(err, skip=2)
    except (KeyError, ValueError):
        pass  # a version the SDK's tables do not know: its own types still check below
    try:
        types.ListToolsResult.model_validate(one, by_name=False)
    except ValidationError as err:
        return problem(err, skip=2)
    return None


def problem(err: ValidationError, skip: int = 0) -> str:
    """A pydantic error as one short line: where (its first `skip` steps left out) and what."""
    first = err.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())[skip:])
    more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{where + ': ' if where else ''}{first.get('msg', 'not valid')}{more}"[:300]
