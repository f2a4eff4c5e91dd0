"""The IMAP wire under `dayflow.sources.imap`: imaplib's connections watched by the exchange's
deadline, quoting, LOGIN and AUTHENTICATE (PLAIN in UTF-8, or an OAuth token with one retry),
and the parsing of a FETCH answer (and of its BODYSTRUCTURE: whether the message carries a
file). Nothing here opens a folder or fetches a body."""

from __future__ import annotations

import base64
import datetime as dt
import imaplib
import re
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from dayflow.errors import SourceError
from dayflow.sources import oauth
from dayflow.sources.envelope import delivers_file
from dayflow.sources.wire import imap_utf7

_UID = re.compile(rb"UID (\d+)")
_FLAGS = re.compile(rb"FLAGS \(([^)]*)\)")
_DATE = re.compile(rb'INTERNALDATE "([^"]+)"')


def quote(text: str) -> str:
    """An IMAP quoted string (the value is known to hold no CR, LF or NUL)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def mailbox(folder: str) -> str:
    """A folder name as a command carries it: modified UTF-7, quoted."""
    return quote(imap_utf7(folder))


def login(conn: imaplib.IMAP4, user: str, password: str) -> None:
    """LOGIN for ASCII credentials; otherwise AUTHENTICATE PLAIN in UTF-8 (RFC 4616), or a
    LOGIN whose password is a literal where the server offers no PLAIN. imaplib's own login
    sends the user name unquoted and can only encode ASCII."""
    if user.isascii() and password.isascii():
        conn.login(quote(user), password)
        return
    secret = password.encode("utf-8")
    if "AUTH=PLAIN" in conn.capabilities:
        conn.authenticate("PLAIN", lambda _: b"\0" + user.encode("utf-8") + b"\0" + secret)
        return
    if not user.isascii():
        raise imaplib.IMAP4.error("a user name that is not ASCII needs AUTH=PLAIN")
    conn.literal = secret  # type: ignore[assignment]  # imaplib's own way to send a literal: after the last argument
    typ, data = conn._simple_command("LOGIN", quote(user))  # type: ignore[attr-defined]
    if typ != "OK":
        raise imaplib.IMAP4.error(data[-1] if data else typ)
    conn.state = "AUTH"  # what imaplib's login() does after an OK


MAX_ANSWER_BYTES = 50 * 1024 * 1024  # one command's answer, literals and lines (as a feed's)


class _Capped(imaplib.IMAP4):
    """At most MAX_ANSWER_BYTES per command: imaplib reads any literal a server announces
    (`{99999999999}`) into memory whole, and any number of lines; past the cap the connection
    is aborted before the bytes are read (one line: "the connection was lost (...)")."""

    _answered = 0

    def _command(self, name: str, *args: Any) -> Any:
        self._answered = 0
        return super()._command(name, *args)  # type: ignore[misc]

    def _count(self, size: int) -> None:
        self._answered += size
        if self._answered > MAX_ANSWER_BYTES:
            raise self.abort(
                f"the server sent more than {MAX_ANSWER_BYTES // 2**20} MB in one answer; refused"
            )

    def read(self, size: int) -> bytes:
        self._count(size)  # before: a literal's announced size is not allocated
        return super().read(size)

    def readline(self) -> bytes:
        line = super().readline()
        self._count(len(line))
        return line


class Imap4(_Capped, imaplib.IMAP4):
    """imaplib's IMAP4, its socket watched by the exchange's deadline from the first byte."""

    def __init__(
        self, host: str, port: int, *, timeout: float, watch: Callable[[socket.socket], None]
    ) -> None:
        self._watch_socket = watch
        super().__init__(host, port, timeout=timeout)

    def _create_socket(self, timeout: float | None) -> socket.socket:
        sock: socket.socket = super()._create_socket(timeout)  # type: ignore[misc]
        self._watch_socket(sock)
        return sock


class Imap4Tls(_Capped, imaplib.IMAP4_SSL):
    """imaplib's IMAP4_SSL, watched from before the TLS handshake."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext,
        timeout: float,
        watch: Callable[[socket.socket], None],
    ) -> None:
        self._watch_socket = watch
        super().__init__(host, port, ssl_context=ssl_context, timeout=timeout)

    def _create_socket(self, timeout: float | None) -> socket.socket:
        sock: socket.socket = imaplib.IMAP4._create_socket(self, timeout)  # type: ignore[attr-defined]
        self._watch_socket(sock)
        return self.ssl_context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


@dataclass
class _Fetched:
    meta: bytes = b""
    parts: dict[str, bytes] = field(default_factory=dict)


def responses(
    data: list[Any],
) -> list[tuple[int | None, bytes, dt.datetime | None, dict[str, bytes]]]:
    """imaplib's FETCH answer as (uid, flags, internaldate, {section: bytes}) per message.

    imaplib gives a flat list: a tuple (prefix, literal) per literal, and bytes for the rest;
    a message's data items may be split over several of these."""
    found: list[_Fetched] = []
    current: _Fetched | None = None
    for piece in data:
        if isinstance(piece, tuple):
            prefix, literal = bytes(piece[0]), bytes(piece[1])
            if re.match(rb"^\d+ \(", prefix):
                current = _Fetched()
                found.append(current)
            if current is None:
                continue
            section = re.search(rb"BODY\[([A-Z.]*)\](?:<\d+>)? \{\d+\}$", prefix)
            if section is not None:
                current.meta += prefix
                current.parts[section.group(1).decode()] = literal
            else:  # a literal inside another item (a BODYSTRUCTURE's file name): inlined
                current.meta += re.sub(rb"\{\d+\}$", b"", prefix) + _quoted(literal)
        elif isinstance(piece, bytes):
            if re.match(rb"^\d+ \(", piece):
                current = _Fetched()
                found.append(current)
            if current is not None:
                current.meta += piece
    result = []
    for entry in found:
        _take_structure(entry)
        uid = _UID.search(entry.meta)
        flags = _FLAGS.search(entry.meta)
        date = _DATE.search(entry.meta)
        internal = None
        if date is not None:
            try:
                internal = dt.datetime.strptime(date.group(1).decode(), "%d-%b-%Y %H:%M:%S %z")
            except ValueError:
                internal = None
        uid_value = int(uid.group(1)) if uid else None
        result.append((uid_value, flags.group(1) if flags else b"", internal, entry.parts))
    return result


def _quoted(literal: bytes) -> bytes:
    return b'"' + literal.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'


_STRUCTURE = re.compile(rb"(?:^|[ (])BODYSTRUCTURE ")
MAX_STRUCTURE = 256 * 1024  # a BODYSTRUCTURE longer than this is not read (no file seen)
MAX_DEPTH = 64


def _take_structure(entry: _Fetched) -> None:
    """Move the BODYSTRUCTURE out of the answer's other items into parts["BODYSTRUCTURE"]:
    a file named "UID 7" must not be taken for the message's UID."""
    found = _STRUCTURE.search(entry.meta)
    if found is None:
        return
    start = found.end()
    end = _sexp_end(entry.meta, start)
    if end is None:  # unreadable: left where it is, and no structure given
        return
    entry.parts["BODYSTRUCTURE"] = entry.meta[start:end]
    entry.meta = entry.meta[: found.start()] + b" " + entry.meta[end:]


def _sexp_end(data: bytes, start: int) -> int | None:
    """Where the parenthesised list at `start` ends, quoted strings skipped; None if it does
    not end (or nests deeper than MAX_DEPTH, or runs past MAX_STRUCTURE)."""
    if data[start : start + 1] != b"(":
        return None
    depth, i, limit = 0, start, min(len(data), start + MAX_STRUCTURE)
    while i < limit:
        c = data[i : i + 1]
        if c == b'"':
            i += 1
            while i < limit and data[i : i + 1] != b'"':
                i += 2 if data[i : i + 1] == b"\\" else 1
        elif c == b"(":
            depth += 1
            if depth > MAX_DEPTH:
                return None
        elif c == b")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


_SPACE = re.compile(rb"\s*")
_TOKEN = re.compile(rb'(?:(\()|(\))|"((?:[^"\\]|\\.)*)"|([^\s()"]+))', re.DOTALL)
Sexp: TypeAlias = "list[Sexp] | str | None"


def parse_structure(raw: bytes) -> Sexp:
    """A BODYSTRUCTURE's parenthesised list as nested lists of str (NIL is None); raises
    ValueError when it is not one."""
    stack: list[list[Sexp]] = [[]]
    pos = 0
    while True:
        space = _SPACE.match(raw, pos)
        pos = space.end() if space else pos
        if pos >= len(raw):
            break
        token = _TOKEN.match(raw, pos)
        if token is None:
            raise ValueError("not a BODYSTRUCTURE")
        pos = token.end()
        opened, closed, quoted, atom = token.groups()
        if opened:
            stack.append([])
        elif closed:
            if len(stack) < 2:
                raise ValueError("unbalanced")
            done = stack.pop()
            stack[-1].append(done)
        elif quoted is not None:
            text = re.sub(rb"\\(.)", rb"\1", quoted, flags=re.DOTALL)
            stack[-1].append(text.decode("utf-8", "replace"))
        else:
            stack[-1].append(None if atom.upper() == b"NIL" else atom.decode("ascii", "replace"))
    if len(stack) != 1 or len(stack[0]) != 1 or not isinstance(stack[0][0], list):
        raise ValueError("not one list")
    return stack[0][0]


_NAMED = re.compile(r"^(?:file)?name(?:\*.*)?$", re.IGNORECASE)


def _param_names(params: Sexp) -> list[str]:
    if not isinstance(params, list):
        return []
    return [p.lower() for p in params[0::2] if isinstance(p, str)]


def structure_attached(raw: bytes) -> bool | None:
    """Whether a BODYSTRUCTURE (RFC 3501 7.4.2) shows a file its sender attached, by the
    rule the bytes are read by (`envelope.delivers_file`); None when it cannot be read."""
    try:
        tree = parse_structure(raw)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[Sexp, str]] = [(tree, "")]
    seen = 0
    while stack and seen < 1000:
        node, parent = stack.pop()
        seen += 1
        if not isinstance(node, list) or not node:
            continue
        if isinstance(node[0], list):  # multipart: its parts, then its subtype
            count = 0
            while count < len(node) and isinstance(node[count], list):
                count += 1
            subtype = node[count] if count < len(node) else None
            kind = "multipart/" + (subtype.lower() if isinstance(subtype, str) else "mixed")
            stack += [(p, kind) for p in reversed(node[:count])]
            continue
        fields = [*node, *[None] * 12]
        main = (fields[0] or "").lower() if isinstance(fields[0], str) else ""
        sub = (fields[1] or "").lower() if isinstance(fields[1], str) else ""
        ctype = f"{main}/{sub}"
        # The disposition follows the basic fields (7), a text part's line count (1), a
        # message's envelope, body and line count (3), and the MD5.
        extra = 1 if main == "text" else 3 if ctype in ("message/rfc822", "message/global") else 0
        disposition = fields[7 + extra + 1]
        kind, dparams, header = "", None, ""
        if isinstance(disposition, list) and disposition and isinstance(disposition[0], str):
            kind = disposition[0].lower()
            dparams = disposition[1] if len(disposition) > 1 else None
        elif isinstance(disposition, str):  # the header's text as a string (pymap says so)
            header = disposition.lower()
            kind = header.split(";", 1)[0].strip()
        names = _param_names(fields[2]) + _param_names(dparams)
        named = any(_NAMED.match(n) for n in names) or "filename" in header
        embedded = isinstance(fields[3], str) and bool(fields[3].strip())
        if delivers_file(ctype, kind, named=named, embedded=embedded, parent=parent):
            return True
    return False


# ------------------------------------------------------------------- logging in with a token


def authenticate(
    conn: Any, credential: oauth.Credential, *, user: str, host: str, port: int
) -> None:
    """Log `conn` (an imaplib.IMAP4, TLS unless the config said plain) in with the token,
    fetching another once and trying again when the server refuses it.

    SASL-IR (RFC 4959) where the server offers it: the initial response on the AUTHENTICATE
    line, one round trip; else after the server's empty continuation. A refusal is Gmail's
    shape as much as Microsoft's: an error challenge (answered as the mechanism says) and a
    tagged NO; BAD is a protocol error and is not retried."""
    mechanism = credential.mechanism.upper()
    if f"AUTH={mechanism}" not in conn.capabilities:
        offered = " ".join(c[5:] for c in conn.capabilities if c.startswith("AUTH=")) or "none"
        raise SourceError(
            f"{credential.source}: {host}:{port} does not offer AUTH={mechanism} "
            f"(it offers: {offered}); the token is not sent"
        )
    token = credential.take()
    while True:
        payload = oauth.sasl_payload(credential.mechanism, user, host, port, token)
        # The payload (unless it went on the command line), then one answer to the server's
        # error status so that it finishes with its NO; a server that keeps challenging after
        # that gets the client's abort (`*`, imaplib sends it for None), never a loop.
        answers = iter((payload, oauth.sasl_error_reply(credential.mechanism)))

        def respond(challenge: bytes, answers: Any = answers) -> bytes | None:
            return next(answers, None)

        try:
            credential.sent = True  # from here the server has the token (or may have it)
            if "SASL-IR" in conn.capabilities:
                next(answers)
                conn.literal = imaplib._Authenticator(respond).process
                initial = base64.b64encode(payload).decode("ascii")
                typ, data = conn._simple_command("AUTHENTICATE", mechanism, initial)
            else:
                conn.literal = imaplib._Authenticator(respond).process
                typ, data = conn._simple_command("AUTHENTICATE", mechanism)
        except imaplib.IMAP4.abort as err:
            raise SourceError(
                f"{credential.source}: the connection was lost during login "
                f"({oauth.server_words(str(err), [token])})"
            ) from None
        except imaplib.IMAP4.error as err:
            raise SourceError(
                f"{credential.source}: AUTHENTICATE {mechanism} failed "
                f"({oauth.server_words(str(err), [token])})"
            ) from None
        if typ == "OK":
            conn.state = "AUTH"
            credential.accepted = True
            return
        words = b" ".join(d for d in data if isinstance(d, bytes)).decode("utf-8", "replace")
        credential.refused(f"{typ} {words}", token)  # raises after the one retry
        token = credential.take()
