"""Paths that are not regular files where a file is read or a note written: a FIFO blocked
for ever (`--deliver file:`, `tasks sync FILE`, `--config`, an mbox), /dev/zero never ended.
Each is refused in one line naming the path and what it is; nothing waits."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from dayflow.errors import SourceError
from dayflow.providers.offline import OfflineModel
from dayflow.sources.mbox import MboxSource
from tests.harness import Result, invoke


def run(db: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return invoke(db, lambda name, settings: OfflineModel(), *args, env=env)


@pytest.fixture(params=["fifo", "socket", "directory", "device"])
def odd(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A path that is not a regular file, and the words that name what it is."""
    path = tmp_path / f"odd-{request.param}"
    held: socket.socket | None = None
    if request.param == "fifo":
        os.mkfifo(path)
        words = "a FIFO (named pipe)"
    elif request.param == "socket":
        held = socket.socket(socket.AF_UNIX)
        held.bind(str(path))
        words = "a socket"
    elif request.param == "directory":
        path.mkdir()
        words = "a directory"
    else:
        path = Path("/dev/zero")  # never ends
        words = "a device"
    try:
        yield path, words
    finally:
        if held is not None:
            held.close()


def test_a_config_that_is_not_a_regular_file_is_refused_in_one_line(
    db_path: Path, odd: tuple[Path, str]
) -> None:
    path, words = odd
    for args in (["sources"], ["brief", "--config", str(path)]):
        env = {"DAYFLOW_CONFIG": str(path)} if args == ["sources"] else None
        result = run(db_path, *args, env=env)
        assert result.code == 4, (args, result.err)
        assert f"{path}: is {words}, not a config file" in result.err
        assert len(result.err.strip().splitlines()) == 1


def test_tasks_sync_of_a_file_that_is_not_regular_is_refused(
    db_path: Path, odd: tuple[Path, str]
) -> None:
    path, words = odd
    result = run(db_path, "tasks", "sync", str(path))
    assert result.code == 4
    assert f"cannot read task file {path}: it is {words}, not a regular file" in result.err


def test_a_note_that_is_not_a_regular_file_fails_the_delivery_resumably(
    db_path: Path, odd: tuple[Path, str]
) -> None:
    path, words = odd
    result = run(db_path, "brief", "--deliver", f"file:{path}")
    assert result.code == 6, result.err
    assert f"file {path}: it is {words}, not a note" in result.err
    assert "One thing" in result.out  # a brief that could not be delivered is printed anyway


def test_an_mbox_that_is_not_a_regular_file_is_one_line(odd: tuple[Path, str]) -> None:
    path, words = odd
    source = MboxSource("old", path)
    with pytest.raises(SourceError) as caught:
        source.page(since=None, after=None, limit=5, unread_only=False)
    assert str(caught.value) in (
        f"old: {path} is {words}, not an mbox file",
        f"old: {path} is a directory, not an mbox file",
    )
