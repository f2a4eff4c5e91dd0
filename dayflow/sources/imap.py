"""An IMAP mailbox over the standard library's imaplib, strictly read-only.

- Transport: implicit TLS by default (port 993), `security = "starttls"` (143, and refused if
  the server does not offer it: never a silent fall back to plain), `"plain"` only when asked.
  Certificates are verified with the system's trust store (`SSL_CERT_FILE` is honoured).
- Never changes a mailbox: folders are opened with EXAMINE (read-only), and every body is
  fetched with BODY.PEEK, which does not set \\Seen. Nothing is ever stored, expunged or moved.
- The page costs what the page costs: `UID SEARCH` runs on the server (SINCE the window's day,
  UNSEEN when asked, below the cursor's UID), and one `UID FETCH` per folder asks for the
  headers, INTERNALDATE, FLAGS, BODYSTRUCTURE (whether it carries a file: the server's word on
  the whole message, which the first bytes cannot give) and the first `SNIPPET_BYTES` of text
  of the page's UIDs only.
- `received_at` is the server's INTERNALDATE.
- Every value sent is checked where it is sent: a CR, LF or NUL in a folder or user name is
  refused (it would end the command and start another); folder names go in modified UTF-7
  (`Entwürfe` is `Entw&APw-rfe`); a user name or password that is not ASCII logs in with
  AUTHENTICATE PLAIN in UTF-8 (or a LOGIN with literals where PLAIN is not offered).
- `timeout` is a deadline for each whole exchange (a listing, a read, a check: connecting and
  logging in included), not for each wait on the socket: a server trickling a byte at a time
  is cut off when it passes (`deadline.Deadline`).

Errors are one SourceError line naming the source and what failed (never the password).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import imaplib
import json
import socket
import ssl
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from dayflow.errors import SourceError
from dayflow.sources import oauth
from dayflow.sources.deadline import Deadline
from dayflow.sources.imap_wire import (
    Imap4,
    Imap4Tls,
    authenticate,
    login,
    mailbox,
    responses,
    structure_attached,
)
from dayflow.sources.mail import MailItem, MailSource, PageQuery
from dayflow.sources.mime import parse_message
from dayflow.sources.oauth import token_credential
from dayflow.sources.passwords import resolve_password
from dayflow.sources.spec import SourceSpec
from dayflow.sources.wire import breaks_line

SNIPPET_BYTES = 2048  # of the text, after the headers, for a listing's snippet
READ_BYTES = 8 * 1024 * 1024  # read_message fetches at most this much of one message
SCAN_BATCH = 200  # headers fetched per command when looking for a message not listed yet
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass
class Session:
    """One account's connection, shared by the sources that read its folders (an entry's
    inbox and its sent folder: one login, one token, one password_command per brief). A
    source examines its folder before each command that needs it (`selected` says which
    folder the connection has open), so neither ever reads the other's folder."""

    client: imaplib.IMAP4 | None = None  # the logged-in connection
    selected: str | None = None  # the folder EXAMINEd last on `client`
    deadline: Deadline | None = None  # the exchange under way
    credential: oauth.Credential | None = None  # the next connection's token
    password: str | None = None
    logged_in: bool = False  # a login worked once: a failure after it is not the account's
    secrets: tuple[str, ...] = ()  # what logged in, hidden from whatever the server says
    # Why the account could not be reached (no connection, or it was cut off): the rest of
    # this process's run does not wait for it again, nor does the other folder (issue
    # 32.14). A resumed run, in a new process, tries once more.
    down: SourceError | None = None


class ImapSource(MailSource):
    remote = True  # a server: what it answered is saved the moment it answers

    def __init__(
        self,
        spec: SourceSpec,
        *,
        env: Mapping[str, str] | None = None,
        password: str | None = None,
        session: Session | None = None,
        accounts: oauth.Accounts | None = None,
    ) -> None:
        self.name = spec.name
        self.spec = spec
        self._env = env or {}  # the runtime's (`Config.file_env`); none: an empty one
        self._accounts = accounts  # the brief's accounts: one token, one password each
        self._session = session or Session(password=password)
        self._located: dict[str, tuple[str, int]] = {}

    @property
    def where(self) -> str:
        return self.spec.where

    @property
    def logged_in(self) -> bool:
        """Whether this account's connection logged in at least once."""
        return self._session.logged_in

    # --- the connection ------------------------------------------------------------------

    def _fail(self, what: str) -> SourceError:
        return SourceError(f"{self.name}: {what}")

    @property
    def _address(self) -> str:
        return f"{self.spec.host}:{self._port}"

    @property
    def _port(self) -> int:
        return self.spec.port or (993 if self.spec.security == "tls" else 143)

    def _late(self) -> SourceError:
        return self._fail(
            f"no complete answer from {self._address} within {self.spec.timeout:g} s "
            "(timeout, a deadline for the whole exchange)"
        )

    def _raise_if_late(self) -> None:
        """When the whole exchange's deadline has run out, that is the error to report,
        whatever broke on the way."""
        if self._session.deadline is not None and self._session.deadline.expired:
            raise self._late() from None

    @contextlib.contextmanager
    def _bounded(self) -> Iterator[None]:
        """One exchange (a page, a read, a check) within `timeout` seconds in all."""
        if self._session.deadline is not None:  # already inside one
            yield
            return
        session = self._session
        if session.down is not None:
            raise session.down  # the same line, at once
        try:
            with self._exchange():
                yield
        except SourceError as err:
            if session.client is None:  # never connected, or cut off: the account is down
                session.down = err
            raise

    @contextlib.contextmanager
    def _exchange(self) -> Iterator[None]:
        session = self._session
        if session.client is None and session.password is None and session.credential is None:
            # Before the clock starts: a password_command (or token_command) has its own
            # timeout, and a failing one never leaves a connection open.
            self._session.credential = self._token()
            if self._session.credential is None:
                self._session.password = resolve_password(self.spec, self._env, self._accounts)
        deadline = Deadline(self.spec.timeout)
        self._session.deadline = deadline
        try:
            with deadline:
                if self._session.client is not None:
                    deadline.watch(self._session.client.sock)
                try:
                    yield
                except (SourceError, OSError, imaplib.IMAP4.error):
                    if deadline.expired:
                        raise self._late() from None
                    raise
        finally:
            self._session.deadline = None
            if deadline.expired:
                self._drop()

    def _drop(self) -> None:
        """Forget a connection that can no longer be trusted (cut off mid-answer)."""
        if self._session.client is not None:
            with contextlib.suppress(OSError):
                self._session.client.shutdown()
        self._session.client = None
        self._session.selected = None

    def _watch(self, sock: socket.socket) -> None:
        if self._session.deadline is not None:
            self._session.deadline.watch(sock)

    def _token(self) -> oauth.Credential | None:
        """The entry's token source with the token fetched now (None for a password)."""
        credential = token_credential(
            self.name,
            self.spec.auth,
            command=self.spec.token_command,
            env_name=self.spec.token_env,
            timeout=self.spec.timeout,
            env=self._env,
            accounts=self._accounts,
            host=str(self.spec.host),
            user=str(self.spec.user),
        )
        if credential is not None:
            credential.prefetch()
        return credential

    def _connect(self) -> imaplib.IMAP4:
        if self._session.client is not None:
            return self._session.client
        spec = self.spec
        host = str(spec.host)
        mode = spec.security
        port = self._port
        user = str(spec.user)
        # The password first: a failing password_command never leaves a connection open. A
        # token is fetched the same way, for this connection only (`_authenticate` sends it).
        credential, self._session.credential = self._session.credential or self._token(), None
        password = self._session.password
        if password is None and credential is None:
            password = resolve_password(spec, self._env, self._accounts)
        for what, value in (("host", host), ("user", user), ("password", password or "")):
            if breaks_line(value):
                raise self._fail(f"the {what} holds a line break or NUL; not sent to the server")
        context = ssl.create_default_context()
        timeout = self._session.deadline.remaining() if self._session.deadline else spec.timeout
        try:
            if mode == "tls":
                conn: imaplib.IMAP4 = Imap4Tls(
                    host, port, ssl_context=context, timeout=timeout, watch=self._watch
                )
            else:
                conn = Imap4(host, port, timeout=timeout, watch=self._watch)
                if mode == "starttls":
                    if "STARTTLS" not in conn.capabilities:
                        conn.shutdown()
                        raise self._fail(
                            f"{host}:{port} does not offer STARTTLS; Dayflow will not log in "
                            'without TLS unless the config says security = "plain"'
                        )
                    conn.starttls(ssl_context=context)
        except SourceError:
            raise
        except TimeoutError:
            self._raise_if_late()
            raise self._fail(
                f"no answer from {host}:{port} within {spec.timeout:g} s (timeout)"
            ) from None
        except ssl.SSLError as err:
            raise self._fail(f"TLS with {host}:{port} failed ({err.reason or err})") from None
        except (OSError, imaplib.IMAP4.error) as err:
            self._raise_if_late()
            raise self._fail(f"cannot connect to {host}:{port} ({_reason(err)})") from None
        try:
            if credential is not None:
                if spec.security != "plain" and not isinstance(conn.sock, ssl.SSLSocket):
                    raise self._fail('a token is sent only over TLS unless security = "plain"')
                self._session.secrets = credential.held()
                authenticate(conn, credential, user=user, host=host, port=port)
                self._session.secrets = credential.held()
            else:
                assert password is not None
                self._session.secrets = (password,)
                login(conn, user, password)
        except SourceError:
            with contextlib.suppress(OSError):
                conn.shutdown()
            self._raise_if_late()
            raise
        except imaplib.IMAP4.error:
            conn.shutdown()
            self._raise_if_late()
            raise oauth.AuthRefused(
                f"{self.name}: login as {spec.user} failed (wrong user or password?)"
            ) from None
        except (OSError, TimeoutError) as err:
            with contextlib.suppress(OSError):
                conn.shutdown()
            self._raise_if_late()
            raise self._fail(f"connection lost during login ({self._said(err)})") from None
        self._session.client = conn
        self._session.logged_in = True
        return conn

    def _said(self, words: object) -> str:
        """What the server said, on one line, with the password or token hidden."""
        return oauth.server_words(str(words), self._session.secrets)

    def close(self) -> None:
        if self._session.client is not None:
            try:
                with Deadline(min(self.spec.timeout, 5.0)) as deadline:
                    deadline.watch(self._session.client.sock)
                    self._session.client.logout()
            except Exception:
                pass
            self._session.client = None
            self._session.selected = None

    def _cmd(self, *args: Any) -> list[Any]:
        """One UID command (or EXAMINE, or LIST) with its errors turned into SourceError
        lines."""
        for arg in args:
            if isinstance(arg, str) and breaks_line(arg):
                raise self._fail(f"{args[0]}: a value holds a line break or NUL; not sent")
        conn = self._connect()
        data: list[Any]
        try:
            if args[0] == "EXAMINE":
                typ, data = conn.select(mailbox(args[1]), readonly=True)
            elif args[0] == "LIST":  # every folder with its attributes (read-only)
                typ, data = conn.list('""', "*")
            else:
                typ, data = conn.uid(*args)
        except TimeoutError:
            self._drop()
            self._raise_if_late()
            raise self._fail(
                f"the server stopped answering ({self.spec.timeout:g} s timeout)"
            ) from None
        except imaplib.IMAP4.abort as err:
            self._drop()
            self._raise_if_late()
            raise self._fail(f"the connection was lost ({self._said(err)})") from None
        except (imaplib.IMAP4.error, OSError) as err:
            self._raise_if_late()
            raise self._fail(f"{args[0]} failed ({self._said(err)})") from None
        if typ != "OK":
            first = data[0] if data else None
            detail = first.decode("utf-8", "replace") if isinstance(first, bytes) else typ
            what = f"{args[0]} {args[1] if len(args) > 1 else ''}"
            raise self._fail(f"{what} failed: {self._said(detail)}")
        return list(data)

    def _examine(self, folder: str) -> int:
        if self._session.selected == folder:
            return -1
        # A refused EXAMINE leaves no folder open (RFC 3501 6.3.1): nothing counts as open
        # until this one is, or the next read of the folder open before would skip its EXAMINE.
        self._session.selected = None
        data = self._cmd("EXAMINE", folder)
        self._session.selected = folder
        try:
            return int(data[0])
        except (TypeError, ValueError, IndexError):
            return 0

    # --- listing -----------------------------------------------------------------------------

    def _search(
        self,
        folder: str,
        since: dt.datetime | None,
        below: int | None,
        unread: bool,
        before: dt.datetime | None = None,
    ) -> list[int]:
        self._examine(folder)
        criteria: list[str] = []
        if since is not None:
            day = since.astimezone(dt.UTC).date() - dt.timedelta(days=1)  # server zones differ
            criteria += ["SINCE", f"{day.day:02d}-{_MONTHS[day.month - 1]}-{day.year}"]
        if before is not None and before.year < 9999:
            day = before.astimezone(dt.UTC).date() + dt.timedelta(days=1)  # the same slack
            criteria += ["BEFORE", f"{day.day:02d}-{_MONTHS[day.month - 1]}-{day.year}"]
        if unread:
            criteria.append("UNSEEN")
        if below is not None:
            if below <= 1:
                return []
            criteria += ["UID", f"1:{below - 1}"]
        data = self._cmd("SEARCH", *(criteria or ["ALL"]))
        found = b" ".join(d for d in data if isinstance(d, bytes)).split()
        uids = sorted({int(u) for u in found if u.isdigit()}, reverse=True)
        if below is not None:
            uids = [u for u in uids if u < below]  # "1:N" includes the highest UID when N < it
        return uids

    def _fetch_heads(self, folder: str, uids: list[int]) -> list[tuple[int, MailItem]]:
        if not uids:
            return []
        self._examine(folder)
        wanted = (
            "(UID FLAGS INTERNALDATE BODYSTRUCTURE BODY.PEEK[HEADER] "
            f"BODY.PEEK[TEXT]<0.{SNIPPET_BYTES}>)"
        )
        data = self._cmd("FETCH", ",".join(map(str, uids)), wanted)
        out = []
        for uid, flags, internal, parts in responses(data):
            if uid is None:
                continue
            raw = parts.get("HEADER", b"") + parts.get("TEXT", b"")
            item = self._item(folder, uid, flags, internal, raw)
            # The first bytes of text are not the whole message: its structure says whether
            # it carries a file (when the server gave one that reads; else the bytes' word).
            found = structure_attached(parts["BODYSTRUCTURE"]) if "BODYSTRUCTURE" in parts else None
            if found is not None and found != item.envelope.has_attachment:
                item = replace(item, envelope=replace(item.envelope, has_attachment=found))
            out.append((uid, item))
        return out

    def _item(
        self, folder: str, uid: int, flags: bytes, internal: dt.datetime | None, raw: bytes
    ) -> MailItem:
        fallback = internal or dt.datetime.now(dt.UTC)
        parsed = parse_message(raw, fallback_time=fallback)
        self._located[parsed.stable_id] = (folder, uid)
        unread = b"\\Seen" not in flags.split()
        return MailItem.of(self.name, parsed, unread=unread, position="", received_at=internal)

    def select(self, query: PageQuery) -> list[MailItem]:
        with self._bounded():
            return self._page(
                query.since, query.after, query.limit, query.unread_only, query.before
            )

    def _page(
        self,
        since: dt.datetime | None,
        after: str | None,
        limit: int,
        unread_only: bool,
        before: dt.datetime | None,
    ) -> list[MailItem]:
        state: dict[str, int] = json.loads(after) if after else {}
        heads: list[list[MailItem]] = []
        for folder in self.spec.folders:
            below = state.get(folder)
            uids = self._search(folder, since, below, unread_only, before)
            # The page follows UIDs; the window is INTERNALDATE, which the server's SEARCH
            # matches by day only (and a message can be appended with any date). So a batch
            # whose messages fall outside the window is followed by the next batch, until the
            # page is full or the UIDs run out: a short page means this folder is done.
            kept: list[MailItem] = []
            step = max(1, limit)
            for start in range(0, len(uids), step):
                batch = uids[start : start + step]
                fetched = dict(self._fetch_heads(folder, batch))
                for uid in batch:
                    item = fetched.get(uid)
                    if item is None:
                        continue
                    if since is not None and item.received_at < since:
                        continue
                    if before is not None and item.received_at >= before:
                        continue
                    kept.append(_with_uid(item, uid))
                if len(kept) >= limit:
                    break
            heads.append(kept[:limit])
        # Merge the folders by arrival, each folder's UIDs taken in order, so the position after
        # an item (the lowest UID taken per folder) never skips one.
        out: list[MailItem] = []
        taken = [0] * len(heads)
        position = dict(state)
        while len(out) < limit:
            best = None
            for i, items in enumerate(heads):
                if taken[i] < len(items) and (
                    best is None
                    or items[taken[i]].received_at > heads[best][taken[best]].received_at
                ):
                    best = i
            if best is None:
                break
            item = heads[best][taken[best]]
            taken[best] += 1
            folder = self.spec.folders[best]
            position[folder] = int(item.position)
            out.append(_at(item, json.dumps(position, sort_keys=True)))
        return out

    # --- one message ------------------------------------------------------------------------

    def read(self, stable_id: str) -> MailItem | None:
        with self._bounded():
            return self._read(stable_id)

    def _read(self, stable_id: str) -> MailItem | None:
        where = self._located.get(stable_id) or self._find(stable_id)
        if where is None:
            return None
        folder, uid = where
        self._examine(folder)
        data = self._cmd("FETCH", str(uid), f"(UID FLAGS INTERNALDATE BODY.PEEK[]<0.{READ_BYTES}>)")
        for got_uid, flags, internal, parts in responses(data):
            if got_uid == uid:
                item = self._item(folder, uid, flags, internal, parts.get("", b""))
                return item if item.stable_id == stable_id else None
        return None

    def _find(self, stable_id: str) -> tuple[str, int] | None:
        """A message this process has not listed (a resumed run): headers, newest first."""
        for folder in self.spec.folders:
            uids = self._search(folder, None, None, False)
            for start in range(0, len(uids), SCAN_BATCH):
                self._fetch_heads(folder, uids[start : start + SCAN_BATCH])
                if stable_id in self._located:
                    return self._located[stable_id]
        return None

    def status(self) -> tuple[int, MailItem | None]:
        with self._bounded():
            return self._status()

    def _status(self) -> tuple[int, MailItem | None]:
        total = 0
        newest: MailItem | None = None
        for folder in self.spec.folders:
            self._session.selected = None
            total += max(0, self._examine(folder))
            uids = self._search(folder, None, None, False)[:1]
            for _, item in self._fetch_heads(folder, uids):
                if newest is None or item.received_at > newest.received_at:
                    newest = item
        return total, newest


def _with_uid(item: MailItem, uid: int) -> MailItem:
    return _at(item, str(uid))


def _at(item: MailItem, position: str) -> MailItem:
    from dataclasses import replace

    return replace(item, position=position)


def _reason(err: BaseException) -> str:
    """An OSError's or imaplib's error as one line: a greeting imaplib hands on as bytes (a
    `* BYE ...`) decoded, and the server's words made safe (`secrets.server_words`)."""
    from dayflow.sources.secrets import server_words

    first = err.args[0] if err.args else None
    if isinstance(first, bytes):
        text = first.decode("utf-8", "replace")
    else:
        text = getattr(err, "strerror", None) or str(err)
    return server_words(text) or type(err).__name__
