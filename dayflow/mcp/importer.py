"""`dayflow mcp import FILE`: the MCP servers another client already runs, as
`[mcp_servers.NAME]` TOML for the user to check and paste; pure (JSON document in, text out).

Read: Claude Desktop's and Cursor's `mcpServers`, Claude Code's `.mcp.json` (`mcpServers`) and
`~/.claude.json` (`mcpServers`, and each project's), VS Code's `servers` (`.vscode/mcp.json`,
or `mcp.servers` in settings.json). `allow_tools` is written empty: nothing is offered to a
model until the user names the tools.

A secret value is never copied, only a `${VAR}` reference: an `env` or `headers` value that is
already a reference (`${VAR}`, `${VAR:-default}`, VS Code's `${env:VAR}`) keeps its variable;
any other value (a literal, or VS Code's `${input:id}` prompt) becomes `${NAME}` with a comment
saying to set NAME in the environment. An `Authorization: Bearer ...` header becomes
`token_env`. An argument or URL part that looks like a credential is replaced the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from dayflow.mcp.config import SERVER_NAME

_REF = re.compile(r"^\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}$")
_INPUT = re.compile(r"^\$\{input:([^}]+)\}$")
_SECRET_WORDS = re.compile(r"(token|secret|passw|api[-_]?key|apikey|auth|bearer|pat\b)", re.I)
_LOOKS_KEY = re.compile(r"^[A-Za-z0-9_\-]{20,}$")


def find_servers(doc: Any) -> dict[str, dict[str, Any]]:
    """Every server entry the document holds, by name (first seen wins)."""
    found: dict[str, dict[str, Any]] = {}
    if not isinstance(doc, dict):
        return found
    tables = [doc.get("mcpServers"), doc.get("servers")]
    mcp = doc.get("mcp")
    if isinstance(mcp, dict):
        tables.append(mcp.get("servers"))
    projects = doc.get("projects")
    if isinstance(projects, dict):
        tables += [p.get("mcpServers") for p in projects.values() if isinstance(p, dict)]
    for table in tables:
        if isinstance(table, dict):
            for name, entry in table.items():
                if isinstance(entry, dict):
                    found.setdefault(str(name), entry)
    return found


def to_toml(doc: Any, source: str) -> tuple[str, int]:
    """The TOML for every server in `doc` (read from `source`) and how many there are."""
    servers = find_servers(doc)
    out = [
        f"# MCP servers imported from {source}. Nothing is offered to a model until you fill",
        "# allow_tools with the read-only tools you want (`dayflow mcp list` shows each",
        "# server's tools, `dayflow mcp check` starts each). No secret was copied.",
    ]
    taken: set[str] = set()
    for name, entry in servers.items():
        out += ["", *_server(_name(name, taken), name, entry)]
    return "\n".join(out) + "\n", len(servers)


def _name(raw: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_-]+", "-", raw).strip("-")[:24] or "server"
    name, n = base, 2
    while name in taken:
        name = f"{base[:21]}-{n}"
        n += 1
    taken.add(name)
    assert SERVER_NAME.fullmatch(name)
    return name


def _server(name: str, raw_name: str, entry: dict[str, Any]) -> list[str]:
    notes: list[str] = []
    lines = [f"[mcp_servers.{name}]"]
    if name != raw_name:
        notes.append(f"# (named {json.dumps(raw_name)} there)")
    prefix = re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_")
    if isinstance(entry.get("command"), str):
        lines.append(f"command = {_q(entry['command'])}")
        args = [a for a in entry.get("args") or [] if isinstance(a, str)]
        if args:
            lines.append(f"args = [{', '.join(_q(a) for a in _args(args, prefix, notes))}]")
        env = entry.get("env")
        if isinstance(env, dict) and env:
            pairs = [(str(k), _ref(str(k), v, notes, "env")) for k, v in env.items()]
            lines.append("env = { " + ", ".join(f"{_key(k)} = {_q(v)}" for k, v in pairs) + " }")
    elif isinstance(entry.get("url"), str):
        lines.append(f"url = {_q(_url(entry['url'], notes))}")
        kind = entry.get("type") or entry.get("transport")
        if kind == "sse":
            notes.append("# an SSE server: Dayflow speaks streamable HTTP; check it answers there")
        lines += _headers(entry.get("headers"), prefix, notes)
    else:
        notes.append("# neither a command nor a url: fill one in")
    lines.append("allow_tools = []  # the read-only tools to offer, by name")
    if entry.get("disabled") is True or entry.get("enabled") is False:
        lines.append("enabled = false")
    return notes + lines


def _ref(key: str, value: Any, notes: list[str], where: str) -> str:
    """`${VAR}` for an env or header value; never the value itself."""
    text = str(value)
    found = _REF.match(text)
    if found:
        return "${" + found.group(1) + "}"
    var = re.sub(r"[^A-Z0-9_]+", "_", key.upper()).strip("_") or "VALUE"
    asked = _INPUT.match(text)
    why = f"a prompt ({asked.group(1)})" if asked else "a literal value"
    notes.append(f"# {where} {key}: was {why}, not copied: set {var} in your environment")
    return "${" + var + "}"


def _headers(headers: Any, prefix: str, notes: list[str]) -> list[str]:
    if not isinstance(headers, dict) or not headers:
        return []
    out: list[str] = []
    pairs: list[tuple[str, str]] = []
    for key, value in headers.items():
        text = str(value)
        if str(key).lower() == "authorization" and text.lower().startswith("bearer "):
            found = _REF.match(text[7:].strip())
            var = found.group(1) if found else f"{prefix}_TOKEN"
            if not found:
                notes.append(f"# its bearer token was not copied: set {var} in your environment")
            out.append(f"token_env = {_q(var)}")
            continue
        if _REF.match(text):
            pairs.append((str(key), "${" + _REF.match(text).group(1) + "}"))  # type: ignore[union-attr]
        else:
            var = f"{prefix}_{re.sub(r'[^A-Z0-9]+', '_', str(key).upper()).strip('_')}"
            notes.append(f"# header {key}: not copied: set {var} in your environment")
            pairs.append((str(key), "${" + var + "}"))
    if pairs:
        out.append("headers = { " + ", ".join(f"{_key(k)} = {_q(v)}" for k, v in pairs) + " }")
    return out


def _args(args: list[str], prefix: str, notes: list[str]) -> list[str]:
    out: list[str] = []
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        after_flag = i > 0 and args[i - 1].startswith("-") and _SECRET_WORDS.search(args[i - 1])
        if eq and flag.startswith("-") and _SECRET_WORDS.search(flag) and not _REF.match(value):
            var = f"{prefix}_ARG{i + 1}"
            notes.append(f"# argument {i + 1} held a credential, not copied: set {var}")
            out.append(f"{flag}=${{{var}}}")
        elif (after_flag or _looks_secret(arg)) and not _REF.match(arg):
            var = f"{prefix}_ARG{i + 1}"
            notes.append(f"# argument {i + 1} looks like a credential, not copied: set {var}")
            out.append("${" + var + "}")
        elif "://" in arg and "@" in arg.split("://", 1)[1].split("/", 1)[0]:
            out.append(_url(arg, notes))
        else:
            out.append(arg)
    return out


def _looks_secret(arg: str) -> bool:
    """A bare argument that is a key: long, letters and digits, no path or dots."""
    if not _LOOKS_KEY.match(arg):
        return False
    return any(c.isdigit() for c in arg) and any(c.isalpha() for c in arg)


def _url(url: str, notes: list[str]) -> str:
    """The URL without a password or a query (either may be a credential)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        notes.append("# its url could not be read; fill it in")
        return ""
    host = parts.netloc.rpartition("@")[2]
    if host != parts.netloc or parts.query:
        notes.append("# its url held a user, password or query, not copied: add what it needs")
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _q(key)
