"""dayflow.mcp.importer and `dayflow mcp import`: other clients' servers as TOML, never a
secret value copied."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from dayflow.mcp.config import parse_servers
from dayflow.mcp.importer import find_servers, to_toml
from tests.harness import invoke

SECRETS = ("ghp_REALSECRET1234567890abcd", "hunter2", "sk-ant-secretsecret123456",
           "lin_secret_value", "token=abc", "team-123")  # fmt: skip
DESKTOP = {
    "mcpServers": {
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": SECRETS[0], "FROM_ENV": "${GH_TOKEN}"},
        },
        "my pg": {
            "command": "uvx",
            "args": [
                "mcp-postgres",
                "postgresql://bob:hunter2@db.local/prod",
                "--api-key",
                SECRETS[2],
                "--token=abcdefghijklmnopqrstuvwxyz0123",
            ],
        },  # fmt: skip
        "linear": {
            "type": "http",
            "url": "https://mcp.linear.app/mcp?token=abc",
            "headers": {"Authorization": f"Bearer {SECRETS[3]}", "X-Team": SECRETS[5]},
        },
    }
}


def _parsed(text: str) -> dict[str, dict[str, object]]:
    doc = tomllib.loads(text)
    parse_servers(doc, Path("config.toml"))  # what it prints, Dayflow accepts
    return doc["mcp_servers"]


def test_claude_desktop_servers_become_toml_with_allow_tools_empty_and_no_secret() -> None:
    text, count = to_toml(DESKTOP, "claude_desktop_config.json")
    assert count == 3
    assert not any(s in text for s in SECRETS)
    servers = _parsed(text)
    assert set(servers) == {"github", "my-pg", "linear"}
    gh = servers["github"]
    assert gh["allow_tools"] == [] and gh["command"] == "npx"
    assert gh["env"] == {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}",
        "FROM_ENV": "${GH_TOKEN}",
    }
    assert "set GITHUB_PERSONAL_ACCESS_TOKEN in your environment" in text
    assert servers["my-pg"]["args"] == [
        "mcp-postgres", "postgresql://db.local/prod", "--api-key", "${MY_PG_ARG4}",
        "--token=${MY_PG_ARG5}",
    ]  # fmt: skip
    linear = servers["linear"]
    assert linear["url"] == "https://mcp.linear.app/mcp"
    assert linear["token_env"] == "LINEAR_TOKEN"
    assert linear["headers"] == {"X-Team": "${LINEAR_X_TEAM}"}


def test_vs_code_servers_and_its_input_and_env_references() -> None:
    doc = {
        "inputs": [{"id": "pat", "type": "promptString", "password": True}],
        "servers": {
            "gh": {
                "type": "stdio",
                "command": "gh-mcp",
                "env": {"T": "${input:pat}", "U": "${env:GH_USER}"},
            },
            "web": {
                "type": "http",
                "url": "https://x.example/mcp",
                "headers": {"Authorization": "Bearer ${env:WEB_TOKEN}"},
            },
        },  # fmt: skip
    }
    servers = _parsed(to_toml(doc, ".vscode/mcp.json")[0])
    assert servers["gh"]["env"] == {"T": "${T}", "U": "${GH_USER}"}
    assert servers["web"]["token_env"] == "WEB_TOKEN"


def test_claude_code_files_and_every_projects_servers_are_found() -> None:
    doc = {
        "mcpServers": {"a": {"command": "a"}},
        "projects": {"/src/x": {"mcpServers": {"b": {"type": "sse", "url": "https://b/sse"}}}},
    }
    assert set(find_servers(doc)) == {"a", "b"}
    text, _ = to_toml(doc, "~/.claude.json")
    assert "an SSE server" in text and set(_parsed(text)) == {"a", "b"}


def _no_model(name: str, settings: object) -> object:
    raise AssertionError("mcp import calls no model")


def test_mcp_import_prints_toml_and_refuses_a_file_without_servers(tmp_path: Path) -> None:
    good = tmp_path / "claude_desktop_config.json"
    good.write_text(json.dumps(DESKTOP))
    done = invoke(None, _no_model, "mcp", "import", str(good))
    assert done.code == 0, done.err
    assert set(_parsed(done.out)) == {"github", "my-pg", "linear"}
    assert not any(s in done.out + done.err for s in SECRETS)
    empty = tmp_path / "other.json"
    empty.write_text('{"theme": "dark"}')
    refused = invoke(None, _no_model, "mcp", "import", str(empty))
    assert refused.code == 4 and "no mcpServers or servers in it" in refused.err
    gone = invoke(None, _no_model, "mcp", "import", str(tmp_path / "nope.json"))
    assert gone.code == 4 and gone.err.strip().endswith("nope.json: does not exist")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    bad = invoke(None, _no_model, "mcp", "import", str(broken))
    assert bad.code == 4 and "not JSON" in bad.err and len(bad.err.splitlines()) == 1


def test_mcp_import_of_json_nested_too_deeply_is_one_line_not_an_internal_error(
    tmp_path: Path,
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    done = invoke(None, _no_model, "mcp", "import", str(deep))
    assert done.code == 4, done.err
    assert done.err.strip() == f"error: {deep}: not JSON (nested too deeply)"
