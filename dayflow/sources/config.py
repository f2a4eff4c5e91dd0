"""The config file that declares where mail and calendars live, read with the standard library.

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
opened (`resolve_password`), from `password_command` or `password_env`, and is never returned
by `SourceSpec.to_json`, so it cannot reach a run's stored settings.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from dayflow.errors import ConfigFileError, SourceError
from dayflow.sources.wire import WHY, breaks_line

INBOX_KINDS = ("maildir", "mbox", "eml", "imap", "json")
CALENDAR_KINDS = ("ics", "caldav", "json")
SECURITY_MODES = ("tls", "starttls", "plain")
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 600.0
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
_PASSWORD_KEYS = ("password_command", "password_env")
_AUTH_KEYS = ("auth", *_PASSWORD_KEYS, "token_command", "token_env")
DELIVERY_KEYS = ("deliver", "smtp")

# The keys each kind takes (besides `name` and `kind`), and the ones it cannot do without.
_KEYS: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = {
    ("inbox", "maildir"): (("path",), ("path",)),
    ("inbox", "mbox"): (("path",), ("path",)),
    ("inbox", "eml"): (("path",), ("path",)),
    ("inbox", "json"): (("path",), ("path",)),
    ("inbox", "imap"): (
        ("host", "port", "user", *_AUTH_KEYS, "folders", "security", "timeout"),
        ("host", "user"),
    ),
    ("calendar", "ics"): (("path", "url", "token_command", "token_env", "timeout"), ()),
    ("calendar", "caldav"): (
        ("url", "user", *_AUTH_KEYS, "calendars", "timeout"),
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
            if f.name in ("name", "table", "kind", "url") or value in (None, ()):
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class SourcesConfig:
    """Every declared source, in file order."""

    path: Path | None
    inboxes: tuple[SourceSpec, ...] = ()
    calendars: tuple[SourceSpec, ...] = ()

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
    from dayflow.config import config_bytes

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
    for key in data:
        # `deliver` and [smtp] belong to the brief's delivery (dayflow.delivery reads them),
        # [model] to the settings (dayflow.config.model_table).
        if key not in ("inbox", "calendar", "model", *DELIVERY_KEYS):
            problems.append(
                f"unknown table or key {key!r} (expected [[inbox]], [[calendar]], deliver, "
                "[smtp] or [model])"
            )
    specs: dict[str, list[SourceSpec]] = {"inbox": [], "calendar": []}
    seen: dict[str, str] = {}
    for table in ("inbox", "calendar"):
        entries = data.get(table, [])
        if not isinstance(entries, list):
            problems.append(f"'{table}' must be written [[{table}]] (an array of tables)")
            continue
        for n, entry in enumerate(entries, start=1):
            spec = _entry(table, n, entry, path.parent, problems)
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
    if problems:
        raise ConfigFileError("\n".join(f"{path}: {p}" for p in problems))
    return SourcesConfig(path, tuple(specs["inbox"]), tuple(specs["calendar"]))


def _entry(table: str, n: int, entry: object, base: Path, problems: list[str]) -> SourceSpec | None:
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
    if kind not in kinds:
        what = "missing 'kind'" if kind is None else f"unknown kind {kind!r}"
        problems.append(f"{where}: {what} (one of: {', '.join(kinds)})")
        return None
    allowed, required = _KEYS[(table, str(kind))]
    for key in entry:
        if key not in ("name", "kind", "password", "token", *allowed):
            problems.append(
                f"{where}: unknown key {key!r} for kind {kind!r} "
                f"(known: name, kind, {', '.join(allowed)})"
            )
    for key in required:
        if entry.get(key) in (None, ""):
            problems.append(f"{where}: missing '{key}' (kind {kind!r} needs it)")
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
    ):
        if key in entry and key in allowed:
            value = entry[key]
            if not isinstance(value, str) or not value.strip():
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
    if "path" in values:
        values["path"] = str(_absolute(values["path"], base))
    if len(problems) > before or name is None:
        return None
    return SourceSpec(table=table, name=name, kind=str(kind), **values)


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
    the README says), in words that finish "'path' ..."; None when it has none."""
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


def resolve_password(spec: SourceSpec, env: Mapping[str, str] | None = None) -> str:
    """The source's password, fetched now from its command or environment variable. Errors
    name the source and the mechanism, never any output of the command."""
    env = os.environ if env is None else env
    if spec.password_env:
        value = env.get(spec.password_env)
        if not value:
            raise SourceError(
                f"{spec.name}: the environment variable {spec.password_env} "
                "(password_env) is not set"
            )
        return value
    if not spec.password_command:
        raise SourceError(f"{spec.name}: no password_command or password_env configured")
    try:
        return secret_from_command(spec.password_command, spec.timeout)
    except SecretCommandFailed as err:
        raise SourceError(f"{spec.name}: {err}") from None


NO_SHELL = "it runs without a shell: ~, $VAR and pipes do not work; write sh -c '...' for them"
_PASSWORD_OUTPUT = 64 * 1024  # more than any password; a command printing more is cut off


class SecretCommandFailed(SourceError):
    """`password_command` or `token_command` did not give its secret; the message never holds
    the command's output."""


def secret_from_command(
    command: str, timeout: float, *, key: str = "password_command", what: str = "password"
) -> str:
    """The first line a `password_command` (or, with `key`, a `token_command`) prints, in a
    session of its own: the one runner of every secret command.

    It runs without a shell. The answer is read until the command *exits* (not until its
    output closes: a child it leaves behind, a gpg-agent say, may hold the pipe open for ever),
    within `timeout` seconds; then its whole process group is killed, so nothing it started
    stays running. Raises SecretCommandFailed (one line naming `key` and the exit status, no
    output of the command)."""
    import selectors
    import signal
    import time

    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise SecretCommandFailed(f"{key} cannot be parsed ({err})") from None
    if not argv:
        raise SecretCommandFailed(f"{key} is empty")
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, killed whole below
        )
    except FileNotFoundError:
        raise SecretCommandFailed(f"{key} {argv[0]!r} was not found ({NO_SHELL})") from None
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise SecretCommandFailed(f"{key} could not run ({reason})") from None
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    out = bytearray()
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            open_pipe = True
            while True:
                exited = proc.poll() is not None
                if exited or not open_pipe:
                    if not exited:
                        try:
                            proc.wait(max(0.0, deadline - time.monotonic()))
                        except subprocess.TimeoutExpired:
                            break
                    if open_pipe:
                        _drain(fd, out)  # what it wrote before exiting
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                if sel.select(min(left, 0.05)):
                    open_pipe = _drain(fd, out)
        if proc.poll() is None:
            raise SecretCommandFailed(f"{key} did not finish in {timeout:g} s (stopped)")
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever it left behind
        proc.stdout.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(1)
    if proc.returncode != 0:
        raise SecretCommandFailed(f"{key} exited with status {proc.returncode} ({NO_SHELL})")
    text = bytes(out[:_PASSWORD_OUTPUT]).decode("utf-8", "replace")
    line = text.split("\n", 1)[0].removesuffix("\r")
    if not line:
        raise SecretCommandFailed(f"{key} printed no {what} ({NO_SHELL}; exit status 0)")
    return line


def _drain(fd: int, out: bytearray) -> bool:
    """Read what the pipe holds now; False once it is closed."""
    while len(out) <= _PASSWORD_OUTPUT:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        out += chunk
    return True


STARTER = """\
# Dayflow's sources: where your mail and calendars are. Uncomment and edit what you use.
# Dayflow only reads: it never sends mail, never marks a message read, never changes a
# mailbox or a calendar. Passwords are never written here: give a command that prints one
# (password_command) or the name of an environment variable that holds it (password_env).
# `dayflow sources check` opens each source and says what it found (no model call).

# A local Maildir, e.g. the one mbsync (isync) or offlineimap keeps in sync:
# [[inbox]]
# name = "personal"
# kind = "maildir"              # maildir | mbox | eml | imap | json
# path = "~/Mail/personal/INBOX"

# Gmail over IMAP with an app password (Google account > Security > App passwords):
# [[inbox]]
# name = "gmail"
# kind = "imap"
# host = "imap.gmail.com"
# user = "you@gmail.com"
# password_command = "pass show mail/gmail-app-password"
# folders = ["INBOX"]
# security = "tls"              # tls (port 993, the default) | starttls (143) | plain
# timeout = 30                  # seconds

# Fastmail over IMAP with an app password:
# [[inbox]]
# name = "fastmail"
# kind = "imap"
# host = "imap.fastmail.com"
# user = "you@fastmail.com"
# password_env = "FASTMAIL_APP_PASSWORD"

# Microsoft 365, Outlook.com or Google over IMAP with an OAuth token from a program that
# prints one (oama, pizauth; see the README, "Mail and calendars behind OAuth"):
# [[inbox]]
# name = "work"
# kind = "imap"
# host = "outlook.office365.com"  # Gmail: imap.gmail.com
# user = "you@example.com"
# auth = "xoauth2"              # password (the default) | xoauth2 | oauthbearer
# token_command = "oama access you@example.com"   # or token_env = "WORK_TOKEN"

# A calendar from an iCalendar file or a secret address (Google Calendar: Settings >
# your calendar > "Secret address in iCal format"):
# [[calendar]]
# name = "home"
# kind = "ics"                  # ics | caldav | json
# url = "https://calendar.google.com/calendar/ical/.../basic.ics"   # or path = "~/cal/home.ics"

# A CalDAV calendar (Nextcloud, Fastmail, Radicale...):
# [[calendar]]
# name = "work"
# kind = "caldav"
# url = "https://cloud.example.org/remote.php/dav"
# user = "you"
# password_command = "pass show nextcloud"
# calendars = ["Personal"]     # optional: all calendars when left out
"""
