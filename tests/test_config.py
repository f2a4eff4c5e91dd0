from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dayflow import config
from dayflow.errors import UsageError


def test_defaults_pick_the_offline_model_and_the_user_data_directory(tmp_path: Path) -> None:
    s = config.load({"HOME": str(tmp_path)})
    assert s.model == "offline" and s.model_was_defaulted_offline
    assert s.db_path == tmp_path / ".local" / "share" / "dayflow" / "dayflow.db"
    assert s.tz == "UTC" and s.durability == "NORMAL" and s.kill_at is None


def test_a_key_makes_claude_the_default_and_flags_beat_the_environment(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "ANTHROPIC_API_KEY": "k", "DAYFLOW_TZ": "Europe/Berlin"}
    s = config.load(env)
    assert s.model == "claude-haiku-5-5" and not s.model_was_defaulted_offline
    assert s.tz == "Europe/Berlin"
    flagged = config.load(env, model="offline", tz="UTC", db=tmp_path / "x.db")
    assert (flagged.model, flagged.tz, flagged.db_path) == ("offline", "UTC", tmp_path / "x.db")


def test_dotenv_fills_in_what_the_environment_does_not_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dayflow's own .env (in its config directory) fills gaps; the environment wins."""
    folder = tmp_path / "config" / "dayflow"
    folder.mkdir(parents=True)
    (folder / ".env").write_text("DAYFLOW_MODEL=claude-sonnet-5-5\nDAYFLOW_TZ=Asia/Tokyo\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("DAYFLOW_TZ", "UTC")
    env = config.environment(tmp_path, environ=os.environ)
    assert env["DAYFLOW_MODEL"] == "claude-sonnet-5-5"
    assert env["DAYFLOW_TZ"] == "UTC"  # the process environment wins
    assert os.environ.get("DAYFLOW_MODEL") is None  # .env never leaks into os.environ


def test_a_dotenv_in_the_current_directory_is_read_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("ANTHROPIC_API_KEY=sk-from-a-project\n")
    monkeypatch.delenv("DAYFLOW_DOTENV", raising=False)
    env = config.environment(tmp_path, environ=os.environ)
    assert "ANTHROPIC_API_KEY" not in env
    monkeypatch.setenv("DAYFLOW_DOTENV", "./.env")
    env = config.environment(tmp_path, environ=os.environ)
    assert env["ANTHROPIC_API_KEY"] == "sk-from-a-project"
    settings = config.load(env)
    assert settings.api_key_file == str(tmp_path / ".env")


def test_a_dotenv_that_is_not_utf8_or_does_not_parse_is_named_and_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.env"
    bad.write_bytes(b"\xff\xfeDAYFLOW_MODEL=x\n")
    monkeypatch.setenv("DAYFLOW_DOTENV", str(bad))
    said: list[str] = []
    env = config.environment(tmp_path, environ=os.environ, notice=said.append)
    assert "DAYFLOW_MODEL" not in env
    assert said == [f"warning: {bad} is not UTF-8 text; skipped"]
    bad.write_text("DAYFLOW_MODEL=offline\nthis is not an assignment\n")
    said.clear()
    env = config.environment(tmp_path, environ=os.environ, notice=said.append)
    assert env["DAYFLOW_MODEL"] == "offline"
    assert said == [f"warning: {bad} line 2: not KEY=value; line ignored"]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DAYFLOW_TZ": "Nowhere/Land"}, "unknown timezone"),
        ({"DAYFLOW_DURABILITY": "paranoid"}, "DAYFLOW_DURABILITY"),
        ({"DAYFLOW_KILL_AT": "somewhere:2"}, "DAYFLOW_KILL_AT"),
        ({"DAYFLOW_KILL_AT": "after_pending:x"}, "DAYFLOW_KILL_AT"),
        ({"DAYFLOW_PRICES": "{bad"}, "DAYFLOW_PRICES"),
    ],
)
def test_bad_settings_are_one_clear_usage_error(env: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        config.load(env)


def test_the_kill_hook_parses_point_and_step() -> None:
    assert config.load({"DAYFLOW_KILL_AT": "between_tools:3"}).kill_at == ("between_tools", 3)


# --- a local model (issue 21) -----------------------------------------------------------------


def test_a_local_provider_needs_no_key_and_defaults_to_ollama_with_a_long_timeout(
    tmp_path: Path,
) -> None:
    env = {"HOME": str(tmp_path), "ANTHROPIC_API_KEY": "k"}
    s = config.load(env, provider="local", model="qwen3:8b")
    assert s.local and s.model == "qwen3:8b" and not s.model_was_defaulted_offline
    assert s.base_url == "http://127.0.0.1:11434" and s.timeout == 600
    plain = config.load(env)
    assert not plain.local and plain.base_url is None and plain.timeout == 120


def test_flags_beat_the_environment_which_beats_the_model_table(tmp_path: Path) -> None:
    table: dict[str, Any] = {
        "provider": "local",
        "name": "gpt-oss:20b",
        "base_url": "http://127.0.0.1:8080",
    }
    table["timeout"] = 900
    env = {"HOME": str(tmp_path)}
    s = config.load(env, model_table=table)
    assert (s.provider, s.model, s.base_url, s.timeout) == (
        "local",
        "gpt-oss:20b",
        "http://127.0.0.1:8080",
        900,
    )
    env |= {
        "DAYFLOW_MODEL": "qwen3:8b",
        "ANTHROPIC_BASE_URL": "http://[::1]:1",
        "DAYFLOW_TIMEOUT": "60",
    }
    s = config.load(env, model_table=table)
    assert (s.model, s.base_url, s.timeout) == ("qwen3:8b", "http://[::1]:1", 60)
    s = config.load(env | {"DAYFLOW_PROVIDER": "anthropic"}, model_table=table, timeout=5)
    assert s.provider == "anthropic" and s.timeout == 5
    assert config.load(env, model_table=table, provider="anthropic").provider == "anthropic"


def test_an_unknown_provider_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="must be one of anthropic, local"):
        config.load({"HOME": str(tmp_path), "DAYFLOW_PROVIDER": "openai"})


def test_a_provider_in_capitals_is_that_provider_not_a_misleading_refusal(
    tmp_path: Path,
) -> None:
    """`provider = "LOCAL"` with a base_url was refused as an Anthropic table given a base_url."""
    path = tmp_path / "config.toml"
    data = {"model": {"provider": "LOCAL", "name": "qwen3:8b", "base_url": "http://127.0.0.1:8080"}}
    table = config.model_table(data, path)
    assert table["provider"] == "local"
    env = {"HOME": str(tmp_path)}
    assert config.load(env, model_table=table).base_url == "http://127.0.0.1:8080"
    assert config.load(env | {"DAYFLOW_PROVIDER": " Local"}, model="m").provider == "local"
    assert config.load(env, provider="ANTHROPIC").provider == "anthropic"


def test_the_model_table_names_every_problem_at_once(tmp_path: Path) -> None:
    from dayflow.errors import ConfigFileError

    path = tmp_path / "config.toml"
    bad = {"model": {"provider": "cloud", "name": "", "timeout": 0, "api_key": "x"}}
    with pytest.raises(ConfigFileError) as err:
        config.model_table(bad, path)
    said = str(err.value)
    assert "unknown key 'api_key'" in said and "'name' must be a non-empty string" in said
    assert "provider must be one of" in said and "timeout must be 1 to 3600" in said
    assert config.model_table({"inbox": []}, path) == {}
    ok = {"model": {"provider": "local", "name": "qwen3:8b", "timeout": 30.5}}
    assert config.model_table(ok, path) == ok["model"]


# --- one configuration, resolved once (issue 18.2) -------------------------------------------


def _brief_with(config_: config.Config, *args: str) -> tuple[int, str]:
    """`dayflow brief ARGS` in-process with this configuration (the real `.env` reading)."""
    import io

    from rich.console import Console
    from typer.testing import CliRunner

    from dayflow.cli import app
    from dayflow.cli_base import Runtime
    from dayflow.clock import FixedClock
    from dayflow.providers.offline import OfflineModel

    err = io.StringIO()
    deps = Runtime(
        clock=FixedClock("2026-11-05T07:30:00+00:00"),
        model_factory=lambda *a: OfflineModel(),
        config=config_,
        out=Console(file=io.StringIO(), width=200, color_system=None),
        err=Console(file=err, width=200, color_system=None),
    )
    result = CliRunner().invoke(app, ["brief", *args], obj=deps)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, err.getvalue()


def _home_whose_dotenv_names_a_config(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A home whose ~/.config/dayflow/.env sets DAYFLOW_CONFIG to a file that delivers the
    brief to a note and reads a JSON inbox; returns the process environment and the note."""
    home = tmp_path / "home"
    (home / ".config" / "dayflow").mkdir(parents=True)
    repo = Path(__file__).resolve().parent.parent / "fixtures"
    other = tmp_path / "elsewhere.toml"
    note = tmp_path / "notes" / "{date}.md"
    other.write_text(
        f'deliver = ["file:{note}"]\n'
        f'[[inbox]]\nname = "json"\nkind = "json"\npath = "{repo / "inbox.json"}"\n'
    )
    (home / ".config" / "dayflow" / ".env").write_text(f"DAYFLOW_CONFIG={other}\n")
    environ = {"HOME": str(home), "DAYFLOW_DB": str(tmp_path / "d.db")}
    return environ, tmp_path / "notes" / "2026-11-05.md"


def test_a_config_named_in_dotenv_is_used_for_delivery_as_for_the_sources(
    tmp_path: Path,
) -> None:
    """DAYFLOW_CONFIG in ~/.config/dayflow/.env reached the sources but not delivery, which
    read the process environment alone: its `deliver` sinks were silently ignored."""
    environ, note = _home_whose_dotenv_names_a_config(tmp_path)
    code, err = _brief_with(config.Config(environ=environ))
    assert code == 0, err
    assert "sources from " + str(tmp_path / "elsewhere.toml") in err
    assert note.is_file() and "One thing" in note.read_text()
    assert f"delivered: file:{tmp_path / 'notes'}" in err


def test_a_brief_reads_each_configuration_file_once(tmp_path: Path) -> None:
    """The `.env` file and the config file (sinks, sources, the run's sources again, delivery
    settings at the end) are each read once by one `brief`."""
    environ, note = _home_whose_dotenv_names_a_config(tmp_path)
    reads: list[Path] = []

    def counting(path: Path) -> bytes:
        reads.append(path)
        return config.read_file(path)

    code, err = _brief_with(config.Config(environ=environ, read=counting))
    assert code == 0, err and note.is_file()
    assert sorted(map(str, reads)) == sorted(
        [
            str(Path(environ["HOME"]) / ".config" / "dayflow" / ".env"),
            str(tmp_path / "elsewhere.toml"),
        ]
    )


def test_a_fifo_or_a_directory_as_config_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO named as the config file (or `.env`) would block every brief forever."""
    fifo = tmp_path / "config.fifo"
    os.mkfifo(fifo)
    code, err = _brief_with(
        config.Config(environ={"HOME": str(tmp_path), "DAYFLOW_DB": str(tmp_path / "d.db")}),
        "--config",
        str(fifo),
    )
    assert code == 4 and f"{fifo}: is a FIFO (named pipe), not a config file" in err
    said: list[str] = []
    (tmp_path / ".config" / "dayflow").mkdir(parents=True)
    os.mkfifo(tmp_path / ".config" / "dayflow" / ".env")
    config.environment(environ={"HOME": str(tmp_path)}, notice=said.append)
    assert said == [
        f"warning: cannot read {tmp_path}/.config/dayflow/.env (it is a FIFO (named pipe), "
        "not a regular file); skipped"
    ]
    code, err = _brief_with(
        config.Config(env={"HOME": str(tmp_path), "DAYFLOW_DB": str(tmp_path / "d.db")}),
        "--config",
        str(tmp_path),
    )
    assert code == 4 and f"{tmp_path}: is a directory, not a config file" in err
