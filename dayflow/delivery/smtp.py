"""The `smtp` sink: the brief mailed to the user, with the marks that make it never sent twice
(see `dayflow.delivery`), the password or OAuth token, and one line for every SMTP failure."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from dayflow.delivery.effects import Attempt, Brief, Unanswered, one_line
from dayflow.delivery.settings import DeliveryFailed, SmtpConfig

if TYPE_CHECKING:
    from dayflow.sources.oauth import Credential


def message_id(brief: Brief, host: str) -> str:
    """The Message-ID of a run's brief mail: chosen once, the same on every retry."""
    domain = re.sub(r"[^A-Za-z0-9.-]", "", host) or "dayflow.invalid"
    return f"<dayflow.{brief.run_id}.{brief.brief_date}@{domain}>"


def to_smtp(job: Attempt) -> str:
    brief, log, key, settings = job.brief, job.log, job.key, job.settings
    cfg = settings.smtp
    if cfg is None:
        raise DeliveryFailed("smtp: no [smtp] table in the config file")
    intent = log.get(key + "#intent")
    if intent is None:
        msgid = message_id(brief, cfg.sender.rpartition("@")[2])
        log.save(key + "#intent", json.dumps({"message_id": msgid, "to": list(cfg.to)}))
    else:
        msgid = json.loads(intent[0])["message_id"]
    job.kill("before_send")
    data = _mail_bytes(brief, cfg, msgid, settings.clock.now())
    credential = _credential(cfg, settings.env)
    password = _password(cfg, settings.env) if credential is None else None

    def commit() -> None:
        job.mark("sending", message_id=msgid)
        job.kill("while_sending")

    try:
        reply = send_mail(cfg, password, data, commit, credential=credential)
    except Refused as refused:
        # The server answered the final `.` with a refusal: it did not take the message, so
        # the attempt is over and `resume` sends it again (the same Message-ID).
        job.mark("refused", reply=refused.reply)
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

    def __init__(self, code: int, resp: bytes, secrets: list[str | None] | None = None) -> None:
        from dayflow.sources.secrets import server_words

        self.reply = server_words(f"{code} {resp.decode('utf-8', 'replace')}", secrets or [])
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
    # multipart/alternative: the text as before, then the page (a reader shows the last part
    # it can). The page is inert as the text is (`dayflow.page.html`).
    from dayflow.page import document

    msg.add_alternative(document(brief.html), subtype="html", cte="quoted-printable")
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
            return secret_from_command(cfg.password_command, cfg.timeout, env=env)
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

    from dayflow.sources.oauth import AuthRefused, TokenUnavailable
    from dayflow.sources.secrets import server_words
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
    # Whatever the server says is shown without the password or any token sent to it.
    secrets: list[str | None] = [password]
    try:
        with _logged_in(cfg, password, credential, secrets) as server:
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
                raise Unanswered(smtp_reason(exc, secrets)) from None
            if code != 250:
                raise Refused(code, resp, secrets)
            return server_words(f"{code} {resp.decode('utf-8', 'replace')}", secrets)
    except (AuthRefused, TokenUnavailable) as exc:
        raise DeliveryFailed(str(exc)) from None
    except (OSError, smtplib.SMTPException) as exc:
        raise DeliveryFailed(f"smtp to {cfg.where}: {smtp_reason(exc, secrets)}") from None


@contextlib.contextmanager
def _logged_in(
    cfg: SmtpConfig,
    password: str | None,
    credential: Credential | None,
    secrets: list[str | None],
) -> Iterator[Any]:
    """A connection to the [smtp] server, TLS as `security` says, logged in with the token
    or the password (none without a user); the tokens sent are added to `secrets`."""
    import smtplib
    import ssl

    context = _tls_context(cfg)
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
                    f'smtp to {cfg.where}: a token is sent only over TLS unless security = "plain"'
                )
            _authenticate(server, cfg, credential, secrets)
        elif cfg.user and password is not None:
            _login(server, cfg.user, password)
        yield server


def check_login(cfg: SmtpConfig, env: Mapping[str, str]) -> str:
    """What `sources check` says of [smtp]: connect, log in as a delivery would (the password
    or token fetched now), and leave with QUIT, sending nothing. DeliveryFailed says why not."""
    import smtplib

    from dayflow.sources.oauth import AuthRefused, TokenUnavailable

    credential = _credential(cfg, env)
    password = _password(cfg, env) if credential is None else None
    secrets: list[str | None] = [password]
    try:
        with _logged_in(cfg, password, credential, secrets):
            pass
    except (AuthRefused, TokenUnavailable) as exc:
        raise DeliveryFailed(str(exc)) from None
    except (OSError, smtplib.SMTPException) as exc:
        raise DeliveryFailed(f"smtp to {cfg.where}: {smtp_reason(exc, secrets)}") from None
    if credential is not None:
        return f"{cfg.auth} accepted"
    return "login accepted" if cfg.user and password is not None else "connected (no login)"


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


def smtp_reason(exc: BaseException, secrets: list[str | None] | None = None) -> str:
    """An SMTP failure in one human line: what the server refused and its own words (the
    password or token in `secrets` hidden from them), never a Python repr of the exception's
    arguments."""
    import smtplib

    from dayflow.sources.secrets import server_words

    def said(code: int, text: bytes | str) -> str:
        words = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
        return server_words(f"{code} {words}", secrets or [])

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
    return server_words(one_line(exc), secrets or [])


def _authenticate(
    server: Any, cfg: SmtpConfig, credential: Credential, secrets: list[str | None]
) -> None:
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
        secrets.append(token)
        payload = sasl_payload(credential.mechanism, str(cfg.user), cfg.host, cfg.port, token)
        answers = iter((payload.decode("ascii"),))

        def respond(challenge: bytes | None = None, answers: Any = answers) -> str:
            # Called with no challenge for the initial response; a later challenge is the
            # server's error status, answered so that it finishes with its 535.
            return str(next(answers, error_reply))

        try:
            credential.sent = True
            server.auth(mechanism, respond)
            credential.accepted = True
            return
        except smtplib.SMTPAuthenticationError as exc:
            words = exc.smtp_error
            said = words.decode("utf-8", "replace") if isinstance(words, bytes) else str(words)
            credential.refused(f"{exc.smtp_code} {said}", token)  # raises after the one retry
            token = credential.take()


def _tls_context(cfg: SmtpConfig) -> Any:
    """The TLS context, trusting `cafile` when one is set: read through the one guarded reader
    (OpenSSL would wait for ever on a FIFO, and read /dev/zero to the end)."""
    import ssl

    if cfg.cafile is None:
        return ssl.create_default_context()
    from dayflow import files

    try:
        pem = files.read_regular(cfg.cafile, files.MAX_READ_BYTES).decode("ascii")
    except UnicodeDecodeError:
        raise DeliveryFailed(f"smtp to {cfg.where}: cafile {cfg.cafile} is not PEM text") from None
    except OSError as exc:
        why = str(exc) if isinstance(exc, files.NotRegular | files.TooLarge) else exc.strerror
        raise DeliveryFailed(f"smtp to {cfg.where}: cafile {cfg.cafile}: {why or exc}") from None
    return ssl.create_default_context(cadata=pem)
