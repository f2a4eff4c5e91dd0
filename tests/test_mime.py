"""MIME done right: every case in tests/fixtures/mime/*.eml against its hand-written expected
output in expected.json, plus the identity rules that hang on the headers."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from dayflow.sources.envelope import envelope_from_json
from dayflow.sources.identity import message_stable_id, normalise_message_id, short_hash
from dayflow.sources.mime import html_to_text, parse_message, snippet

FIXTURES = Path(__file__).parent / "fixtures" / "mime"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
FALLBACK = dt.datetime.fromisoformat(EXPECTED["_fallback_time"])
CASES = sorted(name for name in EXPECTED if not name.startswith("_"))


def test_every_fixture_has_an_expected_output_and_every_expectation_a_fixture() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.eml")) == CASES


@pytest.mark.parametrize("name", CASES)
def test_fixture_parses_to_its_expected_output(name: str) -> None:
    want = EXPECTED[name]
    mail = parse_message((FIXTURES / name).read_bytes(), fallback_time=FALLBACK)
    got = {
        "from": mail.sender,
        "subject": mail.subject,
        "received_at": mail.received_at.isoformat(),
        "received_from": mail.date_source,
        "message_id": mail.message_id,
        "body": mail.body,
        "attachments": [a.to_json() for a in mail.attachments],
        "html_only": mail.html_only,
    }
    assert got == {k: v for k, v in want.items() if k != "thread_root"}
    root = want["thread_root"]
    assert mail.thread_id == (short_hash("mid:" + root) if root else mail.stable_id)


def test_a_reply_and_its_follow_up_share_the_thread_of_their_root() -> None:
    first = parse_message((FIXTURES / "in_reply_to_only.eml").read_bytes(), fallback_time=FALLBACK)
    second = parse_message((FIXTURES / "reply_thread.eml").read_bytes(), fallback_time=FALLBACK)
    assert first.thread_id == second.thread_id
    assert first.stable_id != second.stable_id


def test_a_message_without_message_id_is_identified_by_from_date_and_subject() -> None:
    mail = parse_message((FIXTURES / "no_message_id.eml").read_bytes(), fallback_time=FALLBACK)
    assert mail.stable_id == message_stable_id(
        None,
        sender="Old Client <old@example.org>",
        date="Tue, 03 Nov 2026 19:00:00 +0000",
        subject="No id",
    )


def test_attachment_content_never_reaches_the_body() -> None:
    mail = parse_message((FIXTURES / "attachments.eml").read_bytes(), fallback_time=FALLBACK)
    assert "PDF" not in mail.body and "PNG" not in mail.body


def test_message_ids_are_normalised_so_the_same_message_is_one_id() -> None:
    assert normalise_message_id(" <Abc.1@Mail.Example.ORG> ") == "Abc.1@mail.example.org"
    assert message_stable_id("<abc.1@mail.example.org>") == message_stable_id(
        "Abc.1@MAIL.example.org".replace("Abc", "abc")
    )
    assert message_stable_id("<a@x>") != message_stable_id("<b@x>")
    assert normalise_message_id("<>") is None and normalise_message_id("") is None


def test_html_to_text_drops_scripts_and_keeps_structure() -> None:
    text = html_to_text(
        "<style>x{}</style><p>One&nbsp;two</p><script>evil()</script><ol><li>a</li></ol>"
    )
    assert text == "One two\n- a"


def test_snippets_are_one_line_and_cut_at_a_word() -> None:
    s = snippet("word " * 100)
    assert len(s) <= 200 and s.endswith("...") and "\n" not in s


def test_a_huge_or_binary_message_never_raises() -> None:
    for raw in (b"", b"\xff" * 10_000, b"Content-Type: multipart/mixed; boundary=\n\n--\n" * 500):
        mail = parse_message(raw, fallback_time=FALLBACK)
        assert mail.received_at == FALLBACK


@pytest.mark.parametrize(
    "date",
    [
        "Sat, 01 Jan 0000 00:00:00 +0000",  # the case: shown as 2000-01-01
        "Wed, 04 Nov 0000 08:00:00 +0000",
        "Wed, 04 Nov 026 08:00:00 +0000",
        "Wed, 04 Nov 7 08:00:00 +0000",
        "Wed, 04 Nov 0999 08:00:00 +0000",
        "Wed, 04 Nov 1200 08:00:00 +0000",  # parses, but before 1980: not sane either
        "Wed, 31 Feb 2026 08:00:00 +0000",
        "Wed, 04 Nov 99999 08:00:00 +0000",
    ],
)
def test_an_absurd_date_is_never_shown_as_a_real_one(date: str) -> None:
    """The Received: date (or the reader's fallback) is used instead."""
    raw = (
        "Received: from mx by mx.example.org; Wed, 04 Nov 2026 08:00:05 +0000\r\n"
        f"Date: {date}\r\nSubject: s\r\nMessage-ID: <d@example.org>\r\n\r\nbody\r\n"
    ).encode()
    mail = parse_message(raw, fallback_time=FALLBACK)
    assert (mail.date_source, mail.received_at.isoformat()) == (
        "received",
        "2026-11-04T08:00:05+00:00",
    )
    bare = parse_message(raw.split(b"\r\n", 1)[1], fallback_time=FALLBACK)
    assert (bare.date_source, bare.received_at) == ("fallback", FALLBACK)


def test_a_two_digit_year_of_old_mail_is_still_read() -> None:
    raw = b"Date: Wed, 04 Nov 26 08:00:00 +0000\r\nSubject: s\r\n\r\nbody\r\n"
    mail = parse_message(raw, fallback_time=FALLBACK)
    assert (mail.date_source, mail.received_at.year) == ("date", 2026)


def test_an_encoded_last_first_name_keeps_its_address_and_its_key() -> None:
    """Outlook encodes "Müller, Jürgen" as one encoded word with its comma inside (`=2C`):
    decoded before the address was parsed, the comma split the From in two and the message
    was "from Müller", with no address (no rule, no reply owed could find its sender). The
    stable id is the one the message had when it was read as "Müller"."""
    raw = (
        b"From: =?utf-8?q?M=C3=BCller=2C_J=C3=BCrgen?= <JM@z.example>\r\n"
        b"To: =?utf-8?q?Lin=2C_Amy?= <amy@z.example>, bo@z.example\r\n"
        b"Date: Wed, 04 Nov 2026 08:00:00 +0000\r\nSubject: s\r\n"
        b"Message-ID: <e@z.example>\r\n\r\nbody\r\n"
    )
    mail = parse_message(raw, fallback_time=FALLBACK)
    assert mail.sender == "Müller, Jürgen <JM@z.example>"
    assert mail.envelope.sender == ("Müller, Jürgen", "jm@z.example")
    assert mail.envelope.to == (("Lin, Amy", "amy@z.example"), ("", "bo@z.example"))
    assert mail.stable_id == message_stable_id("<e@z.example>", sender="Müller")
    quoted = raw.replace(b"=?utf-8?q?M=C3=BCller=2C_J=C3=BCrgen?=", b'"Doe, Jane"')
    assert parse_message(quoted, fallback_time=FALLBACK).sender == "Doe, Jane <JM@z.example>"


def test_a_terminal_escape_in_a_name_leaves_no_trace_in_the_envelope() -> None:
    """The From showed "Evil, Name" but the envelope (You owe replies) "Evil [31m, Name": its
    ESC made a space and the rest of the sequence stayed."""
    raw = b'From: "Evil\x1b[31m, Name" <evil@z.example>\r\nSubject: s\r\n\r\nbody\r\n'
    mail = parse_message(raw, fallback_time=FALLBACK)
    assert mail.sender == "Evil, Name <evil@z.example>"
    assert mail.envelope.sender == ("Evil, Name", "evil@z.example")


def test_a_json_inbox_last_first_sender_keeps_its_whole_name_in_the_envelope() -> None:
    """A JSON `from` of `Doe, Jane <jane@x.example>` (unquoted, as an export writes it) was
    "Jane" under You owe replies, while Needs action said "Doe, Jane"."""
    assert envelope_from_json({"from": "Doe, Jane <Jane@X.example>"}).sender == (
        "Doe, Jane",
        "jane@x.example",
    )
    assert envelope_from_json({"from": "dana@x.example"}).sender == ("", "dana@x.example")
    assert envelope_from_json({"from": "Doe, Jane"}).sender == ("", "")
