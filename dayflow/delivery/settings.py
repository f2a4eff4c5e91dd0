"""Where and how a brief is delivered: the sinks (`file:PATH`, `smtp`, `notify`, `stdout`), the
config file's `deliver` list and [smtp] table, and the `Settings` each delivery is made with."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dayflow.clock import Clock, SystemClock
from dayflow.errors import DayflowError, UsageError

SINK_KINDS = ("file", "smtp", "notify", "stdout")
SECURITY_MODES = ("tls", "starttls", "plain")


class DeliveryFailed(DayflowError):
    """One sink could not be delivered to (the message names the sink and where)."""

    exit_code = 6


def parse_sink(value: str, base: Path | None = None, where: str = "--deliver") -> str:
    """A sink as the user wrote it, checked: `file:PATH`, `smtp`, `notify` or `stdout`. A
    file's path is made absolute (against `base`, else the current directory) now, so a
    resume or a timer elsewhere writes the same file. `where` names, in an error, where the
    user wrote it: the flag, or the config file's `deliver` list."""
    text = (value or "").strip()
    kind, sep, rest = text.partition(":")
    if kind == "file" and sep and rest.strip():
        from dayflow.sources.spec import variable_in_path

        if why := variable_in_path(rest):
            raise UsageError(f"{where} {value!r}: the path {why}")
        path = Path(rest.strip()).expanduser()
        if not path.is_absolute():
            path = (base or Path.cwd()) / path
        return f"file:{path}"
    if text in ("smtp", "notify", "stdout"):
        return text
    raise UsageError(f"{where} {value!r}: use file:PATH (with {{date}}), smtp, notify or stdout")


def file_target(sink: str, brief_date: str) -> Path:
    """Where `file:PATH` writes for the brief of `brief_date` (`{date}` becomes it)."""
    return Path(sink.partition(":")[2].replace("{date}", brief_date)).expanduser()


@dataclass(frozen=True)
class SmtpConfig:
    """The `[smtp]` table of the config file. Holds where the password comes from, never the
    password itself."""

    host: str
    port: int
    security: str
    user: str | None
    sender: str
    to: tuple[str, ...]
    password_command: str | None = None
    password_env: str | None = None
    timeout: float = 30.0
    cafile: str | None = None  # a CA bundle to trust instead of the system's (self-hosted)
    auth: str = "password"  # password | xoauth2 | oauthbearer (sources.oauth)
    token_command: str | None = None
    token_env: str | None = None

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"


def smtp_config(table: object, path: Path) -> SmtpConfig:
    """Validate an `[smtp]` table; a UsageError names the file and the key."""
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [smtp] must be a table")
    known = {"host", "port", "security", "user", "from", "to", "password_command"}
    known |= {"password_env", "timeout", "cafile", "auth", "token_command", "token_env"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise UsageError(f"{path}: [smtp] has unknown key(s) {', '.join(unknown)}")
    host = table.get("host")
    if not isinstance(host, str) or not host.strip():
        raise UsageError(f"{path}: [smtp] needs host")
    security = table.get("security", "starttls")
    if security not in SECURITY_MODES:
        raise UsageError(f"{path}: [smtp] security must be one of {', '.join(SECURITY_MODES)}")
    default_port = {"tls": 465, "starttls": 587, "plain": 25}[security]
    port = table.get("port", default_port)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise UsageError(f"{path}: [smtp] port must be a number from 1 to 65535")
    user = table.get("user")
    to = table.get("to", user)
    recipients = (to,) if isinstance(to, str) else tuple(to) if isinstance(to, list) else ()
    from dayflow.sources.wire import WHY, breaks_line

    sent = (("host", host), ("user", user), ("to", recipients), ("from", table.get("from")))
    for key, value in sent:
        texts = value if isinstance(value, tuple) else (value,)
        if any(isinstance(v, str) and breaks_line(v) for v in texts):
            raise UsageError(f"{path}: [smtp] `{key}` {WHY} (an SMTP command); refused")
    if not recipients or not all(isinstance(r, str) and "@" in r for r in recipients):
        raise UsageError(f"{path}: [smtp] needs `to` (or `user`) as an address")
    sender = table.get("from", user or recipients[0])
    if not isinstance(sender, str) or "@" not in sender:
        raise UsageError(f"{path}: [smtp] `from` must be an address")
    timeout = table.get("timeout", 30)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not 0 < timeout <= 600:
        raise UsageError(f"{path}: [smtp] timeout must be seconds, from 1 to 600")
    for key in ("password_command", "password_env", "cafile", "token_command", "token_env"):
        if key in table and not isinstance(table[key], str):
            raise UsageError(f"{path}: [smtp] {key} must be a string")
    from dayflow.sources.oauth import auth_problems

    mechanism, wrong = auth_problems(table)
    if wrong:
        raise UsageError(f"{path}: [smtp] {wrong[0]}")
    if mechanism not in (None, "password") and not isinstance(user, str):
        raise UsageError(f'{path}: [smtp] auth = "{mechanism}" needs `user` (whose token it is)')
    cafile = None
    if "cafile" in table:
        from dayflow.sources.spec import variable_in_path

        if why := variable_in_path(table["cafile"]):
            raise UsageError(f"{path}: [smtp] cafile {why}")
        ca = Path(table["cafile"]).expanduser()
        cafile = str(ca if ca.is_absolute() else path.parent / ca)
    return SmtpConfig(
        host=host.strip(),
        port=port,
        security=security,
        user=user if isinstance(user, str) else None,
        sender=sender,
        to=recipients,
        password_command=table.get("password_command"),
        password_env=table.get("password_env"),
        timeout=float(timeout),
        cafile=cafile,
        auth=mechanism or "password",
        token_command=table.get("token_command"),
        token_env=table.get("token_env"),
    )


@dataclass(frozen=True)
class Settings:
    """How deliveries are made: the config file's [smtp] table, the environment (PATH, the
    password's variable), the platform and the clock (the mail's Date)."""

    smtp: SmtpConfig | None = None
    env: Mapping[str, str] = field(default_factory=dict)  # the runtime's (`Config.file_env`)
    platform: str = sys.platform
    clock: Clock = field(default_factory=SystemClock)
    config: Path | None = None  # the config file these came from (named in errors)


def from_document(
    data: Mapping[str, Any] | None,
    path: Path,
    env: Mapping[str, str],
    clock: Clock | None = None,
) -> tuple[list[str], Settings]:
    """The `deliver = [...]` sinks and the `[smtp]` table of the config file at `path` whose
    TOML document is `data` (None: there is no file; no sinks then). The document is the one
    the sources come from (`config.Config.document`): one file, read once."""
    clock = clock or SystemClock()
    if data is None:
        return [], Settings(env=env, clock=clock, config=path)
    sinks = data.get("deliver", [])
    if not isinstance(sinks, list) or not all(isinstance(s, str) for s in sinks):
        raise UsageError(
            f'{path}: deliver must be a list of sinks, e.g. ["file:~/notes/{{date}}.md"]'
        )
    smtp = smtp_config(data["smtp"], path) if "smtp" in data else None
    return [parse_sink(s, path.parent, f"{path}: deliver") for s in sinks], Settings(
        smtp=smtp, env=env, clock=clock, config=path
    )


def check(sinks: list[str], settings: Settings) -> None:
    """Refuse, before a run starts, sinks that cannot work (smtp with no [smtp] table)."""
    if "smtp" in sinks and settings.smtp is None:
        raise UsageError(
            f"--deliver smtp needs an [smtp] table (host, user, password_command or "
            f"password_env) in {settings.config or 'the config file'}"
        )


# --------------------------------------------------------------------------------- the log
