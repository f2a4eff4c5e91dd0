"""What a user sees of a broken config file or a misspelt setting, end to end through the CLI
(an empty HOME, the offline model): every problem of the file, one `error: <file>: ...` line
each, exit 4 whatever the section; nothing said before them; a `DAYFLOW_*` variable that is
not a setting warned about once, naming the one it likely meant, and never an error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dayflow.config_files import ENV_VARS, NOT_SETTINGS_PREFIXES, unknown_settings
from tests.harness import Result, invoke, offline_model

ROOT = Path(__file__).resolve().parent.parent


def brief(tmp_path: Path, toml: str | bytes, *args: str, **env: str) -> Result:
    """`dayflow brief` with `toml` as the config file (DAYFLOW_CONFIG), in an empty HOME."""
    cfg = tmp_path / "config.toml"
    cfg.write_bytes(toml if isinstance(toml, bytes) else toml.encode())
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"HOME": str(home), "DAYFLOW_CONFIG": str(cfg), **env}
    return invoke(tmp_path / "d.db", offline_model, "brief", *args, env=env)


def error_lines(tmp_path: Path, res: Result) -> list[str]:
    """The problems of the config file, checked to be every line of stderr, each one
    `error: <the file>: ...`; returned without that prefix."""
    prefix = f"error: {tmp_path / 'config.toml'}: "
    lines = res.err.splitlines()
    assert lines and all(line.startswith(prefix) for line in lines), res.err
    return [line.removeprefix(prefix) for line in lines]


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ('deliver = "file:/tmp/x.md"\n', "deliver must be a list of sinks"),
        ('deliver = ["pigeon"]\n', "deliver 'pigeon': use file:PATH"),
        # A list with a non-string said "must be a list of sinks", which it is.
        ('deliver = ["stdout", 3]\n', 'deliver entry 2 must be a sink such as "stdout", not 3'),
        ('deliver = ["file:$HOME/b.md"]\n', "the path holds $HOME"),
        ('deliver = ["smtp"]\n', "deliver smtp needs an [smtp] table"),
        ('smtp = "mail.example.org"\n', "[smtp]: must be a table"),
        ('[smtp]\nhost = "h"\nto = "a@b.c"\nnope = 1\n', "[smtp]: unknown key(s) nope"),
        ('[smtp]\nhost = "h"\nto = "a@b.c"\nsecurity = "ssl"\n', "[smtp]: security must be"),
        ('[smtp]\nhost = "h"\nto = "a@b.c"\nport = 70000\n', "[smtp]: port must be"),
        ('[model]\nprovider = "cloud"\n', "[model]: provider must be one of"),
        ('[[inbox]]\nname = "x"\nkind = "maildir"\n', "missing 'path'"),
    ],
)
def test_every_config_file_problem_exits_4_on_one_error_line(
    tmp_path: Path, toml: str, said: str
) -> None:
    """`deliver` and [smtp] exited 2, a usage error, where every other config problem is 4."""
    res = brief(tmp_path, toml)
    assert res.code == 4, res.err
    (line,) = error_lines(tmp_path, res)
    assert said in line
    assert not (tmp_path / "d.db").exists()


def test_a_bad_deliver_flag_is_still_a_usage_error(tmp_path: Path) -> None:
    """The README's exit 2: a bad option value on the command line, not in the file."""
    res = brief(tmp_path, "", "--deliver", "pigeon")
    assert res.code == 2 and res.err == (
        "error: --deliver 'pigeon': use file:PATH (with {date}), smtp, notify or stdout\n"
    )
    res = brief(tmp_path, "", "--deliver", "smtp")
    assert res.code == 2 and "--deliver smtp needs an [smtp] table" in res.err


def test_a_bad_smtp_port_is_named_before_what_the_table_lacks(tmp_path: Path) -> None:
    """`port = "x"` said only "[smtp]: needs host"."""
    res = brief(tmp_path, '[smtp]\nport = "x"\n')
    assert res.code == 4
    assert error_lines(tmp_path, res) == [
        "[smtp]: port must be a number from 1 to 65535, not 'x'",
        "[smtp]: needs host",
        "[smtp]: needs `to` (or `user`) as an address",
    ]


def test_every_wrong_type_in_smtp_is_named_once(tmp_path: Path) -> None:
    res = brief(tmp_path, '[smtp]\nhost = 3\nto = 4\ntimeout = "long"\nsecurity = 1\n')
    assert res.code == 4
    assert error_lines(tmp_path, res) == [
        "[smtp]: host must be a string, not 3",
        "[smtp]: security must be one of tls, starttls, plain, not 1",
        "[smtp]: to must be an address or a list of addresses, not 4",
        "[smtp]: timeout must be seconds, from 1 to 600, not 'long'",
    ]


def test_problems_in_several_sections_are_each_an_error_line(tmp_path: Path) -> None:
    """Two problems ran to three lines, only the first with `error:`; and a brief stopped at
    the first section with one, so fixing it only showed the next."""
    toml = (
        'deliver = "x"\ncolour = "blue"\n[model]\nname = ""\n'
        '[[inbox]]\nname = "x"\nkind = "pigeon"\n[smtp]\nport = "x"\nhost = "h"\nto = "a@b.c"\n'
    )
    res = brief(tmp_path, toml)
    assert res.code == 4 and res.out == ""
    lines = error_lines(tmp_path, res)
    assert [re.sub(r"[:( ].*", "", line) for line in lines] == [
        "unknown",
        "[[inbox]]",
        "[model]",
        "deliver",
        "[smtp]",
    ], lines
    assert "'colour'" in lines[0] and "unknown kind 'pigeon'" in lines[1]
    assert "port must be a number" in lines[4]


def test_a_bad_kind_is_one_line_among_its_entry_s_other_problems(tmp_path: Path) -> None:
    """An unknown or missing kind hid every other problem of its entry: fixing it showed the
    next. Its keys are still checked, against what any kind of its table takes."""
    toml = (
        '[[inbox]]\nname = "x"\nkind = "pop3"\nport = "x"\npassword = "hunter2"\ncolour = 1\n'
        '[[calendar]]\nname = "c"\ntimeout = 0\npath = "$HOME/c.ics"\n'
    )
    res = brief(tmp_path, toml)
    assert res.code == 4 and res.out == ""
    lines = error_lines(tmp_path, res)
    assert [re.sub(r"^[^:]*: ", "", line)[:40] for line in lines] == [
        "unknown kind 'pop3' (one of: maildir, mb",
        "unknown key 'colour' for any [[inbox]] (",
        "'port' must be a number from 1 to 65535",
        "passwords are never written in the confi",
        "missing 'kind' (one of: ics, caldav, jso",
        "'timeout' must be seconds, more than 0 a",
        "'path' holds $HOME, and variables are no",
    ], lines
    assert all(line.startswith('[[inbox]] #1 "x": ') for line in lines[:4])
    assert all(line.startswith('[[calendar]] #1 "c": ') for line in lines[4:])


def test_every_section_names_itself_the_same_way(tmp_path: Path) -> None:
    """A section's problem is `[section]: ...` (an entry's `[[table]] #n "name": ...`), the
    same in every section: [smtp]'s said `[smtp] ...` where [model]'s said `[model]: ...`."""
    toml = (
        '[model]\nprovider = "cloud"\n[smtp]\nport = "x"\nhost = "h"\nto = "a@b.c"\n'
        '[mcp_servers.gh]\ncolour = 1\ncommand = "gh"\n'
        '[[inbox]]\nname = "x"\nkind = "maildir"\n[[calendar]]\nkind = "ics"\nurl = "x"\n'
    )
    lines = error_lines(tmp_path, brief(tmp_path, toml))
    sections = {line.partition(": ")[0] for line in lines}
    assert sections == {
        "[model]",
        "[smtp]",
        "[mcp_servers.gh]",
        '[[inbox]] #1 "x"',
        "[[calendar]] #1",
    }, lines


def test_a_thousand_unknown_keys_are_one_short_line(tmp_path: Path) -> None:
    many = "".join(f"k{i} = {i}\n" for i in range(1000)) + "[model]\nfoo = 1\nbar = 2\n"
    res = brief(tmp_path, many)
    assert res.code == 4
    top, model = error_lines(tmp_path, res)
    assert top.startswith("unknown tables or keys 'k0', 'k1', ") and " and 992 more (" in top
    assert len(top) < 300
    assert model.startswith("[model]: unknown keys 'foo', 'bar' (expected provider, ")
    (one,) = error_lines(tmp_path, brief(tmp_path, "colour = 1\n"))
    assert one.startswith("unknown table or key 'colour' (expected [[inbox]]")


def test_profiles_add_lists_every_problem_of_its_config_as_a_brief_does(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('deliver = ["pigeon"]\n[model]\nname = ""\n')
    cfg.chmod(0o600)
    home = tmp_path / "home"
    home.mkdir()
    res = invoke(
        tmp_path / "d.db",
        offline_model,
        *("profiles", "add", "ann", "--config", str(cfg)),
        env={"HOME": str(home)},
    )
    assert res.code == 4
    assert error_lines(tmp_path, res) == [
        "[model]: 'name' must be a non-empty string",
        "deliver 'pigeon': use file:PATH (with {date}), smtp, notify or stdout",
    ]


def test_sources_check_gives_each_delivery_problem_its_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    cfg = tmp_path / "config.toml"
    cfg.write_text('deliver = ["pigeon"]\n[smtp]\nport = "x"\n')
    env = {"HOME": str(home), "DAYFLOW_CONFIG": str(cfg)}
    res = invoke(tmp_path / "d.db", offline_model, "sources", "check", env=env)
    assert res.code == 4
    delivery = [line for line in res.out.splitlines() if line.startswith("delivery")]
    assert len(delivery) == 4 and all(f"error: {cfg}: " in line for line in delivery)


def test_sources_check_and_list_name_every_section_s_problems_too(tmp_path: Path) -> None:
    """An invalid source stopped them before the delivery settings were looked at."""
    home = tmp_path / "home"
    home.mkdir()
    cfg = tmp_path / "config.toml"
    cfg.write_text('deliver = 3\n[[inbox]]\nname = "x"\nkind = "pigeon"\n')
    env = {"HOME": str(home), "DAYFLOW_CONFIG": str(cfg)}
    for args in (("sources", "check"), ("sources",)):
        res = invoke(tmp_path / "d.db", offline_model, *args, env=env)
        assert res.code == 4
        lines = error_lines(tmp_path, res)
        assert len(lines) == 2 and "unknown kind 'pigeon'" in lines[0], lines
        assert lines[1].startswith("deliver must be a list of sinks")


def test_a_broken_config_says_nothing_before_its_error(tmp_path: Path) -> None:
    """ "No ANTHROPIC_API_KEY set: using the built-in offline model" came first."""
    for toml in ('[[inbox]]\nname = "x"\nkind = "maildir"\n', '[smtp]\nport = "x"\n'):
        res = brief(tmp_path, toml)
        assert res.code == 4 and res.err.startswith("error: "), res.err
        assert "ANTHROPIC_API_KEY" not in res.err
    # A source the config names that is not there: its error alone, too.
    res = brief(tmp_path, f'[[inbox]]\nname = "x"\nkind = "maildir"\npath = "{tmp_path}/no"\n')
    assert res.code == 4 and res.err.startswith("error: x: Maildir"), res.err
    assert "ANTHROPIC_API_KEY" not in res.err
    assert not (tmp_path / "d.db").exists()
    fine = brief(tmp_path, "")
    assert fine.code == 0 and "No ANTHROPIC_API_KEY set" in fine.err  # (said when it loads)


@pytest.mark.parametrize(
    "toml",
    [
        b"",
        b"\x00\xff\xfe binary \x89PNG\r\n",
        b"a = " + b"1" * 2_000_000,
        b"[smtp\n",
        b"deliver = 3\n",
        b"inbox = 3\n",
        b"[model]\ntimeout = true\n",
        b"follow_up = 3\n",
        b"[mcp_servers]\nx = 3\n",
    ],
    ids=["empty", "binary", "huge", "not-toml", "int", "inbox-int", "bool", "unknown", "mcp"],
)
def test_hostile_config_gives_clear_error_lines_and_exit_4(tmp_path: Path, toml: bytes) -> None:
    res = brief(tmp_path, toml)
    if not toml:  # an empty file is no settings: the sample, said so
        assert res.code == 0 and "has no settings" in res.err
        return
    assert res.code == 4, res.err
    lines = error_lines(tmp_path, res)
    assert all(len(line) < 300 and "Traceback" not in line for line in lines)


# --- misspelt settings -------------------------------------------------------------------


def test_a_misspelt_setting_is_warned_about_naming_the_real_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    res = invoke(None, offline_model, "runs", env={"HOME": str(home), "DAYFLOW_TIMEZONE": "x"})
    warning = "warning: DAYFLOW_TIMEZONE is not a Dayflow setting; did you mean DAYFLOW_TZ?"
    assert res.err.splitlines()[0] == warning
    assert res.err.count("DAYFLOW_TIMEZONE") == 1  # once
    assert res.code == 4 and "no Dayflow database" in res.err  # the command goes on: `runs`'
    ok = invoke(
        tmp_path / "d.db", offline_model, "brief", env={"HOME": str(home), "DAYFLOW_DBB": "x"}
    )
    assert ok.code == 0
    assert (
        ok.err.count("warning: DAYFLOW_DBB is not a Dayflow setting; did you mean DAYFLOW_DB?") == 1
    )


def test_a_misspelt_setting_of_a_dotenv_file_names_the_file(tmp_path: Path) -> None:
    """Set in ~/.config/dayflow/.env, the warning named only the variable: a user looking for
    it in the environment did not find it."""
    home = tmp_path / "home"
    (home / ".config" / "dayflow").mkdir(parents=True)
    dotenv = home / ".config" / "dayflow" / ".env"
    dotenv.write_text("DAYFLOW_MODLE=offline\n")
    from dayflow.config import Config

    found = Config(environ={"HOME": str(home), "DAYFLOW_TIMEZONE": "x"})
    assert found.warnings() == [
        f"warning: {dotenv}: DAYFLOW_MODLE is not a Dayflow setting; did you mean DAYFLOW_MODEL?",
        "warning: DAYFLOW_TIMEZONE is not a Dayflow setting; did you mean DAYFLOW_TZ?",
    ]


def test_the_config_returns_its_warnings_and_never_prints_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The core says nothing (house style: only the CLI renders): `Config.env` printed the
    warning to stderr itself when it had no one to tell. It keeps them for `warnings`, each
    once, a skipped `.env` line among them; a profile's environment is not checked again."""
    from dayflow.config import Config

    home = tmp_path / "home"
    (home / ".config" / "dayflow").mkdir(parents=True)
    (home / ".config" / "dayflow" / ".env").write_text("not a line\n")
    found = Config(environ={"HOME": str(home), "DAYFLOW_TIMEZONE": "x"})
    assert found.env["DAYFLOW_TIMEZONE"] == "x"
    assert capsys.readouterr() == ("", "")
    skipped, misspelt = found.warnings()
    assert ".env" in skipped
    assert (
        misspelt == "warning: DAYFLOW_TIMEZONE is not a Dayflow setting; did you mean DAYFLOW_TZ?"
    )
    assert found.warnings() == []
    assert Config({"DAYFLOW_TIMEZONE": "x"}, profile=True).warnings() == []
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("DAYFLOW_TIMEZONE", "DAYFLOW_TZ"),
        ("DAYFLOW_DATABASE", "DAYFLOW_DB"),
        ("DAYFLOW_MODLE", "DAYFLOW_MODEL"),
        ("DAYFLOW_CALENDER", "DAYFLOW_CALENDAR"),
        ("DAYFLOW_KILLAT", "DAYFLOW_KILL_AT"),
        ("DAYFLOW_PGBOUNCER", "DAYFLOW_PG_PGBOUNCER"),
        ("DAYFLOW_DURABLE", "DAYFLOW_DURABILITY"),
        ("DAYFLOW_API_KEY", "ANTHROPIC_API_KEY"),
        ("DAYFLOW_tz", "DAYFLOW_TZ"),
        ("DAYFLOW_FROBNICATE", None),
    ],
)
def test_the_nearest_setting_is_named(name: str, meant: str | None) -> None:
    (line,) = unknown_settings({name: "1", "DAYFLOW_TZ": "UTC", "PATH": "/bin"})
    end = f"; did you mean {meant}?" if meant else "; ignored"
    assert line == f"warning: {name} is not a Dayflow setting{end}"


def test_no_variable_dayflow_its_tests_or_its_bench_use_is_warned_about() -> None:
    """CI sets DAYFLOW_TEST_PG, DAYFLOW_TEST_PG_CLUSTER...: a warning on every command there
    would teach everyone to ignore it."""
    found: set[str] = set()
    for folder in ("dayflow", "tests", "bench", ".github"):  # (docs show a misspelling)
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in (".py", ".md", ".yml", ".yaml", ".toml", ".sh"):
                if {"blind10", "quiet9"} & set(path.parts) or path.name == Path(__file__).name:
                    continue  # (this file's misspellings are meant)
                text = path.read_text(encoding="utf-8", errors="replace")
                names = re.findall(r"(?<![A-Za-z_])DAYFLOW_[A-Z0-9_]*", text)
                found |= {n for n in names if not n.endswith("_")}  # (not a prefix)
    assert {"DAYFLOW_TEST_PG", "DAYFLOW_TEST_PG_CLUSTER", "DAYFLOW_TZ"} <= found
    assert unknown_settings(dict.fromkeys(found, "1")) == []
    assert all(n in ENV_VARS or n.startswith(NOT_SETTINGS_PREFIXES) for n in found)
