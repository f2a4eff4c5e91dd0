"""The sources config file: where it is, its schema and one line per problem; `init`,
`sources` and `sources check` through the CLI."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from dayflow.errors import ConfigFileError
from dayflow.providers.offline import OfflineModel
from dayflow.sources.config import config_path, load_config, parse_config
from dayflow.sources.starter import STARTER
from tests.conftest import config_problems as problems
from tests.conftest import parse_sources as parse
from tests.harness import invoke
from tests.mailkit import write_maildir

OFFLINE = lambda model, settings: OfflineModel()  # noqa: E731

FULL = """
[[inbox]]
name = "work"
kind = "imap"
host = "imap.example.org"
user = "me@example.org"
password_command = "pass show mail/work"
folders = ["INBOX", "Later"]
security = "starttls"
port = 143
timeout = 12.5

[[inbox]]
name = "home"
kind = "maildir"
path = "mail/home"

[[inbox]]
name = "old"
kind = "mbox"
path = "~/old.mbox"

[[calendar]]
name = "cal"
kind = "ics"
url = "https://calendar.example.org/secret-token/basic.ics"

[[calendar]]
name = "nc"
kind = "caldav"
url = "https://cloud.example.org/remote.php/dav"
user = "me"
password_env = "NC_PASSWORD"
calendars = ["Personal"]
"""


def test_the_issue_shape_parses_with_paths_made_absolute_next_to_the_file() -> None:
    config = parse(FULL)
    work, home, old = config.inboxes
    assert (work.kind, work.host, work.folders, work.security) == (
        "imap",
        "imap.example.org",
        ("INBOX", "Later"),
        "starttls",
    )
    assert (work.port, work.timeout) == (143, 12.5)
    assert home.path == "/cfg/mail/home"
    assert old.path == str(Path("~/old.mbox").expanduser())
    cal, nc = config.calendars
    assert cal.kind == "ics" and nc.calendars == ("Personal",)


def test_a_calendar_secret_address_is_shown_only_as_scheme_and_host() -> None:
    cal = parse(FULL).calendars[0]
    assert cal.where == "https://calendar.example.org/…"
    assert "secret-token" not in json.dumps(cal.to_json())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[[inbox]]\nname = "a"\nkind = "pop3"\n', "unknown kind 'pop3'"),
        ('[[inbox]]\nname = "a"\nkind = "maildir"\n', "missing 'path'"),
        ('[[inbox]]\nkind = "maildir"\npath = "x"\n', "missing 'name'"),
        ('[[inbox]]\nname = "a:b"\nkind = "maildir"\npath = "x"\n', "'name' must be"),
        ('[[inbox]]\nname = "a"\nkind = "maildir"\npath = "x"\nhots = "y"\n', "unknown key 'hots'"),
        (
            '[[inbox]]\nname = "a"\nkind = "imap"\nhost = "h"\nuser = "u"\n'
            'password_command = "c"\npassword_env = "E"\n',
            "both 'password_command' and 'password_env'",
        ),
        (
            '[[inbox]]\nname = "a"\nkind = "imap"\nhost = "h"\nuser = "u"\n',
            "needs 'password_command' or 'password_env'",
        ),
        (
            '[[inbox]]\nname = "a"\nkind = "imap"\nhost = "h"\nuser = "u"\npassword = "hunter2"\n'
            'password_env = "E"\n',
            "passwords are never written in the config file",
        ),
        (
            '[[inbox]]\nname = "a"\nkind = "imap"\nhost = "h"\nuser = "u"\npassword_env = "E"\n'
            "port = 99999\n",
            "'port' must be a number from 1 to 65535",
        ),
        (
            '[[inbox]]\nname = "a"\nkind = "imap"\nhost = "h"\nuser = "u"\npassword_env = "E"\n'
            "timeout = 0\n",
            "'timeout' must be seconds",
        ),
        (
            '[[inbox]]\nname = "a"\nkind = "imap"\nhost = "h"\nuser = "u"\npassword_env = "E"\n'
            'security = "none"\n',
            "'security' must be one of tls, starttls, plain",
        ),
        ('[[calendar]]\nname = "c"\nkind = "ics"\n', "exactly one of 'path' or 'url'"),
        ('[[calendar]]\nname = "c"\nkind = "ics"\nurl = "ftp://x/y"\n', "'url' must start"),
        ('[[inbox]]\nname = "a"\nkind = "maildir"\npath = "x"\nfolders = []\n', "unknown key"),
        ('[inbox]\nname = "a"\n', "must be written [[inbox]]"),
        (
            '[[inbox]]\nname = "a"\nkind = "mbox"\npath = "x"\ndrafts = true\n',
            "'drafts' needs a maildir or imap inbox (kind 'mbox' cannot hold drafts)",
        ),
        (
            '[[inbox]]\nname = "a"\nkind = "eml"\npath = "x"\ndrafts = "d"\n',
            "'drafts' needs a maildir or imap inbox (kind 'eml' cannot hold drafts)",
        ),
        ('[[inboxes]]\nname = "a"\n', "unknown table or key 'inboxes'"),
        (
            '[[inbox]]\nname = "a"\nkind = "maildir"\npath = "x"\n'
            '[[calendar]]\nname = "a"\nkind = "json"\npath = "y"\n',
            "duplicate name 'a'",
        ),
    ],
)
def test_each_problem_is_one_line_naming_the_file_the_entry_and_the_key(
    text: str, expected: str
) -> None:
    lines = problems(text)
    assert len(lines) == 1, lines
    assert lines[0].startswith("/cfg/config.toml: ")
    assert expected in lines[0]


def test_every_problem_of_a_file_is_reported_at_once_one_per_line() -> None:
    text = (
        '[[inbox]]\nname = "a"\nkind = "pop3"\n'
        '[[inbox]]\nname = "b"\nkind = "maildir"\n'
        '[[calendar]]\nname = "c"\nkind = "ics"\npath = "p"\nurl = "https://x/y"\n'
    )
    lines = problems(text)
    assert len(lines) == 3
    assert ["pop3" in lines[0], "missing 'path'" in lines[1], "exactly one" in lines[2]] == [
        True,
        True,
        True,
    ]


def test_toml_syntax_errors_and_non_utf8_files_are_one_line() -> None:
    [line] = problems("[[inbox]\nname = ")
    assert "not valid TOML" in line
    with pytest.raises(ConfigFileError, match="not UTF-8"):
        parse_config(b"\xff\xfe[[inbox]]", Path("/cfg/config.toml"))


def test_the_config_is_found_by_flag_then_env_then_xdg_and_a_relative_xdg_is_ignored(
    tmp_path: Path,
) -> None:
    env = {"HOME": "/home/u", "XDG_CONFIG_HOME": "/x"}
    assert config_path(env) == (Path("/x/dayflow/config.toml"), False)
    assert config_path({**env, "XDG_CONFIG_HOME": "rel"})[0] == Path(
        "/home/u/.config/dayflow/config.toml"
    )
    assert config_path({**env, "DAYFLOW_CONFIG": "/e.toml"}) == (Path("/e.toml"), True)
    assert config_path({**env, "DAYFLOW_CONFIG": "/e.toml"}, Path("/f.toml"))[0] == Path("/f.toml")
    assert load_config({"XDG_CONFIG_HOME": str(tmp_path)}) is None
    with pytest.raises(ConfigFileError, match="does not exist"):
        load_config({"DAYFLOW_CONFIG": str(tmp_path / "nope.toml")})


def test_the_delivery_settings_share_the_file() -> None:
    config = parse('deliver = ["stdout"]\n[smtp]\nhost = "h"\n' + FULL)
    assert [s.name for s in config.inboxes] == ["work", "home", "old"]


def test_the_starter_config_is_valid_and_declares_nothing_until_edited() -> None:
    config = parse(STARTER)
    assert config.inboxes == () and config.calendars == ()
    uncommented = "\n".join(
        line[2:] if line.startswith("# ") and "=" in line or line.startswith("# [[") else line
        for line in STARTER.splitlines()
    )
    assert "[[inbox]]" in uncommented


def test_the_starter_config_shows_who_you_are_and_your_sent_mail() -> None:
    """`me`, the two followup settings and `sent` are in the file `init` writes, where they
    parse once uncommented (the top-level keys above the first table, as TOML needs)."""
    lines = [
        line[2:] if line.startswith("# ") and "=" in line or line.startswith("# [[") else line
        for line in STARTER.splitlines()
    ]
    tables = [i for i, line in enumerate(lines) if line == "[[inbox]]"]
    config = parse("\n".join(lines[: tables[1]]))  # the top and the first (Maildir) inbox
    assert config.me and config.waiting_after_days == 2 and config.followup_days == 14
    assert config.inboxes[0].kind == "maildir" and config.inboxes[0].sent
    assert 'sent = "[Gmail]/Sent Mail"' in "\n".join(lines)


# --- through the CLI -------------------------------------------------------------------------


def test_init_writes_a_starter_and_never_overwrites_one(tmp_path: Path) -> None:
    cfg = tmp_path / "conf" / "config.toml"
    env = {"DAYFLOW_CONFIG": str(cfg)}
    first = invoke(tmp_path / "d.db", OFFLINE, "init", env=env)
    assert first.code == 0 and cfg.read_text() == STARTER
    assert (cfg.stat().st_mode & 0o777) == 0o600
    cfg.write_text("# mine\n")
    second = invoke(tmp_path / "d.db", OFFLINE, "init", env=env)
    assert second.code == 2
    assert second.err.strip() == (
        f"error: {cfg} already exists; Dayflow never overwrites a config file"
    )
    assert cfg.read_text() == "# mine\n"


def test_sources_lists_and_check_opens_each_source_without_a_model(tmp_path: Path) -> None:
    write_maildir(tmp_path / "Mail", count=3)
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[[inbox]]\nname = "home"\nkind = "maildir"\npath = "Mail"\n'
        '[[inbox]]\nname = "gone"\nkind = "mbox"\npath = "nothing-here.mbox"\n'
    )
    env = {"DAYFLOW_CONFIG": str(cfg)}

    def no_model(model: str, settings: object) -> object:
        raise AssertionError("sources commands never build a model")

    listed = invoke(tmp_path / "d.db", no_model, "sources", env=env)
    assert listed.code == 0
    assert [line.split()[:3] for line in listed.out.splitlines()] == [
        ["inbox", "home", "maildir"],
        ["inbox", "gone", "mbox"],
    ]
    as_json = json.loads(invoke(tmp_path / "d.db", no_model, "sources", "--json", env=env).out)
    assert [s["name"] for s in as_json["sources"]] == ["home", "gone"]

    checked = invoke(tmp_path / "d.db", no_model, "sources", "check", env=env)
    assert checked.code == 4
    home, gone = checked.out.splitlines()
    assert home.split()[:4] == ["home", "maildir", "3", "message(s),"]
    assert "newest" in home
    assert gone.startswith("gone") and "error:" in gone
    assert "nothing-here.mbox does not exist" in gone
    report = json.loads(
        invoke(tmp_path / "d.db", no_model, "sources", "check", "--json", env=env).out
    )
    assert [(s["name"], s["ok"]) for s in report["sources"]] == [("home", True), ("gone", False)]
    assert report["sources"][0]["messages"] == 3
    assert not (tmp_path / "d.db").exists()  # nothing opened the database


def test_a_broken_config_stops_brief_with_one_line_per_problem_and_nothing_written(
    tmp_path: Path,
) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[[inbox]]\nname = "a"\nkind = "pop3"\n[[inbox]]\nname = "b"\nkind = "mbox"\n')
    res = invoke(tmp_path / "d.db", OFFLINE, "brief", "--config", str(cfg))
    assert res.code == 4
    lines = res.err.strip().splitlines()
    assert ["pop3" in lines[-2], "missing 'path'" in lines[-1]] == [True, True]
    runs = invoke(tmp_path / "d.db", OFFLINE, "runs", "--json")
    assert json.loads(runs.out or "[]") == []


def test_without_a_config_brief_reads_the_sample_and_names_the_database(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    res = invoke(db, OFFLINE, "brief", "--date", "2026-11-05")
    assert res.code == 0
    notice = next(x for x in res.err.splitlines() if x.startswith("No sources configured"))
    assert str(db) in notice and "--clear-sample" in notice
    keys = [t["idempotency_key"] for t in json.loads(invoke(db, OFFLINE, "tasks", "--json").out)]
    assert keys and all(k.startswith("sample:") for k in keys)


def test_help_runs_and_tasks_import_no_mail_or_config_reader(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import subprocess_env

    code = (
        "import sys; from dayflow.cli import main; sys.argv=['dayflow'] + sys.argv[1:];\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "for lib in ('imaplib', 'mailbox', 'tomllib', 'dayflow.sources.mime',\n"
        "            'dayflow.sources.imap', 'dayflow.sources.config'):\n"
        "    assert lib not in sys.modules, lib + ' imported'\n"
    )
    for args in (["--help"], ["runs"], ["tasks"]):
        proc = subprocess.run(
            [sys.executable, "-c", code, *args],
            env=subprocess_env(tmp_path / "d.db"),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, (args, proc.stderr)


IMAP_ENTRY = '[[inbox]]\nname = "a"\nkind = "imap"\npassword_env = "E"\n'
HOST_USER = 'host = "h"\nuser = "u"\n'


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (IMAP_ENTRY + HOST_USER + 'folders = ["INBOX\\r\\nA1 DELETE Work"]\n', "folders"),
        (IMAP_ENTRY + HOST_USER + 'folders = ["INBOX", "X\\nA1 DELETE Y"]\n', "folders"),
        (IMAP_ENTRY + HOST_USER + 'folders = ["INBOX\\u0000"]\n', "folders"),
        (IMAP_ENTRY + 'host = "h"\nuser = "me\\r\\nA1 DELETE INBOX"\n', "user"),
        (IMAP_ENTRY + 'host = "h\\u0000.example.org"\nuser = "u"\n', "host"),
        ('[[calendar]]\nname = "c"\nkind = "ics"\nurl = "https://h/x\\r\\nX-A: b"\n', "url"),
        (
            '[[calendar]]\nname = "c"\nkind = "caldav"\nurl = "https://h/dav"\n'
            'user = "alex\\nX-A: b"\npassword_env = "E"\n',
            "user",
        ),
    ],
)
def test_a_value_that_would_reach_a_protocol_line_with_a_line_break_is_refused(
    text: str, key: str
) -> None:
    """The case that deleted a folder, and its cousins: a CR, LF or NUL in any value that is
    sent to a server is one problem line naming the entry and the key."""
    (line,) = problems(text)
    assert f"'{key}'" in line and "line break or NUL" in line and "refused" in line


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://h:99999/x.ics", "'url' has a port out of range (it must be a number from 1"),
        ("https://h:0/x.ics", "'url' has a port out of range"),
        ("https://h:abc/x.ics", "'url' has a port that is not a number"),
        ("https://:8080/x.ics", "'url' has no host name"),
    ],
)
def test_a_url_that_cannot_be_fetched_says_why(url: str, expected: str) -> None:
    """A port out of range was called "not an http address"."""
    for kind, extra in (("ics", ""), ("caldav", 'user = "u"\npassword_env = "E"\n')):
        (line,) = problems(f'[[calendar]]\nname = "c"\nkind = "{kind}"\nurl = "{url}"\n{extra}')
        assert expected in line, (kind, line)


def _gone(pid: int) -> bool:
    """Whether process `pid` is dead (gone, or a zombie nobody has reaped yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def test_a_password_command_that_leaves_a_child_holding_the_pipe_answers_and_the_child_dies(
    tmp_path: Path,
) -> None:
    """Read until the command exits, not until EOF: a child it leaves behind (a gpg-agent,
    say) holding stdout open made it "not finished", and the child was left running."""
    import time

    from dayflow.sources.secret_command import secret_from_command

    pidfile = tmp_path / "child.pid"
    script = f"echo s3cret; sleep 120 & echo $! > {pidfile}"
    started = time.monotonic()
    assert secret_from_command(f"sh -c '{script}'", 20, env=os.environ) == "s3cret"
    assert time.monotonic() - started < 15  # generous; the old code waited for the child
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child)


def test_a_password_command_that_does_not_finish_is_killed_with_its_children(
    tmp_path: Path,
) -> None:
    import time

    from dayflow.sources.secret_command import SecretCommandFailed, secret_from_command

    pidfile = tmp_path / "child.pid"
    with pytest.raises(SecretCommandFailed, match=r"did not finish in 1 s"):
        secret_from_command(f"sh -c 'sleep 120 & echo $! > {pidfile}; wait'", 1, env=os.environ)
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child)


@pytest.mark.parametrize(
    ("command", "expected", "hint"),
    [
        ("~/bin/no-such-password-tool", "'~/bin/no-such-password-tool' was not found", True),
        ("cat $HOME/.pw", "exited with status 1", True),
        ("cat /no/such/file | head -1", "exited with status 1", True),
        ('"pass show mail"', "program was not found", True),
        ("sh -c 'exit 3'", "exited with status 3", False),
        ("true", "printed no password (exit status 0)", False),
        ("no-such-password-tool show mail", "'no-such-password-tool' was not found", False),
    ],
)
def test_the_no_shell_hint_is_given_only_to_a_command_written_for_a_shell(
    command: str, expected: str, hint: bool
) -> None:
    """Issue 32.24: `~`, `$VAR`, pipes and a command quoted whole do not work without a shell,
    and the error says so; a command that failed for its own reasons gets no such hint."""
    from dayflow.sources.secret_command import SecretCommandFailed, secret_from_command

    with pytest.raises(SecretCommandFailed) as caught:
        secret_from_command(command, 10, env=os.environ)
    assert expected in str(caught.value), str(caught.value)
    assert ("sh -c" in str(caught.value)) == hint, str(caught.value)


def test_a_failing_commands_first_stderr_line_is_shown_escaped_and_without_its_secret(
    tmp_path: Path,
) -> None:
    """Issue 32.24: pizauth's "open this URL" is the reason a token_command fails; it is shown,
    one line, with no terminal escape and nothing of the secret the command printed."""
    from dayflow.sources.secret_command import SecretCommandFailed, secret_from_command

    url = "https://login.example.com/oauth2/authorize?client_id=abc&state=Zq81XkT3bLm9wPq2"
    script = tmp_path / "pizauth.py"
    script.write_text(
        "import sys\n"
        "print('hunter2-Sekret-9876')\n"
        "sys.stderr.write('\\n\\x1b[31merror: Token unavailable until authorised with URL "
        f"{url} (old: hunter2-Sekret-9876 ghp_16C7e42F292c6912E7710c838347Ae178B4a)\\n')\n"
        "sys.stderr.write('second line\\n')\n"
        "sys.exit(1)\n"
    )
    with pytest.raises(SecretCommandFailed) as caught:
        secret_from_command(
            f"{sys.executable} {script}", 10, env=os.environ, key="token_command", what="token"
        )
    line = str(caught.value)
    assert line.startswith("token_command exited with status 1; it said: ")
    assert f"error: Token unavailable until authorised with URL {url}" in line
    assert "\x1b" not in line and "\n" not in line and "second line" not in line
    assert "hunter2" not in line and "ghp_" not in line and "without a shell" not in line


def test_a_password_pasted_as_the_command_is_never_echoed() -> None:
    """Issue 32.4: "'<the password>' was not found" put the password in the DB, the brief, the
    sinks and the model. Only a word that reads as a program is shown."""
    from dayflow.sources.secret_command import SecretCommandFailed, secret_from_command

    for pasted in (
        "Zx9kLq2mNw8pR4tV7yB1cD3fG6hJ0aS5eU",
        "hunter2",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "correct-Horse7-battery",
        "p@ssw0rd!",
        # a short password with more words after it: not a lone word, never a program's name
        "Zq9SECRETx7Kw3 --flag",
        "Blue42Sky tree staple",
    ):
        with pytest.raises(SecretCommandFailed) as caught:
            secret_from_command(pasted, 10, env=os.environ)
        line = str(caught.value)
        assert pasted.split()[0] not in line and "program was not found" in line, line
        assert "not the password itself" in line
    for program in ("oama-missing access me", "/opt/none/pass show x", "no-pizauth show work"):
        with pytest.raises(SecretCommandFailed) as caught:
            secret_from_command(program, 10, env=os.environ)
        assert f"{program.split()[0]!r} was not found" in str(caught.value)


def test_a_command_printing_more_than_a_pipe_holds_is_read_not_timed_out(
    tmp_path: Path,
) -> None:
    """Issue 32.15: a program printing over 64 KB blocked on its full pipe until the timeout
    (a busy wait meanwhile). Its first line is the answer; a first line with no end is
    refused saying so."""
    import time

    from dayflow.sources.secret_command import SecretCommandFailed, secret_from_command

    big = tmp_path / "big.py"
    big.write_text("import sys\nsys.stdout.write('tok-1\\n' + 'x' * 300_000 + '\\n')\n")
    start = time.monotonic()
    assert secret_from_command(f"{sys.executable} {big}", 20, env=os.environ) == "tok-1"
    assert time.monotonic() - start < 10
    endless = tmp_path / "endless.py"
    endless.write_text("import sys\nsys.stdout.write('y' * 300_000)\n")
    with pytest.raises(SecretCommandFailed) as caught:
        secret_from_command(
            f"{sys.executable} {endless}", 20, env=os.environ, key="token_command", what="token"
        )
    assert "printed more than 64 KB without a line break: not a token" in str(caught.value)
    spew = tmp_path / "spew.py"
    spew.write_text("import sys\nwhile True:\n    sys.stdout.write('z' * 65536)\n")
    start = time.monotonic()
    with pytest.raises(SecretCommandFailed) as caught:
        secret_from_command(f"{sys.executable} {spew}", 1.5, env=os.environ)
    assert "did not finish in 1.5 s (stopped, after printing more than 64 KB)" in str(caught.value)
    assert time.monotonic() - start < 5


def test_a_password_command_prints_a_non_ascii_password_as_utf8() -> None:
    from dayflow.sources.secret_command import secret_from_command

    assert secret_from_command("printf 'pässwörd\\r\\nmore'", 10, env=os.environ) == "pässwörd"


@pytest.mark.parametrize("written", ["$HOME/Mail/INBOX", "${HOME}/Mail", "~/Mail/$USER"])
def test_a_variable_in_a_path_is_refused_naming_it_since_only_tilde_is_expanded(
    written: str,
) -> None:
    """`$HOME` in a path was taken literally (a folder named "$HOME" next to the config)."""
    (line,) = problems(f'[[inbox]]\nname = "a"\nkind = "maildir"\npath = "{written}"\n')
    assert "'path' holds $" in line and "variables are not expanded in paths" in line


def test_a_variable_in_a_file_sink_or_cafile_is_refused_too(tmp_path: Path) -> None:
    from dayflow import delivery
    from dayflow.errors import ConfigFileError, UsageError

    with pytest.raises(UsageError, match=r"the path holds \$HOME, and variables are not"):
        delivery.parse_sink("file:$HOME/notes/{date}.md")
    with pytest.raises(ConfigFileError, match=r"cafile holds \$\{XDG\}"):
        delivery.smtp_config({"host": "h", "to": "a@b", "cafile": "${XDG}/ca.pem"}, tmp_path)
    assert delivery.parse_sink("file:~/notes/{date}.md").endswith("/notes/{date}.md")
