"""OAuth tokens in the config file (issue 20): `auth`, `token_command` and `token_env` on IMAP,
CalDAV, ICS URLs and [smtp], and each wrong combination one line naming the entry."""

from __future__ import annotations

import pytest

from dayflow import delivery
from dayflow.errors import ConfigFileError
from tests.conftest import CONFIG_PATH
from tests.conftest import config_problems as problems
from tests.conftest import parse_sources as parse

PATH = CONFIG_PATH
IMAP = '[[inbox]]\nname = "work"\nkind = "imap"\nhost = "outlook.office365.com"\nuser = "a@b.c"\n'
DAV = '[[calendar]]\nname = "gcal"\nkind = "caldav"\nuser = "a@b.c"\nurl = "https://dav.example/"\n'
ICS = '[[calendar]]\nname = "feed"\nkind = "ics"\n'


def test_a_token_source_parses_with_its_mechanism_and_no_token_anywhere() -> None:
    config = parse(
        IMAP + 'auth = "xoauth2"\ntoken_command = "oama access a@b.c"\n'
        "\n" + IMAP.replace('"work"', '"gmail"') + 'auth = "oauthbearer"\ntoken_env = "GTOKEN"\n'
        "\n" + IMAP.replace('"work"', '"plain"') + 'password_env = "PW"\n'
        "\n" + DAV + 'token_command = "pizauth show google"\n'
        "\n" + ICS + 'url = "https://feeds.example/private.ics"\ntoken_env = "FEED"\n'
    )
    work, gmail, plain = config.inboxes
    assert (work.auth, work.token_command) == ("xoauth2", "oama access a@b.c")
    assert (gmail.auth, gmail.token_env) == ("oauthbearer", "GTOKEN")
    assert plain.auth == "password"
    dav, feed = config.calendars
    assert dav.auth == "bearer" and feed.auth == "bearer"  # HTTP sends Authorization: Bearer
    assert work.to_json()["auth"] == "xoauth2"
    assert work.to_json()["token_command"] == "oama access a@b.c"  # a command, not a token


def test_a_token_source_without_auth_is_xoauth2() -> None:
    (work,) = parse(IMAP + 'token_command = "oama access a@b.c"\n').inboxes
    assert work.auth == "xoauth2"


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (
            'password_env = "PW"\ntoken_env = "T"\n',
            "both a password ('password_env') and a token ('token_env') given; keep one",
        ),
        (
            'auth = "xoauth2"\npassword_command = "pass show x"\n',
            'auth = "xoauth2" takes an OAuth token from token_command or token_env, '
            "not 'password_command'",
        ),
        (
            'auth = "password"\ntoken_command = "oama access a@b.c"\n',
            "'token_command' gives an OAuth token, but auth = \"password\"",
        ),
        ('auth = "oauthbearer"\n', 'auth = "oauthbearer" needs token_command or token_env'),
        ('auth = "kerberos"\ntoken_env = "T"\n', "'auth' must be one of password, xoauth2"),
        ('token_env = "T"\ntoken_command = "x"\n', "both 'token_command' and 'token_env'"),
        ('token = "eyJ0eXAi"\n', "tokens are never written in the config file"),
        ('token_command = ""\n', "'token_command' must be a non-empty string"),
    ],
)
def test_each_wrong_credential_is_one_line_naming_the_entry(keys: str, expected: str) -> None:
    found = problems(IMAP + keys)
    assert any(
        line.startswith(f'{PATH}: [[inbox]] #1 "work": ') and expected in line for line in found
    ), found


def test_the_same_rules_hold_for_caldav_and_a_token_needs_an_ics_url() -> None:
    dav = DAV + 'auth = "xoauth2"\npassword_env = "PW"\n\n'
    found = problems(dav + ICS + 'path = "x.ics"\ntoken_env = "T"\n')
    assert any('"gcal": auth = "xoauth2" takes an OAuth token' in line for line in found), found
    assert any("\"feed\": a token is sent only to a 'url'" in line for line in found), found
    assert len(found) == 2


def test_imap_with_no_credential_names_both_kinds() -> None:
    (line,) = problems(IMAP)
    assert "needs 'password_command' or 'password_env'" in line and "token_command" in line


def smtp(extra: str) -> delivery.SmtpConfig:
    import tomllib

    table = tomllib.loads('host = "smtp.office365.com"\nuser = "a@b.c"\n' + extra)
    return delivery.smtp_config(table, PATH)


def test_smtp_takes_a_token_with_the_same_rules() -> None:
    cfg = smtp('auth = "xoauth2"\ntoken_command = "oama access a@b.c"\n')
    assert (cfg.auth, cfg.token_command, cfg.security, cfg.port) == (
        "xoauth2",
        "oama access a@b.c",
        "starttls",
        587,
    )
    assert smtp('password_env = "PW"\n').auth == "password"
    for extra, expected in (
        ('password_env = "PW"\ntoken_env = "T"\n', "both a password"),
        ('auth = "xoauth2"\npassword_env = "PW"\n', 'auth = "xoauth2" takes an OAuth token'),
        ('auth = "password"\ntoken_env = "T"\n', 'but auth = "password"'),
        ('auth = "sasl"\n', "'auth' must be one of"),
    ):
        with pytest.raises(ConfigFileError) as caught:
            smtp(extra)
        line = str(caught.value)
        assert line.startswith(f"{PATH}: [smtp]: ") and expected in line and "\n" not in line
    with pytest.raises(ConfigFileError, match=r"needs `user`"):
        delivery.smtp_config(
            {"host": "h", "to": "a@b.c", "auth": "xoauth2", "token_env": "T"}, PATH
        )
