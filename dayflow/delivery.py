"""Delivering a finished brief where the user reads: a Markdown file (a note in a vault), mail
to themselves over SMTP, a desktop notification, stdout.

Each delivery is a saved effect of the run's final step, keyed `deliver:<sink>`, made while the
driver still holds the run's lease and before the run is marked done. So a kill during delivery
leaves a pending final step, and `dayflow resume` finishes it: every sink with a saved outcome
is skipped, the rest are delivered. A failed delivery (an unreachable SMTP server) leaves the
run `failed` with the sink and host named, and `resume` tries that sink again.

What "never twice" means, per sink:

- `file:PATH` and `stdout` are idempotent, so they are simply redone when no outcome was
  saved. A file holds each run's brief in its own section between two comment lines: a redone
  delivery replaces that section with the same bytes (an atomic rename), and a later brief of
  the day (an update) is added below; the user's own lines in the note are never touched.
- `smtp` cannot make sending and recording one transaction. So: (1) an intent is saved with the
  Message-ID chosen for this (run, sink) before connecting; (2) the envelope and the body go to
  the server, but not the final `.` that makes it accept the message; (3) a `sending` mark is
  saved; (4) the `.` is sent and the server's 250 read; (5) the outcome is saved. A kill before
  (3) means the server never accepted anything: resume sends again, with the same Message-ID.
  A kill after (3) and before (5), one network round trip, means the server may have accepted
  it: resume does **not** send again; it records the delivery as *uncertain*, naming the
  Message-ID to look for, and says so in `show` and the run's note. Dayflow never sends a
  brief twice; in that one window it may, instead, not know whether it sent it once. A 4xx or
  5xx answer to the `.` is no such doubt: the server did not take the message, so a `refused`
  mark closes the attempt, the delivery fails (resumably), and resume makes attempt 2 (its
  marks `#sending.2`, `#refused.2`) with the same Message-ID. A connection lost after the `.`
  and before any answer is the window itself: recorded as uncertain at once, never resent.
- `notify` is the same with no intent step: a `sending` mark, then the notification, then the
  outcome; a kill in between is reported as uncertain, never shown twice; a notifier that
  exits non-zero showed nothing, and resume tries again.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dayflow.clock import Clock, SystemClock
from dayflow.errors import DayflowError, UsageError
from dayflow.listing import plain

if TYPE_CHECKING:
    from dayflow.sources.oauth import Credential

SINK_KINDS = ("file", "smtp", "notify", "stdout")
KEY_PREFIX = "deliver:"
EFFECT_NAME = "deliver"
SECURITY_MODES = ("tls", "starttls", "plain")


class DeliveryFailed(DayflowError):
    """One sink could not be delivered to (the message names the sink and where)."""

    exit_code = 6


def parse_sink(value: str, base: Path | None = None) -> str:
    """A sink as the user wrote it, checked: `file:PATH`, `smtp`, `notify` or `stdout`. A
    file's path is made absolute (against `base`, else the current directory) now, so a
    resume or a timer elsewhere writes the same file."""
    text = (value or "").strip()
    kind, sep, rest = text.partition(":")
    if kind == "file" and sep and rest.strip():
        from dayflow.sources.spec import variable_in_path

        if why := variable_in_path(rest):
            raise UsageError(f"--deliver {value!r}: the path {why}")
        path = Path(rest.strip()).expanduser()
        if not path.is_absolute():
            path = (base or Path.cwd()) / path
        return f"file:{path}"
    if text in ("smtp", "notify", "stdout"):
        return text
    raise UsageError(f"--deliver {value!r}: use file:PATH (with {{date}}), smtp, notify or stdout")


def file_target(sink: str, brief_date: str) -> Path:
    """Where `file:PATH` writes for the brief of `brief_date` (`{date}` becomes it)."""
    return Path(sink.partition(":")[2].replace("{date}", brief_date)).expanduser()


@dataclass(frozen=True)
class SmtpConfig:
    """The `[smtp]` table of the config file. Holds where the password comes from, never the
    password itself."""

    host: str
    port: int
    security: str
    user: str | None
    sender: str
    to: tuple[str, ...]
    password_command: str | None = None
    password_env: str | None = None
    timeout: float = 30.0
    cafile: str | None = None  # a CA bundle to trust instead of the system's (self-hosted)
    auth: str = "password"  # password | xoauth2 | oauthbearer (sources.oauth)
    token_command: str | None = None
    token_env: str | None = None

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"


def smtp_config(table: object, path: Path) -> SmtpConfig:
    """Validate an `[smtp]` table; a UsageError names the file and the key."""
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [smtp] must be a table")
    known = {"host", "port", "security", "user", "from", "to", "password_command"}
    known |= {"password_env", "timeout", "cafile", "auth", "token_command", "token_env"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise UsageError(f"{path}: [smtp] has unknown key(s) {', '.join(unknown)}")
    host = table.get("host")
    if not isinstance(host, str) or not host.strip():
        raise UsageError(f"{path}: [smtp] needs host")
    security = table.get("security", "starttls")
    if security not in SECURITY_MODES:
        raise UsageError(f"{path}: [smtp] security must be one of {', '.join(SECURITY_MODES)}")
    default_port = {"tls": 465, "starttls": 587, "plain": 25}[security]
    port = table.get("port", default_port)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise UsageError(f"{path}: [smtp] port must be a number from 1 to 65535")
    user = table.get("user")
    to = table.get("to", user)
    recipients = (to,) if isinstance(to, str) else tuple(to) if isinstance(to, list) else ()
    from dayflow.sources.wire import WHY, breaks_line

    sent = (("host", host), ("user", user), ("to", recipients), ("from", table.get("from")))
    for key, value in sent:
        texts = value if isinstance(value, tuple) else (value,)
        if any(isinstance(v, str) and breaks_line(v) for v in texts):
            raise UsageError(f"{path}: [smtp] `{key}` {WHY} (an SMTP command); refused")
    if not recipients or not all(isinstance(r, str) and "@" in r for r in recipients):
        raise UsageError(f"{path}: [smtp] needs `to` (or `user`) as an address")
    sender = table.get("from", user or recipients[0])
    if not isinstance(sender, str) or "@" not in sender:
        raise UsageError(f"{path}: [smtp] `from` must be an address")
    timeout = table.get("timeout", 30)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not 0 < timeout <= 600:
        raise UsageError(f"{path}: [smtp] timeout must be seconds, from 1 to 600")
    for key in ("password_command", "password_env", "cafile", "token_command", "token_env"):
        if key in table and not isinstance(table[key], str):
            raise UsageError(f"{path}: [smtp] {key} must be a string")
    from dayflow.sources.oauth import auth_problems

    mechanism, wrong = auth_problems(table)
    if wrong:
        raise UsageError(f"{path}: [smtp] {wrong[0]}")
    if mechanism not in (None, "password") and not isinstance(user, str):
        raise UsageError(f'{path}: [smtp] auth = "{mechanism}" needs `user` (whose token it is)')
    cafile = None
    if "cafile" in table:
        from dayflow.sources.spec import variable_in_path

        if why := variable_in_path(table["cafile"]):
            raise UsageError(f"{path}: [smtp] cafile {why}")
        ca = Path(table["cafile"]).expanduser()
        cafile = str(ca if ca.is_absolute() else path.parent / ca)
    return SmtpConfig(
        host=host.strip(),
        port=port,
        security=security,
        user=user if isinstance(user, str) else None,
        sender=sender,
        to=recipients,
        password_command=table.get("password_command"),
        password_env=table.get("password_env"),
        timeout=float(timeout),
        cafile=cafile,
        auth=mechanism or "password",
        token_command=table.get("token_command"),
        token_env=table.get("token_env"),
    )


@dataclass(frozen=True)
class Settings:
    """How deliveries are made: the config file's [smtp] table, the environment (PATH, the
    password's variable), the platform and the clock (the mail's Date)."""

    smtp: SmtpConfig | None = None
    env: Mapping[str, str] | None = None
    platform: str = sys.platform
    clock: Clock = field(default_factory=SystemClock)
    config: Path | None = None  # the config file these came from (named in errors)


def from_document(
    data: Mapping[str, Any] | None,
    path: Path,
    env: Mapping[str, str],
    clock: Clock | None = None,
) -> tuple[list[str], Settings]:
    """The `deliver = [...]` sinks and the `[smtp]` table of the config file at `path` whose
    TOML document is `data` (None: there is no file; no sinks then). The document is the one
    the sources come from (`config.Config.document`): one file, read once."""
    clock = clock or SystemClock()
    if data is None:
        return [], Settings(env=env, clock=clock, config=path)
    sinks = data.get("deliver", [])
    if not isinstance(sinks, list) or not all(isinstance(s, str) for s in sinks):
        raise UsageError(
            f'{path}: deliver must be a list of sinks, e.g. ["file:~/notes/{{date}}.md"]'
        )
    smtp = smtp_config(data["smtp"], path) if "smtp" in data else None
    return [parse_sink(s, path.parent) for s in sinks], Settings(
        smtp=smtp, env=env, clock=clock, config=path
    )


def check(sinks: list[str], settings: Settings) -> None:
    """Refuse, before a run starts, sinks that cannot work (smtp with no [smtp] table)."""
    if "smtp" in sinks and settings.smtp is None:
        raise UsageError(
            f"--deliver smtp needs an [smtp] table (host, user, password_command or "
            f"password_env) in {settings.config or 'the config file'}"
        )


# --------------------------------------------------------------------------------- the log


class EffectLog(Protocol):
    """The saved effects of the run's final step, as the store keeps them."""

    def get(self, key: str) -> tuple[str, bool] | None: ...

    def save(self, key: str, content: str, is_error: bool = False) -> None: ...


@dataclass(frozen=True)
class Brief:
    run_id: str
    brief_date: str
    text: str
    # The addresses the run read in the user's own mail and calendar (dayflow.shown): the only
    # links a file or a mail keeps (dayflow.safe_text).
    links: frozenset[str] = frozenset()
    # "Update 14:05" for a later brief of the day (an update), so that a note holding the
    # morning's brief and its updates tells them apart; None for the day's brief.
    label: str | None = None

    @property
    def inert(self) -> str:
        """The text as a file or a mail carries it: escapes, images and foreign links inert,
        and an update's label on its first heading (or above it, when it starts with none)."""
        from dayflow.safe_text import inert_markdown

        text = inert_markdown(self.text, self.links)
        if self.label is None:
            return text
        head, sep, rest = text.lstrip("\n").partition("\n")
        if re.match(r"#{1,6} ", head):
            return f"{head.rstrip()} — {self.label}{sep}{rest}"
        return f"## {self.label}\n\n{text}"


@dataclass
class Report:
    """What one pass over the sinks did."""

    delivered: list[str]
    uncertain: list[str]
    failed: list[str]


def deliver_all(
    sinks: list[str],
    brief: Brief,
    log: EffectLog,
    settings: Settings,
    kill: Callable[[str], None] = lambda point: None,
) -> Report:
    """Deliver `brief` to each sink that has no saved outcome yet; see the module docstring
    for what a kill at each point leaves."""
    report = Report([], [], [])
    for sink in sinks:
        key = KEY_PREFIX + sink
        if log.get(key) is not None:
            continue
        try:
            if sink == "stdout":
                detail = "printed on stdout"
            elif sink.startswith("file:"):
                detail = _to_file(sink, brief)
            else:
                attempt, in_doubt = _attempt(log, key)
                if in_doubt:  # killed between its `sending` mark and the answer
                    note = _uncertain(sink, log)
                    log.save(key, note, is_error=True)
                    report.uncertain.append(note)
                    continue
                if sink == "smtp":
                    detail = _to_smtp(brief, log, key, settings, kill, attempt)
                else:
                    detail = _to_notify(brief, log, key, settings, kill, attempt)
        except DeliveryFailed as exc:
            report.failed.append(str(exc))
            continue
        except Unanswered as exc:
            log.save(key, str(exc), is_error=True)
            report.uncertain.append(str(exc))
            continue
        kill("after_send")
        log.save(key, detail)
        report.delivered.append(f"{sink}: {detail}")
    return report


class Unanswered(Exception):
    """The connection was lost after the message was handed over, before the server answered:
    it may have been accepted, so it is recorded as uncertain and never sent again."""


def mark_key(key: str, what: str, attempt: int) -> str:
    """The saved mark `what` (sending, refused) of attempt `attempt` at delivering `key`; the
    first attempt's marks carry no number (as before attempts were counted)."""
    return f"{key}#{what}" if attempt == 1 else f"{key}#{what}.{attempt}"


def _attempt(log: EffectLog, key: str) -> tuple[int, bool]:
    """(the attempt to make next, whether the last one is in doubt). An attempt with a
    `sending` mark and no `refused` mark was cut off while the server could have accepted it;
    one the server answered with a refusal is over, and the next attempt sends again."""
    attempt = 1
    while log.get(mark_key(key, "sending", attempt)) is not None:
        if log.get(mark_key(key, "refused", attempt)) is None:
            return attempt, True
        attempt += 1
    return attempt, False


def _uncertain(sink: str, log: EffectLog) -> str:
    intent = log.get(KEY_PREFIX + sink + "#intent")
    msgid = json.loads(intent[0]).get("message_id") if intent else None
    what = f" (look for Message-ID {msgid})" if msgid else ""
    return (
        f"uncertain: a process was killed while {sink} was being delivered; it may have "
        f"arrived{what}, and is not sent again"
    )


def _to_file(sink: str, brief: Brief) -> str:
    from dayflow import files

    target = file_target(sink, brief.brief_date)
    try:
        st = target.stat()
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        # A FIFO would block the brief for ever, a device or socket is no note.
        raise DeliveryFailed(f"file {target}: it is {files.kind_of(st.st_mode)}, not a note")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            existing = files.read_text(target, "file")
        except DayflowError:
            if target.exists():
                raise
            existing = ""
        merged, verb = with_section(existing, brief.run_id, brief.inert)
        if merged != existing:
            files.write_atomic(target, merged.encode("utf-8"))
    except (OSError, DayflowError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise DeliveryFailed(f"file {target}: {reason}") from None
    return f"{verb} {target}"


def section_marks(run_id: str) -> tuple[str, str]:
    """The comment lines around one run's brief in a note (hidden by Markdown renderers)."""
    return f"<!-- dayflow brief {run_id} -->", f"<!-- end of dayflow brief {run_id} -->"


def with_section(existing: str, run_id: str, text: str) -> tuple[str, str]:
    """The note with run `run_id`'s brief in it: its section replaced where it already is
    (a redone delivery gives the same bytes), else appended. Everything else in the note, the
    user's own lines and other runs' briefs (the morning's, before an update), is kept.

    A section is a start mark line and the next end mark line with no other start mark of the
    run between (marks matched as whole lines, surrounding spaces ignored): an end mark with no
    start before it, or a start whose end the user deleted, is the user's text and never makes
    a replacement swallow lines. A section found twice (a synced copy) is kept once. The note's
    own line ends (CRLF or LF) are used for the section."""
    start, end = section_marks(run_id)
    nl = "\r\n" if "\r\n" in existing else "\n"
    body = nl.join(text.replace("\r\n", "\n").rstrip().split("\n"))
    section = f"{start}{nl}{body}{nl}{end}{nl}"
    lines = existing.splitlines(keepends=True)
    spans = _sections(lines, start, end)
    if spans:
        dropped = {k for i, j in spans[1:] for k in range(i, j + 1)}
        first, last = spans[0]
        kept = [line for k, line in enumerate(lines) if k not in dropped and not first <= k <= last]
        merged = "".join(kept[:first] + [section] + kept[first:])
        return merged, "updated its section in"
    if not existing:
        return section, "wrote"
    sep = "" if existing.endswith(nl * 2) else nl if existing.endswith(nl) else nl * 2
    return existing + sep + section, "added to"


def _sections(lines: list[str], start: str, end: str) -> list[tuple[int, int]]:
    """The (start line, end line) of each well-formed section of the run, in order."""
    spans, opened = [], None
    for k, line in enumerate(lines):
        mark = line.strip()
        if mark == start:
            opened = k  # a start with no end before the next start is the user's text
        elif mark == end and opened is not None:
            spans.append((opened, k))
            opened = None
    return spans


def message_id(brief: Brief, host: str) -> str:
    """The Message-ID of a run's brief mail: chosen once, the same on every retry."""
    domain = re.sub(r"[^A-Za-z0-9.-]", "", host) or "dayflow.invalid"
    return f"<dayflow.{brief.run_id}.{brief.brief_date}@{domain}>"


def _to_smtp(
    brief: Brief,
    log: EffectLog,
    key: str,
    settings: Settings,
    kill: Callable[[str], None],
    attempt: int = 1,
) -> str:
    cfg = settings.smtp
    if cfg is None:
        raise DeliveryFailed("smtp: no [smtp] table in the config file")
    intent = log.get(key + "#intent")
    if intent is None:
        msgid = message_id(brief, cfg.sender.rpartition("@")[2])
        log.save(key + "#intent", json.dumps({"message_id": msgid, "to": list(cfg.to)}))
    else:
        msgid = json.loads(intent[0])["message_id"]
    kill("before_send")
    data = _mail_bytes(brief, cfg, msgid, settings.clock.now())
    credential = _credential(cfg, settings.env or os.environ)
    password = _password(cfg, settings.env or os.environ) if credential is None else None

    def commit() -> None:
        log.save(mark_key(key, "sending", attempt), json.dumps({"message_id": msgid}))
        kill("while_sending")

    try:
        reply = send_mail(cfg, password, data, commit, credential=credential)
    except Refused as refused:
        # The server answered the final `.` with a refusal: it did not take the message, so
        # the attempt is over and `resume` sends it again (the same Message-ID).
        log.save(mark_key(key, "refused", attempt), json.dumps({"reply": refused.reply}))
        raise DeliveryFailed(
            f"smtp to {cfg.where}: the server refused the message ({refused.reply}); "
            "nothing was delivered"
        ) from None
    except Unanswered as lost:
        raise Unanswered(
            f"uncertain: the connection to {cfg.where} was lost after the message was sent, "
            f"before the server answered ({lost}); it may have arrived (look for Message-ID "
            f"{msgid}), and is not sent again"
        ) from None
    return f"mailed to {', '.join(cfg.to)} via {cfg.where}, Message-ID {msgid} ({reply})"


class Refused(Exception):
    """The server's answer to the end of the message was not 250 (a 4xx or 5xx)."""

    def __init__(self, code: int, resp: bytes) -> None:
        self.reply = " ".join(f"{code} {resp.decode('utf-8', 'replace')}".split())[:300]
        super().__init__(self.reply)


def _mail_bytes(brief: Brief, cfg: SmtpConfig, msgid: str, now: datetime) -> bytes:
    from email.message import EmailMessage
    from email.policy import SMTP
    from email.utils import format_datetime

    day = date.fromisoformat(brief.brief_date)
    msg = EmailMessage(policy=SMTP)
    msg["From"] = cfg.sender
    msg["To"] = ", ".join(cfg.to)
    what = f"{brief.label.lower()} of your brief" if brief.label else "your brief"
    msg["Subject"] = f"Dayflow: {what} for {day:%A} {day.day} {day:%B %Y}"
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = msgid
    msg["X-Dayflow-Run"] = brief.run_id
    msg.set_content(brief.inert.rstrip("\n") + "\n", subtype="plain", cte="quoted-printable")
    return msg.as_bytes()


def _password(cfg: SmtpConfig, env: Mapping[str, str]) -> str | None:
    """The SMTP password, fetched now from its source (never stored)."""
    if cfg.password_env:
        value = env.get(cfg.password_env)
        if not value:
            raise DeliveryFailed(f"smtp to {cfg.where}: ${cfg.password_env} is not set")
        return value
    if cfg.password_command:
        from dayflow.sources.secret_command import SecretCommandFailed, secret_from_command

        try:
            return secret_from_command(cfg.password_command, cfg.timeout)
        except SecretCommandFailed as exc:
            raise DeliveryFailed(f"smtp to {cfg.where}: {exc}") from None
    return None


def _credential(cfg: SmtpConfig, env: Mapping[str, str]) -> Credential | None:
    """The token of an [smtp] table whose auth takes one, fetched now (before connecting: a
    failing token_command never leaves a connection open); None for a password."""
    from dayflow.sources.oauth import TokenUnavailable, token_credential

    credential = token_credential(
        f"smtp to {cfg.where}",
        cfg.auth,
        command=cfg.token_command,
        env_name=cfg.token_env,
        timeout=cfg.timeout,
        env=env,
    )
    if credential is not None:
        try:
            credential.prefetch()
        except TokenUnavailable as exc:
            raise DeliveryFailed(str(exc)) from None
    return credential


def send_mail(
    cfg: SmtpConfig,
    password: str | None,
    data: bytes,
    commit: Callable[[], None],
    *,
    credential: Credential | None = None,
) -> str:
    """Send one message, calling `commit` after the body and before the final `.` (the point
    from which the server may have accepted it). Returns the server's reply. With a token
    `credential` it logs in with SASL XOAUTH2 / OAUTHBEARER before the envelope, so a refused
    token (535, then 535 again with a fresh one) fails before anything of the message is
    sent, and the delivery is simply tried again by `resume`."""
    import smtplib
    import ssl

    from dayflow.sources.oauth import AuthRefused, TokenUnavailable
    from dayflow.sources.wire import breaks_line

    # Checked again where they are sent, whatever validated them: a line break in any of
    # these would end the SMTP command and start another.
    sent = [("host", cfg.host), ("user", cfg.user or ""), ("from", cfg.sender)]
    sent += [("to", r) for r in cfg.to]
    for key, value in sent:
        if breaks_line(value):
            raise DeliveryFailed(f"smtp to {cfg.where}: `{key}` holds a line break; not sent")
    if password is not None and breaks_line(password):
        raise DeliveryFailed(f"smtp to {cfg.where}: the password holds a line break; not sent")
    try:
        context = ssl.create_default_context(cafile=cfg.cafile)
        server: smtplib.SMTP
        if cfg.security == "tls":
            server = smtplib.SMTP_SSL(cfg.host, cfg.port, timeout=cfg.timeout, context=context)
        else:
            server = smtplib.SMTP(cfg.host, cfg.port, timeout=cfg.timeout)
        with server:
            server.ehlo()
            if cfg.security == "starttls":
                server.starttls(context=context)
                server.ehlo()
            if credential is not None:
                if cfg.security != "plain" and not isinstance(server.sock, ssl.SSLSocket):
                    raise DeliveryFailed(
                        f"smtp to {cfg.where}: a token is sent only over TLS unless "
                        'security = "plain"'
                    )
                _authenticate(server, cfg, credential)
            elif cfg.user and password is not None:
                _login(server, cfg.user, password)
            code, resp = server.mail(cfg.sender)
            if code != 250:
                raise smtplib.SMTPSenderRefused(code, resp, cfg.sender)
            for rcpt in cfg.to:
                code, resp = server.rcpt(rcpt)
                if code not in (250, 251):
                    raise smtplib.SMTPRecipientsRefused({rcpt: (code, resp)})
            code, resp = server.docmd("DATA")
            if code != 354:
                raise smtplib.SMTPDataError(code, resp)
            body = re.sub(rb"(?m)^\.", b"..", data)
            if not body.endswith(b"\r\n"):
                body += b"\r\n"
            server.send(body)
            commit()
            try:
                server.send(b".\r\n")
                code, resp = server.getreply()
            except (OSError, smtplib.SMTPException) as exc:
                raise Unanswered(_describe(exc)) from None
            if code != 250:
                raise Refused(code, resp)
            return f"{code} {resp.decode('utf-8', 'replace')}"
    except (AuthRefused, TokenUnavailable) as exc:
        raise DeliveryFailed(str(exc)) from None
    except (OSError, smtplib.SMTPException) as exc:
        raise DeliveryFailed(f"smtp to {cfg.where}: {smtp_reason(exc)}") from None


def _login(server: Any, user: str, password: str) -> None:
    """Log in; a user name or password that is not ASCII goes as AUTH PLAIN in UTF-8
    (RFC 4616), which smtplib's own login cannot send."""
    import base64
    import smtplib

    if user.isascii() and password.isascii():
        server.login(user, password)
        return
    mechanisms = (server.esmtp_features.get("auth") or "").upper().split()
    if "PLAIN" not in mechanisms:
        raise smtplib.SMTPNotSupportedError(
            "the server offers no AUTH PLAIN, which a user name or password that is not ASCII needs"
        )
    token = base64.b64encode(b"\0" + user.encode() + b"\0" + password.encode()).decode()
    code, resp = server.docmd("AUTH", "PLAIN " + token)
    if code != 235:
        raise smtplib.SMTPAuthenticationError(code, resp)


def smtp_reason(exc: BaseException) -> str:
    """An SMTP failure in one human line: what the server refused and its own words, never a
    Python repr of the exception's arguments."""
    import smtplib

    def said(code: int, text: bytes | str) -> str:
        words = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
        return " ".join(f"{code} {words}".split())[:300]

    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        parts = [f"{rcpt} ({said(*answer)})" for rcpt, answer in exc.recipients.items()]
        return "the server refused the recipient " + ", ".join(parts)
    if isinstance(exc, smtplib.SMTPSenderRefused):
        return f"the server refused the sender {exc.sender} ({said(exc.smtp_code, exc.smtp_error)})"
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return (
            f"the server refused the user name or password ({said(exc.smtp_code, exc.smtp_error)})"
        )
    if isinstance(exc, smtplib.SMTPDataError):
        return f"the server refused the message ({said(exc.smtp_code, exc.smtp_error)})"
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"the server answered {said(exc.smtp_code, exc.smtp_error)}"
    return _describe(exc)


def _authenticate(server: Any, cfg: SmtpConfig, credential: Credential) -> None:
    """AUTH XOAUTH2 / OAUTHBEARER with the initial response (RFC 4954); a 535 fetches the token
    once more and tries again, a second is AuthRefused with the server's words."""
    import smtplib

    from dayflow.sources.oauth import sasl_error_reply, sasl_payload

    mechanism = credential.mechanism.upper()
    offered = (server.esmtp_features.get("auth") or "").upper().split()
    if mechanism not in offered:
        raise DeliveryFailed(
            f"smtp to {cfg.where}: the server does not offer AUTH {mechanism} "
            f"(it offers: {' '.join(offered) or 'none'}); the token is not sent"
        )
    error_reply = sasl_error_reply(credential.mechanism).decode("ascii")
    token = credential.take()
    while True:
        payload = sasl_payload(credential.mechanism, str(cfg.user), cfg.host, cfg.port, token)
        answers = iter((payload.decode("ascii"),))

        def respond(challenge: bytes | None = None, answers: Any = answers) -> str:
            # Called with no challenge for the initial response; a later challenge is the
            # server's error status, answered so that it finishes with its 535.
            return str(next(answers, error_reply))

        try:
            server.auth(mechanism, respond)
            return
        except smtplib.SMTPAuthenticationError as exc:
            words = exc.smtp_error
            said = words.decode("utf-8", "replace") if isinstance(words, bytes) else str(words)
            credential.refused(f"{exc.smtp_code} {said}")  # raises after the one retry
            token = credential.take()


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())[:300]


def _to_notify(
    brief: Brief,
    log: EffectLog,
    key: str,
    settings: Settings,
    kill: Callable[[str], None],
    attempt: int = 1,
) -> str:
    title = f"Dayflow: brief for {brief.brief_date}"
    body = plain(one_thing(brief.text) or "Your daily brief is ready.")
    if settings.platform == "darwin":
        script = f"display notification {_applescript(body)} with title {_applescript(title)}"
        argv = ["osascript", "-e", script]
    else:
        argv = ["notify-send", "--app-name=Dayflow", title, body]
    import shutil

    path = (settings.env or os.environ).get("PATH")
    exe = shutil.which(argv[0], path=path)
    if exe is None:
        raise DeliveryFailed(f"notify: `{argv[0]}` is not installed")
    log.save(mark_key(key, "sending", attempt), json.dumps({"argv": argv[:1]}))
    kill("while_sending")
    try:
        proc = subprocess.run(
            [exe, *argv[1:]], capture_output=True, text=True, timeout=30, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise Unanswered(
            f"uncertain: {argv[0]} did not finish within 30 s ({exc}); the notification may "
            "have been shown, and is not shown again"
        ) from None
    except OSError as exc:  # it never started: nothing was shown
        log.save(mark_key(key, "refused", attempt), json.dumps({"error": str(exc)}))
        raise DeliveryFailed(f"notify: {argv[0]} failed: {exc}") from None
    if proc.returncode != 0:  # it said it failed: nothing was shown, resume tries again
        log.save(mark_key(key, "refused", attempt), json.dumps({"exit": proc.returncode}))
        raise DeliveryFailed(
            f"notify: {argv[0]} exited {proc.returncode}: {_describe(Exception(proc.stderr))}"
        )
    return f"shown with {argv[0]}"


def one_thing(text: str) -> str | None:
    """The brief's "One thing" line, for a notification."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip("#").strip().lower() == "one thing":
            for rest in lines[i + 1 :]:
                if rest.strip():
                    return rest.strip().strip("*").strip()[:200]
    return None


def _applescript(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def describe(effects: list[Any]) -> list[dict[str, Any]]:
    """The deliveries among a run's saved effects, for `show`: sink, ok, what happened."""
    out = []
    for e in effects:
        key = e.tool_use_id
        if not key.startswith(KEY_PREFIX) or "#" in key:
            continue
        out.append({"sink": key[len(KEY_PREFIX) :], "ok": not e.is_error, "detail": e.content})
    return out
