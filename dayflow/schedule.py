"""Running `dayflow brief --ensure-today` every morning without typing it: a systemd user timer
where a systemd user session exists, a crontab entry otherwise, a launchd agent on macOS.

Why it looks the way it does:

- What runs is the installed `dayflow` by absolute path, with the database, timezone and the
  other `DAYFLOW_*` settings in effect at install time pinned in the unit (a timer's
  environment is not the user's shell). The API key is never written into a unit: it comes
  from where Dayflow always reads it.
- `--ensure-today` makes the job safe to run twice (a missed run caught up at wake by
  `Persistent=true` or launchd, and the user typing `dayflow brief` at the same moment): one
  process drives today's brief, any other waits for it or prints it.
- Every change goes through the system's own tools (`systemctl --user`, `crontab`,
  `launchctl`), found on PATH, so tests put recording fakes there and never touch the
  machine. The crontab entry sits between marker lines; the rest of the crontab is kept.
- When nothing can be installed, the error says what to run by hand (`by_hand`).
"""

from __future__ import annotations

import os
import plistlib
from dataclasses import dataclass
from pathlib import Path

from dayflow.errors import DayflowError, UsageError
from dayflow.schedule_render import Rendered, render
from dayflow.schedule_system import System
from dayflow.schedule_system import first_line as _first_line
from dayflow.schedule_units import (
    CRON_BEGIN,
    CRON_END,
    LAUNCHD_LABEL,
    PINNED,
    UNIT,
    Job,
    ScheduleError,
    ScheduleFileError,
    by_hand,
    cron_block,
    launchd_plist,
    parse_at,
    pinned_settings,
    refuse_unwritable,
    systemd_units,
    without_cron_block,
)

__all__ = [
    "BACKENDS",
    "CRON_BEGIN",
    "CRON_END",
    "LAUNCHD_LABEL",
    "PINNED",
    "UNIT",
    "Installed",
    "Job",
    "Rendered",
    "ScheduleError",
    "System",
    "by_hand",
    "choose_backend",
    "cron_block",
    "find",
    "install",
    "last_outcome",
    "launchd_plist",
    "next_run",
    "parse_at",
    "pinned_settings",
    "refuse_unwritable",
    "remove",
    "render",
    "systemd_units",
    "without_cron_block",
]

BACKENDS = ("systemd", "cron", "launchd")
# ----------------------------------------------------------------------------- operations


@dataclass(frozen=True)
class Installed:
    """A schedule found on the machine."""

    backend: str
    where: str  # the unit file, plist or "crontab"
    detail: str  # its schedule line as written


def choose_backend(system: System, job: Job, forced: str | None = None) -> str:
    """launchd on macOS; systemd where a user session answers; cron where `crontab` exists."""
    if forced is not None:
        if forced not in BACKENDS:
            raise UsageError(f"--backend must be one of {', '.join(BACKENDS)}")
        return forced
    if system.platform == "darwin":
        return "launchd"
    ok, why = system.systemd_user_session()
    if ok:
        return "systemd"
    if system.which("crontab") is not None:
        return "cron"
    raise ScheduleError(
        f"cannot install a schedule here: {why} and no `crontab` command; "
        "what to run by hand is printed on stdout",
        by_hand(job),
    )


def install(system: System, job: Job, backend: str) -> Installed:
    """Write and enable the schedule with `backend`, replacing one Dayflow installed before
    (with this scheduler or another: there is only ever one). The new schedule is rendered and
    checked first (`render`): a refused one leaves the old schedule exactly as it was."""
    rendered = render(system, job, backend)
    current = _read_crontab(system, job) if backend == "cron" else ""
    remove(system, keep=backend)
    if backend == "systemd":
        return _install_systemd(system, job, rendered)
    if backend == "cron":
        return _install_cron(system, job, current, rendered.cron)
    return _install_launchd(system, job, rendered)


def _install_systemd(system: System, job: Job, rendered: Rendered) -> Installed:
    for path, text in rendered.files:
        _write(path, text.encode(), job)
    _read_back(rendered, job)
    unit_dir = system.systemd_dir
    for argv in (
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", f"{UNIT}.timer"],
    ):
        r = system.run(argv)
        if r.code != 0:
            raise ScheduleError(
                f"wrote {unit_dir}/{UNIT}.{{service,timer}} but `{' '.join(argv)}` failed "
                f"({_first_line(r.err) or f'exit {r.code}'}); run `systemctl --user "
                f"daemon-reload && systemctl --user enable --now {UNIT}.timer` by hand",
                by_hand(job),
            )
    timer = rendered.files[1][1]
    return Installed("systemd", str(unit_dir / f"{UNIT}.timer"), _oncalendar(timer))


def _install_cron(system: System, job: Job, current: str, block: str) -> Installed:
    _mkdir(job.log.parent, job)
    r = system.run(["crontab", "-"], stdin=without_cron_block(current) + block)
    if r.code != 0:
        raise ScheduleError(
            f"`crontab -` failed ({_first_line(r.err) or f'exit {r.code}'}); "
            "add the lines printed on stdout with `crontab -e`",
            by_hand(job),
        )
    back = system.run(["crontab", "-l"])
    if back.code != 0 or block not in back.out:
        raise ScheduleError(
            "`crontab -` succeeded but `crontab -l` does not show Dayflow's lines as written; "
            "add the lines printed on stdout with `crontab -e`",
            by_hand(job),
        )
    return Installed("cron", "crontab", block.splitlines()[1])


def _install_launchd(system: System, job: Job, rendered: Rendered) -> Installed:
    plist = system.launchd_plist
    _write(plist, rendered.files[0][1].encode(), job)
    _read_back(rendered, job)
    _mkdir(job.log.parent, job)
    domain = f"gui/{system.uid}"
    system.run(["launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"])  # absent the first time
    r = system.run(["launchctl", "bootstrap", domain, str(plist)])
    if r.code != 0:
        raise ScheduleError(
            f"wrote {plist} but `launchctl bootstrap {domain} {plist}` failed "
            f"({_first_line(r.err) or f'exit {r.code}'}); run it by hand",
            by_hand(job),
        )
    return Installed("launchd", str(plist), job.when)


def _read_back(rendered: Rendered, job: Job) -> None:
    """Each written file holds exactly what was rendered (and checked)."""
    for path, text in rendered.files:
        if _read(path) != text:
            raise ScheduleError(
                f"wrote {path} but it does not read back as written; what to run by hand is "
                "printed on stdout",
                by_hand(job),
            )


def find(system: System) -> list[Installed]:
    """Every Dayflow schedule on this machine (normally one)."""
    found: list[Installed] = []
    timer = system.systemd_dir / f"{UNIT}.timer"
    if timer.is_file():
        found.append(Installed("systemd", str(timer), _oncalendar(_read(timer))))
    if system.launchd_plist.is_file():
        found.append(Installed("launchd", str(system.launchd_plist), _launchd_when(system)))
    if system.which("crontab") is not None:
        r = system.run(["crontab", "-l"])
        if r.code == 0 and CRON_BEGIN in r.out.splitlines():
            lines = r.out.splitlines()
            i = lines.index(CRON_BEGIN)
            found.append(Installed("cron", "crontab", lines[i + 1] if i + 1 < len(lines) else ""))
    return found


def remove(system: System, keep: str | None = None) -> list[Installed]:
    """Disable and delete every Dayflow schedule (but one made with `keep`); returns what was
    removed."""
    found = [item for item in find(system) if item.backend != keep]
    for item in found:
        if item.backend == "systemd":
            system.run(["systemctl", "--user", "disable", "--now", f"{UNIT}.timer"])
            for suffix in ("timer", "service"):
                _unlink(system.systemd_dir / f"{UNIT}.{suffix}")
            system.run(["systemctl", "--user", "daemon-reload"])
        elif item.backend == "launchd":
            system.run(["launchctl", "bootout", f"gui/{system.uid}/{LAUNCHD_LABEL}"])
            _unlink(system.launchd_plist)
        else:
            r = system.run(["crontab", "-l"])
            if r.code == 0:
                rest = without_cron_block(r.out)
                w = system.run(["crontab", "-"], stdin=rest)
                if w.code != 0:
                    raise ScheduleError(
                        f"`crontab -` failed ({_first_line(w.err) or f'exit {w.code}'}); "
                        f"remove the lines between {CRON_BEGIN!r} and {CRON_END!r} with "
                        "`crontab -e`"
                    )
    return found


def last_outcome(system: System, backend: str, log: Path) -> str | None:
    """What the scheduler says about the job's last run, where it says anything."""
    if backend == "systemd":
        props = _unit_properties(
            system, f"{UNIT}.service", "Result,ExecMainStatus,ExecMainExitTimestamp"
        )
        if props is None:
            return None
        if not props.get("ExecMainExitTimestamp"):
            return "not run yet"
        return (
            f"{props.get('Result', '?')} (exit status {props.get('ExecMainStatus', '?')}) at "
            f"{props['ExecMainExitTimestamp']}; `journalctl --user -u {UNIT}.service` has "
            "its output"
        )
    try:
        with open(log, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 4096))
            tail = fh.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return "not run yet (no log)"
    return f"last line of {log}: {tail[-1]}" if tail else f"{log} is empty"


def _unit_properties(system: System, unit: str, names: str) -> dict[str, str] | None:
    """`systemctl --user show UNIT --property=NAMES` as a dict; None when it fails."""
    r = system.run(["systemctl", "--user", "show", unit, f"--property={names}"])
    if r.code != 0:
        return None
    return dict(line.split("=", 1) for line in r.out.splitlines() if "=" in line)


def next_run(system: System) -> str | None:
    """When systemd will next start the timer, or why it will not (None where it cannot say)."""
    props = _unit_properties(
        system, f"{UNIT}.timer", "NextElapseUSecRealtime,ActiveState,UnitFileState"
    )
    if props is None:
        return None
    active, enabled = props.get("ActiveState"), props.get("UnitFileState")
    if active and active != "active":
        return (
            f"none: the timer is {active} ({enabled or '?'}); "
            f"`systemctl --user enable --now {UNIT}.timer` starts it"
        )
    return props.get("NextElapseUSecRealtime") or None


# --------------------------------------------------------------------------------- helpers


def _write(path: Path, data: bytes, job: Job) -> None:
    from dayflow import files

    _mkdir(path.parent, job)
    try:
        files.write_atomic(path, data)
    except DayflowError as exc:
        raise ScheduleFileError(
            f"{exc}; what to run by hand is printed on stdout", by_hand(job)
        ) from None


def _mkdir(path: Path, job: Job) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ScheduleFileError(
            f"cannot create {path}: {exc.strerror or exc}; what to run by hand is printed on "
            "stdout",
            by_hand(job),
        ) from None


def _unlink(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise ScheduleError(f"cannot remove {path}: {exc.strerror or exc}") from None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _read_crontab(system: System, job: Job) -> str:
    r = system.run(["crontab", "-l"])
    if r.code == 0:
        return r.out
    if "no crontab" in r.err.lower():
        return ""
    raise ScheduleError(
        f"`crontab -l` failed ({_first_line(r.err) or f'exit {r.code}'}); add the lines "
        "printed on stdout with `crontab -e`",
        by_hand(job),
    )


def _oncalendar(timer: str) -> str:
    for line in timer.splitlines():
        if line.startswith("OnCalendar="):
            return line
    return "(no OnCalendar= line)"


def _launchd_when(system: System) -> str:
    try:
        data = plistlib.loads(system.launchd_plist.read_bytes())
    except Exception:  # a file we cannot read back is still ours to report and remove
        return "(unreadable plist)"
    when = data.get("StartCalendarInterval")
    first = when[0] if isinstance(when, list) and when else when
    if not isinstance(first, dict):
        return "(no StartCalendarInterval)"
    days = "Monday to Friday" if isinstance(when, list) else "every day"
    return f"{days} at {first.get('Hour', 0):02d}:{first.get('Minute', 0):02d}"
