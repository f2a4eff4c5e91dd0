"""Delivering the brief: files, mail over SMTP (a real server on 127.0.0.1 counting messages),
notifications; each a saved effect of the final step, never sent twice across kills."""

from __future__ import annotations

import json
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from email import message_from_bytes
from pathlib import Path
from typing import Any

import pytest

from dayflow import delivery
from dayflow.errors import ConfigFileError
from tests.conftest import dayflow_process, db_rows, is_pg
from tests.harness import Result, invoke, offline_model

DATE = "2026-11-05"


class Inbox:
    """An aiosmtpd handler keeping every message it accepted."""

    def __init__(self) -> None:
        self.messages: list[bytes] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.messages.append(envelope.original_content or envelope.content)
        return "250 Message accepted for delivery"

    def message_ids(self) -> list[str]:
        return [str(message_from_bytes(m)["Message-ID"]) for m in self.messages]


class Refusing(Inbox):
    """An aiosmtpd handler that answers the end of DATA with each of `answers` in turn (then
    250), keeping only the messages it accepted."""

    def __init__(self, *answers: str) -> None:
        super().__init__()
        self.answers = list(answers)
        self.offered = 0  # messages that reached the final `.`

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.offered += 1
        if self.answers:
            return self.answers.pop(0)
        return await super().handle_DATA(server, session, envelope)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SmtpServer:
    def __init__(self, port: int, inbox: Inbox | None = None, **tls: Any) -> None:
        from aiosmtpd.controller import Controller

        self.inbox = inbox or Inbox()
        self.port = port
        self.controller = Controller(self.inbox, hostname="127.0.0.1", port=port, **tls)

    def __enter__(self) -> SmtpServer:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture
def smtp(port: int) -> Iterator[SmtpServer]:
    with SmtpServer(port) as server:
        yield server


def config(tmp_path: Path, port: int, extra: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'{extra}\n[smtp]\nhost = "127.0.0.1"\nport = {port}\nsecurity = "plain"\n'
        'to = "alex@example.org"\nfrom = "dayflow@example.org"\n'
    )
    return path


def run(db: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return invoke(db, offline_model, *args, env=env)


def runs(db: Path) -> list[dict[str, Any]]:
    return json.loads(run(db, "runs", "--json").out)


def shown(db: Path, run_id: str) -> dict[str, Any]:
    return json.loads(run(db, "show", run_id, "--json").out)


def test_file_sink_writes_the_markdown_brief_at_the_dated_path(
    db_path: Path, tmp_path: Path
) -> None:
    target = tmp_path / "vault" / "daily"
    result = run(db_path, "brief", "--deliver", f"file:{target}/{{date}}.md")
    assert result.code == 0, result.err
    note = target / f"{DATE}.md"
    text = note.read_text()
    (done,) = runs(db_path)
    start, end = delivery.section_marks(done["id"])
    assert text.startswith(f"{start}\n# Daily brief") and text.endswith(f"\n{end}\n")
    assert "## One thing" in text
    assert result.out == ""  # stdout is a sink like any other once sinks are named
    assert f"delivered: file:{target}/{{date}}.md: wrote {note}" in result.err
    assert shown(db_path, done["id"])["deliveries"] == [
        {"sink": f"file:{target}/{{date}}.md", "ok": True, "detail": f"wrote {note}"}
    ]
    assert "Delivered" in run(db_path, "show", done["id"]).out


def test_stdout_sink_keeps_the_brief_on_stdout(db_path: Path, tmp_path: Path) -> None:
    result = run(db_path, "brief", "--deliver", "stdout", "--deliver", f"file:{tmp_path}/b.md")
    assert result.code == 0 and "One thing" in result.out
    assert (tmp_path / "b.md").exists()


def test_smtp_sends_one_mail_to_yourself_with_a_chosen_message_id(
    db_path: Path, tmp_path: Path, smtp: SmtpServer
) -> None:
    env = {"DAYFLOW_CONFIG": str(config(tmp_path, smtp.port))}
    result = run(db_path, "brief", "--deliver", "smtp", env=env)
    assert result.code == 0, result.err
    (done,) = runs(db_path)
    assert len(smtp.inbox.messages) == 1
    mail = message_from_bytes(smtp.inbox.messages[0])
    assert mail["To"] == "alex@example.org" and mail["From"] == "dayflow@example.org"
    assert mail["Message-ID"] == f"<dayflow.{done['id']}.{DATE}@example.org>"
    from email import policy
    from email.message import EmailMessage

    parsed = message_from_bytes(smtp.inbox.messages[0], _class=EmailMessage, policy=policy.default)
    plain = parsed.get_body(("plain",))
    assert plain is not None and "One thing" in plain.get_content()
    (d,) = shown(db_path, done["id"])["deliveries"]
    assert d["sink"] == "smtp" and d["ok"] and f"127.0.0.1:{smtp.port}" in d["detail"]


def test_the_mail_is_multipart_alternative_text_then_an_inert_page(
    db_path: Path, tmp_path: Path, smtp: SmtpServer
) -> None:
    """Parsed back with the `email` package: text/plain (the Markdown as before) then
    text/html (the page), both UTF-8 and quoted-printable, and the page fetches nothing."""
    from email import policy
    from email.parser import BytesParser

    from tests.test_page import assert_inert

    env = {"DAYFLOW_CONFIG": str(config(tmp_path, smtp.port))}
    assert run(db_path, "brief", "--deliver", "smtp", env=env).code == 0
    (raw,) = smtp.inbox.messages
    mail = BytesParser(policy=policy.default).parsebytes(raw)
    assert mail.get_content_type() == "multipart/alternative"
    parts = list(mail.iter_parts())
    assert [p.get_content_type() for p in parts] == ["text/plain", "text/html"]
    assert [p.get_content_charset() for p in parts] == ["utf-8", "utf-8"]
    assert [p["Content-Transfer-Encoding"] for p in parts] == ["quoted-printable"] * 2
    text, page = (p.get_content() for p in parts)
    assert text.startswith("# Daily brief: Thursday 5 November 2026\r\n")
    assert (
        page.startswith("<!DOCTYPE html>") and "<h1>Daily brief: Thursday 5 November 2026" in page
    )
    tree = assert_inert(page)
    assert not [h for h in tree.hrefs() if not h.startswith("#")]  # the sample shows no link
    assert mail.get_body(("html",)) is parts[1]


def test_an_unreachable_smtp_server_fails_the_delivery_resumably_naming_the_host(
    db_path: Path, tmp_path: Path, port: int
) -> None:
    env = {"DAYFLOW_CONFIG": str(config(tmp_path, port))}
    result = run(
        db_path, "brief", "--deliver", "smtp", "--deliver", f"file:{tmp_path}/b.md", env=env
    )
    assert result.code == 6
    assert f"delivery failed: smtp to 127.0.0.1:{port}" in result.err
    assert "One thing" in result.out  # not delivered, so printed
    (failed,) = runs(db_path)
    assert failed["status"] == "failed" and f"`dayflow resume {failed['id']}`" in failed["reason"]
    written = (tmp_path / "b.md").stat().st_mtime_ns
    with SmtpServer(port) as server:
        resumed = run(db_path, "resume", env=env)
        assert resumed.code == 0, resumed.err
        assert len(server.inbox.messages) == 1
        again = run(db_path, "resume", failed["id"], env=env)
        assert again.code == 0 and len(server.inbox.messages) == 1
    assert (tmp_path / "b.md").stat().st_mtime_ns == written  # delivered once, not redone
    (done,) = runs(db_path)
    assert done["status"] == "done"
    assert sorted(d["sink"] for d in shown(db_path, done["id"])["deliveries"]) == [
        f"file:{tmp_path}/b.md",
        "smtp",
    ]


@pytest.mark.parametrize("answer", ["451 4.3.0 try again later", "554 5.7.1 rejected"])
def test_a_refused_mail_is_a_failed_send_and_resume_sends_it_again(
    db_path: Path, tmp_path: Path, port: int, answer: str
) -> None:
    """Issue 19.9: a 4xx or 5xx answer to the final `.` means the server did not take the
    message: the delivery failed (not "uncertain"), and resume sends it again with the same
    Message-ID, saying what it delivered."""
    env = {"DAYFLOW_CONFIG": str(config(tmp_path, port))}
    inbox = Refusing(answer)
    with SmtpServer(port, inbox):
        result = run(db_path, "brief", "--deliver", "smtp", env=env)
        assert result.code == 6, result.err
        assert inbox.offered == 1 and inbox.messages == []
        (failed,) = runs(db_path)
        assert failed["status"] == "failed" and "uncertain" not in failed["reason"]
        assert f"the server refused the message ({answer})" in failed["reason"]
        assert shown(db_path, failed["id"])["deliveries"] == []  # nothing delivered yet
        resumed = run(db_path, "resume", env=env)
        assert resumed.code == 0, resumed.err
        assert inbox.offered == 2 and len(inbox.messages) == 1
        assert "delivered: smtp: mailed to alex@example.org" in resumed.err
        again = run(db_path, "resume", failed["id"], env=env)
        assert again.code == 0 and inbox.offered == 2
    (done,) = runs(db_path)
    assert done["status"] == "done" and "uncertain" not in (done["reason"] or "")
    assert inbox.message_ids() == [f"<dayflow.{done['id']}.{DATE}@example.org>"]
    (d,) = shown(db_path, done["id"])["deliveries"]
    assert d["ok"] and "250" in d["detail"]


def test_a_refusal_twice_then_acceptance_sends_once_with_one_message_id(
    db_path: Path, tmp_path: Path, port: int
) -> None:
    env = {"DAYFLOW_CONFIG": str(config(tmp_path, port))}
    inbox = Refusing("451 busy", "452 full")
    with SmtpServer(port, inbox):
        assert run(db_path, "brief", "--deliver", "smtp", env=env).code == 6
        assert run(db_path, "resume", env=env).code == 6
        assert run(db_path, "resume", env=env).code == 0
    (done,) = runs(db_path)
    assert inbox.offered == 3 and len(inbox.messages) == 1
    assert inbox.message_ids() == [f"<dayflow.{done['id']}.{DATE}@example.org>"]


def test_a_connection_lost_after_the_final_dot_is_uncertain_and_never_resent(
    db_path: Path, tmp_path: Path, port: int
) -> None:
    """A server that takes the message and drops the connection before answering: it may have
    arrived, so the delivery is recorded as uncertain at once and no resume sends it again."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", port))
    listener.listen(1)
    got: list[bytes] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            f = conn.makefile("rwb")
            f.write(b"220 hi\r\n")
            f.flush()
            in_data = False
            while line := f.readline():
                got.append(line)
                if in_data:
                    if line == b".\r\n":
                        return  # taken, never answered
                    continue
                in_data = line.upper().startswith(b"DATA")
                f.write(b"354 go\r\n" if in_data else b"250 ok\r\n")
                f.flush()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    env = {"DAYFLOW_CONFIG": str(config(tmp_path, port))}
    try:
        result = run(db_path, "brief", "--deliver", "smtp", env=env)
    finally:
        thread.join(10)
        listener.close()
    assert result.code == 0, result.err
    assert b".\r\n" in got
    (done,) = runs(db_path)
    assert done["status"] == "done" and "uncertain" in done["reason"]
    (d,) = shown(db_path, done["id"])["deliveries"]
    assert not d["ok"] and "connection" in d["detail"] and "not sent again" in d["detail"]
    # Nothing listens any more: a resume that tried to send again would fail (exit 6).
    assert run(db_path, "resume", done["id"], env=env).code == 0
    assert shown(db_path, done["id"])["deliveries"] == [d]


def test_sinks_come_from_the_config_file_too(db_path: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'deliver = ["file:{tmp_path}/notes/{{date}}.md"]\n')
    assert run(db_path, "brief", env={"DAYFLOW_CONFIG": str(cfg)}).code == 0
    assert (tmp_path / "notes" / f"{DATE}.md").exists()


@pytest.mark.parametrize(
    ("sink", "message"),
    [
        ("smtp", "--deliver smtp needs an [smtp] table"),
        ("mailto:me", "use file:PATH"),
        ("file:", "use file:PATH"),
        ("", "use file:PATH"),
    ],
)
def test_a_sink_that_cannot_work_is_refused_before_the_run(
    db_path: Path, sink: str, message: str
) -> None:
    result = run(db_path, "brief", "--deliver", sink)
    assert result.code == 2 and message in result.err
    assert is_pg(db_path) or not db_path.exists() or runs(db_path) == []
    assert not is_pg(db_path) or runs(db_path) == []


def test_a_bad_sink_in_the_config_file_names_the_file_and_its_deliver_key(
    db_path: Path, tmp_path: Path
) -> None:
    """It said `--deliver 'nope:x'`: a flag the user never gave, with the file unnamed."""
    cfg = tmp_path / "config.toml"
    cfg.write_text('deliver = ["nope:x"]\n')
    result = run(db_path, "brief", env={"DAYFLOW_CONFIG": str(cfg)})
    assert result.code == 4, result.err  # a config file's problem, as every other one
    assert f"{cfg}: deliver 'nope:x': use file:PATH" in result.err
    assert "--deliver" not in result.err


def test_an_unwritable_file_sink_fails_resumably(db_path: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    result = run(db_path, "brief", "--deliver", f"file:{blocker}/b.md")
    assert result.code == 6 and f"delivery failed: file {blocker}/b.md" in result.err
    blocker.unlink()
    blocker.mkdir()
    assert run(db_path, "resume").code == 0
    assert (blocker / "b.md").exists()


def test_notify_shows_the_one_thing_once(db_path: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "notified.jsonl"
    fake = bin_dir / "notify-send"
    fake.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": str(bin_dir)}
    assert run(db_path, "brief", "--deliver", "notify", env=env).code == 0
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert call[:2] == ["--app-name=Dayflow", f"Dayflow: brief for {DATE}"]
    assert "Send edits on partnership one-pager to Sam" in call[2]


def test_smtp_config_problems_name_the_key(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    for table, message in (
        ({"port": 25}, "needs host"),
        ({"host": "h", "security": "ssl"}, "security must be one of"),
        ({"host": "h", "port": 70000, "to": "a@b"}, "port must be"),
        ({"host": "h"}, "needs `to`"),
        ({"host": "h", "to": "a@b", "password": "x"}, r"unknown key\(s\) password"),
    ):
        with pytest.raises(ConfigFileError, match=message):
            delivery.smtp_config(table, path)


def test_the_password_comes_from_its_source_and_is_never_stored(
    db_path: Path, tmp_path: Path, smtp: SmtpServer
) -> None:
    cfg = config(tmp_path, smtp.port)
    cfg.write_text(cfg.read_text() + 'user = "alex"\npassword_env = "SMTP_SECRET"\n')
    env = {"DAYFLOW_CONFIG": str(cfg)}
    missing = run(db_path, "brief", "--deliver", "smtp", env=env)
    assert missing.code == 6 and "$SMTP_SECRET is not set" in missing.err
    if is_pg(db_path):
        dumped = "".join(
            str(r) for t in ("runs", "events") for r in db_rows(db_path, f"SELECT * FROM {t}")
        )
        assert "hunter2" not in dumped
    else:
        assert b"hunter2" not in db_path.read_bytes()


# ----------------------------------------------------------------- real kills, real server


def _final_step(tmp_path: Path) -> int:
    """The step at which the offline model writes the brief of a fresh database."""
    probe = tmp_path / "probe.db"
    assert run(probe, "brief", "--date", DATE).code == 0
    return int(runs(probe)[0]["steps"])


@pytest.mark.slow
def test_sigkill_in_the_window_after_a_refusal_is_uncertain_and_not_resent(
    tmp_path: Path, port: int
) -> None:
    """A 451 first (a failed send), then a real SIGKILL while the resumed process is in the
    window of its second attempt: that one is uncertain, reported, and never sent again."""
    db = tmp_path / "dayflow.db"
    cfg = config(tmp_path, port)
    n = _final_step(tmp_path)
    inbox = Refusing("451 later")
    with SmtpServer(port, inbox):
        first = dayflow_process(db, cfg, "brief", "--date", DATE, "--deliver", "smtp")
        assert first.returncode == 6, first.stderr
        killed = dayflow_process(db, cfg, "resume", DAYFLOW_KILL_AT=f"while_sending:{n}")
        assert killed.returncode == -9, killed.stderr
        resumed = dayflow_process(db, cfg, "resume")
        assert resumed.returncode == 0, resumed.stderr
        assert "uncertain" in resumed.stderr
        assert dayflow_process(db, cfg, "resume", runs(db)[0]["id"]).returncode == 0
    assert inbox.offered == 1 and inbox.messages == []  # the kill came before the `.`
    (done,) = runs(db)
    assert done["status"] == "done" and "uncertain" in done["reason"]
    (d,) = shown(db, done["id"])["deliveries"]
    assert not d["ok"] and f"<dayflow.{done['id']}.{DATE}@example.org>" in d["detail"]


# Where a SIGKILL lands in an SMTP delivery, the mails sent after the kill and after the
# resume, and whether the delivery is recorded as done.
SMTP_KILLS = pytest.mark.parametrize(
    ("point", "after_kill", "after_resume", "ok"),
    [
        ("before_send", 0, 1, True),  # intent saved, nothing sent: resume sends it
        ("after_send", 1, 1, False),  # accepted, not recorded: uncertain, never sent again
        ("while_sending", 0, 0, False),  # body sent, `.` not: uncertain, reported, not resent
    ],
)


def kill_then_resume(
    tmp_path: Path, cfg: Path, point: str, sent: Callable[[], int], counts: tuple[int, int]
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """A brief delivered by SMTP killed at `point` of its final step, then resumed; `sent()`
    counts the mails the server took, `counts` after the kill and after the resume."""
    db = tmp_path / "dayflow.db"
    n = _final_step(tmp_path)
    killed = dayflow_process(
        db, cfg, "brief", "--date", DATE, "--deliver", "smtp", DAYFLOW_KILL_AT=f"{point}:{n}"
    )
    assert killed.returncode == -9, killed.stderr
    assert sent() == counts[0]
    resumed = dayflow_process(db, cfg, "resume")
    assert resumed.returncode == 0, resumed.stderr
    assert sent() == counts[1]
    return killed, resumed


@pytest.mark.slow
@SMTP_KILLS
def test_sigkill_during_smtp_delivery_never_sends_twice(
    tmp_path: Path, smtp: SmtpServer, point: str, after_kill: int, after_resume: int, ok: bool
) -> None:
    db = tmp_path / "dayflow.db"
    cfg = config(tmp_path, smtp.port)
    kill_then_resume(
        tmp_path, cfg, point, lambda: len(smtp.inbox.messages), (after_kill, after_resume)
    )
    (done,) = runs(db)
    assert done["status"] == "done"
    (d,) = shown(db, done["id"])["deliveries"]
    assert d["ok"] is ok
    msgid = f"<dayflow.{done['id']}.{DATE}@example.org>"
    assert smtp.inbox.message_ids() == [msgid] * after_resume
    if not ok:
        assert msgid in d["detail"] and "not sent again" in d["detail"]
        assert "uncertain" in done["reason"]
    again = dayflow_process(db, cfg, "resume", done["id"])
    assert again.returncode == 0 and len(smtp.inbox.messages) == after_resume


def test_ensure_today_says_when_the_days_brief_was_not_delivered_to_a_new_sink(
    db_path: Path, tmp_path: Path
) -> None:
    assert run(db_path, "brief").code == 0
    (done,) = runs(db_path)
    again = run(db_path, "brief", "--ensure-today", "--deliver", f"file:{tmp_path}/b.md")
    assert again.code == 0
    assert f"note: run {done['id']} was started without delivering to file:{tmp_path}/b.md" in (
        again.err
    )
    assert not (tmp_path / "b.md").exists()


# ------------------------------------------------------------------------------------- TLS


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (the server's; the client trusts it by cafile)."""
    import shutil

    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed: cannot make a certificate for the TLS server")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def _server_context(cert: Path, key: Path) -> Any:
    import ssl

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


@pytest.mark.parametrize("security", ["starttls", "tls"])
def test_smtp_over_tls_trusts_the_servers_certificate_through_cafile(
    db_path: Path, tmp_path: Path, port: int, certificate: tuple[Path, Path], security: str
) -> None:
    cert, key = certificate
    context = _server_context(cert, key)
    tls = (
        {"tls_context": context, "require_starttls": True}
        if security == "starttls"
        else {"ssl_context": context}
    )
    cfg = config(tmp_path, port)
    cfg.write_text(
        cfg.read_text().replace('security = "plain"', f'security = "{security}"')
        + 'cafile = "cert.pem"\n'
    )
    with SmtpServer(port, **tls) as server:
        result = run(db_path, "brief", "--deliver", "smtp", env={"DAYFLOW_CONFIG": str(cfg)})
        assert result.code == 0, result.err
        assert len(server.inbox.messages) == 1


def test_an_untrusted_certificate_fails_the_delivery_naming_the_host(
    db_path: Path, tmp_path: Path, port: int, certificate: tuple[Path, Path]
) -> None:
    context = _server_context(*certificate)
    cfg = config(tmp_path, port)
    cfg.write_text(cfg.read_text().replace('security = "plain"', 'security = "starttls"'))
    with SmtpServer(port, tls_context=context, require_starttls=True) as server:
        result = run(db_path, "brief", "--deliver", "smtp", env={"DAYFLOW_CONFIG": str(cfg)})
        assert result.code == 6
        assert f"delivery failed: smtp to 127.0.0.1:{port}" in result.err
        assert "CERTIFICATE_VERIFY_FAILED" in result.err
        assert server.inbox.messages == []


def test_a_note_keeps_the_users_lines_and_a_later_brief_is_added_below(
    db_path: Path, tmp_path: Path
) -> None:
    note = tmp_path / f"{DATE}.md"
    note.write_text("# Thursday\nmy own notes\n")
    sink = f"file:{tmp_path}/{{date}}.md"
    assert run(db_path, "brief", "--deliver", sink).code == 0
    morning = note.read_text()
    assert morning.startswith("# Thursday\nmy own notes\n\n<!-- dayflow brief ")
    update = run(db_path, "brief", "--deliver", sink)  # the second brief: an update
    assert update.code == 0 and "added to" in update.err
    first, second = runs(db_path)[::-1]
    text = note.read_text()
    assert text.startswith(morning)  # the morning's brief and the user's lines untouched
    assert text.index(delivery.section_marks(first["id"])[0]) < text.index(
        delivery.section_marks(second["id"])[0]
    )


def test_a_redone_file_delivery_gives_the_same_bytes() -> None:
    once, verb = delivery.with_section("mine\n", "abc", "# Brief\n\nbody\n")
    assert verb == "added to"
    twice, verb = delivery.with_section(once, "abc", "# Brief\n\nbody\n")
    assert twice == once and verb == "updated its section in"
    other, _ = delivery.with_section(once + "later line\n", "abc", "# New\n")
    start, end = delivery.section_marks("abc")
    assert other == f"mine\n\n{start}\n# New\n{end}\nlater line\n"


def test_a_section_whose_end_mark_the_user_deleted_never_swallows_their_lines() -> None:
    start, end = delivery.section_marks("abc")
    broken = f"{start}\nold brief\nmy notes after it\n"
    once, _ = delivery.with_section(broken, "abc", "new brief")
    assert once.startswith(broken)
    twice, _ = delivery.with_section(once, "abc", "new brief")
    assert twice == once


def test_sinks_and_smtp_come_from_the_file_named_by_config_and_resume_keeps_it(
    db_path: Path, tmp_path: Path, port: int
) -> None:
    """`--config FILE` is the file deliveries read too, and a resumed run reads the [smtp]
    table of the file its brief was started with (not the default one)."""
    from tests.mailkit import write_maildir

    md = write_maildir(tmp_path / "Mail", 1)  # a source: a config without one mails no sample
    inbox = f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{md}"\n'
    cfg = config(
        tmp_path, port, extra=f'deliver = ["smtp", "file:{tmp_path}/n/{{date}}.md"]\n{inbox}'
    )
    result = run(db_path, "brief", "--config", str(cfg))
    assert result.code == 6 and f"smtp to 127.0.0.1:{port}" in result.err
    assert (tmp_path / "n" / f"{DATE}.md").exists()
    with SmtpServer(port) as server:
        resumed = run(db_path, "resume")
        assert resumed.code == 0, resumed.err
        assert len(server.inbox.messages) == 1


def test_a_config_file_that_is_not_utf8_is_one_line_and_exit_4(
    db_path: Path, tmp_path: Path
) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_bytes(b"\xff\xfe deliver = 1")
    result = run(db_path, "brief", env={"DAYFLOW_CONFIG": str(cfg)})
    assert result.code == 4 and result.err.strip().endswith(f"{cfg}: is not UTF-8 text")
    assert "Traceback" not in result.err


# ------------------------------------------------------ what reaches the wire (issue 19)


def _cfg(**overrides: Any) -> delivery.SmtpConfig:
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 25,
        "security": "plain",
        "user": None,
        "sender": "dayflow@example.org",
        "to": ("alex@example.org",),
    }
    return delivery.SmtpConfig(**{**values, **overrides})


def test_an_smtp_value_with_a_line_break_is_refused_in_the_config_naming_the_key(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.toml"
    base = {"host": "h", "to": "a@example.org"}
    for key, value in (
        ("to", "a@example.org\r\nRCPT TO:<b@example.org>"),
        ("to", ["a@example.org", "b@example.org\nDATA"]),
        ("from", "me@example.org\rX"),
        ("user", "alex\x00"),
        ("host", "smtp.example.org\nEHLO x"),
    ):
        with pytest.raises(ConfigFileError) as caught:
            delivery.smtp_config({**base, key: value}, path)
        line = str(caught.value)
        assert f"`{key}`" in line and "line break or NUL" in line and "\n" not in line


def test_a_line_break_that_reaches_the_sender_is_never_sent(smtp: SmtpServer) -> None:
    """The defensive check where the command is written: whatever built the config."""
    for cfg in (
        _cfg(port=smtp.port, to=("alex@example.org>\r\nRCPT TO:<eve@example.org",)),
        _cfg(port=smtp.port, sender="dayflow@example.org\r\nRSET"),
        _cfg(port=smtp.port, user="alex\nAUTH x"),
    ):
        with pytest.raises(delivery.DeliveryFailed, match="holds a line break; not sent"):
            delivery.send_mail(cfg, "pw", b"Subject: x\r\n\r\nhi\r\n", lambda: None)
    with pytest.raises(delivery.DeliveryFailed, match="password holds a line break") as caught:
        delivery.send_mail(_cfg(port=smtp.port, user="a"), "pw\r\nQUIT", b"x\r\n", lambda: None)
    assert "pw" not in str(caught.value).split(":", 1)[1].replace("password", "")
    assert smtp.inbox.messages == []


class _Refusing(Inbox):
    async def handle_RCPT(  # noqa: N802 (aiosmtpd's name)
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        return "550 5.1.1 <" + address + ">: no such user here"


def test_an_smtp_refusal_is_one_human_line_without_python_reprs(port: int) -> None:
    """SMTP errors printed `{'a@b': (550, b'...')}`: now what was refused, in the server's
    words."""
    from aiosmtpd.controller import Controller

    controller = Controller(_Refusing(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        with pytest.raises(delivery.DeliveryFailed) as caught:
            delivery.send_mail(_cfg(port=port), None, b"Subject: x\r\n\r\nhi\r\n", lambda: None)
    finally:
        controller.stop()
    line = str(caught.value)
    assert line == (
        f"smtp to 127.0.0.1:{port}: the server refused the recipient alex@example.org "
        "(550 5.1.1 <alex@example.org>: no such user here)"
    )


def test_a_password_that_is_not_ascii_logs_in_with_auth_plain_in_utf8(port: int) -> None:
    """`PW='pässwörd'` was an internal error (smtplib encodes AUTH in ASCII)."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    seen: list[tuple[bytes, bytes]] = []

    def check(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
        seen.append((data.login, data.password))
        return AuthResult(success=data.password == "pässwörd".encode(), handled=False)

    inbox = Inbox()
    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=port,
        authenticator=check,
        auth_require_tls=False,
    )
    controller.start()
    try:
        reply = delivery.send_mail(
            _cfg(port=port, user="alex"), "pässwörd", b"Subject: x\r\n\r\nhi\r\n", lambda: None
        )
        assert reply.startswith("250") and len(inbox.messages) == 1
        with pytest.raises(delivery.DeliveryFailed) as caught:
            delivery.send_mail(
                _cfg(port=port, user="alex"), "pässwort", b"Subject: x\r\n\r\n", lambda: None
            )
    finally:
        controller.stop()
    assert seen == [(b"alex", "pässwörd".encode()), (b"alex", "pässwort".encode())]
    line = str(caught.value)
    assert "refused the user name or password (535" in line and "pässw" not in line


# ------------------------------------------------------------ a note's sections (issue 19.21)


@pytest.mark.parametrize(
    ("note", "brief", "merged"),
    [
        pytest.param(
            "my notes\n{end}\nmore of mine\n\n{start}\nold brief\n{end}\ntail\n",
            "new brief",
            "my notes\n{end}\nmore of mine\n\n{start}\nnew brief\n{end}\ntail\n",
            id="an orphan end mark before the section never makes redelivery append",
        ),
        pytest.param(
            "top\n{start}\nold brief\n{end}\nmiddle\n{start}\nold brief\n{end}\nbottom\n",
            "new",
            "top\n{start}\nnew\n{end}\nmiddle\nbottom\n",
            id="a duplicated section is replaced once and its copy removed",
        ),
        pytest.param(
            "mine\r\n\r\n{start}\r\nold\r\n{end}  \r\nafter\r\n",
            "# Brief\n\nbody\n",
            "mine\r\n\r\n{start}\r\n# Brief\r\n\r\nbody\r\n{end}\r\nafter\r\n",
            id="a crlf note is replaced in place with its own line ends",
        ),
    ],
)
def test_a_notes_section_is_replaced_in_place_once(note: str, brief: str, merged: str) -> None:
    start, end = delivery.section_marks("abc")
    note, merged = (text.format(start=start, end=end) for text in (note, merged))
    updated, verb = delivery.with_section(note, "abc", brief)
    assert verb == "updated its section in"
    assert updated == merged
    assert delivery.with_section(updated, "abc", brief)[0] == merged
    added, verb = delivery.with_section("mine\r\n", "xyz", "b")
    assert verb == "added to" and "\n" not in added.replace("\r\n", "")


def test_a_note_whose_last_line_is_the_end_mark_without_a_newline_is_replaced() -> None:
    start, end = delivery.section_marks("abc")
    merged, verb = delivery.with_section(f"x\n{start}\nold\n{end}", "abc", "new")
    assert verb == "updated its section in" and merged == f"x\n{start}\nnew\n{end}\n"


def test_a_brief_that_writes_a_section_mark_cannot_break_its_note(tmp_path: Path) -> None:
    """The model's text is made inert, so a mark it writes is no mark: the next delivery of the
    same run still replaces exactly its section."""
    start, end = delivery.section_marks("abc")
    brief = delivery.Brief("abc", DATE, f"# Brief\n{end}\nafter the fake end\n{start}\n")
    sink = f"file:{tmp_path}/n.md"
    note = tmp_path / "n.md"
    note.write_text("mine\n")
    report = delivery.deliver_all([sink], brief, _Log(), delivery.Settings())
    assert report.failed == []
    once = note.read_text()
    delivery.deliver_all([sink], brief, _Log(), delivery.Settings())
    assert note.read_text() == once and once.count(end) == 1


class _Log:
    def __init__(self) -> None:
        self.saved: dict[str, tuple[str, bool]] = {}

    def get(self, key: str) -> tuple[str, bool] | None:
        return self.saved.get(key)

    def save(self, key: str, content: str, is_error: bool = False) -> None:
        self.saved[key] = (content, is_error)


def test_a_same_day_update_in_a_note_is_labelled_with_its_time(
    db_path: Path, tmp_path: Path
) -> None:
    note = tmp_path / f"{DATE}.md"
    sink = f"file:{tmp_path}/{{date}}.md"
    assert run(db_path, "brief", "--deliver", sink).code == 0
    assert run(db_path, "brief", "--deliver", sink).code == 0  # the day's update
    first, second = runs(db_path)[::-1]
    text = note.read_text()
    morning = text.split(delivery.section_marks(second["id"])[0])[0]
    update = text.split(delivery.section_marks(second["id"])[0])[1]
    heading = "# Daily brief: Thursday 5 November 2026"
    assert f"{heading}\n" in morning and "Update" not in morning
    assert f"{heading} — Update 07:30\n" in update  # the clock of the harness, in UTC


def test_an_updates_mail_says_so_in_its_subject(
    db_path: Path, tmp_path: Path, smtp: SmtpServer
) -> None:
    env = {"DAYFLOW_CONFIG": str(config(tmp_path, smtp.port))}
    assert run(db_path, "brief", "--deliver", "smtp", env=env).code == 0
    assert run(db_path, "brief", "--deliver", "smtp", env=env).code == 0
    subjects = [message_from_bytes(m)["Subject"] for m in smtp.inbox.messages]
    assert subjects == [
        "Dayflow: your brief for Thursday 5 November 2026",
        "Dayflow: update 07:30 of your brief for Thursday 5 November 2026",
    ]


def test_markdown_on_stdout_is_made_inert_as_a_file_is(db_path: Path, tmp_path: Path) -> None:
    """`dayflow brief > brief.md` is rendered by a notes app: an image (whose address can
    carry inbox data), a link the mail never showed and raw HTML are made inert, while a link
    the run read in the mail is kept, exactly as `--deliver file:` writes them."""
    from tests.scripted import ScriptedModel, text, tool_use, turn

    inbox = tmp_path / "inbox.json"
    body = "The doc is at https://docs.example/q4 and please review it."
    message = {"id": "a1", "from": "Sam <sam@x.example>", "subject": "Q4", "body": body}
    message["received_at"] = "2026-11-05T06:00:00+00:00"
    inbox.write_text(json.dumps({"messages": [message]}))
    written = (
        "# Daily brief\n\n## One thing\n\nReview [the Q4 doc](https://docs.example/q4).\n"
        "![x](http://evil.example/?q=secret) [prize](http://evil.example/win) "
        "<img src=http://evil.example/p.png>\n"
    )
    turns = [turn(tool_use("read_inbox", {"limit": 20})), turn(text(written))]
    model = ScriptedModel(turns)
    result = invoke(
        db_path, lambda *a: model, "brief", "--inbox", str(inbox), "--format", "markdown"
    )
    assert result.code == 0, result.err
    assert "[the Q4 doc](https://docs.example/q4)" in result.out
    assert "evil.example" not in result.out.replace("&lt;img", "")
    assert "![" not in result.out and "<img" not in result.out
    assert "Review [the Q4 doc]" in result.out and "x prize" in result.out


@pytest.mark.parametrize(
    ("content", "said"), [(b"\xff\xfe not text", "is not UTF-8 text"), (None, "larger than 8 MB")]
)
def test_a_note_that_cannot_be_merged_is_named_once_and_left_as_it_was(
    tmp_path: Path, content: bytes | None, said: str
) -> None:
    """The failure read 'file N: file N is larger than 8 MB': the path twice."""
    note = tmp_path / "n.md"
    if content is None:
        with note.open("wb") as fh:
            fh.truncate(9 * 2**20)  # sparse: nine MB of nothing
    else:
        note.write_bytes(content)
    before = note.stat()
    brief = delivery.Brief("abc", DATE, "# Brief\n")
    report = delivery.deliver_all([f"file:{note}"], brief, _Log(), delivery.Settings())
    (line,) = report.failed
    assert line.count(str(note)) == 1 and said in line, line
    assert note.stat().st_size == before.st_size and note.stat().st_mtime == before.st_mtime
