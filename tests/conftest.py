from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dayflow.clock import FixedClock
from dayflow.store import Store, open_store

# Every variable that could point a test at a real key, model or database.
_SCRUB = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "DAYFLOW_DB",
    "DAYFLOW_MODEL",
    "DAYFLOW_TZ",
    "DAYFLOW_INBOX",
    "DAYFLOW_CALENDAR",
    "DAYFLOW_KILL_AT",
    "DAYFLOW_DURABILITY",
)


@pytest.fixture(autouse=True)
def _no_real_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test can reach the real Anthropic API or the user's real database: the key is gone,
    the base URL points at a closed loopback port, and any connection to a host other than
    loopback fails the test at once."""
    for name in _SCRUB:
        monkeypatch.delenv(name, raising=False)
    real_connect = socket.socket.connect

    def loopback_only(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and address[0] not in ("127.0.0.1", "::1", "localhost"):
            pytest.fail(f"test tried to connect to {address!r}: only loopback is allowed")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock("2026-11-05T07:30:00+00:00")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "dayflow.db"


@pytest.fixture
def store(db_path: Path, clock: FixedClock) -> Iterator[Store]:
    with open_store(db_path, clock=clock) as s:
        yield s


def subprocess_env(db: Path, **extra: str) -> dict[str, str]:
    """An environment for running `python -m dayflow` in a child process of a test."""
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    env.update({"DAYFLOW_DB": str(db), "COLUMNS": "200", "NO_COLOR": "1"})
    env.update(extra)
    return env
