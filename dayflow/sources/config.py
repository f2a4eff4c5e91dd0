"""The config file that declares where mail and calendars live, read with the standard library
(one entry's keys and checks are `dayflow.sources.spec`'s).

    [[inbox]]                                  [[calendar]]
    name = "work"                              name = "home"
    kind = "imap"                              kind = "ics"
    host = "imap.example.org"                  url = "https://calendar.example.org/x.ics"
    user = "me@example.org"
    password_command = "pass show mail/work"

Where it is: `--config PATH`, else `DAYFLOW_CONFIG`, else `$XDG_CONFIG_HOME/dayflow/config.toml`
(`~/.config/dayflow/config.toml`). An explicitly named file must exist; the default one may not
(then Dayflow uses the bundled sample).

Validation collects every problem and reports each on its own line, naming the table entry and
the key. Secrets never live in the file's parsed form: a password is fetched when a source is
opened (`dayflow.sources.secret_command`), from `password_command` or `password_env`, and is
never returned by `SourceSpec.to_json`, so it cannot reach a run's stored settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dayflow.errors import ConfigFileError, SourceError
from dayflow.models import FOLLOWUP_DAYS, WAITING_AFTER_DAYS
from dayflow.sources.me import Me, default_me, parse_me
from dayflow.sources.spec import SourceSpec, entry

DELIVERY_KEYS = ("deliver", "smtp")
FOLLOWUP_KEYS = ("me", "waiting_after_days", "followup_days")
_DAYS_LIMITS = {"followup_days": (1, 365), "waiting_after_days": (0, 60)}


@dataclass(frozen=True)
class SourcesConfig:
    """Every declared source, in file order."""

    path: Path | None
    inboxes: tuple[SourceSpec, ...] = ()
    calendars: tuple[SourceSpec, ...] = ()
    # Who the user is (`me`, else every IMAP and SMTP user that is an address) and the
    # followups' window (dayflow.followups).
    me: Me = Me()
    followup_days: int = FOLLOWUP_DAYS
    waiting_after_days: int = WAITING_AFTER_DAYS

    def all(self) -> tuple[SourceSpec, ...]:
        return self.inboxes + self.calendars

    def named(self, table: str, names: list[str]) -> tuple[SourceSpec, ...]:
        """The entries of `table` with these names, in this order; a name no longer in the
        file is an error naming it (a run resumed after its config changed)."""
        have = {s.name: s for s in (self.inboxes if table == "inbox" else self.calendars)}
        missing = [n for n in names if n not in have]
        if missing:
            raise SourceError(
                f"{self.path}: no [[{table}]] named {', '.join(map(repr, missing))} any more "
                "(the run was started with it; put it back to resume)"
            )
        return tuple(have[n] for n in names)


def config_path(env: Mapping[str, str], flag: Path | None = None) -> tuple[Path, bool]:
    """Where the config file is, and whether it was named explicitly (flag or DAYFLOW_CONFIG).
    A relative XDG_CONFIG_HOME is ignored, as the XDG spec says."""
    explicit = flag or env.get("DAYFLOW_CONFIG") or None
    if explicit:
        return Path(explicit).expanduser(), True
    xdg = env.get("XDG_CONFIG_HOME") or ""
    if xdg and Path(xdg).is_absolute():
        base = Path(xdg)
    else:
        base = Path(env.get("HOME") or Path.home()) / ".config"
    return base / "dayflow" / "config.toml", False


def load_config(env: Mapping[str, str], flag: Path | None = None) -> SourcesConfig | None:
    """The validated config, or None when there is no file at the default place.

    Raises ConfigFileError (one line per problem) for a file that is named but missing, cannot
    be read, is not TOML, or breaks the schema."""
    path, explicit = config_path(env, flag)
    if not path.exists():
        if explicit:
            raise ConfigFileError(f"config file {path} does not exist (`dayflow init` writes one)")
        return None
    return parse_config(read_bytes(path), path)


def read_bytes(path: Path) -> bytes:
    """The config file's bytes; ConfigFileError (one line) when it cannot be read, is not a
    regular file (a FIFO would block for ever, /dev/zero never end) or is implausibly big."""
    from dayflow.config_files import config_bytes

    return config_bytes(path)


def read_toml(raw: bytes, path: Path) -> dict[str, Any]:
    """The config file's TOML document, unvalidated; ConfigFileError when it is not UTF-8 TOML."""
    import tomllib

    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigFileError(f"{path}: is not UTF-8 text") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigFileError(f"{path}: not valid TOML: {err}") from None


def parse_config(raw: bytes, path: Path) -> SourcesConfig:
    """Validate the TOML text of a config file; raise ConfigFileError naming every problem."""
    data = read_toml(raw, path)
    problems: list[str] = []
    # `deliver` and [smtp] belong to the brief's delivery (dayflow.delivery reads them),
    # [model] to the settings (dayflow.config.model_table), [mcp_servers.*] to dayflow.mcp.
    known = ("inbox", "calendar", "model", "mcp_servers", *DELIVERY_KEYS, *FOLLOWUP_KEYS)
    unknown = [key for key in data if key not in known]
    if unknown:
        problems.append(
            f"unknown {listed(unknown, 'table or key', 'tables or keys')} (expected [[inbox]], "
            "[[calendar]], deliver, [smtp], [model], me, followup_days, waiting_after_days or "
            "[mcp_servers.NAME])"
        )
    if "mcp_servers" in data:
        from dayflow.mcp.config import server_problems

        problems += server_problems(data)
    specs: dict[str, list[SourceSpec]] = {"inbox": [], "calendar": []}
    seen: dict[str, str] = {}
    for table in ("inbox", "calendar"):
        entries = data.get(table, [])
        if not isinstance(entries, list):
            problems.append(f"'{table}' must be written [[{table}]] (an array of tables)")
            continue
        for n, item in enumerate(entries, start=1):
            spec = entry(table, n, item, path.parent, problems)
            if spec is None:
                continue
            if spec.name in seen:
                problems.append(
                    f"[[{table}]] #{n}: duplicate name {spec.name!r} "
                    f"(already used by a [[{seen[spec.name]}]]); names must be unique"
                )
                continue
            seen[spec.name] = table
            specs[table].append(spec)
    days = {key: _days(data, key, problems) for key in _DAYS_LIMITS}
    me = _me(data, specs["inbox"], problems)
    if problems:
        raise ConfigFileError.of(path, problems)
    return SourcesConfig(path, tuple(specs["inbox"]), tuple(specs["calendar"]), me, **days)


def listed(names: list[str], one: str, several: str, most: int = 8) -> str:
    """`one 'a'`, or `several 'a', 'b'` (the first `most` of them, then how many more): a line
    a config file of a thousand unknown keys cannot make long."""
    from dayflow.printable import plain

    shown = ", ".join(repr(plain(str(n)[:40])) for n in names[:most])
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return f"{one if len(names) == 1 else several} {shown}{more}"


def _me(data: dict[str, Any], inboxes: list[SourceSpec], problems: list[str]) -> Me:
    """`me` as written, else every IMAP and SMTP `user` that is an address."""
    if "me" in data:
        try:
            return parse_me(data["me"], "")
        except ConfigFileError as err:
            problems.append(str(err).removeprefix(": "))
            return Me()
    users = [(s.user, f"the user of [[inbox]] {s.name}") for s in inboxes if s.user]
    smtp = data.get("smtp")
    if isinstance(smtp, dict) and isinstance(smtp.get("user"), str):
        users.append((smtp["user"], "the [smtp] user"))
    return default_me(users)


def _days(data: dict[str, Any], key: str, problems: list[str]) -> int:
    lo, hi = _DAYS_LIMITS[key]
    default = FOLLOWUP_DAYS if key == "followup_days" else WAITING_AFTER_DAYS
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        problems.append(f"{key} must be a whole number of days from {lo} to {hi}, got {value!r}")
        return default
    return value
