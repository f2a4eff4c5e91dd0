"""`dayflow view` as a real process on 127.0.0.1, on both engines: the token, the Host, a
write's Origin and CSRF token, `--read-only`, the corrections through the CLI's own functions,
hostile mail inert in every page, the timeline as SVG, and Ctrl-C.

The browser's side (a click, screenshots, a form from another loopback port) is in
tests/test_view_browser.py."""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.test_page import _hostile_run, parse
from tests.test_rules_cli import INBOX1, INBOX2, Profile

pytestmark = pytest.mark.slow


@dataclass
class View:
    proc: subprocess.Popen[str]
    url: str
    err: list[str]

    @property
    def port(self) -> int:
        return int(urlsplit(self.url).port or 0)

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    def ask(
        self, method: str, path: str, body: str = "", headers: dict[str, str] | None = None
    ) -> tuple[int, str, dict[str, str]]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        try:
            sent = {"Host": f"127.0.0.1:{self.port}"} | (headers or {})
            if method == "POST":
                sent.setdefault("Content-Type", "application/x-www-form-urlencoded")
            conn.request(method, path, body=body.encode() or None, headers=sent)
            answer = conn.getresponse()
            return (
                answer.status,
                answer.read().decode(),
                {k.lower(): v for k, v in answer.getheaders()},
            )
        finally:
            conn.close()

    def get(self, path: str) -> str:
        joiner = "&" if "?" in path else "?"
        status, text, _ = self.ask("GET", f"{path}{joiner}token={self.token}")
        assert status == 200, text
        return text

    def stop(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        _, rest = self.proc.communicate(timeout=20)
        return self.proc.returncode, "".join(self.err) + rest


def start_view(env: dict[str, str], *args: str) -> View:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dayflow", "view", *args],
        env={k: v for k, v in os.environ.items() if not k.startswith("DAYFLOW_")} | env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    # readline in a thread: a select() on the pipe would miss lines already buffered
    got: queue.Queue[str] = queue.Queue()
    stream = proc.stderr

    def read_line() -> None:
        threading.Thread(target=lambda: got.put(stream.readline()), daemon=True).start()

    read_line()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            line = got.get(timeout=max(deadline - time.monotonic(), 0.1))
        except queue.Empty:
            break
        if not line:
            break
        lines.append(line)
        found = re.search(r"http://\S+token=\S+", line)
        if found:
            return View(proc, found.group(0), lines)
        threading.Thread(
            target=lambda: got.put(proc.stderr.readline() if proc.stderr else "")
        ).start()
    proc.kill()
    _, rest = proc.communicate()
    raise AssertionError(f"no address printed: {''.join(lines)}{rest}")


@pytest.fixture
def user(tmp_path: Path, db_path: Path | str) -> Profile:
    made = Profile(tmp_path, db_path)
    assert made.brief("2026-11-05", INBOX1).code == 0
    return made


def _env(user: Profile) -> dict[str, str]:
    return user.env | {"DAYFLOW_DB": str(user.db)}


@pytest.fixture
def view(user: Profile) -> Iterator[View]:
    started = start_view(_env(user))
    yield started
    if started.proc.poll() is None:
        started.proc.kill()
    started.proc.communicate()  # and its pipes closed


def _csrf(page: str) -> str:
    (value,) = set(re.findall(r'name="csrf" value="([^"]+)"', page))
    return value


def _bots_task(user: Profile) -> str:
    return user.tasks()["Review capacity report"]


def test_every_request_without_the_token_or_for_another_host_is_refused(
    view: View, user: Profile
) -> None:
    assert view.ask("GET", "/")[0] == 403
    assert view.ask("GET", "/tasks?token=wrong")[0] == 403
    assert view.ask("GET", "/no/such/page")[0] == 403  # no 404 that says which paths exist
    assert view.ask("GET", f"/why/{_bots_task(user)}")[0] == 403
    # a DNS-rebinding page names its own host: the token alone does not let it in
    rebound = view.ask("GET", f"/?token={view.token}", headers={"Host": "evil.example:80"})
    assert rebound[0] == 403
    status, page, headers = view.ask("GET", f"/?token={view.token}")
    assert status == 200 and "Review capacity report" in page
    assert headers["referrer-policy"] == "same-origin"  # never sent to another site
    assert headers["content-security-policy"].startswith("default-src 'none'")
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "set-cookie" not in headers  # the token never travels in a cookie


def test_a_write_needs_post_the_views_origin_and_the_csrf_token(view: View, user: Profile) -> None:
    task = _bots_task(user)
    csrf = _csrf(view.get("/tasks"))
    path = f"/tasks/{task}/reject?token={view.token}"
    own = f"http://127.0.0.1:{view.port}"
    body = f"csrf={csrf}&next=/tasks"
    other_port = f"http://127.0.0.1:{view.port + 1 if view.port < 65535 else 1024}"
    refused = [
        view.ask("POST", path, body),  # no Origin
        view.ask("POST", path, body, {"Origin": other_port}),  # another loopback port
        view.ask("POST", path, body, {"Origin": "null"}),
        view.ask("POST", path, body, {"Origin": own, "Sec-Fetch-Site": "same-site"}),
        view.ask("POST", path, "next=/tasks", {"Origin": own}),  # no CSRF token
        view.ask("POST", path, "csrf=forged&next=/tasks", {"Origin": own}),
        view.ask("POST", f"/tasks/{task}/reject", body, {"Origin": own}),  # no URL token
    ]
    assert [r[0] for r in refused] == [403] * len(refused)
    assert view.ask("GET", path)[0] == 405  # a GET changes nothing
    assert task in user.tasks().values() and not user.rules_file.exists()
    status, _, headers = view.ask("POST", path, body, {"Origin": own})
    assert status == 303
    assert headers["location"].startswith(f"/tasks?token={view.token}&said=not%20a%20task")
    assert task not in user.tasks().values()
    listed = user.run("rules").out  # the CLI's own rule, as `tasks reject` makes it
    assert "r1    reject    no task from reports@ops.example asking to 'review'" in listed
    assert "dayflow tasks reject t_" in listed


def test_done_snooze_and_mute_are_the_clis_corrections(view: View, user: Profile) -> None:
    tasks = user.tasks()
    own = {"Origin": f"http://127.0.0.1:{view.port}"}
    csrf = _csrf(view.get("/tasks"))
    budget, bot = (
        tasks["Review budget sheet"],
        tasks["Review capacity report"],
    )

    def post(path: str, fields: str) -> int:
        return view.ask("POST", f"{path}?token={view.token}", f"csrf={csrf}&{fields}", own)[0]

    assert post(f"/tasks/{budget}/done", "next=/") == 303
    done = json.loads(user.run("tasks", "--json", "--all").out)
    assert [t["status"] for t in done if t["id"] == budget] == ["done"]
    assert post(f"/tasks/{bot}/snooze", "until=3d&next=//evil.example/") == 303
    assert post("/mute", "pattern=ops.example&next=/tasks") == 303
    listed = user.run("rules").out
    assert "snooze" in listed and "mute" in listed and "ops.example" in listed
    assert post("/mute", "pattern=*&next=/") == 400  # refused as `dayflow mute '*'` is
    # where a button comes back to is one of the view's own paths, never another site
    status, _, headers = view.ask(
        "POST", f"/tasks/{budget}/done?token={view.token}", f"csrf={csrf}&next=//evil.example/", own
    )
    assert status == 303 and headers["location"].startswith("/?token=")


def test_a_big_form_is_refused_unread_and_a_busy_port_is_one_line(
    view: View, user: Profile
) -> None:
    own = {"Origin": f"http://127.0.0.1:{view.port}"}
    task = _bots_task(user)
    big = f"csrf={_csrf(view.get('/tasks'))}&why=" + "x" * 100_000
    assert view.ask("POST", f"/tasks/{task}/reject?token={view.token}", big, own)[0] == 413
    assert task in user.tasks().values()
    busy = subprocess.run(
        [sys.executable, "-m", "dayflow", "view", "--port", str(view.port)],
        env={k: v for k, v in os.environ.items() if not k.startswith("DAYFLOW_")} | _env(user),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert busy.returncode == 2
    assert busy.stderr.strip().splitlines() == [
        f"error: cannot listen on 127.0.0.1:{view.port}: Address already in use"
    ]


def test_read_only_has_no_write_route_and_no_button(user: Profile) -> None:
    view = start_view(_env(user), "--read-only")
    try:
        page = view.get("/tasks")
        assert "<form" not in page and "read-only" in page
        own = {"Origin": f"http://127.0.0.1:{view.port}"}
        task = _bots_task(user)
        for action in ("done", "reject", "snooze"):
            status = view.ask("POST", f"/tasks/{task}/{action}?token={view.token}", "", own)[0]
            assert status in (404, 405)
        assert view.ask("POST", f"/mute?token={view.token}", "pattern=ops.example", own)[0] in (
            404,
            405,
        )
        assert task in user.tasks().values() and not user.rules_file.exists()
    finally:
        code, err = view.stop()
    assert code == 0 and "Traceback" not in err


def test_ctrl_c_stops_the_view_cleanly(view: View) -> None:
    view.get("/")
    code, err = view.stop()
    assert code == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.rstrip().endswith("dayflow view: stopped")


def test_a_run_page_draws_its_timeline_as_svg_and_lists_its_steps(
    view: View, user: Profile
) -> None:
    home = view.get("/")
    (run,) = set(re.findall(r'href="/runs/([0-9a-f]+)\?', home))
    page = view.get(f"/runs/{run}")
    svg = page[page.index("<svg") : page.index("</svg>") + 6]
    traced = [json.loads(line) for line in user.run("trace", run).out.splitlines()]
    assert svg.count('<circle class="event') == len(traced) > 0
    assert "run_finished" in svg and "run_started" in svg
    assert ">step committed</text>" in svg and ">run finished</text>" in svg  # the legend
    assert "stroke-dasharray" not in svg  # one process, never restarted
    assert page.count("<tr><td>") == len([e for e in traced if e["kind"] == "step_committed"])


def test_a_resumed_runs_timeline_marks_the_restart(user: Profile) -> None:
    crashed = user.brief("2026-11-06", INBOX2, "--crash-after", "1")
    assert crashed.code == 70, crashed.err
    assert user.run("resume", clock="2026-11-06T07:30:00+00:00").code == 0
    view = start_view(_env(user))
    try:
        (run,) = set(re.findall(r'href="/runs/([0-9a-f]+)\?', view.get("/days/2026-11-06")))
        page = view.get(f"/runs/{run}")
    finally:
        view.stop()
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert svg.count("stroke-dasharray") == 1 and ">run resumed</text>" in svg


def test_past_days_and_why_pages(view: View, user: Profile) -> None:
    days = view.get("/days")
    assert 'href="/days/2026-11-05?token=' in days
    day = view.get("/days/2026-11-05")
    assert "Review budget sheet" in day
    task = _bots_task(user)
    assert f'href="/why/{task}?token=' in day  # the brief's lines link to their evidence
    why = view.get(f"/why/{task}")
    assert "Please review the capacity report" in why and "reports@ops.example" in why
    assert view.ask("GET", f"/days/2031-01-01?token={view.token}")[0] == 404


def test_hostile_mail_is_inert_in_every_page(db_path: Path | str, tmp_path: Path) -> None:
    assert _hostile_run(db_path, tmp_path).code == 0  # type: ignore[arg-type]
    view = start_view({"DAYFLOW_DB": str(db_path), "HOME": str(tmp_path)})
    try:
        home = view.get("/")
        (task,) = set(re.findall(r'data-task="(t_[0-9a-f]+)"', home))
        (run,) = set(re.findall(r'href="/runs/([0-9a-f]+)\?', home))
        for page in (home, view.get("/tasks"), view.get(f"/why/{task}"), view.get(f"/runs/{run}")):
            tree = parse(page)
            assert "<script" not in page
            assert not {t for t, _ in tree.tags} & {"script", "img", "iframe", "object", "embed"}
            for _, attrs in tree.tags:
                assert not [k for k in attrs if k.startswith("on") or k in ("src", "srcset")]
                assert not [v for v in attrs.values() if "javascript:" in str(v).lower()]
            for href in tree.hrefs():
                assert href.startswith("/") or href == "https://pay.example/ok" or href[0] == "#"
            assert "\u202e" not in page
            assert len(page) < 300_000, len(page)  # the 1 MB subject and body are cut
        assert "&lt;script&gt;" in home and "\\u202e" in home
    finally:
        view.stop()


def test_a_profiles_view_shows_and_corrects_its_own_and_never_reads_mail(
    user: Profile, tmp_path: Path
) -> None:
    """`view --profile ann`: ann's brief and tasks only, a rejection in ann's rules file, and
    the IMAP server ann's config names is never connected to (a listener counts)."""
    import socket

    from tests.harness import invoke
    from tests.test_rules_cli import DAY2, INBOX2
    from tests.test_rules_cli import OfflineModel as Offline

    ann_dir = tmp_path / "ann"
    ann_dir.mkdir()
    config = ann_dir / "ann.toml"
    config.write_text("")
    home = {"HOME": str(tmp_path)}
    offline = lambda m, s: Offline()  # noqa: E731
    assert invoke(user.db, offline, "profiles", "add", "ann", "--config", str(config)).code == 0
    inbox = user.inbox("ann", INBOX2)
    made = invoke(
        user.db, offline, "brief", "--profile", "ann", "--date", "2026-11-06", "--inbox", inbox,
        env=home, clock=DAY2,
    )  # fmt: skip
    assert made.code == 0, made.err
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    config.write_text(
        '[[inbox]]\nname = "work"\nkind = "imap"\nhost = "127.0.0.1"\n'
        f'port = {listener.getsockname()[1]}\nuser = "ann"\nsecurity = "plain"\n'
        'password_command = "echo pw"\ntimeout = 5\n'
    )
    view = start_view({"DAYFLOW_DB": str(user.db)} | home, "--profile", "ann")
    try:
        home_page, tasks_page = view.get("/"), view.get("/tasks")
        assert "Review Lee&#39;s slides" in tasks_page and "profile ann" in home_page
        assert "budget sheet" not in home_page + tasks_page  # the default profile's
        anns = invoke(user.db, offline, "tasks", "--json", "--profile", "ann", env=home).out
        (lee,) = [t["id"] for t in json.loads(anns) if t["title"].startswith("Review Lee")]
        assert f'data-task="{lee}"' in home_page
        own = {"Origin": f"http://127.0.0.1:{view.port}"}
        body = f"csrf={_csrf(tasks_page)}&next=/tasks"
        status = view.ask("POST", f"/tasks/{lee}/reject?token={view.token}", body, own)[0]
        assert status == 303
    finally:
        code, err = view.stop()
    assert code == 0, err
    rules_text = (ann_dir / "ann.rules.toml").read_text()  # ann.toml's (docs/rules.md)
    assert "lee@other.example" in rules_text and "--profile ann" in rules_text
    assert not user.rules_file.exists()  # the default profile's rules are untouched
    with pytest.raises(TimeoutError):
        listener.accept()  # nobody ever knocked
    listener.close()


def test_open_starts_the_browser_and_host_elsewhere_warns(user: Profile, tmp_path: Path) -> None:
    opened = tmp_path / "opened"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf %s "$1" > {opened}\n')
    browser.chmod(0o755)
    view = start_view(_env(user) | {"BROWSER": str(browser)}, "--open", "--host", "0.0.0.0")
    try:
        deadline = time.monotonic() + 20
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert opened.read_text() == view.url
        assert view.get("/tasks")  # reached on 127.0.0.1 as on any address
    finally:
        code, err = view.stop()
    assert code == 0
    assert "warning: listening on 0.0.0.0, not only this machine" in err
    loopback = start_view(_env(user))
    _, quiet = loopback.stop()
    assert "warning" not in quiet


def test_a_fault_that_is_no_dayflow_error_is_a_one_line_500_not_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A store that cannot be opened (here: a disk error) answers a plain 500 naming it, and
    the view's stderr gets one line; nothing like uvicorn's traceback reaches either."""
    from contextlib import AbstractContextManager

    from starlette.testclient import TestClient

    from dayflow.view.guard import CSRF_FIELD, Guard
    from dayflow.view.server import app
    from dayflow.view.site import Site

    def broken_disk() -> AbstractContextManager[object]:
        raise OSError(5, "Input/output error")

    guard = Guard("127.0.0.1", 8765)
    site = Site(open_store=broken_disk, where=lambda command: None)  # type: ignore[arg-type,return-value]
    client = TestClient(
        app(site, guard), base_url="http://127.0.0.1:8765", raise_server_exceptions=False
    )
    answer = client.get(guard.link("/"))
    assert answer.status_code == 500
    assert answer.text == (
        "Dayflow could not answer this (OSError: [Errno 5] Input/output error); nothing was "
        "changed. The view's terminal has the same line.\n"
    )
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")
    err = capsys.readouterr().err
    assert err == "dayflow view: GET / failed: OSError: [Errno 5] Input/output error\n"
    assert "Traceback" not in err
    # A correction may have been kept before its fault: the answer says where to look.
    wrote = client.post(
        guard.link("/mute"),
        data={CSRF_FIELD: guard.csrf, "pattern": "news.example.org"},
        headers={"Origin": "http://127.0.0.1:8765"},
    )
    assert wrote.status_code == 500
    assert wrote.text.endswith(
        "; `dayflow rules` and `dayflow tasks` show whether the correction was kept. The "
        "view's terminal has the same line.\n"
    ), wrote.text
    assert capsys.readouterr().err.startswith("dayflow view: POST /mute failed: ")
