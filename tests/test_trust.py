"""Issue 32: who may make Dayflow do what. The API key goes only where its owner's
environment says; a profile's config file is the operator's, its paths stay under its own
directory, and the programs it names run without the worker's secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dayflow import config
from dayflow.cli_base import default_model_factory
from dayflow.errors import ConfigFileError
from dayflow.providers.offline import OfflineModel
from tests import fakeapi
from tests.harness import invoke


def test_a_config_files_base_url_never_receives_the_api_key(tmp_path: Path) -> None:
    """32.2: `[model] base_url` with the Anthropic provider is refused, naming why; the local
    provider keeps it (a local server gets a placeholder key, never the user's)."""
    path = tmp_path / "c.toml"
    for table in (
        {"base_url": "http://their-server"},
        {"provider": "anthropic", "base_url": "http://their-server"},
    ):
        with pytest.raises(ConfigFileError, match='base_url is for provider = "local" only'):
            config.model_table({"model": table}, path)
    local = {"provider": "local", "base_url": "http://127.0.0.1:8080"}
    assert config.model_table({"model": local}, path) == local
    # Whatever a table holds, only the environment's base URL reaches the Anthropic provider.
    env = {"HOME": str(tmp_path), "ANTHROPIC_API_KEY": "sk"}
    s = config.load(env, model_table=local, provider="anthropic")
    assert s.base_url is None


@pytest.mark.slow
def test_a_brief_from_a_config_with_an_anthropic_base_url_is_refused_before_any_call(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[model]\nprovider = "anthropic"\nbase_url = "http://127.0.0.1:9"\n')
    with fakeapi.FakeAPI(responder=fakeapi.responder_from_client(OfflineModel())) as api:
        env = {"ANTHROPIC_API_KEY": "sk-ant-secret", "ANTHROPIC_BASE_URL": api.base_url}
        got = invoke(
            tmp_path / "d.db", default_model_factory, "brief", "--config", str(path), env=env
        )
        assert api.message_requests == []
    assert got.code == 4 and "base_url is for provider" in got.err, got.err


@pytest.mark.slow
def test_a_non_default_claude_endpoint_is_named_in_the_header_and_in_show(
    tmp_path: Path,
) -> None:
    with fakeapi.FakeAPI(responder=fakeapi.responder_from_client(OfflineModel())) as api:
        base = api.base_url.replace("http://", "http://ann:hunter2@")
        env = {"ANTHROPIC_API_KEY": "sk-ant-secret", "ANTHROPIC_BASE_URL": base}
        db = tmp_path / "d.db"
        got = invoke(db, default_model_factory, "brief", "--date", "2026-11-05", env=env)
        assert got.code == 0, got.err
        runs = json.loads(invoke(db, default_model_factory, "runs", "--json", env=env).out)
        shown = invoke(db, default_model_factory, "show", runs[0]["id"], env=env).out
        url = api.base_url
    said = f"Claude at {url} (ANTHROPIC_BASE_URL), not the Anthropic API's own address"
    assert said in got.err
    assert f"served by   {url} (ANTHROPIC_BASE_URL)" in shown, shown
    assert "hunter2" not in got.err + shown + json.dumps(runs)
