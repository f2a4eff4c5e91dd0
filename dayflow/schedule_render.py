"""Rendering a schedule and reading it back before anything on the machine changes: the unit
files, crontab block or plist for one `Job`, each checked with `schedule_parse` (and
`systemd-analyze verify` where it is installed). `schedule.install` writes only what `render`
returned, so a refused install leaves the old schedule as it was.
"""

from __future__ import annotations

import plistlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dayflow import schedule_parse
from dayflow.schedule_system import System
from dayflow.schedule_units import (
    UNIT,
    Job,
    ScheduleError,
    cron_block,
    cron_words,
    launchd_plist,
    systemd_argv,
    systemd_units,
)


@dataclass(frozen=True)
class Rendered:
    """What an install writes, rendered and read back before anything on the machine changes:
    the unit files or plist (path, text), or the crontab block."""

    backend: str
    files: tuple[tuple[Path, str], ...] = ()
    cron: str = ""


def render(system: System, job: Job, backend: str) -> Rendered:
    """The files or crontab block for `job`, each read back as its scheduler will read it: a
    UsageError (one line) for a value no scheduler file can carry, a ScheduleError for text that
    would not run exactly `job`. Nothing is changed."""
    if backend == "systemd":
        service, timer = systemd_units(job)
        _check(job, "systemd", lambda: schedule_parse.read_service(service))
        unit_dir = system.systemd_dir
        files = ((unit_dir / f"{UNIT}.service", service), (unit_dir / f"{UNIT}.timer", timer))
        _analyze(system, files)
        return Rendered("systemd", files)
    if backend == "cron":
        block = cron_block(job)
        line = block.splitlines()[1]
        _check(job, "cron", lambda: (schedule_parse.cron_words(line), []))
        return Rendered("cron", cron=block)
    plist = launchd_plist(job)
    data = plistlib.loads(plist)
    _check(job, "launchd", lambda: (data["ProgramArguments"], data["EnvironmentVariables"]))
    return Rendered("launchd", ((system.launchd_plist, plist.decode("utf-8")),))


def _check(job: Job, backend: str, read: Callable[[], tuple[object, object]]) -> None:
    if backend == "cron":
        want: tuple[object, object] = (cron_words(job), [])
    elif backend == "launchd":
        want = (list(job.argv), dict(job.env))
    else:
        want = (systemd_argv(job), list(job.env))
    try:
        got = read()
    except ValueError as exc:
        got = (f"unreadable ({exc})", None)
    if got != want:
        raise ScheduleError(
            f"the {backend} job Dayflow would write does not read back as the command it "
            f"should run (it reads as {got[0]!r}); nothing was changed"
        )


def _analyze(system: System, files: tuple[tuple[Path, str], ...]) -> None:
    """`systemd-analyze verify` on the units, where it is installed, before they are written."""
    if system.which("systemd-analyze") is None:
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dayflow-units-") as tmp:
        paths = []
        for path, text in files:
            paths.append(str(Path(tmp) / path.name))
            Path(paths[-1]).write_text(text, encoding="utf-8")
        r = system.run(["systemd-analyze", "verify", "--man=no", *paths])
        ours = [line for line in r.err.splitlines() if tmp in line]
        if r.code != 0 and ours:
            first = ours[0].replace(tmp + "/", "")
            raise ScheduleError(
                f"systemd-analyze refuses the unit Dayflow would write ({first}); nothing "
                "was changed"
            )
