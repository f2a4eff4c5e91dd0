"""A real IMAP server for the tests: pymap (in-memory backend) on 127.0.0.1, behind a proxy that
records every command a client sends, on a plain port and an implicit-TLS port.

The proxy parses the client's side of the conversation only (tagged command lines), which is all
the tests count: how many SEARCHes and FETCHes a listing costs, and that nothing but read-only
commands ever reach the server. Messages are loaded and flags checked over a direct connection
that the proxy does not see.
"""

from __future__ import annotations

import contextlib
import imaplib
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dayflow.sources.config import SourceSpec

USER, PASSWORD = "demouser", "demopass"


def imap_spec(port: int, user: str = USER, **fields: Any) -> SourceSpec:
    """The config entry `[[inbox]] name = "work"` of an IMAP server on 127.0.0.1:`port`
    logging in as `user`, with `fields` (security, auth, timeout, ...) as given."""
    from dayflow.sources.config import SourceSpec

    return SourceSpec(
        table="inbox", name="work", kind="imap", host="127.0.0.1", port=port, user=user, **fields
    )


_COMMAND = re.compile(rb"^[A-Za-z0-9]+ ((?:UID )?[A-Za-z]+.*)$")
_LITERAL = re.compile(rb"\{(\d+)\+?\}$")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_cert(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 / localhost (openssl)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def _wait_for(port: int, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"pymap exited: {proc.stderr.read() if proc.stderr else b''!r}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listening on 127.0.0.1:{port}")


def start_pymap(
    port: int,
    cert: Path | None = None,
    key: Path | None = None,
    *,
    user: str = USER,
    password: str = PASSWORD,
) -> subprocess.Popen:
    args = [sys.executable, "-c", "from pymap.main import main; main()", "--host", "127.0.0.1",
            "--port", str(port)]  # fmt: skip
    args += ["--cert", str(cert), "--key", str(key)] if cert and key else ["--no-tls"]
    args += ["dict", "--demo-user", user, "--demo-password", password]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _wait_for(port, proc)
    return proc


@dataclass
class Proxy:
    """Forwards 127.0.0.1:port to the server and records each client command."""

    target: int
    tls: ssl.SSLContext | None = None
    port: int = 0
    commands: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    hang: bool = False  # accept, then never answer (a timeout)
    trickle: float = 0.0  # once a FETCH is sent, answer one byte every `trickle` seconds
    # Folders the proxy flags in LIST answers (pymap has no SPECIAL-USE): name -> attribute,
    # e.g. {"Outbox": "\\Sent"}, as a server with RFC 6154 would list them.
    special_use: dict[str, str] = field(default_factory=dict)
    # Commands the proxy answers itself, never forwarding them: verb -> "NO" or "BAD" (a
    # server refusing, e.g. {"APPEND": "NO"}: an APPEND's literal is then never sent).
    refuse: dict[str, str] = field(default_factory=dict)

    def start(self) -> Proxy:
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = int(self._sock.getsockname()[1])
        self._stopping = threading.Event()
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()
        return self

    def stop(self) -> None:
        """Stop listening for good before the socket's number can be handed out again.

        Closing the socket alone leaves a thread blocked in `accept()` on it, or about to enter
        `accept()` with its old file number: the next test's listener can be given that number,
        and this proxy then serves the next test's clients against a server that is gone
        (`cannot connect ... EOF` in a later brief, at random). `shutdown` wakes the accept, the
        join waits for the thread to end, and only then is the number given back."""
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._acceptor.join(timeout=10)
        with contextlib.suppress(OSError):
            self._sock.close()

    def count(self, word: str) -> int:
        """How many commands named `word` (FETCH counts UID FETCH too)."""
        with self.lock:
            return sum(
                1 for c in self.commands if c.split()[0] == word or c.startswith(f"UID {word}")
            )

    def lines(self, word: str) -> list[str]:
        with self.lock:
            return [c for c in self.commands if c.startswith((f"UID {word}", word))]

    def _flag(self, data: bytes) -> bytes:
        """`data` with the `special_use` attributes added to the LIST lines of their folders."""
        for name, attr in self.special_use.items():
            quoted = f'"{name}"' if " " in name else name
            line = rb"(\* LIST \()([^)]*)(\) \"[^\"]*\" " + re.escape(quoted.encode()) + rb"\r\n)"
            data = re.sub(line, rb"\1\2 " + attr.encode().replace(b"\\", b"\\\\") + rb"\3", data)
        return data

    def _refused(self, data: bytes) -> bytes | None:
        """The answer the proxy gives itself to a command `refuse` names, or None."""
        found = re.match(rb"^([A-Za-z0-9]+) ([A-Za-z]+)", data)
        if found is None:
            return None
        word = self.refuse.get(found.group(2).decode().upper())
        if word is None:
            return None
        return found.group(1) + f" {word} [CANNOT] refused by the test proxy\r\n".encode()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            if self._stopping.is_set():
                client.close()
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        if self.hang:
            time.sleep(3)
            client.close()
            return
        try:
            if self.tls is not None:
                client = self.tls.wrap_socket(client, server_side=True)
            upstream = socket.create_connection(("127.0.0.1", self.target))
        except OSError:
            client.close()
            return

        fetching = threading.Event()
        skip = [0]  # bytes of a literal the client is sending, not to be read as commands

        def pump(src: socket.socket, dst: socket.socket, record: bool) -> None:
            buffer = b""
            try:
                while data := src.recv(65536):
                    if not record and self.trickle and fetching.is_set():
                        for i in range(len(data)):
                            dst.sendall(data[i : i + 1])
                            time.sleep(self.trickle)
                        continue
                    if record and b"FETCH" in data:
                        fetching.set()
                    if not record and self.special_use:
                        data = self._flag(data)
                    answer = self._refused(data) if record and self.refuse else None
                    if answer is not None:
                        src.sendall(answer)
                    else:
                        dst.sendall(data)
                    if record:
                        buffer += data
                        lines: list[bytes] = []
                        while True:  # a literal's bytes ({N} ends its line) are no command
                            if skip[0]:
                                taken = min(skip[0], len(buffer))
                                buffer, skip[0] = buffer[taken:], skip[0] - taken
                                if skip[0]:
                                    break
                            line, sep, after = buffer.partition(b"\r\n")
                            if not sep:
                                break
                            buffer = after
                            lines.append(line)
                            literal = _LITERAL.search(line)
                            if literal:
                                skip[0] = int(literal.group(1))
                        for line in lines:
                            found = _COMMAND.match(line)
                            if found:
                                with self.lock:
                                    text = found.group(1).decode("utf-8", "replace")
                                    head, _, rest = text.partition(" ")
                                    if head.upper() == "UID":
                                        verb, _, rest = rest.partition(" ")
                                        head = f"UID {verb}"
                                    self.commands.append(f"{head.upper()} {rest}".strip())
            except OSError:
                pass
            finally:
                with contextlib.suppress(OSError):
                    dst.shutdown(socket.SHUT_WR)

        back = threading.Thread(target=pump, args=(upstream, client, False), daemon=True)
        back.start()
        pump(client, upstream, True)
        back.join(timeout=30)
        client.close()
        upstream.close()


@dataclass
class ImapServer:
    port: int  # pymap itself (direct, unrecorded)
    plain: Proxy
    implicit_tls: Proxy
    cert: Path

    def direct(self) -> imaplib.IMAP4:
        conn = imaplib.IMAP4("127.0.0.1", self.port, timeout=10)
        conn.login(USER, PASSWORD)
        return conn

    def append(
        self, raw: bytes, *, seen: bool = False, when: float | None = None, folder: str = "INBOX"
    ) -> None:
        """`raw` appended to `folder` (created when it does not exist yet)."""
        conn = self.direct()
        try:
            quoted = f'"{folder}"'
            if folder != "INBOX":
                conn.create(quoted)  # "already exists" is no failure here
            flags = "(\\Seen)" if seen else None
            stamp = imaplib.Time2Internaldate(when if when is not None else time.time())
            typ, _ = conn.append(quoted, flags, stamp, raw)
            assert typ == "OK"
        finally:
            conn.logout()

    def flags(self, folder: str = "INBOX") -> dict[int, str]:
        """Every message's flags in `folder`, by UID, read over a direct connection."""
        conn = self.direct()
        try:
            conn.select(f'"{folder}"', readonly=True)
            typ, data = conn.uid("FETCH", "1:*", "(UID FLAGS)")
            out = {}
            for line in data:
                if isinstance(line, bytes):
                    uid = re.search(rb"UID (\d+)", line)
                    flags = re.search(rb"FLAGS \(([^)]*)\)", line)
                    if uid and flags:
                        out[int(uid.group(1))] = flags.group(1).decode()
            return out
        finally:
            conn.logout()

    def clear(self) -> None:
        with self.plain.lock:
            self.plain.commands.clear()
        with self.implicit_tls.lock:
            self.implicit_tls.commands.clear()


@contextlib.contextmanager
def imap_server(tmp: Path) -> Iterator[ImapServer]:
    """pymap on a free port with an empty INBOX for demouser, a recording plain proxy, and a
    recording implicit-TLS proxy whose self-signed certificate is `cert` (trust it with
    SSL_CERT_FILE)."""
    cert, key = make_cert(tmp)
    port = free_port()
    proc = start_pymap(port)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    plain = Proxy(port).start()
    secure = Proxy(port, tls=context).start()
    server = ImapServer(port, plain, secure, cert)
    try:
        yield server
    finally:
        plain.stop()
        secure.stop()
        stop_server(proc)


def stop_server(proc: subprocess.Popen[Any]) -> None:
    """End a server this test started: politely, then for good after 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stderr is not None:
        proc.stderr.close()
