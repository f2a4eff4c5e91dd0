"""`dayflow view` in a real browser (Debian's Chromium driven by Playwright, as
tests/test_page_browser.py): a click on "Not a task" changes the store and the next brief,
the pages read at 360 px and 1280 px in light and dark, and a form on another loopback port
that posts to the view (knowing even its token and CSRF token) is refused.

In CI (CI=true) a missing browser fails these tests; on a laptop they skip with one line."""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_page_browser import _luminance, browser, contrast, shots  # noqa: F401
from tests.test_rules_cli import INBOX2, Profile
from tests.test_view import View, _bots_task, _csrf, start_view, user  # noqa: F401

pytestmark = pytest.mark.slow


@pytest.fixture
def view(user: Profile) -> Iterator[View]:  # noqa: F811
    started = start_view(user.env | {"DAYFLOW_DB": str(user.db)})
    yield started
    code, err = started.stop()
    assert code == 0 and "Traceback" not in err, err


def test_not_a_task_clicked_in_the_browser_is_the_clis_rejection(
    browser: Any,  # noqa: F811
    view: View,
    user: Profile,  # noqa: F811
) -> None:
    task = _bots_task(user)
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        tab.goto(view.url)
        card = tab.locator(f'[data-task="{task}"]')
        assert "Review capacity report" in card.inner_text()
        with tab.expect_navigation():
            card.get_by_role("button", name="Not a task").click()
        said = tab.get_by_role("status").inner_text(timeout=10_000)
        assert said.startswith("not a task: Review capacity report; rule r1")
        assert tab.locator(f'[data-task="{task}"]').count() == 0
        assert tab.url.startswith(f"http://127.0.0.1:{view.port}/?token=")
    finally:
        tab.close()
    # the store and the rules file, as `tasks reject` leaves them
    assert task not in user.tasks().values()
    assert "no task from reports@ops.example asking to 'review'" in user.run("rules").out
    # the next brief: the bot's like mail is no task, the others' are
    day2 = user.brief("2026-11-06", INBOX2)
    assert day2.code == 0, day2.err
    assert sorted(user.tasks()) == [
        "Review Lee's slides",
        "Review budget sheet",
    ]


def _look(browser: Any, url: str, width: int, scheme: str, shot: Path) -> dict[str, Any]:  # noqa: F811
    tab = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=scheme)
    try:
        tab.goto(url)
        tab.screenshot(path=str(shot), full_page=True)
        return dict(
            tab.evaluate(
                """() => ({
                    scroll: document.documentElement.scrollWidth,
                    background: getComputedStyle(document.body).backgroundColor,
                    text: getComputedStyle(document.querySelector("main")).color,
                    button: (() => { const b = document.querySelector("button");
                        return b && [getComputedStyle(b).color,
                                     getComputedStyle(b).backgroundColor]; })(),
                    scripts: document.scripts.length,
                    svg: document.querySelectorAll("svg circle").length,
                })"""
            )
        )
    finally:
        tab.close()


def test_the_views_pages_read_at_360_and_1280_px_in_light_and_dark(
    browser: Any,  # noqa: F811
    view: View,
    shots: Path,  # noqa: F811
) -> None:
    home = view.get("/")
    (run,) = set(re.findall(r'href="/runs/([0-9a-f]+)\?', home))
    pages = {"home": "/", "tasks": "/tasks", "run": f"/runs/{run}"}
    seen = {}
    for name, path in pages.items():
        url = f"http://127.0.0.1:{view.port}{path}?token={view.token}"
        for width in (360, 1280):
            for scheme in ("light", "dark"):
                shot = shots / f"view-{name}-{width}-{scheme}.png"
                seen[(name, width, scheme)] = _look(browser, url, width, scheme, shot)
    for (name, width, _), look in seen.items():
        assert look["scroll"] <= width, (name, width)  # no sideways scroll
        assert look["scripts"] == 0
        assert contrast(look["text"], look["background"]) >= 4.5
        if look["button"]:
            assert contrast(*look["button"]) >= 4.5
    for name in pages:
        for width in (360, 1280):
            light, dark = seen[(name, width, "light")], seen[(name, width, "dark")]
            assert light["background"] != dark["background"]
            assert _luminance(dark["background"]) < 0.05 < _luminance(light["background"])
    assert all(look["svg"] > 0 for (name, _, _), look in seen.items() if name == "run")
    assert len(list(shots.glob("view-*.png"))) == 12


def test_a_form_on_another_loopback_port_cannot_write(
    browser: Any,  # noqa: F811
    view: View,
    user: Profile,  # noqa: F811
) -> None:
    """The worst case: the other page even knows the token and the CSRF token; the
    browser's Origin (another port) is what the view refuses."""
    task = _bots_task(user)
    csrf = _csrf(view.get("/tasks"))
    action = f"http://127.0.0.1:{view.port}/tasks/{task}/reject?token={view.token}"
    evil = (
        f'<form id="f" method="post" action="{action}">'
        f'<input name="csrf" value="{csrf}"><input name="next" value="/"></form>'
    ).encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(evil)

        def log_message(self, *args: Any) -> None:
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    tab = browser.new_page()
    try:
        tab.goto(f"http://127.0.0.1:{other.server_address[1]}/")
        with tab.expect_navigation() as went:
            tab.evaluate("document.getElementById('f').submit()")
        assert went.value is not None and went.value.status == 403
        sent = tab.evaluate(
            f"""async () => {{
                try {{
                    await fetch({action!r}, {{method: "POST", mode: "no-cors",
                        body: new URLSearchParams({{csrf: {csrf!r}, next: "/"}})}});
                }} catch (e) {{}}
                return true;
            }}"""
        )
        assert sent is True
    finally:
        tab.close()
        other.shutdown()
        other.server_close()
    assert task in user.tasks().values() and not user.rules_file.exists()


def test_hostile_mail_neither_runs_nor_scrolls_sideways_in_the_view_on_a_phone(
    browser: Any,  # noqa: F811
    db_path: Path | str,
    tmp_path: Path,
    shots: Path,  # noqa: F811
) -> None:
    from tests.test_page import _hostile_run

    assert _hostile_run(db_path, tmp_path).code == 0  # type: ignore[arg-type]
    view = start_view({"DAYFLOW_DB": str(db_path), "HOME": str(tmp_path)})
    try:
        (task,) = set(re.findall(r'data-task="(t_[0-9a-f]+)"', view.get("/")))
        dialogs: list[str] = []  # any alert() the page would run
        for path in ("/", "/tasks", f"/why/{task}"):
            tab = browser.new_page(viewport={"width": 360, "height": 900})
            tab.on("dialog", lambda d: _dismissed(d, dialogs))
            try:
                tab.goto(f"http://127.0.0.1:{view.port}{path}?token={view.token}")
                tab.locator(".task .title").first.hover()  # the title's onmouseover, if live
                name = path.strip("/").replace("/", "-") or "home"
                tab.screenshot(path=str(shots / f"view-hostile-{name}.png"), full_page=True)
                look = tab.evaluate(
                    """() => ({scroll: document.documentElement.scrollWidth,
                              scripts: document.scripts.length,
                              images: document.images.length,
                              bold: document.querySelectorAll("main b").length})"""
                )
            finally:
                tab.close()
            assert look == {"scroll": look["scroll"], "scripts": 0, "images": 0, "bold": 0}
            assert look["scroll"] <= 360, path
        assert dialogs == []  # no alert() ran
    finally:
        view.stop()


def _dismissed(dialog: Any, seen: list[str]) -> None:
    seen.append(dialog.message)
    dialog.dismiss()
