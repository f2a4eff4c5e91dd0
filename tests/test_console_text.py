"""Text from the user's mail, calendars and files reaches the terminal as written: Rich's emoji
codes (":x:", ":tada:") are not replaced, in real processes with the real consoles (the test
harness passes consoles of its own, so only a subprocess sees what a user sees)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import dayflow_process

EVENT = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//t//t//EN
BEGIN:VEVENT
UID:review@t
DTSTART:20261105T140000Z
DTEND:20261105T150000Z
SUMMARY::x: Sprint review :tada:
END:VEVENT
END:VCALENDAR
"""


def _dayflow(tmp_path: Path, config: str, *args: str) -> subprocess.CompletedProcess[str]:
    conf = tmp_path / "config.toml"
    conf.write_text(config)
    return dayflow_process(tmp_path / "d.db", conf, *args, timeout=120)


def test_an_event_title_with_emoji_codes_is_printed_as_written(tmp_path: Path) -> None:
    (tmp_path / "cal.ics").write_text(EVENT)
    config = f'[[calendar]]\nname = "home"\nkind = "ics"\npath = "{tmp_path / "cal.ics"}"\n'
    for fmt in ("rich", "markdown"):
        res = _dayflow(tmp_path, config, "brief", "--date", "2026-11-05", "--format", fmt)
        assert res.returncode == 0, res.stderr
        assert ":x: Sprint review :tada:" in res.stdout
        assert "\u274c" not in res.stdout and "\U0001f389" not in res.stdout


def test_an_error_quoting_a_file_is_printed_as_written(tmp_path: Path) -> None:
    (tmp_path / "cal.ics").write_text("root:x:0:0:root:/root:/bin/bash\n")
    config = f'[[calendar]]\nname = "home"\nkind = "ics"\npath = "{tmp_path / "cal.ics"}"\n'
    res = _dayflow(tmp_path, config, "sources", "check")
    assert res.returncode == 4
    assert "root:x:0:0" in res.stdout + res.stderr
    assert "\u274c" not in res.stdout + res.stderr
