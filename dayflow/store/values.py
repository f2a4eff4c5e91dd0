"""The plain values the store's face takes and returns besides the models: leases, owners, the
spec of a new run, batch records, and the marks gc leaves."""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

from dayflow.frozen import Frozen
from dayflow.models import Message, RunSettings

LEASE_TTL = timedelta(minutes=15)
PRUNED_MARK = "(pruned by gc)"
REDACTED_MARK = "[redacted]"


class Lease(Frozen):
    """A process's claim on a run: every write a driver makes carries it, and the store refuses
    (LeaseLost) a write whose token no longer owns the run."""

    run_id: str
    token: str


class BatchItem(Frozen):
    """One request of a Message Batch as the store records it: step `step_n` of a run, its
    `custom_id` in the batch, and the digest of the request sent (a resume whose request
    differs, e.g. under a new --max-tokens, does not take that batch's answer)."""

    run_id: str
    step_n: int
    custom_id: str
    digest: str


class Owner(Frozen):
    """The process driving a run: pid, host and the process's start time (guards pid reuse)."""

    pid: int
    host: str
    started: str | None

    @classmethod
    def current(cls, host: str = "") -> Owner:
        """This process; its host is `host` when given (`Settings.host`, DAYFLOW_HOST: the
        name a machine goes by in a shared database), else the host name."""
        pid = os.getpid()
        return cls(pid, host.strip() or _hostname(), process_start(pid))


class NewRun(Frozen):
    """What a run is started with; stored so a resume sends the same request prefix."""

    model: str
    brief_date: str
    system: str
    tools: list[dict[str, Any]]
    user_msg: Message
    max_tokens: int
    max_steps: int
    budget: int | None
    task_cap: int
    settings: RunSettings
    parent_run_id: str | None = None
    forked_at_step: int | None = None


def process_start(pid: int) -> str | None:
    """The kernel's start time of `pid` (clock ticks since boot), or None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:  # bytes: the command name may be any
            stat = fh.read()
    except OSError:
        return None
    # Field 22; the command name (field 2) may hold spaces, so split after its closing ')'.
    return stat.rsplit(b")", 1)[1].split()[19].decode()


def process_alive(pid: int, started: str | None) -> bool:
    """Whether the process `pid` that started at `started` still exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if started is None:
        return True
    now = process_start(pid)
    return now is None or now == started


def not_continuable(run_id: str, pruned_at: str | None, redacted_at: str | None) -> str:
    """Why a run that gc pruned or redacted cannot be resumed or forked, in one line."""
    if pruned_at:
        what = f"was pruned by `dayflow gc` at {pruned_at}: its steps are gone"
    else:
        what = f"was redacted by `dayflow gc --redact` at {redacted_at}: its reads are blanked"
    return f"run {run_id} {what}, so it can be shown but not resumed or forked"


DEFAULT_PROFILE = "default"


def command_hint(profile: str | None, *words: object) -> str:
    """`dayflow WORDS` as a person types it to act on `profile`'s runs or tasks: another
    profile's adds `--profile NAME` (without it the command looks at the default profile's
    and finds nothing); the default profile's (or None's) is the words alone. Every hint
    naming such a command is built here."""
    line = " ".join(["dayflow", *map(str, words)])
    return line if profile in (None, DEFAULT_PROFILE) else f"{line} --profile {profile}"


def task_id(idempotency_key: str, profile: str = DEFAULT_PROFILE) -> str:
    """A task's id, derived from its key and its profile: the same key names the same task in
    any database, so a resumed or replayed run shows the very ids an uncrashed one would. The
    default profile's ids are those of a database without profiles (the key alone); another
    profile's key is another task (the same Message-ID in two people's mail)."""
    import hashlib  # here, not at the top: `runs` and `tasks` never need it (start-up time)

    named = idempotency_key if profile == DEFAULT_PROFILE else f"{profile}\0{idempotency_key}"
    return "t_" + hashlib.sha256(named.encode()).hexdigest()[:12]


class Profile(Frozen):
    """One person a fleet briefs: their config file (sources, `me`, delivery, model), the
    timezone their day is computed in, the local time their brief is due and the ISO weekdays
    (1 Monday .. 7 Sunday, as digits) it is due on."""

    name: str
    config: str
    tz: str = "UTC"
    at: str = "07:30"
    weekdays: str = "1234567"


class UpkeepFinding(Frozen):
    """Something a backend's own check found, with the command that repairs it."""

    message: str
    fix_command: str
    fixed: bool = False


def _hostname() -> str:
    """This machine's name (the `socket` module costs start-up time `runs` does not have)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()
