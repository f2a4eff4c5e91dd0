"""A fork server for the crash tests' `python -m dayflow` children: the same real processes,
without their 3 s of imports.

A crash test runs `dayflow` in a child that SIGKILLs itself (DAYFLOW_KILL_AT), then in another
that resumes; each child spends most of its life importing the CLI, the Anthropic SDK and
psycopg. This server imports all of them once (nothing opened: no database, no socket to a
server, no thread), then, for each child, `os.fork()`s a process that takes the child's
stdin, stdout and stderr (passed over a Unix socket), its argv, environment, working directory
and umask, and runs `dayflow` as `python -m dayflow` does (`runpy`, `__main__`), to a normal
interpreter exit or its own SIGKILL.

The test starts `python -I -S tests/forkclient.py SOCKET ARGS...` (`command()`), a stand-in
that starts in milliseconds: it hands its stdio to the server, forwards the signals it gets to
the child, and ends as the child ended (the same exit code, or killed by the same signal), so
`subprocess.run` and `Popen` see what they would see of `python -m dayflow`. Its pid is the
stand-in's, not the dayflow process's: a test that compares a pid the child prints with
`Popen.pid` runs `python -m dayflow` itself. When the child's environment differs from the
server's in a variable an import reads (`STARTUP_ENV`: locale, `PYTHON*`, time zone, ...), or
the server is not up, the stand-in execs `python -m dayflow` in its own place instead.

Each process (a pytest-xdist worker) has its own server, started on first use and stopped at
exit; it also stops when that process is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# DAYFLOW_TEST_NO_FORKSERVER=1: every child is `python -m dayflow` started afresh (to compare).
OFF = "DAYFLOW_TEST_NO_FORKSERVER"
CLIENT = HERE / "forkclient.py"

# What the server imports before it forks: every Dayflow module (the CLI, the store's two
# backends, the providers) and the heavy libraries they import lazily.
PRELOAD_LIBRARIES = ("anthropic", "psycopg")

# Environment variables read while those modules are imported (or by the interpreter at start):
# a child whose value of one differs from the server's is exec'd, never forked. The other
# variables an import reads are HOME (sysconfig's user base, which Dayflow never uses) and PATH.
STARTUP_ENV = (
    "PYTHON",  # the interpreter's own settings (PYTHONIOENCODING, PYTHONUTF8, PYTHONTZPATH...)
    "LC_",  # the locale: stdio's encoding
    "LANG",
    "TZ",  # time.timezone and time.tzname are set at import
    "TYPER_",  # typer.core: TYPER_USE_RICH
    "_TYPER_",
    "PSYCOPG",  # psycopg: PSYCOPG_IMPL, PSYCOPG_WAIT_FUNC
    "ANTHROPIC_LOG",  # the SDK's logger level
    "OTEL_",  # opentelemetry's context (imported by the MCP SDK)
    "PYDANTIC",
    "DEFER_PYDANTIC_BUILD",
)


def startup_env(env: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(STARTUP_ENV)}


def preload() -> None:
    import importlib
    import pkgutil

    import dayflow

    for module in pkgutil.walk_packages(dayflow.__path__, "dayflow."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    for name in PRELOAD_LIBRARIES:
        importlib.import_module(name)


# ------------------------------------------------------------------------------------ server


def serve(path: str) -> socket.socket:
    """Preload, then accept children until the process that started the server is gone.
    Returns only in a forked waiter, with its connection (see `wait_for_child`)."""
    preload()
    # The preloaded heap is left out of every child's collections, so neither a collection
    # nor the child's interpreter exit writes to (and copies) its pages: an exit costs
    # milliseconds, not the second a walk of the SDK's 3,000 modules takes.
    gc.collect()
    gc.freeze()
    if threading.active_count() != 1:  # a fork would copy a lock another thread holds
        raise RuntimeError(f"an import started a thread: {threading.enumerate()}")
    parent = os.getppid()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the waiters are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".new")
    listener.listen(64)
    os.rename(path + ".new", path)  # there once it accepts
    listener.settimeout(1.0)
    while os.getppid() == parent:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            conn.setblocking(True)
            return conn
        conn.close()
    # Its process is gone without stopping it (an xdist worker may end by os._exit): the
    # server removes its own directory.
    import shutil

    listener.close()
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    sys.exit(0)


def _recv_exactly(conn: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = conn.recv(min(n, 1 << 16))
        if not chunk:
            raise EOFError("the client went away")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def wait_for_child(conn: socket.socket, server_env: dict[str, str]) -> dict[str, Any]:
    """The waiter: read one request, fork its child and report how it ended. Returns only in
    the child, with the request (its stdio, directory, umask and environment already set)."""
    try:
        head, fds, _flags, _addr = socket.recv_fds(conn, 8, 3)
        size = struct.unpack("!Q", head + _recv_exactly(conn, 8 - len(head)))[0]
        request = json.loads(_recv_exactly(conn, size))
    except (OSError, EOFError, ValueError, struct.error):
        os._exit(1)
    if len(fds) != 3 or startup_env(request["env"]) != server_env:
        with contextlib.suppress(OSError):
            conn.sendall(b"exec\n")
        os._exit(0)
    pid = os.fork()
    if pid == 0:
        _become(request, fds, conn)
        return request
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(f"pid {pid}\n".encode())
        child = os.pidfd_open(pid)
        ready, _, _ = select.select([conn.fileno(), child], [], [])
        if child not in ready:  # the client is gone (killed): so is its child
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        conn.sendall(f"status {status}\n".encode())
    except OSError:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    os._exit(0)


def _become(request: dict[str, Any], fds: list[int], conn: socket.socket) -> None:
    """Make this forked process what `python -m dayflow` started by the client would be."""
    conn.close()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    sys.argv = ["-m", *request["argv"]]
    sys.path[0] = os.getcwd()  # as `python -m` puts it
    _new_stdio()


def _new_stdio() -> None:
    """sys.stdin, stdout and stderr made anew on fds 0-2, as the interpreter makes them at
    start (same encoding and errors, since the locale and PYTHON* variables are the server's;
    line-buffered on a terminal, stderr always)."""
    unbuffered = bool(getattr(sys.stdout, "write_through", False))  # -u or PYTHONUNBUFFERED
    made = []
    for fd, name, old in ((0, "<stdin>", sys.stdin), (1, "<stdout>", sys.stdout)):
        made.append(_text(fd, name, old, unbuffered, line=os.isatty(fd)))
    made.append(_text(2, "<stderr>", sys.stderr, unbuffered, line=True))
    sys.stdin, sys.stdout, sys.stderr = made
    for name, stream in zip(("__stdin__", "__stdout__", "__stderr__"), made, strict=True):
        setattr(sys, name, stream)


def _text(fd: int, name: str, old: Any, unbuffered: bool, *, line: bool) -> io.TextIOWrapper:
    reading = fd == 0
    raw = io.FileIO(fd, "rb" if reading else "wb", closefd=False)
    raw.name = name  # type: ignore[misc]
    buffered: Any
    if reading:
        buffered = io.BufferedReader(raw)
    elif unbuffered:
        buffered = raw
    else:
        buffered = io.BufferedWriter(raw)
    text = io.TextIOWrapper(
        buffered,
        encoding=old.encoding,
        errors=old.errors,
        newline="\n",
        line_buffering=line,
        write_through=unbuffered and not reading,
    )
    text.mode = "r" if reading else "w"  # type: ignore[misc]
    return text


# ---------------------------------------------------------------------------- the tests' side

_server: subprocess.Popen[bytes] | None = None
_socket: str | None = None
_lock = threading.Lock()


def _start() -> str | None:
    """This process's server, started on first use (None where it cannot run)."""
    global _server, _socket
    with _lock:
        if _socket is None and hasattr(os, "fork") and hasattr(os, "pidfd_open"):
            root = Path(tempfile.mkdtemp(prefix="dayflow-forkserver-"))
            path = str(root / "s")
            with open(root / "server.log", "wb") as log:
                _server = subprocess.Popen(
                    [sys.executable, str(Path(__file__)), path],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    env=dict(os.environ),
                    cwd=root,
                )
            _socket = path
            atexit.register(_stop, root, os.getpid())
        return _socket


def _stop(root: Path, owner: int) -> None:
    import shutil

    if os.getpid() != owner:  # a forked copy of the process that started it exits
        return
    if _server is not None and _server.poll() is None:
        _server.kill()
        _server.wait()
    shutil.rmtree(root, ignore_errors=True)


def ready(timeout: float = 120) -> bool:
    """Wait for this process's server to accept (the preload takes seconds)."""
    path = _start()
    deadline = time.monotonic() + timeout
    while path is not None and time.monotonic() < deadline:
        if os.path.exists(path):
            return True
        if _server is not None and _server.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def exec_command(*args: str, module: str = "dayflow") -> list[str]:
    """`python -m dayflow ARGS` started afresh, as without the server."""
    return [sys.executable, "-m", module, *args]


def command(*args: str, module: str = "dayflow") -> list[str]:
    """The argv of `python -m dayflow ARGS`, forked from this process's server: a real
    process of its own that only skips the imports (see the module's docstring). `module`
    names another module to run as `python -m` does (a test's driver of Dayflow's modules,
    `tests.batchdriver`), run from the working directory the child is given."""
    if os.environ.get(OFF) == "1" or not ready():
        return exec_command(*args, module=module)
    assert _socket is not None
    return [sys.executable, "-I", "-S", str(CLIENT), _socket, module, *args]


if __name__ == "__main__":
    sys.path[0] = os.getcwd()  # not tests/: as `python -m` puts it
    _conn = serve(sys.argv[1])
    _request = wait_for_child(_conn, startup_env(os.environ))
    # Only the child gets here: `python -m MODULE`, whose SystemExit (or SIGKILL) ends it.
    _module = str(_request["module"])
    del _conn, _request
    import runpy

    runpy.run_module(_module, run_name="__main__", alter_sys=True)
