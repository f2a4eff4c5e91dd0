"""This process's configuration, resolved once: the environment, the `.env` files and the
config file, read at most once each into one `Config` that every part receives (the settings
of the model, the database and the timezone; the sources; delivery; the schedule).

Settings are one frozen object, from flags, the environment and `.env` files (in that order).
The config file (`config.toml`: sources, `deliver`, `[smtp]`) is the one `--config` names, else
DAYFLOW_CONFIG as the environment *and the `.env` files* give it, else the XDG default: one
answer for sources and delivery alike.

Which `.env`: `$XDG_CONFIG_HOME/dayflow/.env` (`~/.config/dayflow/.env`), and the file named by
DAYFLOW_DOTENV (`DAYFLOW_DOTENV=./.env` to read the one in the current directory). Never a `.env`
that merely happens to be in the current directory: a project's key must not silently switch
Dayflow to the paid API and send it the inbox.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dayflow.config_files import (
    Environment,
    Reader,
    config_bytes,
    default_db_path,
    environment,
    read_file,
    unknown_settings,
)
from dayflow.errors import ConfigFileError, StoreError, UsageError
from dayflow.frozen import Frozen
from dayflow.models import (
    DELIVERY_KILL_POINTS,
    DRAFT_KILL_POINTS,
    KILL_POINTS,
    RULES_KILL_POINTS,
    is_postgres_target,
)
from dayflow.network import proxy_env
from dayflow.pricing import Prices, load_prices
from dayflow.providers import DEFAULT_CLAUDE_MODEL, OFFLINE_MODEL
from dayflow.providers.local import (
    ANTHROPIC,
    LOCAL,
    LOCAL_TIMEOUT,
    OLLAMA_URL,
    PROVIDERS,
    base_of,
)

if TYPE_CHECKING:  # imported where used: `runs` and `tasks` read no config file
    from dayflow import delivery
    from dayflow.clock import Clock
    from dayflow.sources.config import SourcesConfig


class Settings(Frozen):
    db_path: Path | str  # a SQLite file, or a postgresql:// URL kept as written
    api_key: str | None
    base_url: str | None
    model: str
    model_was_defaulted_offline: bool
    tz: str
    inbox: str | None
    calendar: str | None
    durability: str  # NORMAL | FULL
    kill_at: tuple[str, int] | None
    prices: Prices
    api_key_file: str | None = None  # the .env file that supplied ANTHROPIC_API_KEY, if one did
    timeout: float = 120.0  # seconds one API request may take (DAYFLOW_TIMEOUT, --timeout)
    # Where this machine keeps Dayflow's own files (kept stdin inputs, the day's lock): beside
    # the SQLite file, or the user data directory when the history is on a server.
    local_dir: Path = Path(".")
    # Who serves the model: "anthropic" (Claude, or the offline model) or "local" (a server on
    # this machine at `base_url`; see dayflow.providers.local). `allow_remote`: --allow-remote.
    provider: str = "anthropic"
    allow_remote: bool = False
    # The name this machine goes by in a shared database's leases (DAYFLOW_HOST; "": its host
    # name), from the environment over the `.env` files as every setting is.
    host: str = ""
    # The environment's proxy variables (`network.proxy_env`): what every HTTP client of a run
    # chooses its proxy by, as the runtime read them.
    proxy_env: tuple[tuple[str, str], ...] = ()
    # Why $TZ was not the zone (a name this machine does not know), said once by a brief.
    tz_ignored: str | None = None

    @property
    def local(self) -> bool:
        """Whether the model is a local server's (--provider local)."""
        return self.provider == LOCAL

    @property
    def local_db(self) -> Path:
        """A path standing for the database on this machine, for the files kept beside it: the
        SQLite file, or one named after the server's URL in `local_dir`."""
        if isinstance(self.db_path, Path):
            return self.db_path
        import hashlib  # here: start-up time of `runs` and `tasks`

        digest = hashlib.sha256(self.db_path.encode()).hexdigest()[:12]
        return self.local_dir / f"postgresql-{digest}.db"


class Config:
    """What this process was configured with, resolved once and handed to every part: the
    environment over the `.env` files (`env`), the settings made from it and the flags
    (`settings`), and the config file, whose sources (`sources`) and delivery (`delivery`) come
    from one reading of one file. Each file is read at most once per process, through `read`
    (tests inject one that counts).

    `env` given: that is the whole environment and no `.env` file is read (as tests do);
    otherwise `environ` (the process environment, as `dayflow.app.Runtime` took it; none
    given: an empty one) over the `.env` files it points to."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        read: Reader = read_file,
        profile: bool = False,
    ) -> None:
        # A profile's (a worker's, or --profile's): its config file is trusted only as
        # `dayflow.trust` says, its paths stay beside it, its entries never read this
        # process's secrets (`file_env`).
        self.profile = profile
        self._env = env
        self._environ, self._cwd, self._read = environ, cwd, read
        self._files: dict[Path, bytes | None] = {}  # None: no such file
        self._sources: dict[Path, SourcesConfig] = {}
        self._names_checked = False
        self._warnings: list[str] = []  # found, not yet taken (`warnings`)

    @property
    def env(self) -> Mapping[str, str]:
        """The environment over the `.env` files (read on first use, then kept); what is
        wrong with it is kept for `warnings`, never said here."""
        if self._env is None:
            self._env = environment(
                self._cwd,
                notice=self._warnings.append,
                environ=self._environ or {},
                read=self._read,
            )
        if not self._names_checked:  # once: a misspelt setting is not silently ignored
            self._names_checked = True
            if not self.profile:  # (a profile's environment is this process's, checked)
                self._warnings += unknown_settings(self._env)
        return self._env

    def warnings(self) -> list[str]:
        """The lines a user should see about the environment (a `.env` file or line that was
        skipped, a `DAYFLOW_*` variable that is no setting), each given once: the caller
        shows them. Reads the environment if it was not yet."""
        self.env  # noqa: B018 - resolving it is what finds them
        taken, self._warnings = self._warnings, []
        return taken

    @property
    def file_env(self) -> Mapping[str, str]:
        """The environment a config file's entries may read (`password_env`, `token_env`,
        `${VAR}` in MCP entries): `env`, without this process's secrets for a profile's."""
        if not self.profile:
            return self.env
        from dayflow.trust import without_secrets

        return without_secrets(self.env)

    def settings(self, **flags: Any) -> Settings:
        """The settings from these flags over the environment (see `load`)."""
        return load(self.env, **flags)

    def model_settings(self, flag: Path | str | None = None, **flags: Any) -> Settings:
        """`settings`, with the config file's `[model]` table under the flags and the
        environment. A config file that is missing or cannot be read has no table here (the
        sources report it, where they are read)."""
        from dayflow.sources.config import read_toml

        path, _ = self.config_path(flag)
        try:
            raw = self._bytes(path)
        except ConfigFileError:
            raw = None
        if raw is None:
            return load(self.env, **flags)
        return load(self.env, model_table=model_table(read_toml(raw, path), path), **flags)

    def config_path(self, flag: Path | str | None = None) -> tuple[Path, bool]:
        """Where the config file is (absolute: a run stores it, and a resume from another
        directory must find it), and whether it was named (--config or DAYFLOW_CONFIG)."""
        from dayflow.sources.config import config_path

        path, explicit = config_path(self.env, Path(flag) if flag else None)
        return Path(os.path.abspath(path)), explicit

    def _bytes(self, path: Path) -> bytes | None:
        if path not in self._files:
            if self.profile:
                from dayflow.trust import check_config

                check_config(path)
            try:
                self._files[path] = config_bytes(path, self._read)
            except FileNotFoundError:
                self._files[path] = None
        return self._files[path]

    def document(self, flag: Path | str | None = None) -> tuple[Path, dict[str, Any] | None]:
        """The config file's path and TOML document (unvalidated); None when there is no
        file at the default place. A named file that is missing, unreadable or not TOML is a
        ConfigFileError (exit 4)."""
        from dayflow.sources.config import read_toml

        path, explicit = self.config_path(flag)
        raw = self._bytes(path)
        if raw is None:
            if explicit:
                raise ConfigFileError(
                    f"config file {path} does not exist (`dayflow init` writes one)"
                )
            return path, None
        return path, read_toml(raw, path)

    def validate(self, flag: Path | str | None = None) -> None:
        """Check the whole config file before anything is said or done: a ConfigFileError
        (exit 4) listing every problem of every section, a line each (the top level, the
        sources and MCP servers, then [model], then `deliver` and [smtp]); nothing when the
        file is valid or there is none at the default place."""
        path, data = self.document(flag)
        if data is None:
            return
        lines: list[str] = []
        checks: tuple[Callable[[], object], ...] = (
            lambda: self.sources_file(path),
            lambda: model_table(data, path),
            lambda: self.delivery(flag),
        )
        for check in checks:
            try:
                check()
            except ConfigFileError as err:
                lines += [line for line in str(err).splitlines() if line not in lines]
        if lines:
            raise ConfigFileError("\n".join(lines))

    def sources(self, flag: Path | str | None = None) -> SourcesConfig | None:
        """The validated sources of the config file; None when there is none at the default
        place (see `document`)."""
        path, data = self.document(flag)
        return None if data is None else self.sources_file(path)

    def sources_file(self, path: Path) -> SourcesConfig:
        """The validated sources of the config file at `path`, which must exist (a run's
        stored config: a resume reads it again)."""
        from dayflow.sources.config import parse_config

        path = Path(os.path.abspath(path))
        if path not in self._sources:
            raw = self._bytes(path)
            if raw is None:
                raise ConfigFileError(f"config file {path} does not exist")
            parsed = parse_config(raw, path)
            if self.profile:
                _confine_sources(parsed, path)
            self._sources[path] = parsed
        return self._sources[path]

    def delivery(
        self, flag: Path | str | None = None, clock: Clock | None = None
    ) -> tuple[list[str], delivery.Settings]:
        """The config file's `deliver` sinks and how deliveries are made (its [smtp] table,
        this environment), from the same file the sources come from."""
        from dayflow import delivery

        path, data = self.document(flag)
        sinks, how = delivery.from_document(data, path, self.file_env, clock)
        if self.profile:
            from dayflow.trust import confine

            for sink in sinks:
                if sink.startswith("file:"):
                    confine(sink[5:], path.parent, what="deliver", config=path)
            if how.smtp is not None and how.smtp.cafile is not None:
                confine(how.smtp.cafile, path.parent, what="[smtp] cafile", config=path)
            if how.smtp is not None:
                for key in ("password_env", "token_env"):
                    _not_a_secret(getattr(how.smtp, key), f"[smtp] {key}", path)
        return sinks, how


def _confine_sources(parsed: SourcesConfig, path: Path) -> None:
    """A profile's sources read only under its config file's directory (dayflow.trust)."""
    from dayflow.trust import confine

    for spec in parsed.all():
        for key in ("password_env", "token_env"):
            _not_a_secret(getattr(spec, key, None), f"{spec.name}'s {key}", path)
        keys = ("path",) if spec.kind == "imap" else ("path", "sent")
        for key in keys:  # (an IMAP `sent` is a folder on the server)
            value = getattr(spec, key, None)
            if isinstance(value, str) and value:
                confine(value, path.parent, what=f"{spec.name}'s {key}", config=path)


def _not_a_secret(name: str | None, what: str, path: Path) -> None:
    """Refuse a profile's entry that reads one of the worker's secrets by name: it would be
    read as unset (dayflow.trust), and "is not set" would send the operator looking for it."""
    from dayflow.trust import is_secret_name

    if name and is_secret_name(name):
        raise ConfigFileError(
            f"profile config {path}: {what} {name} is one of the worker's secrets (the API key, "
            "the database, Dayflow's settings); a profile's config cannot read it"
        )


def require_existing_db(path: Path) -> None:
    """Refuse a database path that does not exist: only commands that start runs create one."""
    if is_postgres_target(path) or str(path) == ":memory:":
        return
    if not path.exists():
        raise StoreError(
            f"no Dayflow database at {path} (`dayflow brief` creates it; --db or DAYFLOW_DB "
            "names another)"
        )


def load(
    env: Mapping[str, str],
    *,
    db: Path | str | None = None,
    model: str | None = None,
    tz: str | None = None,
    inbox: Path | None = None,
    calendar: Path | None = None,
    timeout: float | None = None,
    provider: str | None = None,
    allow_remote: bool = False,
    model_table: Mapping[str, Any] | None = None,
) -> Settings:
    """Resolve every setting; flags beat the environment, which beats the config file's
    `[model]` table (`model_table`, see `model_table`), which beats the defaults."""
    table = model_table or {}
    api_key = env.get("ANTHROPIC_API_KEY") or None
    which = provider or env.get("DAYFLOW_PROVIDER") or table.get("provider") or ANTHROPIC
    which = which.strip().lower()  # in any case: LOCAL is local
    if which not in PROVIDERS:
        raise UsageError(
            f"--provider / DAYFLOW_PROVIDER must be one of {', '.join(PROVIDERS)}, not {which!r}"
        )
    chosen = model or env.get("DAYFLOW_MODEL") or table.get("name") or None
    # A config file's base_url is a local model's server only: the Anthropic API key goes
    # where its owner's environment says (ANTHROPIC_BASE_URL), never where a file does.
    base_url = env.get("ANTHROPIC_BASE_URL") or None
    if which == LOCAL:
        base_url = base_url or table.get("base_url") or None
    defaulted = chosen is None and api_key is None and which != LOCAL
    if which == LOCAL:
        # No key and no default model: a local run names its model (checked where one is
        # made: `runs` must work whatever the environment says), at Ollama's address unless
        # another is given.
        base_url = base_of(base_url or OLLAMA_URL)
        chosen = chosen or ""
    elif chosen is None:
        chosen = DEFAULT_CLAUDE_MODEL if api_key else OFFLINE_MODEL
    durability = (env.get("DAYFLOW_DURABILITY") or "normal").upper()
    if durability not in ("NORMAL", "FULL"):
        raise UsageError("DAYFLOW_DURABILITY must be 'normal' or 'full'")
    from_tz, tz_ignored = (None, None) if tz or env.get("DAYFLOW_TZ") else _tz_from_env(env)
    zone = tz or env.get("DAYFLOW_TZ") or from_tz or "UTC"
    if zone != "UTC":  # (no zoneinfo import on the common path)
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(zone)
        except (ValueError, ZoneInfoNotFoundError):
            raise UsageError(f"unknown timezone {zone!r} (use an IANA name such as UTC)") from None
    target = _db_target(db or env.get("DAYFLOW_DB")) or default_db_path(env)
    if isinstance(target, str):
        target = _with_pgbouncer(target, env.get("DAYFLOW_PG_PGBOUNCER"))
    return Settings(
        db_path=target,
        local_dir=target.parent if isinstance(target, Path) else default_db_path(env).parent,
        api_key=api_key,
        base_url=base_url,
        model=chosen,
        model_was_defaulted_offline=defaulted,
        tz=zone,
        tz_ignored=tz_ignored,
        inbox=_path_or_none(inbox or env.get("DAYFLOW_INBOX")),
        calendar=_path_or_none(calendar or env.get("DAYFLOW_CALENDAR")),
        durability=durability,
        kill_at=_kill_at(env.get("DAYFLOW_KILL_AT")),
        prices=load_prices(env.get("DAYFLOW_PRICES")),
        api_key_file=_file_of(env, "ANTHROPIC_API_KEY") if api_key else None,
        timeout=_timeout(
            _first(timeout, env.get("DAYFLOW_TIMEOUT"), table.get("timeout")),
            LOCAL_TIMEOUT if which == LOCAL else DEFAULT_TIMEOUT,
        ),
        provider=which,
        allow_remote=allow_remote,
        host=(env.get("DAYFLOW_HOST") or "").strip(),
        proxy_env=proxy_env(env),
    )


MODEL_KEYS = ("provider", "name", "base_url", "timeout")


def model_table(data: Mapping[str, Any] | None, path: Path) -> dict[str, Any]:
    """The config file's `[model]` table, checked: `provider` (anthropic or local), `name`,
    `base_url`, `timeout` (seconds); every problem in one ConfigFileError, a line each."""
    if not data or "model" not in data:
        return {}
    table = data["model"]
    if not isinstance(table, dict):
        raise ConfigFileError(f"{path}: 'model' must be a table ([model])")
    if isinstance(table.get("provider"), str):  # "LOCAL", "Local " are local too
        table = {**table, "provider": table["provider"].strip().lower()}
    from dayflow.sources.config import listed

    problems: list[str] = []
    unknown = [k for k in table if k not in MODEL_KEYS]
    if unknown:
        expected = ", ".join(MODEL_KEYS)
        problems.append(f"[model]: unknown {listed(unknown, 'key', 'keys')} (expected {expected})")
    for key in ("provider", "name", "base_url"):
        if key in table and (not isinstance(table[key], str) or not table[key].strip()):
            problems.append(f"[model]: {key!r} must be a non-empty string")
    if "base_url" in table and table.get("provider") != LOCAL:
        problems.append(
            '[model]: base_url is for provider = "local" only: the Anthropic API key is sent '
            "only where ANTHROPIC_BASE_URL (your environment) says, never where a config "
            "file does"
        )
    provider = table.get("provider")
    if isinstance(provider, str) and provider and provider not in PROVIDERS:
        problems.append(
            f"[model]: provider must be one of {', '.join(PROVIDERS)}, not {table['provider']!r}"
        )
    timeout = table.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 1 <= timeout <= MAX_TIMEOUT
    ):
        problems.append(f"[model]: timeout must be 1 to {MAX_TIMEOUT:g} seconds, not {timeout!r}")
    if problems:
        raise ConfigFileError.of(path, problems)
    return dict(table)


def _file_of(env: Mapping[str, str], name: str) -> str | None:
    """The `.env` file that set `name`, when `env` is the merged `Environment` (a plain mapping
    given by a caller has no files)."""
    return env.files.get(name) if isinstance(env, Environment) else None


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None and v != ""), None)


MAX_TIMEOUT = 3600.0
DEFAULT_TIMEOUT = 120.0


def _timeout(value: float | str | None, default: float = DEFAULT_TIMEOUT) -> float:
    """Seconds one API request may take: a number from 1 to 3600 (default 120; 600 for a
    local model, which may run on the CPU)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (1 <= seconds <= MAX_TIMEOUT):
        raise UsageError(f"DAYFLOW_TIMEOUT / --timeout must be 1 to 3600 seconds, not {value!r}")
    return seconds


def _db_target(value: Path | str | None) -> Path | str | None:
    """A postgresql:// URL as given (a Path would fold its `//`), else the file's path."""
    if not value:
        return None
    if is_postgres_target(value):
        return str(value)
    return Path(value).expanduser()


def _with_pgbouncer(url: str, flag: str | None) -> str:
    """`url` with `dayflow_pgbouncer=1` when DAYFLOW_PG_PGBOUNCER (from the environment or a
    `.env` file) turns it on and the URL does not say otherwise: the store reads the option
    from the URL, so a `.env` file's value reaches it as the environment's does."""
    if not flag or flag.strip().lower() not in ("1", "true", "yes", "on"):
        return url
    if "dayflow_pgbouncer=" in url.partition("?")[2]:
        return url
    return url + ("&" if "?" in url else "?") + "dayflow_pgbouncer=1"


def _path_or_none(value: Path | str | None) -> str | None:
    """An absolute path; "-" (standard input) as is. Symlinks are not resolved: /dev/stdin and
    /dev/fd/N would turn into names that exist nowhere."""
    if not value:
        return None
    if str(value) == "-":
        return "-"
    return os.path.abspath(Path(value).expanduser())


def _tz_from_env(env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """$TZ when it is a zone name this machine knows (`Europe/Berlin`, `PST8PDT`), else None
    and, when $TZ is set, the line that says its times are in UTC instead."""
    tz = env.get("TZ", "").strip().lstrip(":")
    if not tz:
        return None, None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(tz)
    except (ValueError, ZoneInfoNotFoundError):
        from dayflow.printable import plain

        return None, (
            f"TZ={plain(tz[:60])!r} is not a zone name this machine knows, so times are in "
            "UTC; set DAYFLOW_TZ (an IANA name such as America/Los_Angeles) to choose one"
        )
    return tz, None


def _kill_at(value: str | None) -> tuple[str, int] | None:
    """Parse the crash-test hook DAYFLOW_KILL_AT=POINT:STEP (SIGKILL at that point)."""
    if not value:
        return None
    point, _, step = value.partition(":")
    points = KILL_POINTS + DELIVERY_KILL_POINTS + RULES_KILL_POINTS + DRAFT_KILL_POINTS
    if point not in points or not step.isdigit():
        raise UsageError(
            f"DAYFLOW_KILL_AT must be POINT:STEP with POINT one of {', '.join(points)}"
        )
    return point, int(step)
