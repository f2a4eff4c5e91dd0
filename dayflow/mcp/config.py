"""`[mcp_servers.NAME]` in the config file: what each MCP server is and what it may do.

    [mcp_servers.github]
    command = "github-mcp-server"
    args = ["stdio", "--read-only"]
    env = { GITHUB_PERSONAL_ACCESS_TOKEN = "${GITHUB_TOKEN}" }
    allow_tools = ["list_notifications", "get_issue"]

    [mcp_servers.linear]
    url = "https://mcp.example.org/mcp"      # streamable HTTP
    token_command = "pass show linear-token" # or token_env, as for mail sources
    allow_tools = ["list_my_issues"]

`${VAR}` in `args`, `env` and `headers` is taken from the environment when the server is
started, never before and never stored: a run records only the names of its servers and tools,
and a resume reads this table again. A problem is one line naming the table and the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dayflow.errors import ConfigFileError, SourceError
from dayflow.frozen import Frozen
from dayflow.network import is_loopback

TABLE = "mcp_servers"
STARTUP_TIMEOUT = 20.0
TOOL_TIMEOUT = 60.0
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,24}")
_KEYS: dict[str, Any] = {
    "command": str,
    "args": list,
    "env": dict,
    "cwd": str,
    "url": str,
    "headers": dict,
    "token_command": str,
    "token_env": str,
    "security": str,
    "allow_tools": list,
    "allow_writes": bool,
    "startup_timeout": (int, float),
    "tool_timeout": (int, float),
    "enabled": bool,
}
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ServerSpec(Frozen):
    """One `[mcp_servers.NAME]` entry as written (variables not yet expanded)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    token_command: str | None = None
    token_env: str | None = None
    allow_tools: tuple[str, ...] = ()
    allow_writes: bool = False
    startup_timeout: float = STARTUP_TIMEOUT
    tool_timeout: float = TOOL_TIMEOUT
    enabled: bool = True

    @property
    def transport(self) -> str:
        """ "stdio" (a command this process starts) or "http" (streamable HTTP at `url`)."""
        return "stdio" if self.command is not None else "http"

    @property
    def where(self) -> str:
        """What messages show of it: the command's name, or the URL's scheme and host."""
        if self.command is not None:
            return self.command
        scheme, _, rest = (self.url or "").partition("://")
        return f"{scheme}://{rest.split('/', 1)[0].rpartition('@')[2]}"


def parse_servers(data: Mapping[str, Any] | None, path: Path) -> tuple[ServerSpec, ...]:
    """The `[mcp_servers.*]` entries of a config file's TOML document, in file order;
    ConfigFileError names every problem, one line each ("PATH: [mcp_servers.x] 'key' ...")."""
    problems: list[str] = []
    specs = _servers(data, problems)
    if problems:
        raise ConfigFileError.of(path, problems)
    return specs


def server_problems(data: Mapping[str, Any]) -> list[str]:
    """What is wrong with the document's `[mcp_servers.*]`, one phrase each (for the config
    file's own validation, which names the path)."""
    problems: list[str] = []
    _servers(data, problems)
    return problems


def _servers(data: Mapping[str, Any] | None, problems: list[str]) -> tuple[ServerSpec, ...]:
    if not data or TABLE not in data:
        return ()
    table = data[TABLE]
    if not isinstance(table, dict):
        problems.append(f"'{TABLE}' must be tables: [{TABLE}.NAME]")
        return ()
    specs = []
    for name, entry in table.items():
        where = f"[{TABLE}.{name}]"
        if not SERVER_NAME.fullmatch(name):
            problems.append(
                f"{where}: a server's name is 1-24 letters, digits, '_' or '-' "
                "(it becomes part of the tool names the model sees)"
            )
            continue
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be a table of keys (command = ..., or url = ...)")
            continue
        found = _entry(name, entry, where, problems)
        if found is not None:
            specs.append(found)
    return tuple(specs)


def _entry(name: str, entry: dict[str, Any], where: str, problems: list[str]) -> ServerSpec | None:
    before = len(problems)
    for key, value in entry.items():
        kind = _KEYS.get(key)
        if kind is None:
            problems.append(f"{where}: unknown key {key!r} (known: {', '.join(_KEYS)})")
        elif not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            problems.append(f"{where}: {key!r} must be {_kind_name(key)}")
    if len(problems) > before:
        return None
    problems += [f"{where}: {p}" for p in _shape_problems(entry)]
    if len(problems) > before:
        return None
    return ServerSpec(
        name=name,
        command=entry.get("command"),
        args=tuple(entry.get("args", ())),
        env=tuple(entry.get("env", {}).items()),
        cwd=entry.get("cwd"),
        url=entry.get("url"),
        headers=tuple(entry.get("headers", {}).items()),
        token_command=entry.get("token_command"),
        token_env=entry.get("token_env"),
        allow_tools=tuple(entry.get("allow_tools", ())),
        allow_writes=entry.get("allow_writes", False),
        startup_timeout=float(entry.get("startup_timeout", STARTUP_TIMEOUT)),
        tool_timeout=float(entry.get("tool_timeout", TOOL_TIMEOUT)),
        enabled=entry.get("enabled", True),
    )


def _kind_name(key: str) -> str:
    kind = _KEYS[key]
    if key in ("args", "allow_tools"):
        return "a list of strings"
    if key in ("env", "headers"):
        return 'a table of strings (NAME = "value" or "${VAR}")'
    if kind is bool:
        return "true or false"
    if kind == (int, float):
        return "a number of seconds"
    return "a string"


_SECRET_HEADERS = ("authorization", "proxy-authorization", "cookie")  # credentials as headers


def _shape_problems(entry: dict[str, Any]) -> list[str]:
    """What is wrong with an entry whose keys have the right types."""
    out: list[str] = []
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        out.append("give either 'command' (a stdio server) or 'url' (streamable HTTP), not both")
    if command is not None and not command.strip():
        out.append("'command' is empty")
    if url is not None:
        from dayflow.sources.spec import url_problem

        problem = url_problem(url)
        if problem is not None:
            out.append(f"'url' {problem}")
        elif not url.lower().startswith(("http://", "https://")):
            out.append("'url' must start with http:// or https://")
        for key in ("cwd", "env", "args"):
            if key in entry:
                out.append(f"{key!r} is for a command; a 'url' server takes headers or a token")
    if command is not None:
        for key in ("headers", "token_command", "token_env"):
            if key in entry:
                out.append(f"{key!r} is for a 'url' server; a command takes env = {{ ... }}")
    if "token_command" in entry and "token_env" in entry:
        out.append("both 'token_command' and 'token_env' given; keep one of them")
    security = entry.get("security", "tls")
    if security not in ("tls", "plain"):
        out.append(f"'security' must be tls (the default) or plain, not {security!r}")
    elif command is not None and "security" in entry:
        out.append("'security' is for a 'url' server")
    elif (
        isinstance(url, str)
        and url.lower().startswith("http://")
        and security != "plain"
        and ("token_command" in entry or "token_env" in entry)
    ):
        # The sources' rule (IMAP's): a token goes in clear only where the entry says so.
        out.append(
            "a token is sent only over https:// (the url is plain http://); write "
            'security = "plain" to send it in clear anyway, as IMAP\'s rule is'
        )
    elif (
        isinstance(url, str)
        and url.lower().startswith("http://")
        and security != "plain"
        and any(k.lower() in _SECRET_HEADERS for k in entry.get("headers") or {})
        and not is_loopback(url)
    ):
        # A credential written as a header is a token too: not in clear off this machine.
        out.append(
            "an Authorization header is sent only over https:// off this machine (the url is "
            'plain http://); write security = "plain" to send it in clear anyway'
        )
    for key in ("args", "allow_tools"):
        if any(not isinstance(v, str) for v in entry.get(key, ())):
            out.append(f"{key!r} must be a list of strings")
    for key in ("env", "headers"):
        if any(not isinstance(v, str) for v in entry.get(key, {}).values()):
            out.append(f"{key!r} must be a table of strings")
    for key in ("startup_timeout", "tool_timeout"):
        if key in entry and not 0 < entry[key] <= 3600:
            out.append(f"{key!r} must be more than 0 and at most 3600 seconds")
    return out


class MissingVariable(SourceError):
    """A `${VAR}` of a server's entry is not set in the environment."""


def expand(value: str, env: Mapping[str, str], *, server: str, key: str) -> str:
    """`value` with each `${VAR}` replaced from `env`; MissingVariable names the server, the
    key and the variable, never a value."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        found = env.get(name)
        if found is None or found == "":
            raise MissingVariable(f"{server}: the environment variable {name} ({key}) is not set")
        return found

    return _VARIABLE.sub(one, value)


def server_env(spec: ServerSpec, env: Mapping[str, str]) -> dict[str, str]:
    """The variables a stdio server is given (on top of the SDK's minimal safe set: PATH,
    HOME, ...; never the rest of this process's environment), expanded now."""
    return {k: expand(v, env, server=spec.name, key=f"env.{k}") for k, v in spec.env}


def server_args(spec: ServerSpec, env: Mapping[str, str]) -> list[str]:
    """The command's arguments, expanded now."""
    return [expand(a, env, server=spec.name, key="args") for a in spec.args]


def server_headers(spec: ServerSpec, env: Mapping[str, str]) -> dict[str, str]:
    """The HTTP headers, expanded now (a token, when there is one, is added by the caller)."""
    return {k: expand(v, env, server=spec.name, key=f"headers.{k}") for k, v in spec.headers}


def enabled(specs: tuple[ServerSpec, ...]) -> tuple[ServerSpec, ...]:
    """The servers a run uses."""
    return tuple(s for s in specs if s.enabled)
