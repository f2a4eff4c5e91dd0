"""Issue 32: who may make Dayflow do what. The API key goes only where its owner's
environment says; a profile's config file is the operator's, its paths stay under its own
directory, and the programs it names run without the worker's secrets."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dayflow import config, trust
from dayflow.cli_base import default_model_factory
from dayflow.errors import ConfigFileError
from dayflow.providers.offline import OfflineModel
from dayflow.sources.secret_command import secret_from_command
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


# 32.3: a profile's config file is the operator's code, confined to its directory.

OTHER_UID = 4242  # a user the tests (root) hand files to


def _owned_config(tmp_path: Path, text: str = "", name: str = "ann") -> Path:
    home = tmp_path / name
    home.mkdir(mode=0o755, exist_ok=True)
    home.chmod(0o755)
    path = home / "dayflow.toml"
    path.write_text(text)
    path.chmod(0o644)
    return path


def test_a_profile_config_owned_by_this_user_in_a_private_directory_is_trusted(
    tmp_path: Path,
) -> None:
    path = _owned_config(tmp_path)
    trust.check_config(path)
    sticky = tmp_path / "shared"
    sticky.mkdir()
    sticky.chmod(0o1777)  # as /tmp: others cannot replace what is ours
    (sticky / "c.toml").write_text("")
    trust.check_config(sticky / "c.toml")


def test_a_profile_config_someone_else_owns_or_can_write_is_refused(tmp_path: Path) -> None:
    path = _owned_config(tmp_path)
    os.chown(path, OTHER_UID, -1)
    with pytest.raises(ConfigFileError, match="owned by uid 4242, not by this user"):
        trust.check_config(path)
    os.chown(path, os.geteuid(), -1)
    path.chmod(0o666)
    with pytest.raises(ConfigFileError, match="can be written by others .mode 666."):
        trust.check_config(path)
    path.chmod(0o644)
    path.parent.chmod(0o777)
    with pytest.raises(ConfigFileError, match="can be written by others .mode 777."):
        trust.check_config(path)
    path.parent.chmod(0o755)
    # A link of ours to a file of someone else's is their code all the same.
    theirs = _owned_config(tmp_path, name="eve")
    os.chown(theirs, OTHER_UID, -1)
    link = path.parent / "link.toml"
    link.symlink_to(theirs)
    with pytest.raises(ConfigFileError, match="owned by uid 4242"):
        trust.check_config(link)
    # The uid compared with is the process's, whatever it is: as another user, ours is not.
    with pytest.raises(ConfigFileError, match="not by this user .uid 4243."):
        trust.check_config(path, euid=4243) if os.geteuid() != 0 else _as_other(path)


def test_a_profiles_rules_file_is_held_to_its_config_files_owner_and_mode(
    tmp_path: Path,
) -> None:
    rules = _owned_config(tmp_path).parent / "rules.toml"
    rules.write_text("")
    rules.chmod(0o600)
    trust.check_rules(rules)
    trust.check_rules(rules.parent / "none.rules.toml")  # none yet: nothing to refuse
    rules.chmod(0o666)
    with pytest.raises(ConfigFileError, match="^profile rules .* can be written by others"):
        trust.check_rules(rules)
    rules.chmod(0o600)
    os.chown(rules, OTHER_UID, -1)
    with pytest.raises(ConfigFileError, match="owned by uid 4242, not by this user"):
        trust.check_rules(rules)


def _as_other(path: Path) -> None:
    os.chown(path, 4244, -1)
    trust.check_config(path, euid=4243)


def test_a_profile_reads_and_writes_only_under_its_config_files_directory(
    tmp_path: Path,
) -> None:
    root = _owned_config(tmp_path).parent
    (root / "mail").mkdir()
    trust.confine(str(root / "mail"), root, what="path", config=root / "dayflow.toml")
    trust.confine(str(root / "out" / "{date}.md"), root, what="deliver", config=root)
    bob = tmp_path / "bob" / "Maildir"
    bob.mkdir(parents=True)
    (root / "sneaky").symlink_to(bob)
    for outside in (str(bob), str(root / "sneaky"), str(root / ".." / "bob"), "/etc/passwd"):
        with pytest.raises(ConfigFileError, match="outside the profile's directory"):
            trust.confine(outside, root, what="path", config=root / "dayflow.toml")


def test_programs_a_config_names_never_see_the_key_or_the_database_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The password program writes out the environment it was given: no API key, no DB URL,
    no DAYFLOW_* (for one user too); PATH, HOME and its own variables are there."""
    dump = tmp_path / "env.txt"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-worker-key-123")
    monkeypatch.setenv("DAYFLOW_DB", "postgresql://dayflow:dbpass@db/dayflow")
    monkeypatch.setenv("PGPASSWORD", "dbpass-1234")
    monkeypatch.setenv("COPIED_KEY", "x sk-ant-worker-key-123")
    monkeypatch.setenv("VAULT_ADDR", "https://vault.example")
    script = f"sh -c 'env > {dump}; echo hunter2'"
    assert secret_from_command(script, 10, env=os.environ) == "hunter2"
    seen = dump.read_text()
    for secret in ("sk-ant-worker-key-123", "dbpass", "DAYFLOW_", "ANTHROPIC_"):
        assert secret not in seen
    assert "VAULT_ADDR=https://vault.example" in seen and "PATH=" in seen and "HOME=" in seen


def test_a_profiles_entries_cannot_name_the_workers_secrets() -> None:
    """`password_env = "ANTHROPIC_API_KEY"` or `${DAYFLOW_DB}` in a profile's MCP entry finds
    nothing: a profile's file reads the environment without this process's secrets."""
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-worker-key-123",
        "DAYFLOW_DB": "postgresql://u:p@db/x",
        "ANN_TOKEN": "t0k3n",
        "PATH": "/usr/bin",
    }
    assert config.Config(env).file_env == env  # one user's own file: their environment
    assert config.Config(env, profile=True).file_env == {"ANN_TOKEN": "t0k3n", "PATH": "/usr/bin"}


def _profile_brief(tmp_path: Path, text: str) -> tuple[Any, Any]:
    """`profiles add` of a config holding `text`, and a brief of a profile whose config
    came to hold it after it was added."""
    db = tmp_path / "d.db"
    path = _owned_config(tmp_path, name="eve")
    assert invoke(db, _offline, "profiles", "add", "eve", "--config", str(path)).code == 0
    path.write_text(text)
    added = invoke(db, _offline, "profiles", "add", "eve2", "--config", str(path))
    brief = invoke(db, _offline, "brief", "--profile", "eve", "--date", "2026-11-05")
    return added, brief


@pytest.mark.parametrize(
    "entry",
    [
        '[[inbox]]\nname = "bob"\nkind = "maildir"\npath = "{bob}"\n',
        'deliver = ["file:{bob}/../owned.md"]\n',
        '[[calendar]]\nname = "bob"\nkind = "ics"\npath = "{bob}/cal.ics"\n',
        # a file the worker reads as a CA bundle is a file it reads (a FIFO blocks it)
        '[smtp]\nhost = "127.0.0.1"\nuser = "u"\nfrom = "a@b.example"\n'
        'to = "a@b.example"\npassword_command = "echo x"\ncafile = "{bob}/cal.ics"\n',
    ],
)
def test_a_profile_cannot_read_or_write_another_persons_files(tmp_path: Path, entry: str) -> None:
    bob = tmp_path / "bob" / "Maildir"
    for sub in ("cur", "new", "tmp"):
        (bob / sub).mkdir(parents=True)
    (bob / "cal.ics").write_text("BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n")
    added, brief = _profile_brief(tmp_path, entry.replace("{bob}", str(bob)))
    assert added.code == 4 and "outside the profile's directory" in added.err, added.err
    assert brief.code == 4 and "outside the profile's directory" in brief.err, brief.err
    assert not (tmp_path / "bob" / "owned.md").exists()


@pytest.mark.parametrize(
    "entry",
    [
        '[[inbox]]\nname = "i"\nkind = "imap"\nhost = "127.0.0.1"\nuser = "u"\n'
        'password_env = "ANTHROPIC_API_KEY"\n',
        '[[calendar]]\nname = "c"\nkind = "ics"\nurl = "https://h.example/c.ics"\n'
        'token_env = "DAYFLOW_DB"\n',
        '[[calendar]]\nname = "c"\nkind = "ics"\npath = "c.ics"\n[smtp]\nhost = "127.0.0.1"\n'
        'user = "u"\nfrom = "a@b.example"\nto = "a@b.example"\npassword_env = "PGPASSWORD"\n',
    ],
)
def test_a_profile_naming_a_workers_secret_is_refused_not_told_it_is_unset(
    tmp_path: Path, entry: str
) -> None:
    """profiles add said "config checked", and sources check then "the environment variable
    ANTHROPIC_API_KEY (password_env) is not set" on a worker that has it set."""
    (tmp_path / "eve" / "c.ics").parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "eve" / "c.ics").write_text("BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n")
    added, brief = _profile_brief(tmp_path, entry)
    for res in (added, brief):
        assert res.code == 4 and "is one of the worker's secrets" in res.err, res.err


def test_a_profile_config_others_can_write_is_refused_by_every_command(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    path = _owned_config(tmp_path, name="eve")
    assert invoke(db, _offline, "profiles", "add", "eve", "--config", str(path)).code == 0
    path.chmod(0o666)
    brief = invoke(db, _offline, "brief", "--profile", "eve")
    assert brief.code == 4 and "can be written by others" in brief.err, brief.err
    os.chown(path, OTHER_UID, -1)
    path.chmod(0o644)
    again = invoke(db, _offline, "profiles", "add", "eve2", "--config", str(path))
    assert again.code == 4 and "owned by uid 4242" in again.err, again.err


def _offline(*a: Any) -> OfflineModel:
    return OfflineModel()
