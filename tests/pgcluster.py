"""A private PostgreSQL server for the tests that must stop or restart one.

The shared server named by DAYFLOW_TEST_PG serves every test session on the machine, so no test
may restart it. A test that needs a server restart gets its own: `initdb` of a fresh cluster
in a temporary directory, started with `pg_ctl` on a free loopback port and a private socket
directory, stopped and removed at the end. The binaries come from the machine's PostgreSQL
installation (`pg_config --bindir`, or Debian's /usr/lib/postgresql/<major>/bin); PostgreSQL
refuses to run as root, so under root every command runs as the `postgres` user.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


def bindir() -> Path | None:
    """Where initdb and pg_ctl are, or None when this machine has no PostgreSQL server."""
    config = shutil.which("pg_config")
    candidates: list[Path] = []
    if config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
            )
            candidates.append(Path(out.stdout.strip()))
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).parent)
    for directory in candidates:
        if (directory / "initdb").exists() and (directory / "pg_ctl").exists():
            return directory
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """One private server: `url` to connect, `restart()`, `stop()` and `start()`."""

    def __init__(self, bin_dir: Path, root: Path, max_connections: int = 40) -> None:
        self._bin = bin_dir
        self.max_connections = max_connections
        self.root = root
        self.data = root / "data"
        self.port = _free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self._as: list[str] = []
        if os.geteuid() == 0:
            pwd.getpwnam("postgres")  # KeyError: no such user to run the server as
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            [*self._as, *args], capture_output=True, text=True, timeout=120, cwd=self.root
        )
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{args[0]} failed: {done.stderr.strip()}\n{tail}")

    def init(self) -> None:
        self._run(
            str(self._bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "--no-sync",
        )

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
            f"-c fsync=off -c shared_buffers=16MB -c max_connections={self.max_connections}"
        )
        self._run(
            str(self._bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "server.log"),
            "-w",
            "start",
        )

    def start_on_a_free_port(self, tries: int = 5) -> None:
        """`start()`, on another free port while the one picked was taken in between (by a
        test session on another pytest-xdist worker, or another program)."""
        for attempt in range(tries):
            try:
                self.start()
                return
            except RuntimeError as exc:
                if "could not bind" not in str(exc) or attempt == tries - 1:
                    raise
                self.port = _free_port()
                self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self, mode: str = "fast") -> None:
        """Stop the server; `immediate` is a crash (no checkpoint; WAL replay at start)."""
        self._run(str(self._bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, mode: str = "immediate") -> None:
        self.stop(mode)
        self.start()


@contextlib.contextmanager
def private_cluster(max_connections: int = 40) -> Iterator[Cluster]:
    """A started private server, stopped and deleted after (RuntimeError if it cannot start)."""
    bin_dir = bindir()
    if bin_dir is None:
        raise RuntimeError("no PostgreSQL server binaries (initdb, pg_ctl) on this machine")
    root = Path(tempfile.mkdtemp(prefix="dayflow-pg-"))
    try:
        cluster = Cluster(bin_dir, root, max_connections)
        if cluster._as:
            entry = pwd.getpwnam("postgres")
            os.chown(root, entry.pw_uid, entry.pw_gid)
        root.chmod(0o700)
        cluster.init()
        cluster.start_on_a_free_port()
        try:
            yield cluster
        finally:
            with contextlib.suppress(RuntimeError, subprocess.SubprocessError):
                cluster.stop("immediate")
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def cluster_or_skip(max_connections: int = 40) -> Iterator[Cluster]:
    """`private_cluster()` for a test: skipped where this machine has no server binaries,
    unless DAYFLOW_TEST_PG_CLUSTER=required (CI sets it), where that is a failure."""
    import pytest

    if bindir() is None:
        why = "no PostgreSQL server binaries (initdb, pg_ctl) to start a private server"
        if os.environ.get("DAYFLOW_TEST_PG_CLUSTER") == "required":
            pytest.fail(why + " (DAYFLOW_TEST_PG_CLUSTER=required)")
        pytest.skip(why)
    with private_cluster(max_connections) as c:
        yield c
