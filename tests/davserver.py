"""A real CalDAV server for the tests: Radicale (pinned in the test extra) in a child process on
127.0.0.1, storage in a temp dir, one htpasswd user; every request's method and path is appended
to a log file, so a test can count what Dayflow asked and prove it never wrote.

Run as a script (`python davserver.py STORAGE HTPASSWD PORTFILE LOG`) it serves; imported, it
gives the `DavServer` context manager that starts and stops that process.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

USER, PASSWORD = "alex", "correct horse"


class DavServer:
    """Radicale on 127.0.0.1. With `bearer` (a file of tokens, one a line) it sits behind a
    small WSGI wrapper that takes `Authorization: Bearer` with one of those tokens in place of
    the password (as Google's CalDAV does), answers any other token 401 with RFC 6750's
    `WWW-Authenticate`, and logs each request's scheme and verdict to `auth_log`."""

    def __init__(self, root: Path, bearer: Path | None = None) -> None:
        self.root = root
        self.bearer = bearer
        self.auth_log = root / "auth.log"
        self.storage = root / "storage"
        self.log = root / "requests.log"
        self._port_file = root / "port"
        self._proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> DavServer:
        self.root.mkdir(parents=True, exist_ok=True)
        htpasswd = self.root / "htpasswd"
        htpasswd.write_text(f"{USER}:{PASSWORD}\n")
        args = [str(p) for p in (self.storage, htpasswd, self._port_file, self.log)]
        if self.bearer is not None:
            args += [str(self.bearer), str(self.auth_log)]
        with open(self.root / "stderr.log", "wb") as errors:
            self._proc = subprocess.Popen(
                [sys.executable, __file__, *args], stdout=subprocess.DEVNULL, stderr=errors
            )
        deadline = time.monotonic() + 60
        while not self._port_file.exists() or not self._port_file.read_text().strip():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((self.root / "stderr.log").read_text())
            time.sleep(0.05)
        self.port = int(self._port_file.read_text())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=30)

    # --- setting up calendars, as a user's other client would -----------------------------

    def call(self, method: str, path: str, body: bytes = b"", **headers: str) -> int:
        token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        req = urllib.request.Request(
            self.base_url + path,
            data=body or None,
            method=method,
            headers={"Authorization": f"Basic {token}", **headers},
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return int(resp.status)
        except urllib.error.HTTPError as err:
            return err.code

    def make_calendar(self, slug: str, display: str, components: str = "VEVENT") -> None:
        comps = "".join(f'<C:comp name="{c}"/>' for c in components.split(","))
        body = (
            '<?xml version="1.0"?><C:mkcalendar xmlns:D="DAV:" '
            'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>'
            f"<D:displayname>{display}</D:displayname>"
            f"<C:supported-calendar-component-set>{comps}</C:supported-calendar-component-set>"
            "</D:prop></D:set></C:mkcalendar>"
        )
        status = self.call("MKCALENDAR", f"/{USER}/{slug}/", body.encode())
        assert status == 201, status

    def put(self, slug: str, name: str, ics: bytes) -> None:
        """Store a calendar file as CalDAV wants it: one object per UID (with the zones)."""
        for n, obj in enumerate(split_by_uid(ics.decode("utf-8"))):
            status = self.call(
                "PUT",
                f"/{USER}/{slug}/{name}-{n}.ics",
                obj.encode("utf-8"),
                **{"Content-Type": "text/calendar"},
            )
            assert status in (201, 204), status

    # --- what a test checks ------------------------------------------------------------------

    def auth(self) -> list[str]:
        """Each request's `scheme verdict` as the bearer wrapper saw it (`Bearer ok`)."""
        return self.auth_log.read_text().splitlines() if self.auth_log.exists() else []

    def requests(self) -> list[tuple[str, str]]:
        """Every request served so far, as (method, path)."""
        if not self.log.exists():
            return []
        return [
            (line.split(" ", 1)[0], line.split(" ", 1)[1])
            for line in self.log.read_text().splitlines()
        ]

    def snapshot(self) -> dict[str, str]:
        """A digest of every stored item and property file (Radicale's own caches left out)."""
        out = {}
        for path in sorted(self.storage.rglob("*")):
            rel = path.relative_to(self.storage)
            if path.is_file() and not any(p.startswith(".Radicale.cache") for p in rel.parts):
                if path.name.startswith(".Radicale.lock"):
                    continue
                out[str(rel)] = hashlib.sha256(path.read_bytes()).hexdigest()
        return out


def split_by_uid(text: str) -> list[str]:
    """An iCalendar file as one VCALENDAR per UID, each with the file's header and VTIMEZONEs."""
    lines = text.splitlines()
    head: list[str] = []
    zones: list[str] = []
    by_uid: dict[str, list[str]] = {}
    block: list[str] | None = None
    kind = ""
    for line in lines:
        if line.startswith("BEGIN:") and block is None and line != "BEGIN:VCALENDAR":
            block, kind = [line], line[6:]
            continue
        if block is not None:
            block.append(line)
            if line == f"END:{kind}":
                if kind == "VTIMEZONE":
                    zones.extend(block)
                else:
                    uid = next(b[4:] for b in block if b.startswith("UID:"))
                    by_uid.setdefault(uid, []).extend(block)
                block = None
            continue
        if line != "END:VCALENDAR":
            head.append(line)
    return ["\r\n".join([*head, *zones, *body, "END:VCALENDAR", ""]) for body in by_uid.values()]


def _bearer_wrapper(app: Any, tokens: str, log: str) -> Any:
    basic = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

    def checking(environ: dict[str, Any], start_response: Any) -> Any:
        given = environ.get("HTTP_AUTHORIZATION", "")
        scheme, _, token = given.partition(" ")
        ok = scheme == "Bearer" and token in Path(tokens).read_text().split()
        with open(log, "a") as f:
            f.write(f"{scheme or '-'} {'ok' if ok else 'refused'}\n")
        if scheme == "Basic":
            return app(environ, start_response)  # the test's own setup requests
        if not ok:
            challenge = 'Bearer error="invalid_token", error_description="The token expired"'
            start_response("401 Unauthorized", [("WWW-Authenticate", challenge)])
            return [b"token refused"]
        return app({**environ, "HTTP_AUTHORIZATION": basic}, start_response)

    return checking


def _serve(
    storage: str,
    htpasswd: str,
    port_file: str,
    log: str,
    bearer: str | None = None,
    auth_log: str | None = None,
) -> None:
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    import radicale
    from radicale import config

    configuration = config.load()
    configuration.update(
        {
            "auth": {
                "type": "htpasswd",
                "htpasswd_filename": htpasswd,
                "htpasswd_encryption": "plain",
                "delay": "0",
            },
            "storage": {"filesystem_folder": storage},
            "rights": {"type": "owner_only"},
            "logging": {"level": "warning"},
        },
        "test",
        privileged=True,
    )
    app = radicale.Application(configuration)

    def counting(environ: dict[str, Any], start_response: Any) -> Any:
        with open(log, "a") as f:
            f.write(f"{environ['REQUEST_METHOD']} {environ.get('PATH_INFO', '')}\n")
        return app(environ, start_response)

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    served = counting if bearer is None else _bearer_wrapper(counting, bearer, str(auth_log))
    server = make_server("127.0.0.1", 0, served, handler_class=Quiet)
    Path(port_file + ".tmp").write_text(str(server.server_port))
    Path(port_file + ".tmp").replace(port_file)
    server.serve_forever()


if __name__ == "__main__":
    _serve(*sys.argv[1:7])
