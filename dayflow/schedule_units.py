"""What a schedule is made of, as text: the systemd units, the crontab block, the launchd
property list and the by-hand instructions for one `Job`. Pure: no I/O (`dayflow.schedule`
installs them).
"""

from __future__ import annotations

import plistlib
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from dayflow.errors import UsageError

UNIT = "dayflow-brief"
LAUNCHD_LABEL = "dev.dayflow.brief"
CRON_BEGIN = "# BEGIN dayflow schedule (written by `dayflow schedule install`; do not edit)"
CRON_END = "# END dayflow schedule"


@dataclass(frozen=True)
class Job:
    """What the schedule runs, and when (the machine's local time)."""

    hour: int
    minute: int
    weekdays: bool
    argv: tuple[str, ...]  # absolute path of dayflow first
    env: tuple[tuple[str, str], ...]
    log: Path  # where cron and launchd append the job's output (systemd has the journal)

    @property
    def when(self) -> str:
        days = "Monday to Friday" if self.weekdays else "every day"
        return f"{days} at {self.hour:02d}:{self.minute:02d}"


def parse_at(value: str) -> tuple[int, int]:
    """`HH:MM` (24-hour) as (hour, minute); a usage error otherwise."""
    m = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*", value or "")
    if m is None or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        raise UsageError(f"--at {value!r} is not a time of day (use HH:MM, 24-hour, e.g. 07:30)")
    return int(m.group(1)), int(m.group(2))


def systemd_units(job: Job) -> tuple[str, str]:
    """The service and timer unit files."""
    env = "".join(f"Environment={_sd_quote(f'{k}={v}', exec_line=False)}\n" for k, v in job.env)
    service = (
        "# Written by `dayflow schedule install`; `dayflow schedule remove` deletes it.\n"
        "[Unit]\n"
        "Description=Dayflow: today's brief\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"{env}"
        f"ExecStart={' '.join(_sd_quote(a) for a in job.argv)}\n"
    )
    days = "Mon..Fri " if job.weekdays else ""
    timer = (
        "# Written by `dayflow schedule install`; `dayflow schedule remove` deletes it.\n"
        "[Unit]\n"
        f"Description=Dayflow: today's brief, {job.when}\n"
        "\n"
        "[Timer]\n"
        f"OnCalendar={days}*-*-* {job.hour:02d}:{job.minute:02d}:00\n"
        "Persistent=true\n"
        f"Unit={UNIT}.service\n"
        "\n"
        "[Install]\n"
        "WantedBy=timers.target\n"
    )
    return service, timer


def _sd_quote(arg: str, *, exec_line: bool = True) -> str:
    """One word of ExecStart= (or one Environment= assignment), quoted for systemd: specifiers
    (and on ExecStart=, variables) taken literally."""
    if "\n" in arg or "\r" in arg:
        raise UsageError(f"cannot schedule a path or setting holding a line break: {arg!r}")
    arg = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    if exec_line:
        arg = arg.replace("$", "$$")
    return f'"{arg}"'


def cron_block(job: Job) -> str:
    """The crontab lines (between the markers) that run the job."""
    for value in (*job.argv, *(v for _, v in job.env), str(job.log)):
        if "\n" in value or "\r" in value:
            raise UsageError(f"cannot schedule a path or setting holding a line break: {value!r}")
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in job.env)
    command = " ".join(shlex.quote(a) for a in job.argv)
    line = f"{env} {command} >> {shlex.quote(str(job.log))} 2>&1".strip()
    # In a crontab an unescaped % ends the command (the rest becomes its stdin).
    line = line.replace("%", "\\%")
    days = "1-5" if job.weekdays else "*"
    return f"{CRON_BEGIN}\n{job.minute} {job.hour} * * {days} {line}\n{CRON_END}\n"


def without_cron_block(crontab: str) -> str:
    """The crontab with Dayflow's block (if any) taken out, everything else as it was."""
    out, inside = [], False
    for line in crontab.splitlines(keepends=True):
        if line.rstrip("\n") == CRON_BEGIN:
            inside = True
            continue
        if inside and line.rstrip("\n") == CRON_END:
            inside = False
            continue
        if not inside:
            out.append(line)
    text = "".join(out)
    return text if not text or text.endswith("\n") else text + "\n"


def launchd_plist(job: Job) -> bytes:
    """The launch agent's property list."""
    if job.weekdays:
        when: object = [{"Weekday": d, "Hour": job.hour, "Minute": job.minute} for d in range(1, 6)]
    else:
        when = {"Hour": job.hour, "Minute": job.minute}
    return plistlib.dumps(
        {
            "Label": LAUNCHD_LABEL,
            "ProgramArguments": list(job.argv),
            "EnvironmentVariables": dict(job.env),
            "StartCalendarInterval": when,
            "StandardOutPath": str(job.log),
            "StandardErrorPath": str(job.log),
            "RunAtLoad": False,
        },
        sort_keys=True,
    )


def by_hand(job: Job) -> str:
    """What to do when Dayflow cannot install the schedule itself."""
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in job.env)
    command = " ".join(shlex.quote(a) for a in job.argv)
    return (
        f"To get today's brief {job.when}, run this at that time (any scheduler will do):\n\n"
        f"    {env} {command}\n\n"
        "or add these lines to your crontab (`crontab -e`):\n\n"
        + "".join(f"    {line}\n" for line in cron_block(job).splitlines())
    )
