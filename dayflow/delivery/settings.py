"""Where and how a brief is delivered: the sinks (`file:PATH`, `smtp`, `notify`, `stdout`), the
config file's `deliver` list and [smtp] table, and the `Settings` each delivery is made with."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dayflow.clock import Clock, SystemClock
from dayflow.errors import ConfigFileError, DayflowError, UsageError

SINK_KINDS = ("file", "smtp", "notify", "stdout")
SECURITY_MODES = ("tls", "starttls", "plain")


class DeliveryFailed(DayflowError):
    """One sink could not be delivered to (the message names the sink and where)."""

    exit_code = 6


def parse_sink(value: str, base: Path | None = None) -> str:
    """A `--deliver` sink as the user wrote it, checked: `file:PATH`, `smtp`, `notify` or
    `stdout`; a UsageError (exit 2) else. A file's path is made absolute (against `base`, else
    the current directory) now, so a resume or a timer elsewhere writes the same file."""
    sink, problem = _sink(value, base)
    if sink is None:
        raise UsageError(f"--deliver {value!r}: {problem}")
    return sink


def _sink(value: str, base: Path | None) -> tuple[str | None, str]:
    """The checked sink, or None and what is wrong with it (for the flag or the file to say)."""
    text = (value or "").strip()
    kind, sep, rest = text.partition(":")
    if kind == "file" and sep and rest.strip():
        from dayflow.sources.spec import variable_in_path

        if why := variable_in_path(rest):
            return None, f"the path {why}"
        path = Path(rest.strip()).expanduser()
        if not path.is_absolute():
            path = (base or Path.cwd()) / path
        return f"file:{path}", ""
    if text in ("smtp", "notify", "stdout"):
        return text, ""
    return None, "use file:PATH (with {date}), smtp, notify or stdout"


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
    """Validate an `[smtp]` table; a ConfigFileError (exit 4) names the file and, one line
    each, every problem of the table: values of the wrong type first, then what is missing."""
    problems = smtp_problems(table)
    if problems:
        raise ConfigFileError.of(path, [f"[smtp]: {p}" for p in problems])
    assert isinstance(table, dict)  # (smtp_problems said so)
    security = table.get("security", "starttls")
    user = table.get("user")
    to: Any = table.get("to", user)
    recipients = (to,) if isinstance(to, str) else tuple(to)
    sender = str(table.get("from", user or recipients[0]))
    from dayflow.sources.oauth import auth_problems

    mechanism, _ = auth_problems(table)
    cafile = None
    if "cafile" in table:
        ca = Path(table["cafile"]).expanduser()
        cafile = str(ca if ca.is_absolute() else path.parent / ca)
    return SmtpConfig(
        host=table["host"].strip(),
        port=table.get("port", _DEFAULT_PORTS[security]),
        security=security,
        user=user if isinstance(user, str) else None,
        sender=sender,
        to=recipients,
        password_command=table.get("password_command"),
        password_env=table.get("password_env"),
        timeout=float(table.get("timeout", 30)),
        cafile=cafile,
        auth=mechanism or "password",
        token_command=table.get("token_command"),
        token_env=table.get("token_env"),
    )


_DEFAULT_PORTS = {"tls": 465, "starttls": 587, "plain": 25}
_SMTP_STRINGS = ("password_command", "password_env", "cafile", "token_command", "token_env")
_SMTP_KEYS = ("host", "port", "security", "user", "from", "to", "timeout", "auth", *_SMTP_STRINGS)


def smtp_problems(table: object) -> list[str]:
    """Every problem of an `[smtp]` table, one line each (without the file and the table's
    name): unknown keys, then values of the wrong type, then what is missing or refused."""
    if not isinstance(table, dict):
        return ["must be a table"]
    problems: list[str] = []
    unknown = sorted(set(table) - set(_SMTP_KEYS))
    if unknown:
        problems.append(f"unknown key(s) {', '.join(unknown)}")
    typed = _smtp_types(table)
    problems += typed.values()
    host = table.get("host")
    if "host" not in typed and (not isinstance(host, str) or not host.strip()):
        problems.append("needs host")
    user = table.get("user")
    to = table.get("to", user)
    recipients = (to,) if isinstance(to, str) else tuple(to) if isinstance(to, list) else ()
    from dayflow.sources.wire import WHY, breaks_line

    refused = set(typed)  # keys said wrong: what is derived from them is not said again
    sent = (("host", host), ("user", user), ("to", recipients), ("from", table.get("from")))
    for key, value in sent:
        texts = value if isinstance(value, tuple) else (value,)
        if any(isinstance(v, str) and breaks_line(v) for v in texts):
            problems.append(f"`{key}` {WHY} (an SMTP command); refused")
            refused.add(key)
    addresses = bool(recipients) and all(isinstance(r, str) and "@" in r for r in recipients)
    if not refused & ({"to"} if "to" in table else {"to", "user"}) and not addresses:
        problems.append("needs `to` (or `user`) as an address")
        refused.add("to")
    sender = table.get("from", user or (recipients[0] if recipients else None))
    derived_from = {"from"} if "from" in table else {"from", "user", "to"}
    if not refused & derived_from and (not isinstance(sender, str) or "@" not in sender):
        problems.append("`from` must be an address")
    from dayflow.sources.oauth import auth_problems

    mechanism, wrong = auth_problems(table)
    problems += wrong
    if not wrong and mechanism not in (None, "password") and not isinstance(user, str):
        problems.append(f'auth = "{mechanism}" needs `user` (whose token it is)')
    if isinstance(table.get("cafile"), str):
        from dayflow.sources.spec import variable_in_path

        if why := variable_in_path(table["cafile"]):
            problems.append(f"cafile {why}")
    return problems


def _smtp_types(table: dict[str, Any]) -> dict[str, str]:
    """The [smtp] keys whose values are of the wrong type or out of range, with what is wrong."""
    wrong: dict[str, str] = {}
    for key in ("host", "user", "from", *_SMTP_STRINGS):
        if key in table and not isinstance(table[key], str):
            wrong[key] = f"{key} must be a string, not {_shown(table[key])}"
    security = table.get("security", "starttls")
    if security not in SECURITY_MODES:
        wrong["security"] = (
            f"security must be one of {', '.join(SECURITY_MODES)}, not {_shown(security)}"
        )
    port = table.get("port", 25)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        wrong["port"] = f"port must be a number from 1 to 65535, not {_shown(port)}"
    to = table.get("to")
    if "to" in table and not (
        isinstance(to, str) or (isinstance(to, list) and all(isinstance(r, str) for r in to))
    ):
        wrong["to"] = f"to must be an address or a list of addresses, not {_shown(to)}"
    timeout = table.get("timeout", 30)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not 0 < timeout <= 600:
        wrong["timeout"] = f"timeout must be seconds, from 1 to 600, not {_shown(timeout)}"
    return wrong


def _shown(value: object) -> str:
    """A config value as a problem quotes it: short, on one line."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


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
    problems: list[str] = []
    listed = data.get("deliver", [])
    sinks: list[str] = []
    if not isinstance(listed, list):
        problems.append('deliver must be a list of sinks, e.g. ["file:~/notes/{date}.md"]')
    else:
        for n, value in enumerate(listed, 1):
            if not isinstance(value, str):
                shown = repr(value)[:40]
                problems.append(f'deliver entry {n} must be a sink such as "stdout", not {shown}')
                continue
            sink, problem = _sink(value, path.parent)
            if sink is None:
                problems.append(f"deliver {value!r}: {problem}")
            else:
                sinks.append(sink)
    if "smtp" in data:
        problems += [f"[smtp]: {p}" for p in smtp_problems(data["smtp"])]
    elif "smtp" in sinks:
        problems.append(
            "deliver smtp needs an [smtp] table (host, user, password_command or password_env)"
        )
    if problems:
        raise ConfigFileError.of(path, problems)
    smtp = smtp_config(data["smtp"], path) if "smtp" in data else None
    return sinks, Settings(smtp=smtp, env=env, clock=clock, config=path)


def check(sinks: list[str], settings: Settings) -> None:
    """Refuse, before a run starts, sinks that cannot work (smtp with no [smtp] table)."""
    if "smtp" in sinks and settings.smtp is None:
        raise UsageError(
            f"--deliver smtp needs an [smtp] table (host, user, password_command or "
            f"password_env) in {settings.config or 'the config file'}"
        )


# --------------------------------------------------------------------------------- the log
