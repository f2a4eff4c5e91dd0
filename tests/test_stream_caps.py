"""No stream is read without end (issue 32.13): `--inbox /dev/zero` grew to 8.5 GB and ended in
MemoryError. Standard input, pipes, files and an IMAP server's answers all stop at a cap with
one line and the input-problem exit code; and a refused `--inbox -` is named as standard input,
with no copy of it left behind (issue 32.21)."""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dayflow.errors import SourceError
from dayflow.files import MAX_STREAM_BYTES
from dayflow.providers.offline import OfflineModel
from dayflow.sources.imap import ImapSource
from dayflow.sources.imap_wire import MAX_ANSWER_BYTES
from tests.conftest import subprocess_env
from tests.harness import Result, invoke
from tests.imapserver import imap_spec


def run(db: Path | str, *args: str, stdin: bytes | None = None) -> Result:
    return invoke(db, lambda name, settings: OfflineModel(), *args, stdin=stdin)


def _at_most(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["--inbox", "--calendar"])
def test_an_inbox_or_calendar_that_never_ends_stops_at_the_cap(tmp_path: Path, flag: str) -> None:
    """In a process allowed 1.5 GB: the old code read /dev/zero until MemoryError."""
    env = subprocess_env(tmp_path / "db.sqlite", HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path))
    env.pop("DAYFLOW_CONFIG", None)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "dayflow", "brief", flag, "/dev/zero"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: _at_most(1536 * 2**20),
    )
    assert time.monotonic() - started < 60
    assert done.returncode == 4, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
    assert errors == [f"error: {flag}: cannot read /dev/zero: it is larger than 50 MB"]
    assert not list(tmp_path.rglob("inputs/*"))  # nothing kept


def test_standard_input_stops_at_the_cap_and_keeps_no_copy(db_path: Path | str) -> None:
    result = run(db_path, "brief", "--inbox", "-", stdin=b" " * (MAX_STREAM_BYTES + 10))
    assert result.code == 4, result.err
    assert "error: --inbox: cannot read standard input: it is larger than 50 MB" in result.err
    assert result.err.count("error") == 1


def test_a_refused_standard_input_is_named_so_and_leaves_no_copy(
    db_path: Path | str, tmp_path: Path
) -> None:
    """It named the private copy (`.../inputs/inbox-<hash>.json`) and left it there."""
    for body, problem in (
        (b"nope", "invalid JSON at line 1 column 1"),
        (b'{"messages": 5}', "'messages' must be a list, not a number"),
        (b"\xff\xfe", "is not UTF-8 text"),
    ):
        result = run(db_path, "brief", "--new", "--inbox", "-", stdin=body)
        assert result.code == 4, result.err
        assert f"error: --inbox standard input: {problem}" in result.err
        assert "inputs/" not in result.err and "kept as" not in result.err
    assert not [p for p in Path(tmp_path).rglob("*") if p.parent.name == "inputs"]
    good = b'{"messages": []}'
    kept = run(db_path, "brief", "--new", "--inbox", "-", stdin=good)
    assert kept.code == 0, kept.err
    assert "read the inbox from standard input; kept as" in kept.err


@pytest.mark.parametrize("kind", ["json", "ics"])
def test_a_source_file_past_the_cap_is_refused_unread(tmp_path: Path, kind: str) -> None:
    from dayflow.sources.ics import IcsCalendar
    from dayflow.sources.json_files import JsonCalendar

    big = tmp_path / f"big.{kind}"
    with big.open("wb") as fh:  # sparse: nothing is written but the size
        fh.truncate(MAX_STREAM_BYTES + 1)
    import datetime as dt

    day = dt.date(2026, 11, 5)
    reader = JsonCalendar(big, day) if kind == "json" else IcsCalendar("home", tz=dt.UTC, path=big)
    with pytest.raises(SourceError, match="larger than 50 MB"):
        reader.events(first=day, last=day)


@pytest.fixture
def endless_literal() -> Iterator[tuple[int, list[int]]]:
    """An IMAP server that logs anyone in, then answers EXAMINE with a literal announced as
    100 GB and sends zeros for as long as the client reads: (its port, bytes it sent)."""
    listener = socket.create_server(("127.0.0.1", 0))
    sent = [0]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.sendall(b"* OK IMAP4rev1 ready\r\n")
            reader = conn.makefile("rb")
            while line := reader.readline():
                tag, _, command = line.decode().strip().partition(" ")
                word = command.split(" ", 1)[0].upper()
                if word == "CAPABILITY":
                    conn.sendall(b"* CAPABILITY IMAP4rev1\r\n" + tag.encode() + b" OK done\r\n")
                elif word == "LOGIN":
                    conn.sendall(tag.encode() + b" OK logged in\r\n")
                elif word in ("EXAMINE", "SELECT", "UID", "STATUS", "NOOP"):
                    conn.sendall(b"* 1 FETCH (UID 1 BODY[] {100000000000}\r\n")
                    chunk = b"\0" * 65536
                    try:
                        while sent[0] < 4 * MAX_ANSWER_BYTES:
                            conn.sendall(chunk)
                            sent[0] += len(chunk)
                    except OSError:
                        return
                    return
                else:
                    conn.sendall(tag.encode() + b" BAD what\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], sent
    finally:
        listener.close()
        thread.join(timeout=10)


def test_an_imap_literal_past_the_cap_is_refused_before_it_is_read(
    endless_literal: tuple[int, list[int]],
) -> None:
    port, sent = endless_literal
    spec = imap_spec(port, security="plain", password_env="PW", timeout=20.0)
    source = ImapSource(spec, env={"PW": "x"})
    with pytest.raises(SourceError) as caught:
        source.page(since=None, after=None, limit=5, unread_only=False)
    assert "sent more than 50 MB in one answer; refused" in str(caught.value)
    assert sent[0] < MAX_ANSWER_BYTES  # what the socket buffers held, not what was announced
