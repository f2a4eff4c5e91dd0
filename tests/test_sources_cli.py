"""Sources through the CLI: a config's Maildir in a brief, the mail window, a failed source
named in the brief, --strict-sources, a file gone before a resume (W6), done tasks (W7), and the
sample's own key namespace with `tasks --clear-sample`."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from dayflow.providers.offline import OfflineModel
from tests.conftest import subprocess_env
from tests.harness import invoke
from tests.mailkit import message, write_maildir

OFFLINE = lambda model, settings: OfflineModel()  # noqa: E731
DAY = "2026-11-05"  # the harness clock is 2026-11-05T07:30Z
NEW = dt.datetime(2026, 11, 5, 6, 0, tzinfo=dt.UTC)


# A JSON inbox of one message asking for something (a task to file).
ONE_REQUEST = json.dumps(
    {
        "messages": [
            {
                "id": "a1",
                "from": "Sam <sam@x.example>",
                "subject": "Edits",
                "received_at": "2026-11-04T16:00:00+00:00",
                "snippet": "Could you send me your edits by Friday?",
            }
        ]
    }
)


def config(tmp_path: Path, body: str) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(body)
    return {"DAYFLOW_CONFIG": str(path)}


def tasks(db: Path) -> list[dict]:
    res = invoke(db, OFFLINE, "tasks", "--all", "--json")
    return json.loads(res.out) if res.out.strip() else []


def runs(db: Path) -> list[dict]:
    return json.loads(invoke(db, OFFLINE, "runs", "--json").out or "[]")


def test_a_configured_maildir_feeds_the_brief_within_the_window(tmp_path: Path) -> None:
    md = write_maildir(tmp_path / "Mail", 3, start=NEW)
    old = message(99, subject="Ancient request", when=NEW - dt.timedelta(days=3))
    (md / "cur" / f"{int((NEW - dt.timedelta(days=3)).timestamp())}.M1P1Q9.host:2,").write_bytes(
        old
    )
    env = config(tmp_path, f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{md}"\n')
    db = tmp_path / "d.db"
    res = invoke(db, OFFLINE, "brief", "--date", DAY, env=env)
    assert res.code == 0, res.err
    assert "sources from" in res.err and "No sources configured" not in res.err
    filed = tasks(db)
    assert len(filed) == 3  # the 3-day-old message is outside the 24-hour window
    assert all(t["idempotency_key"].startswith("mail:") for t in filed)
    assert all(t["source_id"].startswith("home:") for t in filed)
    assert "Ancient request" not in res.out


def test_a_failing_source_is_named_in_the_brief_and_strict_fails_the_run_resumably(
    tmp_path: Path,
) -> None:
    md = write_maildir(tmp_path / "Mail", 2, start=NEW)
    bad = tmp_path / "old.mbox"
    bad.write_bytes(b"not an mbox at all\n")
    env = config(
        tmp_path,
        f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{md}"\n'
        f'[[inbox]]\nname = "old"\nkind = "mbox"\npath = "{bad}"\n',
    )
    db = tmp_path / "d.db"
    lenient = invoke(db, OFFLINE, "brief", "--date", DAY, env=env)
    assert lenient.code == 0
    assert "Could not read old:" in lenient.out and "not an mbox file" in lenient.out
    assert len(tasks(db)) == 2  # the other source still answered

    strict_db = tmp_path / "strict.db"
    strict = invoke(strict_db, OFFLINE, "brief", "--date", DAY, "--strict-sources", env=env)
    assert strict.code == 4
    error = [x for x in strict.err.splitlines() if x.startswith("error:")]
    assert len(error) == 1 and "old:" in error[0] and "--strict-sources" in error[0]
    [run] = runs(strict_db)
    assert run["status"] == "failed" and "dayflow resume" in run["reason"]
    bad.write_bytes(
        message(5, when=NEW).replace(b"From:", b"From x@y Thu Nov  5 06:00:00 2026\nFrom:", 1)
    )
    resumed = invoke(strict_db, OFFLINE, "resume", env=env)
    assert resumed.code == 0, resumed.err
    assert runs(strict_db)[0]["status"] == "done"
    keys = [t["idempotency_key"] for t in tasks(strict_db)]
    assert len(keys) == len(set(keys)) == 3


def test_resume_reuses_saved_reads_when_the_inbox_file_is_gone(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox.json"
    inbox.write_text(ONE_REQUEST)
    db = tmp_path / "d.db"
    first = invoke(db, OFFLINE, "brief", "--date", DAY, "--inbox", str(inbox), "--crash-after", "1")
    assert first.code == 70
    inbox.unlink()
    resumed = invoke(db, OFFLINE, "resume")
    assert resumed.code == 0, resumed.err  # step 1's reads are saved: nothing to read again
    assert "Could not read" not in resumed.out
    assert [t["title"] for t in tasks(db)] == ["Send edits to Sam"]


@pytest.mark.slow
def test_a_file_gone_before_a_resume_that_must_read_it_fails_resumably_naming_it(
    tmp_path: Path,
) -> None:
    """W6: killed right after step 1's response is committed (its reads not yet run), the
    inbox file deleted: resume must not end `done` with a broken brief."""
    import subprocess
    import sys

    inbox = tmp_path / "inbox.json"
    inbox.write_text(ONE_REQUEST)
    saved = inbox.read_bytes()
    db = tmp_path / "d.db"
    env = subprocess_env(db, DAYFLOW_KILL_AT="after_pending:1")
    cmd = [sys.executable, "-m", "dayflow", "brief", "--date", DAY, "--inbox", str(inbox)]
    killed = subprocess.run(cmd, env=env, capture_output=True, timeout=120, check=False)
    assert killed.returncode == -9
    inbox.unlink()
    env.pop("DAYFLOW_KILL_AT")
    resume = [sys.executable, "-m", "dayflow", "resume"]
    failed = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=120)
    assert failed.returncode == 4
    [line] = [x for x in failed.stderr.splitlines() if x.startswith("error:")]
    assert str(inbox) in line and "does not exist" in line and "dayflow resume" in line
    [run] = runs(db)
    assert run["status"] == "failed" and str(inbox) in run["reason"]
    inbox.write_bytes(saved)
    done = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [t["title"] for t in tasks(db)] == ["Send edits to Sam"]
    assert "Could not read" not in done.stdout


def test_a_task_marked_done_is_not_already_on_the_list_nor_the_one_thing(tmp_path: Path) -> None:
    """W7."""
    db = tmp_path / "d.db"
    assert invoke(db, OFFLINE, "brief", "--date", DAY).code == 0
    first = tasks(db)[0]
    assert invoke(db, OFFLINE, "tasks", "--done", first["id"]).code == 0
    again = invoke(db, OFFLINE, "brief", "--date", DAY, "--new")
    assert again.code == 0
    text = again.out
    one_thing = text.split("One thing", 1)[1]
    assert first["title"] not in one_thing
    assert f"{first['title']}: already on your list" not in text
    assert f"{first['title']}: you already marked it done" in text
    needs = text.split("Needs action", 1)[1].split("Tasks created", 1)[0]
    assert first["title"] not in needs


def test_sample_tasks_have_their_own_keys_and_can_be_cleared(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    assert invoke(db, OFFLINE, "brief", "--date", DAY).code == 0
    inbox = tmp_path / "inbox.json"
    inbox.write_text(
        json.dumps(
            {
                "messages": [
                    {
                        "id": "m12",  # the same id as a sample message: no collision any more
                        "from": "Lee <lee@x.example>",
                        "subject": "Permit",
                        "received_at": "2026-11-04T16:00:00+00:00",
                        "snippet": "Could you sign the permit form by Friday?",
                    }
                ]
            }
        )
    )
    assert invoke(db, OFFLINE, "brief", "--date", DAY, "--inbox", str(inbox), "--new").code == 0
    before = tasks(db)
    mine = [t for t in before if not t["idempotency_key"].startswith("sample:")]
    assert len(mine) == 1 and mine[0]["idempotency_key"].startswith("mail:")
    cleared = invoke(db, OFFLINE, "tasks", "--clear-sample")
    assert cleared.code == 0
    assert cleared.err.strip() == f"deleted {len(before) - 1} sample task(s) from {db}"
    assert tasks(db) == mine


def test_the_mail_window_follows_the_brief_date_not_the_clock(tmp_path: Path) -> None:
    """`brief --date` for a past day reads that day's window (the 24 hours before its moment,
    up to the end of that day); the next brief of today starts where that one stopped
    reading (the end of its day, not the moment it was written); a brief the next morning
    starts where today's began."""
    from dayflow.sources.identity import message_stable_id

    md = write_maildir(tmp_path / "Mail", 0)
    at = {
        "too-old": dt.datetime(2026, 10, 31, 20, 0, tzinfo=dt.UTC),
        "eve": dt.datetime(2026, 11, 1, 20, 0, tzinfo=dt.UTC),
        "on-the-day": dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.UTC),
        "two-days-later": dt.datetime(2026, 11, 4, 20, 0, tzinfo=dt.UTC),
        "early-on-the-5th": dt.datetime(2026, 11, 5, 8, 0, tzinfo=dt.UTC),
        "noon-on-the-5th": dt.datetime(2026, 11, 5, 12, 0, tzinfo=dt.UTC),
    }

    def deliver(n: int, name: str) -> None:
        when = at[name]
        raw = message(n, subject=f"Please review {name}", when=when, message_id=f"<{name}@x>")
        (md / "new" / f"{int(when.timestamp())}.M{n}P1Q1.host").write_bytes(raw)

    for n, name in enumerate(list(at)[:-1]):
        deliver(n, name)
    env = config(tmp_path, f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{md}"\n')
    db = tmp_path / "d.db"

    def filed() -> set[str]:
        sent_by = {name: n for n, name in enumerate(list(at)[:-1])} | {"noon-on-the-5th": 9}
        names = {
            f"home:{message_stable_id(f'<{name}@x>', sender=f's{n}@example.org')}": name
            for name, n in sent_by.items()
        }
        return {names[t["source_id"]] for t in tasks(db)}

    past = invoke(db, OFFLINE, "brief", "--date", "2026-11-02", env=env, clock=f"{DAY}T07:30Z")
    assert past.code == 0, past.err
    assert filed() == {"eve", "on-the-day"}  # not the real clock's last 24 hours

    def windows() -> list[str | None]:
        from dayflow.store import open_store

        with open_store(db) as store:
            return [r.settings.mail_since for r in store.runs.list()]

    assert windows() == ["2026-11-01T07:30:00+00:00"]

    today = invoke(db, OFFLINE, "brief", env=env, clock=f"{DAY}T09:00Z")
    assert today.code == 0, today.err
    assert filed() == {"eve", "on-the-day", "two-days-later", "early-on-the-5th"}

    deliver(9, "noon-on-the-5th")  # arrives after the 5th's brief
    tomorrow = invoke(db, OFFLINE, "brief", env=env, clock="2026-11-06T07:30Z")
    assert tomorrow.code == 0, tomorrow.err
    assert filed() == set(at) - {"too-old"}
    assert windows() == [
        "2026-11-05T09:00:00+00:00",  # where the 5th's brief began
        "2026-11-03T00:00:00+00:00",  # where the brief for the 2nd stopped reading
        "2026-11-01T07:30:00+00:00",
    ]

    check = invoke(db, OFFLINE, "sources", "check", "--date", "2026-11-02", "--json", env=env)
    report = json.loads(check.out)
    assert (report["date"], report["mail_since"]) == ("2026-11-02", "2026-11-01T07:30:00+00:00")
    text = invoke(db, OFFLINE, "sources", "check", "--date", "2026-11-02", env=env)
    assert "a brief for 2026-11-02 reads mail since 2026-11-01T07:30+00:00" in text.err
    bad = invoke(db, OFFLINE, "sources", "check", "--date", "2026-13-01", env=env)
    assert bad.code == 2 and "is not a date" in bad.err
    # The window's ends stay inside datetime's range at both ends of the dates and the zones.
    for edge, zone in (("1900-01-01", "Etc/GMT+12"), ("9998-12-31", "Pacific/Kiritimati")):
        edge_env = env | {"DAYFLOW_TZ": zone}
        res = invoke(tmp_path / "edge.db", OFFLINE, "brief", "--date", edge, env=edge_env)
        assert res.code == 0, (edge, res.err)
        res = invoke(
            tmp_path / "edge.db", OFFLINE, "sources", "check", "--date", edge, env=edge_env
        )
        assert res.code == 0, (edge, res.err)


# --- issue 19.14: a check that passes what every brief would fail ----------------------------


@pytest.mark.parametrize(
    ("delivery", "said"),
    [
        ('[smtp]\nport = 587\nuser = "me@example.org"\n', "[smtp]: needs host"),
        ('[smtp]\nhost = "h"\nport = "x"\nuser = "me@example.org"\n', "port must be a number"),
        ('[smtp]\nhost = "h"\nuser = "me@example.org"\nsecurity = "ssl"\n', "security must be"),
        ('[smtp]\nhost = "h"\nuser = "me"\n', "needs `to` (or `user`) as an address"),
        ('[smtp]\nhost = "h"\nuser = "me@example.org"\nnope = 1\n', "unknown key(s) nope"),
        ('deliver = ["smtp"]\n', "smtp needs an [smtp] table"),
        ('deliver = "file:/tmp/x.md"\n', "deliver must be a list of sinks"),
        ('deliver = ["pigeon"]\n', "'pigeon': use file:PATH"),
    ],
)
def test_sources_check_fails_on_delivery_settings_every_brief_would_fail_on(
    tmp_path: Path, delivery: str, said: str
) -> None:
    md = write_maildir(tmp_path / "Mail", 1)
    source = f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{md}"\n'
    env = config(
        tmp_path,
        delivery.replace("[smtp]", source + "[smtp]", 1)
        if "[smtp]" in delivery
        else delivery + source,
    )
    res = invoke(tmp_path / "d.db", OFFLINE, "sources", "check", env=env)
    assert res.code == 4, res.out + res.err
    (line,) = [x for x in res.out.splitlines() if x.startswith("delivery")]
    assert "error: " in line and said in line
    assert "home" in res.out and "1 message(s)" in res.out  # the sources are still checked
    doc = json.loads(invoke(tmp_path / "d.db", OFFLINE, "sources", "check", "--json", env=env).out)
    assert doc["delivery"]["ok"] is False and said in doc["delivery"]["error"]
    brief = invoke(tmp_path / "d.db", OFFLINE, "brief", env=env)
    assert brief.code != 0 and said in brief.err  # what the check now predicts


class _Logins:
    """aiosmtpd on loopback taking the password `pw-1` (AUTH PLAIN / LOGIN), every login and
    every message kept."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult

        from tests.test_delivery import Inbox, free_port

        self.tried: list[bytes] = []
        self.inbox = Inbox()

        def check(
            server: object, session: object, envelope: object, mech: str, data: object
        ) -> object:
            self.tried.append(data.password)  # type: ignore[attr-defined]
            return AuthResult(success=data.password == b"pw-1", handled=False)  # type: ignore[attr-defined]

        self.port = free_port()
        self.controller = Controller(
            self.inbox, hostname="127.0.0.1", port=self.port, authenticator=check,
            auth_require_tls=False,
        )  # fmt: skip

    def smtp(self, extra: str = "") -> str:
        return (
            f'[smtp]\nhost = "127.0.0.1"\nport = {self.port}\nsecurity = "plain"\n'
            f'user = "me@example.org"\npassword_env = "PW"\n{extra}'
        )


@pytest.fixture
def logins() -> Iterator[_Logins]:
    server = _Logins()
    server.controller.start()
    try:
        yield server
    finally:
        server.controller.stop()


def test_sources_check_logs_in_to_smtp_and_sends_nothing(tmp_path: Path, logins: _Logins) -> None:
    """Issue 32.22: `sources check` never tried [smtp] AUTH, so a wrong password showed only at
    the first brief's delivery. It logs in as a delivery would, and leaves."""
    md = write_maildir(tmp_path / "Mail", 1)
    body = (
        'deliver = ["file:notes/{date}.md", "smtp"]\n'
        f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{md}"\n' + logins.smtp()
    )
    env = {**config(tmp_path, body), "PW": "pw-1"}
    res = invoke(tmp_path / "d.db", OFFLINE, "sources", "check", env=env)
    assert res.code == 0, res.out + res.err
    where = f"127.0.0.1:{logins.port}"
    assert f"file:{tmp_path}/notes/{{date}}.md, smtp ({where}, login accepted)" in res.out
    assert logins.tried == [b"pw-1"] and logins.inbox.messages == []
    res = invoke(tmp_path / "d.db", OFFLINE, "sources", "check", env={**env, "PW": "wrong"})
    assert res.code == 4
    (line,) = [x for x in res.out.splitlines() if x.startswith("delivery")]
    assert f"error: smtp to {where}: the server refused the user name or password (535" in line
    assert "wrong" not in line and logins.inbox.messages == []


def test_a_config_with_only_smtp_does_not_mail_the_sample_brief(
    tmp_path: Path, logins: _Logins
) -> None:
    """Issue 32.22: a config whose only section is [smtp] (deliver = ["smtp"]) mailed the
    bundled sample's brief, made-up mail, to the user's real mailbox."""
    env = {**config(tmp_path, 'deliver = ["smtp"]\n' + logins.smtp()), "PW": "pw-1"}
    res = invoke(tmp_path / "d.db", OFFLINE, "brief", env=env)
    assert res.code == 4, res.out + res.err
    assert "declares no [[inbox]] or [[calendar]], so this brief would be of the bundled" in res.err
    assert "it is not mailed to me@example.org" in res.err and "--deliver smtp" in res.err
    assert logins.inbox.messages == [] and logins.tried == []
    assert not (tmp_path / "d.db").exists()  # refused before a database was made
    asked = invoke(tmp_path / "d.db", OFFLINE, "brief", "--deliver", "smtp", env=env)
    assert asked.code == 0, asked.err  # asked for on the command line: done
    assert len(logins.inbox.messages) == 1


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("", "has no settings (empty, or every entry commented out)"),
        ("STARTER", "has no settings (empty, or every entry commented out)"),
        ('deliver = ["stdout"]\n', "declares no [[inbox]] or [[calendar]]"),
    ],
)
def test_a_config_that_declares_no_source_is_said_plainly(
    tmp_path: Path, body: str, said: str
) -> None:
    """An empty config.toml, or `init`'s starter with every entry commented, made `sources
    check` print nothing and pass, and `brief` read the sample saying `dayflow init` writes a
    config (there is one)."""
    from dayflow.sources.starter import STARTER

    env = config(tmp_path, STARTER if body == "STARTER" else body)
    path = env["DAYFLOW_CONFIG"]
    check = invoke(tmp_path / "d.db", OFFLINE, "sources", "check", env=env)
    assert check.code == 4 and f"error: {path} {said}: nothing to check" in check.err
    brief = invoke(tmp_path / "d.db", OFFLINE, "brief", env=env)
    assert brief.code == 0
    (notice,) = [x for x in brief.err.splitlines() if x.startswith("No sources configured")]
    assert f"({path} {said})" in notice and "dayflow init" not in notice
    assert "add an [[inbox]] there, then `dayflow sources check`" in notice


def test_an_open_task_due_today_from_mail_before_the_window_needs_action(
    tmp_path: Path,
) -> None:
    """Priya asked on the 9th for the 18th; the brief of the 10th filed it. The brief of the
    18th reads mail since the last brief only, so her message is not in it: the task is due
    today all the same, so it is under Needs action (as a task on the list) and the One thing,
    not only a prep line or nothing."""
    from tests.mailkit import deliver, thread_mail

    db, inbox = tmp_path / "d.db", tmp_path / "INBOX"
    when = dt.datetime(2026, 11, 9, 15, 0, tzinfo=dt.UTC)
    ask = "Could you send me the vendor comparison by November 18?"
    deliver(inbox, thread_mail("p1@x", sender="Priya Raman <priya@example.com>",
                               subject="Vendors", body=ask, when=when), when)  # fmt: skip
    config = tmp_path / "config.toml"
    config.write_text(f'[[inbox]]\nname = "work"\nkind = "maildir"\npath = "{inbox}"\n')
    env = {"DAYFLOW_CONFIG": str(config)}
    first = invoke(db, OFFLINE, "brief", "--date", "2026-11-10", env=env,
                   clock="2026-11-10T07:30:00+00:00")  # fmt: skip
    assert first.code == 0, first.err
    [task] = tasks(db)
    assert task["due"] == "2026-11-18"
    later = invoke(db, OFFLINE, "brief", "--date", "2026-11-18", env=env,
                   clock="2026-11-18T07:30:00+00:00")  # fmt: skip
    assert later.code == 0, later.err
    needs = later.out.split("## Needs action", 1)[1].split("##", 1)[0]
    assert f"- {task['title']} (on your task list, due today)" in needs
    assert f"**{task['title']}, due today.**" in later.out.split("## One thing", 1)[1]
    assert len(tasks(db)) == 1  # nothing filed again


def test_the_samples_tasks_never_need_action_in_a_brief_of_your_own_mail(
    tmp_path: Path,
) -> None:
    """A first brief of the bundled sample leaves `sample:` tasks; the next one, of the user's
    own (empty) Maildir, lists none of them as due or overdue: they were never the user's."""
    db, inbox = tmp_path / "d.db", tmp_path / "INBOX"
    assert invoke(db, OFFLINE, "brief", "--date", DAY).code == 0
    assert tasks(db) and all(t["idempotency_key"].startswith("sample:") for t in tasks(db))
    for sub in ("cur", "new", "tmp"):
        (inbox / sub).mkdir(parents=True)
    config = tmp_path / "config.toml"
    config.write_text(f'[[inbox]]\nname = "work"\nkind = "maildir"\npath = "{inbox}"\n')
    env, clock = {"DAYFLOW_CONFIG": str(config)}, "2026-11-09T07:30:00+00:00"
    later = invoke(db, OFFLINE, "brief", "--date", "2026-11-09", env=env, clock=clock)
    assert later.code == 0, later.err
    needs = later.out.split("## Needs action", 1)[1].split("##", 1)[0]
    assert "on your task list" not in needs and "Nothing in the inbox needs you" in needs
