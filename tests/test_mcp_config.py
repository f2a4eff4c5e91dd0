"""dayflow.mcp.config: `[mcp_servers.NAME]`, one clear line per problem; `${VAR}` expansion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dayflow.errors import ConfigFileError
from dayflow.mcp.config import (
    MissingVariable,
    ServerSpec,
    parse_servers,
    server_args,
    server_env,
    server_headers,
)

PATH = Path("/home/alex/.config/dayflow/config.toml")


def _one_problem(table: dict[str, Any]) -> str:
    with pytest.raises(ConfigFileError) as err:
        parse_servers({"mcp_servers": table}, PATH)
    lines = str(err.value).splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{PATH}: ")
    return lines[0]


def test_the_issue_example_parses_with_its_defaults() -> None:
    specs = parse_servers(
        {
            "mcp_servers": {
                "github": {
                    "command": "github-mcp-server",
                    "args": ["stdio", "--read-only"],
                    "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"},
                    "allow_tools": ["list_notifications", "get_issue"],
                },
                "linear": {
                    "url": "https://mcp.example.org/mcp",
                    "token_command": "pass show linear-token",
                    "allow_tools": ["list_my_issues"],
                },
            }
        },
        PATH,
    )
    gh, linear = specs
    assert (gh.transport, gh.startup_timeout, gh.tool_timeout, gh.enabled) == (
        "stdio",
        20.0,
        60.0,
        True,
    )
    assert gh.allow_writes is False and gh.allow_tools == ("list_notifications", "get_issue")
    assert linear.transport == "http" and linear.where == "https://mcp.example.org"
    assert parse_servers({}, PATH) == () and parse_servers(None, PATH) == ()


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"command": "x", "alow_tools": []}, "[mcp_servers.gh]: unknown key 'alow_tools'"),
        ({"command": 3}, "'command' must be a string"),
        ({"command": "x", "args": "stdio"}, "'args' must be a list of strings"),
        ({"command": "x", "args": [1]}, "'args' must be a list of strings"),
        ({"command": "x", "env": {"A": 1}}, "'env' must be a table of strings"),
        ({"command": "x", "allow_writes": "yes"}, "'allow_writes' must be true or false"),
        ({"command": "x", "tool_timeout": True}, "'tool_timeout' must be a number of seconds"),
        ({"command": "x", "tool_timeout": 0}, "'tool_timeout' must be more than 0"),
        ({}, "give either 'command'"),
        ({"command": "x", "url": "https://a/"}, "give either 'command'"),
        ({"url": "ftp://host/x"}, "'url' must start with http:// or https://"),
        ({"url": "https://host:99999/x"}, "'url' has a port out of range"),
        ({"url": "https://h/", "env": {}}, "'env' is for a command"),
        ({"command": "x", "token_env": "T"}, "'token_env' is for a 'url' server"),
        ({"url": "https://h/", "token_env": "T", "token_command": "c"}, "keep one of them"),
        # Issue 32.7's rule for calendars, for an MCP server too: no token over plain http://
        ({"url": "http://h/mcp", "token_command": "c"}, "a token is sent only over https://"),
        ({"url": "http://h/mcp", "token_env": "T"}, 'write security = "plain"'),
        ({"url": "https://h/", "security": "clear"}, "'security' must be tls"),
        ({"command": "x", "security": "plain"}, "'security' is for a 'url' server"),
    ],
)
def test_each_problem_is_one_line_naming_the_table_and_the_key(
    entry: dict[str, Any], words: str
) -> None:
    assert words in _one_problem({"gh": entry})


def test_a_server_name_that_cannot_be_part_of_a_tool_name_is_refused() -> None:
    assert "1-24 letters, digits" in _one_problem({"my server": {"command": "x"}})
    assert "must be a table" in _one_problem({"gh": "github-mcp-server"})


def test_variables_are_expanded_when_started_from_the_environment_given() -> None:
    spec = ServerSpec(
        name="gh",
        command="x",
        args=("--org", "${ORG}"),
        env=(("TOKEN", "${GITHUB_TOKEN}"), ("PLAIN", "v")),
        headers=(("X-Key", "k-${KEY}"),),
    )
    env = {"ORG": "acme", "GITHUB_TOKEN": "ghp_secret", "KEY": "1"}
    assert server_args(spec, env) == ["--org", "acme"]
    assert server_env(spec, env) == {"TOKEN": "ghp_secret", "PLAIN": "v"}
    assert server_headers(spec, env) == {"X-Key": "k-1"}


def test_a_missing_variable_names_the_server_key_and_variable_never_a_value() -> None:
    spec = ServerSpec(name="gh", command="x", env=(("TOKEN", "${GITHUB_TOKEN}"),))
    with pytest.raises(MissingVariable) as err:
        server_env(spec, {"OTHER": "ghp_secret"})
    assert str(err.value) == "gh: the environment variable GITHUB_TOKEN (env.TOKEN) is not set"


def test_a_token_over_plain_http_is_sent_only_where_the_entry_says_security_plain() -> None:
    table = {"web": {"url": "http://127.0.0.1:8080/mcp", "token_env": "T", "security": "plain"}}
    (spec,) = parse_servers({"mcp_servers": table}, PATH)
    assert spec.url == "http://127.0.0.1:8080/mcp" and spec.token_env == "T"
    assert parse_servers({"mcp_servers": {"web": {"url": "http://h/mcp"}}}, PATH)  # no token


def test_an_authorization_header_over_plain_http_off_this_machine_is_refused_as_a_token_is() -> (
    None
):
    """`headers = { Authorization = "Bearer ..." }` to http://host was sent in clear, where
    the same secret as token_env was refused."""
    bearer = {"Authorization": "Bearer ${T}"}
    for name in ("Authorization", "authorization", "Cookie"):
        said = _one_problem({"web": {"url": "http://h.example/mcp", "headers": {name: "x"}}})
        assert "an Authorization header is sent only over https:// off this machine" in said
    fine = [
        {"url": "https://h.example/mcp", "headers": bearer},
        {"url": "http://h.example/mcp", "headers": bearer, "security": "plain"},
        {"url": "http://127.0.0.1:8080/mcp", "headers": bearer},  # stays on this machine
        {"url": "http://h.example/mcp", "headers": {"X-Trace": "1"}},
    ]
    for entry in fine:
        assert parse_servers({"mcp_servers": {"web": entry}}, PATH)
