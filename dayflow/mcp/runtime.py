"""The MCP servers of this process, over the official SDK (the only module of the client that
imports it; `dayflow.mcp.serve` is the server's).

The SDK is asynchronous and Dayflow's loop is not: one daemon thread runs an event loop, and
each server lives in one task there that enters the SDK's `Client` (which starts the command,
or opens the HTTP session), lists the tools, then answers calls from a queue until it is told
to stop (the client must be left in the task that entered it). Callers wait on futures, each
for at most the server's own timeout.

- Each server is started once per process, on first use, and stopped by `Hub.close()` (the CLI
  calls it at the command's end, on an error and on Ctrl-C too). A stdio server is a process
  group that `dayflow.mcp.wire` owns: stopping it closes its stdin, then terminates, then
  kills the group within seconds, and `close()` kills whatever is left. A killed Dayflow
  leaves its servers their stdin's end.
- A server that does not start within `startup_timeout`, crashes, or does not answer a call
  within `tool_timeout` is *down* for the rest of the process: `ServerDown` says why, and no
  later call waits for it again. Its task is cancelled through an anyio cancel scope, never
  `Task.cancel()`, which would cut through the stop's shield and orphan the process.
- A tool listed malformed is left out (`ListedTool.malformed` says why), and a call whose
  result the SDK's types refuse is that call's error: neither takes its server down.
- A stdio server's stderr goes to the null device unless `verbose` (-v): its logs are not the
  user's business unless asked for. The SDK's own log records (a server that prints
  something other than JSON-RPC on stdout is logged with a traceback per line) are kept off
  the terminal too; with `verbose` each is one line, without its traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TextIO

from dayflow.errors import SourceError
from dayflow.mcp.config import ServerSpec, server_args, server_env, server_headers
from dayflow.mcp.offer import ListedTool

_HANDLER = "dayflow-mcp"  # the name of the handler quiet_sdk_logs puts on the SDK's logger
_MARGIN = 2.0  # seconds a caller waits beyond the server's own timeout for its answer
_CLOSE_WAIT = 8.0  # seconds close() waits for the servers' own stops (each takes at most ~3)
_DRAIN_WAIT = 3.0  # seconds the stopped loop gives the stops still running, once killed
_CANCEL_WAIT = 1.0  # and then what it gives those it had to cancel
_STOP = object()


class ServerDown(SourceError):
    """The server did not start, crashed or timed out; the message names it and why."""

    def __init__(self, server: str, why: str, hint: str = "") -> None:
        super().__init__(f"MCP server {server}: {why}{hint}")
        self.server, self.why = server, why


class Started:
    """A server that answered: its tools and how long it took to start."""

    def __init__(self, spec: ServerSpec, tools: list[ListedTool], seconds: float) -> None:
        self.spec, self.tools, self.seconds = spec, tools, seconds


class _Server:
    """One server's task and its queue of calls (touched only in the hub's loop)."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.ready: Future[Started] = Future()
        self.down: str | None = None
        self.task: asyncio.Task[None] | None = None
        self.scope: Any = None  # the anyio CancelScope its task runs in
        self.inflight: Future[dict[str, Any]] | None = None  # the call it is answering
        self.malformed: list[tuple[str, str]] = []  # tools it listed malformed: (name, why)
        self.refused: str | None = None  # the last answer the cap refused (network.cap_body)

    def cancel(self) -> None:
        """Stop its task (in the hub's loop): the transport's stop still runs, shielded."""
        if self.scope is not None:
            self.scope.cancel()


class Hub:
    """This process's MCP servers, by name. Thread-safe for its callers."""

    def __init__(
        self,
        specs: Sequence[ServerSpec],
        env: Mapping[str, str],
        *,
        verbose: bool = False,
    ) -> None:
        self.specs = {s.name: s for s in specs}
        self._env = env
        self._verbose = verbose
        self._servers: dict[str, _Server] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._errlog: TextIO | None = None
        from dayflow.mcp.wire import Groups

        self._groups = Groups()
        quiet_sdk_logs(verbose)

    # ------------------------------------------------------------------ the callers' side

    def start(self, names: Sequence[str]) -> dict[str, Started | ServerDown]:
        """Start each named server not yet started (all at once), and wait for each; what
        each gave: its tools, or why it is down."""
        servers = [self._server(n) for n in names]
        out: dict[str, Started | ServerDown] = {}
        for server in servers:
            try:
                out[server.spec.name] = self._wait_ready(server)
            except ServerDown as down:
                out[server.spec.name] = down
        return out

    def listing(self, name: str) -> Started:
        """The started server `name` (starting it now if need be); ServerDown if it is not."""
        return self._wait_ready(self._server(name))

    def call(self, name: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Call `tool` of server `name` with `args`: the CallToolResult as JSON (an error the
        server reported is a result with isError). ServerDown when it cannot answer."""
        server = self._server(name)
        self._wait_ready(server)
        done: Future[dict[str, Any]] = Future()
        loop = self._running_loop()
        loop.call_soon_threadsafe(server.queue.put_nowait, (tool, args, done))
        try:
            return done.result(server.spec.tool_timeout + _MARGIN)
        except FutureTimeout:
            self._take_down(server, f"did not answer within {server.spec.tool_timeout:g} s")
            raise self._down(server) from None

    def close(self) -> None:
        """Stop every server (each leaves its client, which ends its command) and the loop;
        safe to call twice."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(_CLOSE_WAIT)
        except BaseException:  # noqa: S110 - a stop that hung, or a second Ctrl-C: kill below
            pass
        finally:
            # Whatever is still alive goes first (SIGTERM, then SIGKILL), while the loop runs:
            # it sees each exit, and the tasks still stopping a server end with it.
            self._groups.close()
            loop.call_soon_threadsafe(loop.stop)
            thread.join(_DRAIN_WAIT + _CANCEL_WAIT + 2)
            if self._errlog is not None:
                self._errlog.close()

    async def _shutdown(self) -> None:
        tasks = []
        for server in self._servers.values():
            if server.task is None or server.task.done():
                continue
            if server.ready.done() and server.down is None and server.inflight is None:
                server.queue.put_nowait(_STOP)
            else:  # still starting (it reads no queue), in a call (Ctrl-C), or going down
                server.down = server.down or "was stopped during a call"
                server.cancel()
            tasks.append(server.task)
        if tasks:
            await asyncio.wait(tasks, timeout=_CLOSE_WAIT - 1)

    # ------------------------------------------------------------------ inside

    def _server(self, name: str) -> _Server:
        spec = self.specs.get(name)
        if spec is None:
            raise ServerDown(name, "is not in the config file's [mcp_servers]")
        with self._lock:
            server = self._servers.get(name)
            if server is None:
                server = self._servers[name] = _Server(spec)
                loop = self._running_loop_locked()
                asyncio.run_coroutine_threadsafe(self._spawn(server), loop)
        return server

    def _wait_ready(self, server: _Server) -> Started:
        try:
            return server.ready.result(server.spec.startup_timeout + _MARGIN)
        except FutureTimeout:
            self._take_down(server, f"did not start within {server.spec.startup_timeout:g} s")
            raise self._down(server) from None
        except ServerDown:
            raise
        except Exception as exc:  # pragma: no cover - _run sets only ServerDown
            raise ServerDown(server.spec.name, str(exc)) from None

    def _down(self, server: _Server) -> ServerDown:
        quiet = not self._verbose and server.spec.transport == "stdio"
        hint = " (-v shows its stderr)" if quiet and "not found" not in (server.down or "") else ""
        return ServerDown(server.spec.name, server.down or "stopped", hint)

    def _take_down(self, server: _Server, why: str) -> None:
        if server.down is None:
            server.down = why
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(server.cancel)

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            return self._running_loop_locked()

    def _running_loop_locked(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=_run_forever, args=(loop,), daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
        return self._loop

    async def _spawn(self, server: _Server) -> None:
        import anyio

        server.task = asyncio.current_task()
        timeout = server.spec.startup_timeout

        def late() -> None:  # the SDK's client is entered whole: time it out from outside
            if not server.ready.done() and server.down is None:
                server.down = f"did not start within {timeout:g} s"
                server.ready.set_exception(self._down(server))  # the caller goes on now
                server.cancel()  # and the process is stopped meanwhile

        timer = asyncio.get_running_loop().call_later(timeout, late)
        try:
            with anyio.CancelScope() as server.scope:
                await self._run(server)
        except BaseException as exc:  # a crash at start or between calls: the server is down
            if server.down is None:
                server.down = server.refused or _reason(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            timer.cancel()
            server.down = server.down or "stopped"
            down = self._down(server)
            if not server.ready.done():
                server.ready.set_exception(down)
            _fail_waiting(server, down)

    async def _run(self, server: _Server) -> None:
        began = time.monotonic()
        async with contextlib.AsyncExitStack() as stack:
            client = await self._client(server, stack)
            tools = await _list_tools(client, server.malformed)
            if server.ready.done():  # late() gave up on it meanwhile
                return
            server.ready.set_result(Started(server.spec, tools, time.monotonic() - began))
            while True:
                item = await server.queue.get()
                if item is _STOP:
                    return
                server.inflight = item[2]
                try:
                    await self._answer(server, client, *item)
                finally:
                    server.inflight = None
                    if not item[2].done():  # cancelled mid-call: its caller hears why
                        item[2].set_exception(self._down(server))
                if server.down is not None:
                    return

    async def _answer(self, server: _Server, client: Any, tool: str, args: Any, done: Any) -> None:
        import anyio
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED
        from pydantic import ValidationError

        from dayflow.mcp.wire import problem

        try:
            with anyio.fail_after(server.spec.tool_timeout):
                result = await client.call_tool(tool, args)
            answer = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        except TimeoutError:
            server.down = f"did not answer within {server.spec.tool_timeout:g} s"
            done.set_exception(self._down(server))
            return
        except MCPError as err:
            if err.code == CONNECTION_CLOSED:
                server.down = "closed the connection during a call (it may have crashed)"
                done.set_exception(self._down(server))
                return
            # The server answered with an error: the model reads it as an error result.
            text = f"{tool} failed on the server: {err.error.message}"[:2000]
            if server.refused is not None:  # its answer was past the cap: not the server's words
                text = f"{tool}'s result was refused: the server {server.refused}"
                server.refused = None
            done.set_result({"content": [{"type": "text", "text": text}], "isError": True})
            return
        except ValidationError as err:  # this answer, not the server: it stays up
            why = f"{tool} returned a result that is not valid MCP ({problem(err)})"
            done.set_result({"content": [{"type": "text", "text": why}], "isError": True})
            return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            server.down = _reason(exc)
            done.set_exception(self._down(server))
            return
        except Exception as exc:  # the SDK refused this result (its output schema...): its error
            text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
            why = f"{tool}'s result was refused ({type(exc).__name__}{': ' + text if text else ''})"
            done.set_result({"content": [{"type": "text", "text": why}], "isError": True})
            return
        done.set_result(answer)

    async def _client(self, server: _Server, stack: contextlib.AsyncExitStack) -> Any:
        """The SDK's client of `server`, entered on `stack` (with the HTTP client it is given,
        which the SDK leaves to its owner to close), its listings checked tool by tool."""
        from mcp import Client, StdioServerParameters

        from dayflow.mcp.wire import checked, stdio

        spec = server.spec
        if spec.command is not None:
            params = StdioServerParameters(
                command=spec.command,
                args=server_args(spec, self._env),
                env=server_env(spec, self._env),
                cwd=os.path.expanduser(spec.cwd) if spec.cwd else None,
            )
            transport = stdio(params, self._stderr(), self._groups)
            client = Client(checked(transport, server.malformed), cache=None)
            return await stack.enter_async_context(client)
        from mcp.client.streamable_http import streamable_http_client

        headers = server_headers(spec, self._env)
        if spec.token_command or spec.token_env:
            from dayflow.sources.oauth import fetch_token

            token = await asyncio.to_thread(  # a command may take a while: not on the loop
                fetch_token,
                spec.name,
                command=spec.token_command,
                env_name=spec.token_env,
                timeout=spec.startup_timeout,
                env=self._env,
            )
            headers["Authorization"] = f"Bearer {token}"
        assert spec.url is not None

        def said(refused: Exception) -> None:
            server.refused = str(refused)

        http = await stack.enter_async_context(_http_client(spec.url, headers, self._env, said))
        transport = streamable_http_client(spec.url, http_client=http)
        client = Client(checked(transport, server.malformed), cache=None)
        return await stack.enter_async_context(client)

    def _stderr(self) -> TextIO:
        if self._verbose:
            return sys.stderr
        if self._errlog is None:
            self._errlog = open(os.devnull, "w")  # noqa: SIM115 - closed by close()
        return self._errlog


def _http_client(
    url: str, headers: dict[str, str], env: Mapping[str, str], said: Any = None
) -> Any:
    """The SDK's HTTP client for a server at `url` (its timeouts, as `create_mcp_http_client`
    makes it), with the proxy `network.proxy_for` chooses: never one for a server on this
    machine, whatever the environment says. Every answer is read through the cap the feeds
    and the model are read with (`network.cap_body`: 50 MB, one event of a stream), `said`
    told of a refusal."""
    import httpx2
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    from dayflow.network import cap_body, direct_client_options, proxy_for

    async def capped(response: Any) -> None:
        cap_body(response, said=said)

    proxy = proxy_for(url, env)
    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    options: dict[str, Any] = {"proxy": proxy} if proxy is not None else direct_client_options()
    return httpx2.AsyncClient(
        timeout=timeout, headers=headers, event_hooks={"response": [capped]}, **options
    )


class _OneLine(logging.Formatter):
    """A log record as one line: its message, never its traceback."""

    def format(self, record: logging.LogRecord) -> str:
        from dayflow.printable import plain

        lines = record.getMessage().splitlines() or [""]
        return f"MCP: {plain(lines[0][:300])}"


def quiet_sdk_logs(verbose: bool) -> None:
    """Keep the SDK's log records (the `mcp` loggers) off the terminal, or, when `verbose`,
    show each as one line on stderr; never a traceback. Each hub sets it again (the last
    one's `verbose` wins: one process has one -v)."""
    logger = logging.getLogger("mcp")
    logger.propagate = False  # nor through the root logger's last-resort handler
    for old in list(logger.handlers):
        if old.get_name() == _HANDLER:
            logger.removeHandler(old)
    handler: logging.Handler
    if verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_OneLine())
    else:
        handler = logging.NullHandler()
    handler.set_name(_HANDLER)
    logger.addHandler(handler)


def require_sdk() -> None:
    """Raise ImportError unless the SDK (the `mcp` extra) can be imported."""
    import mcp  # noqa: F401


def _run_forever(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        _drain(loop)
        loop.close()


def _drain(loop: asyncio.AbstractEventLoop) -> None:
    """Run the tasks a stopped loop still holds (a server whose stop outlasted `_CLOSE_WAIT`,
    its group killed since) to their end, within `_DRAIN_WAIT`, and only then cancel what is
    left: each stop then closes its pipes and sees its process end in the loop, not leaving
    them to a collector that finds the loop closed ("unclosed transport", "Event loop is
    closed", once a failed CI run). Cancelling first cut a stop short before its pipes were
    closed (seen under load)."""
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    if pending:
        loop.run_until_complete(asyncio.wait(pending, timeout=_DRAIN_WAIT))
    left = [t for t in pending if not t.done()]
    for task in left:
        task.cancel()
    if left:
        loop.run_until_complete(asyncio.wait(left, timeout=_CANCEL_WAIT))
    loop.run_until_complete(loop.shutdown_asyncgens())


def _fail_waiting(server: _Server, down: ServerDown) -> None:
    """Fail the calls still queued for a server that has stopped."""
    while not server.queue.empty():
        item = server.queue.get_nowait()
        if item is not _STOP and not item[2].done():
            item[2].set_exception(down)


async def _list_tools(client: Any, malformed: list[tuple[str, str]]) -> list[ListedTool]:
    """The server's tools, page by page; those it listed malformed (`malformed`, filled as
    each page is read) as tools with the reason they are left out."""
    tools: list[ListedTool] = []
    cursor: str | None = None
    for _ in range(50):  # a server whose pages never end is cut off, not waited on
        page = await client.list_tools(cursor=cursor)
        for t in page.tools:
            hints = t.annotations
            tools.append(
                ListedTool(
                    name=t.name,
                    description=t.description or "",
                    input_schema=t.input_schema,
                    read_only=None if hints is None else hints.read_only_hint,
                    destructive=None if hints is None else hints.destructive_hint,
                )
            )
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools + [
        ListedTool(name=name, description="", input_schema=None, malformed=why)
        for name, why in malformed
    ]


def _reason(exc: BaseException) -> str:
    """One line for why a server stopped, from whatever the SDK raised (a group included)."""
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED
    from pydantic import ValidationError

    from dayflow.mcp.config import MissingVariable
    from dayflow.mcp.wire import problem
    from dayflow.sources.oauth import TokenUnavailable

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
        return "closed the connection before answering (it may have exited at once)"
    if isinstance(exc, MissingVariable | TokenUnavailable):
        return "could not start: " + (str(exc).partition(": ")[2] or str(exc))
    if isinstance(exc, TimeoutError):
        return "did not start in time"
    if isinstance(exc, FileNotFoundError):
        return f"could not start: its command was not found ({exc.filename or exc})"
    if isinstance(exc, OSError):
        return f"could not start ({exc.strerror or type(exc).__name__})"
    if isinstance(exc, ValidationError):
        return f"its answer is not valid MCP ({problem(exc)})"
    text = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    return f"stopped: {type(exc).__name__}{': ' + text if text else ''}"
