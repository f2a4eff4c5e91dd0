"""A source that failed is down for the rest of the run (issue 32.14): a server that never
answers cost its timeout at every read of the same brief (the inbox, who is waiting on you,
the sent folder; the week, today, each meeting's prep), with a failure line each. Now it is
tried once per process, said once per section, and a new process (a resume) tries again."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import invoke, offline_model


class Silent:
    """A TCP server on 127.0.0.1 that accepts every connection and never says a word."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self._held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            self._held.append(conn)

    def close(self) -> None:
        self.listener.close()
        for conn in self._held:
            conn.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    server = Silent()
    try:
        yield server
    finally:
        server.close()


def _brief(tmp_path: Path, config: str) -> str:
    path = tmp_path / "config.toml"
    path.write_text('me = ["alex@example.org"]\n' + config)
    env = {"DAYFLOW_CONFIG": str(path), "PW": "x"}
    got = invoke(tmp_path / "d.db", offline_model, "brief", "--new", env=env)
    assert got.code == 0, got.err
    return got.out


def test_an_imap_account_that_never_answers_is_waited_for_once(
    tmp_path: Path, silent: Silent
) -> None:
    """Its inbox, its followups and its sent folder: three timeouts, three lines before."""
    config = (
        f'[[inbox]]\nname = "work"\nkind = "imap"\nhost = "127.0.0.1"\nport = {silent.port}\n'
        'security = "plain"\nuser = "alex"\npassword_env = "PW"\ntimeout = 1\n'
    )
    brief = _brief(tmp_path, config)
    assert silent.accepted == 1
    assert "work/sent" not in brief
    assert brief.count("within 1 s") == 2  # Needs action, You owe: once each
    _brief(tmp_path, config)  # another process's run (a resume) tries once again
    assert silent.accepted == 2


def test_a_calendar_feed_that_never_answers_is_waited_for_once(
    tmp_path: Path, silent: Silent
) -> None:
    inbox = tmp_path / "inbox.json"
    inbox.write_text('{"messages": []}')
    config = (
        f'[[inbox]]\nname = "home"\nkind = "json"\npath = "{inbox}"\n'
        f'[[calendar]]\nname = "feed"\nkind = "ics"\nurl = "http://127.0.0.1:{silent.port}/c.ics"\n'
        "timeout = 1\n"
    )
    _brief(tmp_path, config)
    assert silent.accepted == 1
