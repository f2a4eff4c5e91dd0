"""Who may make Dayflow do what: the rules that keep a profile's config file from acting as
the worker that reads it, and every program a config names from seeing this process's secrets.

A config file is code: it names programs to run (`password_command`, `token_command`, MCP
servers' `command`), files to read (`path =`) and files to write (`deliver = ["file:…"]`),
and all of it runs with the rights of the process that reads it. For one user that is their
own file. For a fleet it is the operator's worker reading a file per person, so:

- a profile's config file is trusted only when this process's user (or root) owns it, and
  neither it nor its directory can be written by anyone else (`check_config`); so is its
  `rules.toml`, which decides what its brief leaves out (`check_rules`);
- a profile's paths (sources, `file:` sinks, `[smtp] cafile`, MCP `cwd`) stay under its
  config file's directory, symlinks resolved (`confine`);
- what a profile's file may read of the environment (`password_env`, `token_env`, `${VAR}`
  in MCP entries) is the environment without this process's secrets (`without_secrets`);
- every secret program and MCP server runs without them, for one user too
  (`command_env`): the Anthropic key, the database URL, every `DAYFLOW_*` and `PG*`
  variable. PATH, HOME, LANG and the rest stay: a token program needs its own.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from dayflow.config_files import API_KEYS, ENV_VARS
from dayflow.errors import ConfigFileError

# The variables no config file and no program it names may read: every one Dayflow reads
# (`config_files.ENV_VARS`: the model's key and endpoint, the database, whose URL holds its
# password, Dayflow's own settings), and any other of these prefixes.
SECRET_PREFIXES = ("ANTHROPIC_", "DAYFLOW_", "PG")
SECRET_NAMES = frozenset({"DATABASE_URL"})
# The variables whose value is a secret wherever it appears (a key copied under another
# name): the keys, and a database URL (it may hold a password).
_KEYS = (*API_KEYS, "PGPASSWORD")
_URLS = ("DAYFLOW_DB", "DATABASE_URL")
_MIN_SECRET = 8


def is_secret_name(name: str) -> bool:
    """Whether the variable `name` is one of this process's secrets."""
    upper = name.upper()
    return upper in SECRET_NAMES or upper in ENV_VARS or upper.startswith(SECRET_PREFIXES)


def without_secrets(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without this process's secrets: the variables `is_secret_name` names, and any
    other variable holding one of their values (a key copied under another name)."""
    secrets = {env[k] for k in _KEYS if len(env.get(k) or "") >= _MIN_SECRET}
    secrets |= {env[k] for k in _URLS if "://" in (env.get(k) or "")}
    return {
        k: v for k, v in env.items() if not is_secret_name(k) and not any(s in v for s in secrets)
    }


def command_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment a secret program runs in: the one its entry reads (`environ`, built
    from the runtime's), secrets taken out (`without_secrets`)."""
    return without_secrets(environ)


def check_config(path: Path, *, euid: int | None = None) -> None:
    """Refuse (ConfigFileError, exit 4) a profile's config file that this process's user
    (`euid`, default the effective uid) cannot trust: one owned by another user (root's is
    trusted), or one that others can change (group- or world-writable, or in a directory
    that is, unless the directory is sticky, as /tmp is). The file's real path is checked,
    and the directory of the path as given (a symlink there can be pointed elsewhere)."""
    fix = "the worker runs each profile's file as its own code: the operator owns them"
    _check_owned(path, "profile config", fix, euid)


def check_rules(path: Path, *, euid: int | None = None) -> None:
    """Refuse (ConfigFileError) a profile's `rules.toml` as `check_config` refuses its config
    file: whoever can write it decides what the profile's brief leaves out (a mute of
    everyone, a snooze of every task)."""
    fix = "a profile's rules decide what its brief leaves out: the operator owns them"
    _check_owned(path, "profile rules", fix, euid)


def _check_owned(path: Path, what: str, fix: str, euid: int | None) -> None:
    me = os.geteuid() if euid is None else euid
    real = Path(os.path.realpath(path))
    try:
        checks = [(real, os.stat(real)), (path.parent, os.stat(path.parent))]
        if real.parent != path.parent:
            checks.append((real.parent, os.stat(real.parent)))
    except OSError:
        return  # reading it says what is wrong, in the words every config error uses
    for where, st in checks:
        if st.st_uid not in (me, 0):
            raise ConfigFileError(
                f"{what} {path}: {where} is owned by uid {st.st_uid}, not by this "
                f"user (uid {me}) or root; refused ({fix}: copy it somewhere of yours)"
            )
        sticky_dir = stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not sticky_dir:
            raise ConfigFileError(
                f"{what} {path}: {where} can be written by others (mode "
                f"{stat.S_IMODE(st.st_mode):o}); refused ({fix}: chmod go-w {where})"
            )


def confine(value: str, root: Path, *, what: str, config: Path) -> None:
    """Refuse (ConfigFileError) a profile's path `value` that is not under `root` (its
    config file's directory) once symlinks and `..` are resolved; a `{date}` in it counts as
    a date."""
    real = Path(os.path.realpath(value.replace("{date}", "2000-01-01")))
    top = Path(os.path.realpath(root))
    if not real.is_relative_to(top):
        raise ConfigFileError(
            f"profile config {config}: {what} {value} is outside the profile's directory "
            f"{top}; refused (a profile reads and writes only under its config file's "
            "directory)"
        )
