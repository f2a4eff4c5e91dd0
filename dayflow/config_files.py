"""Where the configuration lives and how its files are read: the XDG directories, the default
database, the environment over the `.env` files, and the guarded read of a config or `.env`
file (a regular file of plausible size, never a FIFO or a device)."""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from dayflow.errors import ConfigFileError

# The model's keys, by the names the Anthropic SDK reads them under.
API_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
# Every variable of Dayflow's own (and the SDK's) that Dayflow reads, said once (issue 33.3):
# the settings read them (`config`), `schedule` pins some of them, `trust` keeps the keys from
# the programs a config names, and the tests scrub every one. A test finds any other name read.
ENV_VARS = (
    *API_KEYS,
    "ANTHROPIC_BASE_URL",
    "DAYFLOW_DB",
    "DAYFLOW_TZ",
    "DAYFLOW_MODEL",
    "DAYFLOW_PROVIDER",
    "DAYFLOW_CONFIG",
    "DAYFLOW_DOTENV",
    "DAYFLOW_INBOX",
    "DAYFLOW_CALENDAR",
    "DAYFLOW_DURABILITY",
    "DAYFLOW_PRICES",
    "DAYFLOW_TIMEOUT",
    "DAYFLOW_HOST",
    "DAYFLOW_PG_PGBOUNCER",
    "DAYFLOW_KILL_AT",
    "DAYFLOW_DEBUG",
)
# The platform's variables Dayflow honours: the user's, not Dayflow's (the tests set their own).
PLATFORM_ENV_VARS = (
    "TZ",
    "HOME",
    "PATH",
    "LOCALAPPDATA",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "COLUMNS",
    "NO_COLOR",
    "REQUEST_METHOD",  # a CGI request: its Proxy: header is not a proxy (`network`)
    # What the shell's completion scripts hand over (as Typer's completion classes read them).
    "_DAYFLOW_COMPLETE",
    "COMP_WORDS",
    "COMP_CWORD",
    "_TYPER_COMPLETE_ARGS",
    "_TYPER_COMPLETE_WORD_TO_COMPLETE",
)


# Names under Dayflow's prefix that are not its settings: its tests' and its bench's own
# (DAYFLOW_TEST_PG, DAYFLOW_TEST_PG_CLUSTER, DAYFLOW_BENCH_PG...), never warned about.
NOT_SETTINGS_PREFIXES = ("DAYFLOW_TEST_", "DAYFLOW_BENCH_")
# What people write for a setting under another name; the rest is found by spelling.
_MEANT = {
    "TIMEZONE": "DAYFLOW_TZ",
    "TIME_ZONE": "DAYFLOW_TZ",
    "ZONE": "DAYFLOW_TZ",
    "DATABASE": "DAYFLOW_DB",
    "DATABASE_URL": "DAYFLOW_DB",
    "DB_PATH": "DAYFLOW_DB",
    "DB_URL": "DAYFLOW_DB",
    "CONFIG_FILE": "DAYFLOW_CONFIG",
    "CONF": "DAYFLOW_CONFIG",
    "CFG": "DAYFLOW_CONFIG",
    "ENV": "DAYFLOW_DOTENV",
    "ENV_FILE": "DAYFLOW_DOTENV",
    "DOT_ENV": "DAYFLOW_DOTENV",
    "API_KEY": "ANTHROPIC_API_KEY",
    "ANTHROPIC_API_KEY": "ANTHROPIC_API_KEY",
    "KEY": "ANTHROPIC_API_KEY",
    "BASE_URL": "ANTHROPIC_BASE_URL",
    "HOSTNAME": "DAYFLOW_HOST",
    "PRICE": "DAYFLOW_PRICES",
    "PRICING": "DAYFLOW_PRICES",
}


def unknown_settings(env: Mapping[str, str]) -> list[str]:
    """A warning line for each `DAYFLOW_*` variable of `env` that is not a Dayflow setting
    (a misspelt one is otherwise silently ignored), naming the setting it most likely meant
    and the `.env` file that set it, if one did."""
    files = env.files if isinstance(env, Environment) else {}
    lines = []
    for name in sorted(env):
        if not name.startswith("DAYFLOW_") or name in ENV_VARS:
            continue
        if name.startswith(NOT_SETTINGS_PREFIXES):
            continue
        from dayflow.printable import plain  # only for a name worth a warning

        where = f"{plain(files[name])}: " if name in files else ""
        line = f"warning: {where}{plain(name[:60])} is not a Dayflow setting"
        meant = _meant(name)
        lines.append(f"{line}; did you mean {meant}?" if meant else f"{line}; ignored")
    return lines


def _meant(name: str) -> str | None:
    """The setting `name` (a `DAYFLOW_*` one that is not) most likely stands for, if any."""
    import difflib

    rest = name.removeprefix("DAYFLOW_").upper()
    if rest in _MEANT:
        return _MEANT[rest]
    # Compared without the prefix every one shares (else any name is "close" to them all).
    ours = {v.removeprefix("DAYFLOW_"): v for v in ENV_VARS if v.startswith("DAYFLOW_")}
    close = difflib.get_close_matches(rest, list(ours), n=1, cutoff=0.7)
    if close:
        return ours[close[0]]
    # Another form of a setting's word (DURABLE for DURABILITY): the one it starts like.
    starts = [v for short, v in ours.items() if rest.startswith(short[:4])]
    return starts[0] if len(starts) == 1 else None


def _xdg(env: Mapping[str, str], name: str, fallback: Path) -> Path:
    """An XDG base directory; a relative one is ignored, as the XDG spec says."""
    value = env.get(name) or ""
    return Path(value) if value and Path(value).is_absolute() else fallback


def default_db_path(env: Mapping[str, str]) -> Path:
    """The database in the user's data directory (XDG on Linux, the usual places elsewhere)."""
    home = Path(env.get("HOME") or Path.home())
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
    else:
        base = _xdg(env, "XDG_DATA_HOME", home / ".local" / "share")
    return base / "dayflow" / "dayflow.db"


def config_dir(env: Mapping[str, str]) -> Path:
    """Dayflow's configuration directory: `$XDG_CONFIG_HOME/dayflow` (`~/.config/dayflow`)."""
    home = Path(env.get("HOME") or Path.home())
    return _xdg(env, "XDG_CONFIG_HOME", home / ".config") / "dayflow"


class Environment(dict[str, str]):
    """The merged environment, remembering which `.env` file supplied which variable."""

    def __init__(self) -> None:
        super().__init__()
        self.files: dict[str, str] = {}


MAX_CONFIG_BYTES = 1024 * 1024  # a config or .env file is a few hundred lines


def read_file(path: Path) -> bytes:
    """A regular file's bytes. Anything else is refused before a byte is read: a FIFO given as
    a config file would block the brief forever, a device never end (`files.NotRegular`, an
    OSError naming what it is); so is a file over MAX_CONFIG_BYTES (EFBIG)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        if err.errno == errno.ENXIO:  # a socket cannot be opened: say what it is
            _refuse(os.stat(path).st_mode)
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            _refuse(mode)
        chunks, size = [], 0
        while size <= MAX_CONFIG_BYTES and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_CONFIG_BYTES:
            raise OSError(errno.EFBIG, "larger than 1 MB", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _refuse(mode: int) -> None:
    from dayflow.files import NotRegular, kind_of  # only on this rare path (start-up)

    raise NotRegular(kind_of(mode))


def config_bytes(path: Path, read: Callable[[Path], bytes] = read_file) -> bytes:
    """The config file's bytes, or ConfigFileError (one line naming what is wrong); a missing
    file is FileNotFoundError, for the caller to decide."""
    from dayflow.files import NotRegular

    try:
        return read(path)
    except FileNotFoundError:
        raise
    except NotRegular as err:
        raise ConfigFileError(f"{path}: is {err.kind}, not a config file") from None
    except OSError as err:
        if err.errno == errno.EFBIG:
            raise ConfigFileError(f"{path}: is larger than 1 MB, not a config file") from None
        raise ConfigFileError(f"{path}: cannot be read ({err.strerror or err})") from None


Reader = Callable[[Path], bytes]


def environment(
    cwd: Path | None = None,
    *,
    notice: Callable[[str], None] | None = None,
    environ: Mapping[str, str],
    read: Reader = read_file,
) -> Environment:
    """The process environment (`environ`, as the runtime took it) over the values of Dayflow's
    `.env` files (the environment wins).

    `cwd` resolves a relative DAYFLOW_DOTENV. A file that cannot be read or is not UTF-8 is
    skipped with one line through `notice`, naming it; so is each line that does not parse."""
    say = notice or (lambda text: print(text, file=sys.stderr))
    process = environ
    merged = Environment()
    files = [config_dir(process) / ".env"]
    named = process.get("DAYFLOW_DOTENV")
    if named:
        chosen = Path(named).expanduser()
        files.append(chosen if chosen.is_absolute() else (cwd or Path.cwd()) / chosen)
    for env_file in files:
        explicit = env_file != files[0]
        for key, value in _read_dotenv(env_file, explicit=explicit, say=say, read=read).items():
            merged[key] = value
            merged.files[key] = str(env_file)
    merged.update(process)
    for key in process:
        merged.files.pop(key, None)
    return merged


def _read_dotenv(
    path: Path, *, explicit: bool, say: Callable[[str], None], read: Reader = read_file
) -> dict[str, str]:
    try:
        text = read(path).decode("utf-8-sig")
    except FileNotFoundError:
        if explicit:
            say(f"warning: DAYFLOW_DOTENV names {path}, which does not exist; not read")
        return {}
    except UnicodeDecodeError:
        say(f"warning: {path} is not UTF-8 text; skipped")
        return {}
    except OSError as exc:
        say(f"warning: cannot read {path} ({exc.strerror or exc}); skipped")
        return {}
    import io

    from dotenv.parser import parse_stream  # only when there is a file to parse

    values: dict[str, str] = {}
    for binding in parse_stream(io.StringIO(text)):
        if binding.error:
            say(f"warning: {path} line {binding.original.line}: not KEY=value; line ignored")
        elif binding.key is not None and binding.value is not None:
            values[binding.key] = binding.value
    return values
