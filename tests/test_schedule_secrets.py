"""Issue 32.30: `schedule install` did not warn about `password_env` / `token_env`. A timer,
cron or launchd starts the job without this shell's variables, so a secret read from one is
missing at 07:30 and that source fails every morning. Install (and --dry-run) now say so, per
entry, and never write the value anywhere."""

from __future__ import annotations

from pathlib import Path

from tests.test_schedule import Machine

CONFIG = """
[[inbox]]
name = "work"
kind = "imap"
host = "imap.example.org"
user = "alex@example.org"
password_env = "WORK_MAIL_PASSWORD"

[[calendar]]
name = "team"
kind = "ics"
url = "https://calendar.example.org/team.ics"
token_env = "TEAM_CAL_TOKEN"

[[calendar]]
name = "nc"
kind = "caldav"
url = "https://cloud.example.org/remote.php/dav"
user = "me"
password_command = "pass show nc"

[smtp]
host = "smtp.example.org"
port = 587
to = "alex@example.org"
from = "dayflow@example.org"
user = "alex@example.org"
password_env = "SMTP_PASSWORD"
"""


def install(tmp_path: Path, config: str, *extra: str, **env: str) -> tuple[int, str, str]:
    machine = Machine(tmp_path / "machine", ("systemctl", "crontab", "launchctl"))
    path = tmp_path / "config.toml"
    path.write_text(config, encoding="utf-8")
    result = machine(
        tmp_path / "dayflow.db", "schedule", "install", "--at", "07:30", *extra,
        DAYFLOW_CONFIG=str(path), XDG_CONFIG_HOME=str(tmp_path / "xdg"), **env,
    )  # fmt: skip
    return result.code, result.out, result.err


def test_install_warns_of_each_secret_read_from_this_shells_environment(tmp_path: Path) -> None:
    code, out, err = install(
        tmp_path, CONFIG, WORK_MAIL_PASSWORD="hunter2-mail", SMTP_PASSWORD="hunter2-smtp"
    )
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    dotenv = tmp_path / "xdg" / "dayflow" / ".env"
    assert warnings == [
        f"warning: [[inbox]] 'work' password_env names $WORK_MAIL_PASSWORD, which is set in this "
        f"shell only, and a scheduled run does not see this shell's variables: put it in "
        f"{dotenv} (or the file DAYFLOW_DOTENV names), or the scheduled brief cannot read that "
        "source",
        f"warning: [[calendar]] 'team' token_env names $TEAM_CAL_TOKEN, which is not set, and a "
        f"scheduled run does not see this shell's variables: put it in {dotenv} (or the file "
        "DAYFLOW_DOTENV names), or the scheduled brief cannot read that source",
        "warning: [smtp] password_env names $SMTP_PASSWORD, which is set in this shell only, "
        f"and a scheduled run does not see this shell's variables: put it in {dotenv} (or the "
        "file DAYFLOW_DOTENV names), or the scheduled brief cannot read that source",
    ]
    units = "".join(p.read_text() for p in (tmp_path / "xdg" / "systemd" / "user").iterdir())
    assert "hunter2" not in units + out + err


def test_a_dry_run_warns_too_and_a_config_without_env_secrets_says_nothing(
    tmp_path: Path,
) -> None:
    code, _, err = install(tmp_path, CONFIG, "--dry-run")
    assert code == 0, err
    assert "$WORK_MAIL_PASSWORD, which is not set" in err and "$SMTP_PASSWORD" in err
    plain = CONFIG.split("[smtp]")[0].replace('password_env = "WORK_MAIL_PASSWORD"', "")
    plain = plain.replace('token_env = "TEAM_CAL_TOKEN"', "")
    plain = plain.replace('kind = "imap"', 'kind = "maildir"\npath = "~/Maildir"')
    plain = plain.replace('host = "imap.example.org"\nuser = "alex@example.org"\n', "")
    code, _, err = install(tmp_path / "again", plain)
    assert code == 0, err
    assert "warning:" not in err
