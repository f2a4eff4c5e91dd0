"""The machine as the schedule sees it (`System`): its environment, platform and the system
tools it runs, found on PATH, so tests put recording fakes there. Below both `schedule_render`
(which runs `systemd-analyze verify`) and `schedule` (which installs), so neither imports the
other back (tests/floors.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dayflow.schedule_units import LAUNCHD_LABEL

_TIMEOUT_S = 30


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


class System:
    """The machine as the schedule sees it: its environment (PATH, HOME, XDG dirs), platform
    and the system tools it calls. Tests build one over a directory of fake tools."""

    def __init__(self, env: Mapping[str, str], platform: str, uid: int | None = None) -> None:
        self.env = dict(env)
        self.platform = platform
        self.uid = os.getuid() if uid is None else uid

    def which(self, name: str) -> str | None:
        return shutil.which(name, path=self.env.get("PATH") or os.defpath)

    def run(self, argv: Sequence[str], stdin: str | None = None) -> Result:
        """Run a system tool; a missing or hanging tool is a Result, never an exception."""
        exe = self.which(argv[0])
        if exe is None:
            return Result(127, "", f"{argv[0]}: command not found")
        try:
            proc = subprocess.run(
                [exe, *argv[1:]],
                input=stdin,
                capture_output=True,
                text=True,
                env=self.env,
                timeout=_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Result(126, "", f"{argv[0]}: {exc}")
        return Result(proc.returncode, proc.stdout, proc.stderr)

    @property
    def home(self) -> Path:
        return Path(self.env.get("HOME") or Path.home())

    def _xdg(self, var: str, default: str) -> Path:
        value = self.env.get(var) or ""
        return Path(value) if value and Path(value).is_absolute() else self.home / default

    @property
    def systemd_dir(self) -> Path:
        return self._xdg("XDG_CONFIG_HOME", ".config") / "systemd" / "user"

    @property
    def state_dir(self) -> Path:
        return self._xdg("XDG_STATE_HOME", ".local/state") / "dayflow"

    @property
    def launchd_plist(self) -> Path:
        return self.home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"

    def systemd_user_session(self) -> tuple[bool, str]:
        """Whether a systemd user manager answers, and if not why."""
        if self.which("systemctl") is None:
            return False, "no systemctl"
        r = self.run(["systemctl", "--user", "show-environment"])
        if r.code == 0:
            return True, ""
        return False, f"no systemd user session ({first_line(r.err) or f'exit {r.code}'})"


def first_line(text: str) -> str:
    """The first line of a tool's output, stripped ("" for none)."""
    return text.strip().splitlines()[0] if text.strip() else ""
