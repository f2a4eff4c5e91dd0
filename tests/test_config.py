from __future__ import annotations

import os
from pathlib import Path

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
    (tmp_path / ".env").write_text("DAYFLOW_MODEL=claude-sonnet-5-5\nDAYFLOW_TZ=Asia/Tokyo\n")
    monkeypatch.setenv("DAYFLOW_TZ", "UTC")
    env = config.environment(tmp_path)
    assert env["DAYFLOW_MODEL"] == "claude-sonnet-5-5"
    assert env["DAYFLOW_TZ"] == "UTC"  # the process environment wins
    assert os.environ.get("DAYFLOW_MODEL") is None  # .env never leaks into os.environ


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
