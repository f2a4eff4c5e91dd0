"""One `[[inbox]]` or `[[calendar]]` entry of the config file: the keys each kind takes, the
validated `SourceSpec`, and the checks on an entry's values (names, URLs, paths, how it gets
its secret). Every problem is collected, each naming the entry and the key."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from dayflow.sources.wire import WHY, breaks_line

INBOX_KINDS = ("maildir", "mbox", "eml", "imap", "json")
CALENDAR_KINDS = ("ics", "caldav", "json")
SECURITY_MODES = ("tls", "starttls", "plain")
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 600.0
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
_PASSWORD_KEYS = ("password_command", "password_env")
_AUTH_KEYS = ("auth", *_PASSWORD_KEYS, "token_command", "token_env")

# The keys each kind takes (besides `name` and `kind`), and the ones it cannot do without.
_KEYS: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = {
    ("inbox", "maildir"): (("path", "sent", "drafts"), ("path",)),
    ("inbox", "mbox"): (("path", "sent"), ("path",)),
    ("inbox", "eml"): (("path", "sent"), ("path",)),
    ("inbox", "json"): (("path",), ("path",)),
    ("inbox", "imap"): (
        ("host", "port", "user", *_AUTH_KEYS, "folders", "sent", "drafts", "security", "timeout"),
        ("host", "user"),
    ),
    ("calendar", "ics"): (
        ("path", "url", "token_command", "token_env", "security", "timeout"),
        (),
    ),
    ("calendar", "caldav"): (
        ("url", "user", *_AUTH_KEYS, "calendars", "security", "timeout"),
        ("url", "user"),
    ),
    ("calendar", "json"): (("path",), ("path",)),
}
_NEEDS_PASSWORD = {("inbox", "imap"), ("calendar", "caldav")}


@dataclass(frozen=True)
class SourceSpec:
    """One `[[inbox]]` or `[[calendar]]` entry, validated. Holds no secret, only where to get
    one (`password_command`, `password_env`, `token_command`, `token_env`); `auth` is the
    mechanism (password, xoauth2, oauthbearer; bearer for an HTTP source with a token)."""

    table: str  # "inbox" | "calendar"
    name: str
    kind: str
    path: str | None = None  # expanded and absolute
    url: str | None = None
    host: str | None = None
    port: int | None = None
    user: str | None = None
    password_command: str | None = None
    password_env: str | None = None
    auth: str | None = None  # None: no credential (a file, a public feed)
    token_command: str | None = None
    token_env: str | None = None
    folders: tuple[str, ...] = ("INBOX",)
    calendars: tuple[str, ...] = ()
    security: str = "tls"
    timeout: float = DEFAULT_TIMEOUT
    # The user's sent mail: beside a local `path`, a Maildir, mbox or .eml folder (expanded and
    # absolute); for IMAP a folder name (None: the folder flagged \Sent, else a usual name).
    sent: str | None = None
    read_sent: bool = True  # False: `sent = false`, the entry has no sent folder to read
    # Where replies the user owes are drafted (issue 36); None: nowhere, not one byte written.
    # IMAP: True (the folder flagged \\Drafts, else a usual name) or a folder name; a Maildir:
    # the path of a Maildir folder (expanded and absolute; True: `.Drafts` inside `path`).
    drafts: str | bool | None = None

    @property
    def where(self) -> str:
        """What the source reads, for messages: its path, URL or user@host."""
        if self.path:
            return self.path
        if self.url:
            return _redact_url(self.url)
        return f"{self.user}@{self.host}" if self.user else str(self.host)

    def to_json(self) -> dict[str, Any]:
        """The entry as `dayflow sources --json` shows it: a URL only as its scheme and host
        (a calendar's secret address is a credential), never a password."""
        out: dict[str, Any] = {"name": self.name, "table": self.table, "kind": self.kind}
        out["where"] = self.where
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("name", "table", "kind", "url", "read_sent") or value in (None, ()):
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        if not self.read_sent:
            out["sent"] = False
        return out


def entry(table: str, n: int, entry: object, base: Path, problems: list[str]) -> SourceSpec | None:
    """Entry `n` of `table` validated, or None with what is wrong with it added to
    `problems` (each naming the entry and the key, in the order the keys are checked)."""
    where = f"[[{table}]] #{n}"
    if not isinstance(entry, dict):
        problems.append(f"{where}: must be a table")
        return None
    before = len(problems)
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        if name is None:
            problems.append(f"{where}: missing 'name'")
        else:
            problems.append(
                f"{where}: 'name' must be 1-32 letters, digits, '.', '_' or '-' "
                f"(starting with a letter or digit), got {name!r}"
            )
        name = None
    else:
        where = f'{where} "{name}"'
    kind = entry.get("kind")
    kinds = INBOX_KINDS if table == "inbox" else CALENDAR_KINDS
    known_kind = kind in kinds
    if known_kind:
        allowed, required = _KEYS[(table, str(kind))]
    else:
        # One line among the entry's others, not the only one: its other keys are checked
        # against every key a kind of the table takes (what a kind needs is not known).
        what = "missing 'kind'" if kind is None else f"unknown kind {kind!r}"
        problems.append(f"{where}: {what} (one of: {', '.join(kinds)})")
        allowed, required = _table_keys(table), ()
    for key in entry:
        if key == "drafts" and table == "inbox" and key not in allowed:
            problems.append(
                f"{where}: 'drafts' needs a maildir or imap inbox (kind {kind!r} cannot hold "
                "drafts)"
            )
        elif key not in ("name", "kind", "password", "token", *allowed):
            of = f" for kind {kind!r}" if known_kind else f" for any [[{table}]]"
            problems.append(
                f"{where}: unknown key {key!r}{of} (known: name, kind, {', '.join(allowed)})"
            )
    for key in required:
        if entry.get(key) in (None, ""):
            problems.append(f"{where}: missing '{key}' (kind {kind!r} needs it)")
    sent_off = "sent" in allowed and entry.get("sent") is False
    if sent_off:  # `sent = false`: no sent folder, not even the one the server flags
        entry = {k: v for k, v in entry.items() if k != "sent"}
    values = _values(entry, allowed, where, problems)
    if known_kind:  # a path or a folder name: as the kind says
        _drafts(str(kind), entry, allowed, values, base, where, problems)
    if sent_off:
        values["read_sent"] = False
    _credentials(table, str(kind), entry, allowed, values, where, problems)
    _addresses(str(kind), values, where, problems)
    if "path" in values:
        values["path"] = str(_absolute(values["path"], base))
        if values.get("drafts") is True:
            values["drafts"] = str(Path(values["path"]) / ".Drafts")
    if "sent" in values and kind != "imap":  # a local folder or file, beside `path`
        if why := variable_in_path(values["sent"]):
            problems.append(f"{where}: 'sent' {why}")
        values["sent"] = str(_absolute(values["sent"], base))
    if len(problems) > before or name is None:
        return None
    return SourceSpec(table=table, name=name, kind=str(kind), **values)


def _table_keys(table: str) -> tuple[str, ...]:
    """Every key some kind of `table` takes, in the order the kinds list them."""
    return tuple(
        dict.fromkeys(k for (t, _), (keys, _) in _KEYS.items() if t == table for k in keys)
    )


def _values(
    entry: dict[str, Any], allowed: tuple[str, ...], where: str, problems: list[str]
) -> dict[str, Any]:
    """The entry's well-formed strings, lists and numbers, as SourceSpec takes them."""
    values: dict[str, Any] = {}
    for key in (
        "path",
        "url",
        "host",
        "user",
        "password_command",
        "password_env",
        "token_command",
        "token_env",
        "security",
        "sent",
    ):
        if key in entry and key in allowed:
            value = entry[key]
            if key == "sent" and not isinstance(value, str):
                problems.append(f"{where}: 'sent' must be a folder name or path, or false for none")
            elif not isinstance(value, str) or not value.strip():
                problems.append(f"{where}: '{key}' must be a non-empty string")
            else:
                values[key] = value if key.endswith("_command") else value.strip()
    for key in ("folders", "calendars"):
        if key in entry and key in allowed:
            value = entry[key]
            if (
                not isinstance(value, list)
                or not value
                or not all(isinstance(v, str) and v for v in value)
            ):
                problems.append(f"{where}: '{key}' must be a non-empty list of names")
            else:
                values[key] = tuple(value)
    for key in ("host", "user"):  # a URL is checked with the rest of it below
        if key in values and breaks_line(values[key]):
            problems.append(f"{where}: '{key}' {WHY}; refused")
    if "sent" in values and breaks_line(values["sent"]):
        problems.append(f"{where}: 'sent' {WHY}; refused")
    if any(breaks_line(v) for v in values.get("folders", ())):
        problems.append(f"{where}: a name in 'folders' {WHY} (an IMAP command); refused")
    if "port" in entry and "port" in allowed:
        port = entry["port"]
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            problems.append(f"{where}: 'port' must be a number from 1 to 65535")
        else:
            values["port"] = port
    if "timeout" in entry and "timeout" in allowed:
        timeout = entry["timeout"]
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not 0 < timeout <= MAX_TIMEOUT
        ):
            problems.append(f"{where}: 'timeout' must be seconds, more than 0 and at most 600")
        else:
            values["timeout"] = float(timeout)
    if values.get("security", "tls") not in SECURITY_MODES:
        problems.append(
            f"{where}: 'security' must be one of {', '.join(SECURITY_MODES)} (default tls)"
        )
    elif values.get("security") == "starttls" and "url" in allowed:
        problems.append(
            f"{where}: 'security' of a calendar is tls (the default) or plain (a token may go "
            "over http://); starttls is for IMAP"
        )
    return values


def _drafts(
    kind: str,
    entry: dict[str, Any],
    allowed: tuple[str, ...],
    values: dict[str, Any],
    base: Path,
    where: str,
    problems: list[str],
) -> None:
    """`drafts = true | "FOLDER" | "PATH"` (false or absent: off), checked; sets `drafts`."""
    if "drafts" not in entry or "drafts" not in allowed or entry["drafts"] is False:
        return
    value = entry["drafts"]
    if value is True:
        values["drafts"] = True  # a Maildir's: `.Drafts` inside its path, once that is absolute
        return
    if not isinstance(value, str) or not value.strip():
        problems.append(
            f"{where}: 'drafts' must be true, false, or "
            + ("a folder name" if kind == "imap" else "the path of a Maildir folder")
        )
    elif breaks_line(value):
        problems.append(f"{where}: 'drafts' {WHY}; refused")
    elif kind == "imap":
        values["drafts"] = value.strip()
    elif why := variable_in_path(value):
        problems.append(f"{where}: 'drafts' {why}")
    else:
        values["drafts"] = str(_absolute(value.strip(), base))


def _credentials(
    table: str,
    kind: str,
    entry: dict[str, Any],
    allowed: tuple[str, ...],
    values: dict[str, Any],
    where: str,
    problems: list[str],
) -> None:
    """Check how the source gets its secret (never written in the file); sets `auth`."""
    if all(k in values for k in _PASSWORD_KEYS):
        problems.append(
            f"{where}: both 'password_command' and 'password_env' given; keep one of them"
        )
    elif (table, kind) in _NEEDS_PASSWORD and not any(
        k in values for k in (*_PASSWORD_KEYS, "token_command", "token_env")
    ):
        problems.append(
            f"{where}: needs 'password_command' or 'password_env' for its password "
            '(or token_command / token_env with auth = "xoauth2" for an OAuth token)'
        )
    if "auth" in allowed or "token_command" in allowed:
        from dayflow.sources.oauth import auth_problems

        given = {k: v for k, v in values.items() if k in _AUTH_KEYS}
        if "auth" in entry and "auth" in allowed:
            given["auth"] = entry["auth"]
        mechanism, wrong = auth_problems(given, http=table == "calendar")
        problems.extend(f"{where}: {p}" for p in wrong)
        if mechanism is not None:
            values["auth"] = mechanism
        if kind == "ics" and "path" in values and mechanism is not None:
            problems.append(f"{where}: a token is sent only to a 'url', not read with a 'path'")
    if "password" in entry:
        problems.append(
            f"{where}: passwords are never written in the config file; "
            "use password_command or password_env"
        )
    if "token" in entry:
        problems.append(
            f"{where}: tokens are never written in the config file; use token_command or token_env"
        )


def _addresses(kind: str, values: dict[str, Any], where: str, problems: list[str]) -> None:
    """Check what a calendar's URL or an entry's path can be."""
    if kind == "ics":
        if ("path" in values) == ("url" in values):
            problems.append(f"{where}: give exactly one of 'path' or 'url'")
        if "url" in values and not _scheme_ok(values["url"], ("http", "https", "webcal")):
            problems.append(f"{where}: 'url' must start with https://, http:// or webcal://")
        elif "url" in values and (why := url_problem(values["url"])):
            problems.append(f"{where}: 'url' {why}")
    if kind == "caldav" and "url" in values:
        if not _scheme_ok(values["url"], ("http", "https")):
            problems.append(f"{where}: 'url' must start with https:// or http://")
        elif why := url_problem(values["url"]):
            problems.append(f"{where}: 'url' {why}")
    if "path" in values and (why := variable_in_path(values["path"])):
        problems.append(f"{where}: 'path' {why}")
    url = str(values.get("url", ""))
    if url.lower().startswith("http://") and values.get("security") != "plain":
        token = any(k in values for k in ("token_command", "token_env"))
        password = kind == "caldav" or "@" in url.partition("://")[2].partition("/")[0]
        if token or password:
            problems.append(
                f"{where}: a {'token' if token else 'password'} is sent only over https:// "
                '(the url is plain http://); write security = "plain" to send it in clear '
                "anyway, as IMAP's rule is"
            )


def _scheme_ok(url: str, schemes: tuple[str, ...]) -> bool:
    scheme, sep, rest = url.partition("://")
    return bool(sep) and scheme.lower() in schemes and bool(rest)


def url_problem(url: str) -> str | None:
    """Why an http(s) URL cannot be fetched (a port out of range, no host, a line break), in
    words that finish "'url' ...", or None when it can be. Never quotes the URL (it may be a
    secret)."""
    from urllib.parse import urlsplit

    if breaks_line(url):
        return f"{WHY}; refused"
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return "is not a valid address"
    if not host:
        return "has no host name"
    if not host.isascii():
        return "has a host name that is not ASCII (write it in its xn-- form)"
    try:
        port = parts.port  # raises ValueError for a port out of range
    except ValueError as err:
        if "out of range" not in str(err):
            return "has a port that is not a number"
        port = 0
    if port == 0:
        return "has a port out of range (it must be a number from 1 to 65535)"
    return None


_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def variable_in_path(raw: str) -> str | None:
    """Why a path with `$HOME` or `${VAR}` in it is refused (only `~` is expanded in paths, as
    docs/sources.md says), in words that finish "'path' ..."; None when it has none."""
    found = _VARIABLE.search(raw)
    if found is None:
        return None
    return (
        f"holds {found.group(0)}, and variables are not expanded in paths "
        "(only ~ is: write ~/... for your home directory)"
    )


def _absolute(raw: str, base: Path) -> Path:
    path = Path(raw).expanduser()
    return path if path.is_absolute() else (base / path)


def _redact_url(url: str) -> str:
    """A URL as messages show it: scheme and host only (`https://user:pw@host/secret.ics` ->
    `https://host/…`), since a calendar's secret address is a credential in its path."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "(a URL)"
    host, slash, tail = rest.partition("/")
    host = host.rpartition("@")[2]
    return f"{scheme}://{host}/…" if slash and tail else f"{scheme}://{host}/"
