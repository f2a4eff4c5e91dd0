"""What a schedule is made of, as text: the systemd units, the crontab block, the launchd
property list and the by-hand instructions for one `Job`. Pure: no I/O (`dayflow.schedule`
installs them).
"""

from __future__ import annotations

import plistlib
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dayflow.errors import DayflowError, UsageError

UNIT = "dayflow-brief"
LAUNCHD_LABEL = "dev.dayflow.brief"
CRON_BEGIN = "# BEGIN dayflow schedule (written by `dayflow schedule install`; do not edit)"
CRON_END = "# END dayflow schedule"

# The settings a scheduled run keeps from the moment it was installed: what decides which
# database, config, `.env` files (where the key is), model and endpoint it uses. Never a
# secret: the key stays in the `.env` file DAYFLOW_DOTENV or the config directory names.
PINNED = (
    "DAYFLOW_DB",
    "DAYFLOW_TZ",
    "DAYFLOW_MODEL",
    # Which model server: a timer that dropped DAYFLOW_PROVIDER=local would send a private
    # morning to Claude whenever the .env file holds a key.
    "DAYFLOW_PROVIDER",
    "DAYFLOW_PG_PGBOUNCER",
    "DAYFLOW_CONFIG",
    "DAYFLOW_DOTENV",
    "DAYFLOW_INBOX",
    "DAYFLOW_CALENDAR",
    "DAYFLOW_DURABILITY",
    "DAYFLOW_PRICES",
    "DAYFLOW_TIMEOUT",
    "DAYFLOW_HOST",
    "ANTHROPIC_BASE_URL",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)
# Pinned as absolute paths: a timer or cron job does not start in the install's directory.
_PATHS = (
    "DAYFLOW_CONFIG",
    "DAYFLOW_DOTENV",
    "DAYFLOW_INBOX",
    "DAYFLOW_CALENDAR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)


def pinned_settings(env: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """The PINNED variables set in `env`, relative paths made absolute against `cwd`. A URL
    holding a password is refused (a unit, crontab line or plist is plain text)."""
    out: dict[str, str] = {}
    for key in PINNED:
        value = env.get(key)
        if not value:
            continue
        if key in _PATHS:
            path = Path(value).expanduser()
            value = str(path if path.is_absolute() else cwd / path)
        elif key.startswith("XDG_") and not Path(value).is_absolute():
            continue  # ignored by Dayflow too, as the XDG spec says
        out[key] = value
    base = out.get("ANTHROPIC_BASE_URL")
    if base is not None and _holds_a_secret(base):
        raise UsageError(
            "ANTHROPIC_BASE_URL holds a password or key, which a scheduled job would keep in "
            "plain text: give it without one"
        )
    return out


def _holds_a_secret(url: str) -> bool:
    from urllib.parse import parse_qsl, urlsplit

    parts = urlsplit(url)
    names = {"password", "key", "api_key", "apikey", "token", "secret", "access_token"}
    return parts.password is not None or any(k.lower() in names for k, _ in parse_qsl(parts.query))


class ScheduleError(DayflowError):
    """A schedule could not be installed, read or removed. `by_hand` holds what to run
    instead, which the CLI prints on stdout."""

    exit_code = 1

    def __init__(self, message: str, by_hand: str | None = None) -> None:
        super().__init__(message)
        self.by_hand = by_hand


class ScheduleFileError(ScheduleError):
    """A timer's file could not be written (exit 4, as every output that cannot be)."""

    exit_code = 4


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
    refuse_unwritable(job)
    env = "".join(f"Environment={_sd_quote(f'{k}={v}', exec_line=False)}\n" for k, v in job.env)
    service = (
        "# Written by `dayflow schedule install`; `dayflow schedule remove` deletes it.\n"
        "[Unit]\n"
        "Description=Dayflow: today's brief\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"{env}"
        f"ExecStart={' '.join(_sd_quote(a) for a in systemd_argv(job))}\n"
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


ENV = "/usr/bin/env"


def systemd_argv(job: Job) -> list[str]:
    """What ExecStart= runs. systemd takes the executable's path as written (no `$$`) and
    refuses one holding a quote, a backslash or a control character, so such a path (a
    virtualenv under `~/Alex's files`, say) is run through `/usr/bin/env`, which gets it as an
    ordinary argument; env would read a path holding `=` as a variable, so that one is
    refused."""
    exe = job.argv[0]
    if not any(c in "\\\"'$" or ord(c) < 32 for c in exe):
        return list(job.argv)
    if "=" in exe:
        raise UsageError(
            f"cannot schedule {exe!r} with systemd: the path holds a quote, backslash, tab or $ "
            "(which systemd refuses in a command's name) and an = (which /usr/bin/env would "
            "misread); use --backend cron, or install Dayflow under a plainer path"
        )
    return [ENV, *job.argv]


def _sd_quote(arg: str, *, exec_line: bool = True) -> str:
    """One word of ExecStart= (or one Environment= assignment), quoted for systemd: inside
    double quotes `\\` and `\"` are C escapes and a tab is written `\\t`; `%%` is a literal
    `%` (specifiers); on ExecStart= `$$` is a literal `$` (Environment= expands nothing)."""
    arg = arg.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("%", "%%")
    if exec_line:
        arg = arg.replace("$", "$$")
    return f'"{arg}"'


def refuse_unwritable(job: Job) -> None:
    """A UsageError naming the first setting or path no scheduler file can carry: a line break
    or another control character (a tab is fine), or bytes that are not UTF-8."""
    values = [*((k, v) for k, v in job.env), *(("the command", a) for a in job.argv)]
    values.append(("the log file", str(job.log)))
    for label, value in values:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(
                f"cannot schedule {label} {value!r}: it is not UTF-8 text, which a unit file, "
                "crontab line or plist cannot hold; rename it"
            ) from None
        if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in value):
            raise UsageError(
                f"cannot schedule {label} {value!r}: it holds a line break or another control "
                "character, which a unit file, crontab line or plist cannot hold; rename it"
            )


def _cron_word(word: str) -> str:
    # Quoted for sh, then for cron: cron ends the command at a bare % and turns \% into %, so
    # each % leaves the single quotes as '\%' (sh then reads a plain %). A backslash in the
    # value stays inside the quotes, where neither cron nor sh touches it.
    return shlex.quote(word).replace("%", "'\\%'")


def cron_block(job: Job) -> str:
    """The crontab lines (between the markers) that run the job."""
    refuse_unwritable(job)
    env = " ".join(f"{k}={_cron_word(v)}" for k, v in job.env)
    command = " ".join(_cron_word(a) for a in job.argv)
    line = f"{env} {command} >> {_cron_word(str(job.log))} 2>&1".strip()
    days = "1-5" if job.weekdays else "*"
    return f"{CRON_BEGIN}\n{job.minute} {job.hour} * * {days} {line}\n{CRON_END}\n"


def cron_words(job: Job) -> list[str]:
    """The words sh should see in the job's crontab command."""
    env = [f"{k}={v}" for k, v in job.env]
    return [*env, *job.argv, ">>", str(job.log), "2>&1"]


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
    refuse_unwritable(job)
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
