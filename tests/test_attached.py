"""Whether a message carries a file (`Envelope.has_attachment`), from every mail source, on
real-shaped mail (tests/fixtures/attached: Gmail, Apple Mail and Outlook attachments; inline
images that are not files; a forwarded message; a bounce; an invitation), and the promise a
later sent message with a file attached keeps (`followups.promises`), through the CLI."""

from __future__ import annotations

import dataclasses
import datetime as dt
import email
import email.policy
import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from dayflow import tools as toolbox
from dayflow.errors import SourceError
from dayflow.followups.promises import promises
from dayflow.followups.threads import Thread, ThreadMessage
from dayflow.sources import JsonInbox
from dayflow.sources.identity import normalise_message_id
from dayflow.sources.imap import ImapSource
from dayflow.sources.imap_wire import parse_structure, responses, structure_attached
from dayflow.sources.inbox import Inbox
from dayflow.sources.mail import DictMail, MailItem, MailSource
from dayflow.sources.maildir import MaildirSource
from dayflow.sources.mailfiles import EmlFolderSource
from dayflow.sources.mbox import MboxSource
from dayflow.sources.me import parse_me
from dayflow.sources.mime import parse_message
from tests.imapserver import imap_server
from tests.mailkit import deliver, thread_mail, write_mbox
from tests.test_crash import dayflow
from tests.test_imap import ENV, READ_ONLY, spec
from tests.test_mail_sources import env_for, snapshot
from tests.test_sent_mail import ALEX, at

FIXTURES = Path(__file__).parent / "fixtures" / "attached"
FALLBACK = dt.datetime(2026, 11, 18, 20, 0, tzinfo=dt.UTC)
# Each fixture and whether it carries a file its sender attached.
CARRIES = {
    "gmail_pdf.eml": True,  # attachment, with Gmail's Content-ID, in multipart/mixed
    "apple_mail_xlsx.eml": True,  # Apple Mail's `inline; filename=...` between text parts
    "outlook_docx.eml": True,  # Outlook's attachment with size and dates
    "forwarded_rfc822.eml": True,  # a message forwarded as an attachment
    "gmail_inline_image.eml": False,  # an image the HTML shows (cid:), multipart/related
    "outlook_signature_logo.eml": False,  # the signature's image001.png
    "apple_mail_pasted_image.eml": False,  # a screenshot pasted into the text
    "bounce_report.eml": False,  # a bounce's copy of what bounced (multipart/report)
    "outlook_invitation.eml": False,  # an invitation's text/calendar alternative
}


def _by_id(items: list[MailItem]) -> dict[str, bool]:
    return {str(i.envelope.message_id): i.envelope.has_attachment for i in items}


def _expected_by_id() -> dict[str, bool]:
    out = {}
    for name, carries in CARRIES.items():
        parsed = parse_message((FIXTURES / name).read_bytes(), fallback_time=FALLBACK)
        out[str(parsed.message_id)] = carries
    return out


def _listed(source: MailSource) -> list[MailItem]:
    return source.page(since=None, after=None, limit=50, unread_only=False)


def test_every_fixture_has_its_expectation() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.eml")) == sorted(CARRIES)


@pytest.mark.parametrize("name", sorted(CARRIES))
def test_a_message_carries_a_file_by_its_mime_structure(name: str) -> None:
    parsed = parse_message((FIXTURES / name).read_bytes(), fallback_time=FALLBACK)
    assert parsed.envelope.has_attachment is CARRIES[name]


def test_an_inline_image_is_still_listed_for_reading_but_is_no_file() -> None:
    """read_message lists the signature's image (the reader sees it); it keeps no promise."""
    parsed = parse_message(
        (FIXTURES / "outlook_signature_logo.eml").read_bytes(), fallback_time=FALLBACK
    )
    assert [a.name for a in parsed.attachments] == ["image001.png"]
    assert parsed.envelope.has_attachment is False


def test_headers_cut_short_say_no_file_and_a_hostile_nest_is_bounded() -> None:
    raw = (FIXTURES / "gmail_pdf.eml").read_bytes()
    cut = parse_message(raw[:200], fallback_time=FALLBACK, whole=False)
    assert cut.body_read is False and cut.envelope.has_attachment is False
    nest = b"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b0\n\n"
    for n in range(300):
        nest += f"--b{n}\nContent-Type: multipart/mixed; boundary=b{n + 1}\n\n".encode()
    nest += b"--b300\nContent-Type: text/plain\n\nhi\n"
    parsed = parse_message(nest, fallback_time=FALLBACK)
    assert parsed.envelope.has_attachment is False


@pytest.mark.parametrize("kind", ["maildir", "mbox", "eml"])
def test_each_file_source_lists_it_and_changes_nothing(tmp_path: Path, kind: str) -> None:
    raws = [(FIXTURES / name).read_bytes() for name in sorted(CARRIES)]
    root = tmp_path / "mail"
    source: MailSource
    if kind == "maildir":
        for n, raw in enumerate(raws):
            deliver(root, raw, FALLBACK - dt.timedelta(minutes=n))
        source = MaildirSource("work", root)
    elif kind == "mbox":
        root.mkdir()
        source = MboxSource("work", write_mbox(root / "sent.mbox", raws))
    else:
        root.mkdir()
        for name in sorted(CARRIES):
            (root / name).write_bytes((FIXTURES / name).read_bytes())
        source = EmlFolderSource("work", root)
    before = snapshot(root)
    listed = _listed(source)
    assert _by_id(listed) == _expected_by_id()
    inbox = Inbox([source])
    for item in listed:  # read in full too: the same answer, and still nothing written
        read = source.read(item.stable_id)
        assert read is not None
        assert read.envelope.has_attachment is item.envelope.has_attachment
        toolbox.read_message({"id": item.id}, env_for(inbox))
    assert snapshot(root) == before


def test_the_json_shape_gives_attachments_by_name_or_object(tmp_path: Path) -> None:
    path = tmp_path / "inbox.json"
    messages = [
        {"id": "m1", "from": ALEX, "subject": "Report", "received_at": "2026-11-18T16:00:00+00:00",
         "to": "hana@example.net", "body": "Hi Hana", "attachments": ["Q3 report.pdf"]},
        {"id": "m2", "from": ALEX, "subject": "Deck", "received_at": "2026-11-18T15:00:00+00:00",
         "body": "Hi", "attachments": [{"name": "deck.pptx", "type": "application/vnd.ms-"
                                        "powerpoint", "size": 2048}]},
        {"id": "m3", "from": ALEX, "subject": "None", "received_at": "2026-11-18T14:00:00+00:00",
         "body": "Hi", "attachments": []},
        {"id": "m4", "from": ALEX, "subject": "Plain", "received_at": "2026-11-18T13:00:00+00:00",
         "body": "Hi"},
    ]  # fmt: skip
    path.write_text(json.dumps({"messages": messages}))
    before = snapshot(tmp_path)
    source = DictMail("work", JsonInbox(path, dt.date(2026, 11, 19)))
    listed = _listed(source)
    assert [(i.subject, i.envelope.has_attachment) for i in listed] == [
        ("Report", True), ("Deck", True), ("None", False), ("Plain", False),
    ]  # fmt: skip
    shown = toolbox.read_message({"id": listed[1].id}, env_for(Inbox([source])))["message"]
    assert shown["attachments"] == [
        {"name": "deck.pptx", "type": "application/vnd.ms-powerpoint", "size": 2048}
    ]
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "bad", [[3], [{"type": "text/plain"}], [{"name": "x", "size": -1}], "deck.pdf", [{"name": ""}]]
)
def test_a_malformed_json_attachments_list_is_one_line(tmp_path: Path, bad: Any) -> None:
    path = tmp_path / "inbox.json"
    message = {"id": "m1", "from": ALEX, "subject": "R", "received_at": "2026-11-18T16:00:00Z",
               "attachments": bad}  # fmt: skip
    path.write_text(json.dumps({"messages": [message]}))
    with pytest.raises(SourceError) as err:
        JsonInbox(path, dt.date(2026, 11, 19)).messages()
    assert "attachments" in str(err.value) and "\n" not in str(err.value)


# --- IMAP: BODYSTRUCTURE --------------------------------------------------------------------

# As Dovecot and Gmail answer (RFC 3501: the disposition a list), the file named only in the
# disposition, and a signature image with a Content-ID in multipart/related.
STANDARD = (
    b'((("text" "plain" ("charset" "UTF-8") NIL NIL "7bit" 72 6 NIL NIL NIL NIL)'
    b'("text" "html" ("charset" "UTF-8") NIL NIL "7bit" 123 3 NIL NIL NIL NIL) "alternative"'
    b' ("boundary" "b1") NIL NIL NIL)("application" "pdf" NIL NIL NIL "base64" 346 NIL'
    b' ("attachment" ("filename" "Q3.pdf")) NIL NIL) "mixed" ("boundary" "b0") NIL NIL NIL)'
)
LOGO = (
    b'(("text" "html" ("charset" "us-ascii") NIL NIL "7bit" 203 3 NIL NIL NIL NIL)'
    b'("image" "png" ("name" "image001.png") "<image001.png@01DB>" NIL "base64" 431 NIL'
    b' ("inline" ("filename" "image001.png")) NIL NIL) "related" ("boundary" "b") NIL NIL NIL)'
)


def test_bodystructure_in_the_rfc_shape() -> None:
    assert structure_attached(STANDARD) is True
    assert structure_attached(LOGO) is False
    plain = b'("text" "plain" ("charset" "utf-8") NIL NIL "7bit" 12 1 NIL NIL NIL NIL)'
    assert structure_attached(plain) is False
    assert parse_structure(b'("a" NIL "b\\"c")') == ["a", None, 'b"c']
    for broken in (b"", b"(", b'("a"', b"))", b'"a"', b"(a)(b)"):
        assert structure_attached(broken) is None


def test_a_literal_file_name_in_the_answer_is_read_and_no_uid_is_taken_from_it() -> None:
    """imaplib splits a literal out of the line: a file name sent as one is inlined, and a
    file named "UID 7" does not become the message's UID."""
    data = [
        (b'1 (BODYSTRUCTURE (("text" "plain" NIL NIL NIL "7bit" 5 1 NIL NIL NIL NIL)'
         b'("application" "pdf" NIL NIL NIL "base64" 9 NIL ("attachment" ("filename" {9}',
         b"UID 7.pdf"),
        (b')) NIL NIL) "mixed" NIL NIL NIL NIL) UID 42 FLAGS (\\Seen) BODY[HEADER] {4}',
         b"X: y"),
        b")",
    ]  # fmt: skip
    [(uid, flags, _, parts)] = responses(data)
    assert (uid, flags) == (42, b"\\Seen")
    assert structure_attached(parts["BODYSTRUCTURE"]) is True
    assert parts["HEADER"] == b"X: y"


@pytest.mark.slow
def test_imap_lists_it_from_the_bodystructure_and_changes_nothing(tmp_path: Path) -> None:
    """pymap on 127.0.0.1: each fixture, and a reply whose file starts past the listing's
    first bytes of text (only the structure can tell); EXAMINE and BODY.PEEK only."""
    long_text = "Notes on the report. " * 400  # ~8 KB before the file's part
    big = email.message.EmailMessage()
    big["From"], big["To"], big["Subject"] = ALEX, "Hana Sato <hana@example.net>", "Long"
    big["Message-ID"], big["Date"] = "<long-1@example.org>", "Wed, 18 Nov 2026 12:00:00 +0000"
    big.set_content(long_text)
    big.add_attachment(b"%PDF-1.4 x", maintype="application", subtype="pdf", filename="r.pdf")
    expected = {**_expected_by_id(), str(normalise_message_id("<long-1@example.org>")): True}
    with imap_server(tmp_path) as server:
        for name in sorted(CARRIES):
            server.append((FIXTURES / name).read_bytes(), seen=True)
        server.append(big.as_bytes(), seen=True)
        before = server.flags()
        source = ImapSource(spec(server.plain.port), env=ENV)
        try:
            listed = _listed(source)
            assert _by_id(listed) == expected
            assert all("BODYSTRUCTURE" in c for c in server.plain.lines("FETCH"))
            assert server.flags() == before
            verbs = {
                " ".join(c.split()[:2]) if c.startswith("UID") else c.split()[0]
                for c in server.plain.commands
            }
            assert verbs <= READ_ONLY, verbs
            assert all("BODY[" not in c for c in server.plain.lines("FETCH"))
        finally:
            source.close()


# --- a promise kept by a file ---------------------------------------------------------------

ME = parse_me(["alex@example.org"])
WED = dt.datetime(2026, 11, 18, 9, 0, tzinfo=dt.UTC)


def _msg(text: str, *, n: int, mine: bool = True, files: bool = False) -> ThreadMessage:
    me, them = ("Alex", "alex@example.org"), ("Hana Sato", "hana@example.net")
    sender, to = (me, them) if mine else (them, me)
    return ThreadMessage(
        f"k{n}", f"m{n}", "Report", WED + dt.timedelta(hours=n), sender[0], sender[1], (to,),
        (), mine, False, False, text, ("work",), has_attachment=files,
    )  # fmt: skip


def _open(*oldest_first: ThreadMessage) -> list[str]:
    newest = tuple(reversed(oldest_first))
    thread = Thread("thread:t", "Report", newest[0].received_at, newest, frozenset(), ("work",))
    return [p.what for p in promises([thread], ME, dt.UTC)]


def test_a_later_sent_message_with_a_file_keeps_the_promise() -> None:
    promise = _msg("I'll send you the report by Friday.", n=1)
    assert _open(promise, _msg("Hi Hana,\n\nBest,\nAlex", n=2, files=True)) == []
    # Words that deliver nothing, with no file: still open.
    assert _open(promise, _msg("Hi Hana,\n\nBest,\nAlex", n=2)) == ["Send report"]
    # The other's file is not the user's delivery.
    assert len(_open(promise, _msg("My notes.", n=2, mine=False, files=True))) == 1
    # A file on the promise itself ("part one now, I'll send the rest") keeps nothing.
    first = _msg("Part one now. I'll send you the rest by Friday.", n=1, files=True)
    assert len(_open(first)) == 1


def _sent(
    fixture: str, *, mid: str, to: str, subject: str, reply_to: str, when: dt.datetime
) -> bytes:
    """A fixture's message as Alex's reply in a thread of the test's (its structure kept)."""
    msg = email.message_from_bytes((FIXTURES / fixture).read_bytes(), policy=email.policy.compat32)
    for name in ("Message-ID", "In-Reply-To", "References", "Date", "To", "Subject", "From"):
        del msg[name]
    msg["From"], msg["To"], msg["Subject"] = ALEX, to, subject
    msg["Date"] = email.utils.format_datetime(when)
    msg["Message-ID"], msg["In-Reply-To"], msg["References"] = (
        f"<{mid}>",
        f"<{reply_to}>",
        f"<{reply_to}>",
    )
    return msg.as_bytes()


HANA = "Hana Sato <hana@example.net>"
IVAN = "Ivan Petrov <ivan@example.net>"


def _promised(text: str) -> list[str]:
    if "## You promised" not in text:
        return []
    after = text.split("## You promised", 1)[1].split("\n## ", 1)[0]
    return [re.sub(r" \(`promise:[0-9a-f]+`\)$", "", x) for x in after.strip().splitlines()]


@pytest.mark.slow
def test_day_twos_sent_file_removes_the_promise_from_the_brief(tmp_path: Path) -> None:
    """Day 1: Alex promised Hana the report and Ivan the lease terms. Overnight Alex sends
    Hana a Gmail reply with the PDF attached and no word of delivery, and Ivan an Outlook
    reply whose only image is the signature's: Hana's promise is kept, Ivan's is not."""
    inbox, sent = tmp_path / "INBOX", tmp_path / "Sent"
    deliver(inbox, thread_mail("bob1@x", subject="Budget", when=at(13)), at(13))
    deliver(sent, thread_mail("alex5@y", sender=ALEX, to=HANA, subject="Quarterly report",
                              body="Thanks Hana. I'll send you the quarterly report by Friday.",
                              when=at(17, 15)), at(17, 15))  # fmt: skip
    deliver(sent, thread_mail("alex6@y", sender=ALEX, to=IVAN, subject="Lease terms",
                              body="Good point. I'll send you the revised lease terms by Monday.",
                              when=at(17, 16)), at(17, 16))  # fmt: skip
    config = tmp_path / "config.toml"
    config.write_text(
        f'me = ["alex@example.org"]\n[[inbox]]\nname = "work"\nkind = "maildir"\n'
        f'path = "{inbox}"\nsent = "{sent}"\n'
    )
    env = {"DAYFLOW_CONFIG": str(config), "DAYFLOW_TZ": "UTC"}
    db = tmp_path / "dayflow.db"
    args = ("--since", "2026-11-11", "--model", "offline")
    one = dayflow(db, "brief", "--date", "2026-11-18", *args, api=None, **env)
    assert one.code == 0, one.err
    assert _promised(one.out) == [
        "- To Hana Sato: Send quarterly report, due Friday 20 November",
        "- To Ivan Petrov: Send revised lease terms, due Monday 23 November",
    ]
    deliver(sent, _sent("gmail_pdf.eml", mid="alex10@y", to=HANA, subject="Re: Quarterly report",
                        reply_to="alex5@y", when=at(18, 18)), at(18, 18))  # fmt: skip
    deliver(sent, _sent("outlook_signature_logo.eml", mid="alex11@y", to=IVAN,
                        subject="RE: Lease terms", reply_to="alex6@y", when=at(18, 19)),
            at(18, 19))  # fmt: skip
    before = snapshot(tmp_path / "Sent")
    two = dayflow(db, "brief", "--date", "2026-11-19", *args, api=None, **env)
    assert two.code == 0, two.err
    assert _promised(two.out) == [
        "- To Ivan Petrov: Send revised lease terms, due Monday 23 November",
    ]
    data = dayflow(db, "brief", "--date", "2026-11-19", *args, "--format", "json", api=None, **env)
    assert data.code == 0, data.err
    listed = json.loads(data.out)["followups"]["you_promised"]
    assert [p["with"]["address"] for p in listed] == ["ivan@example.net"]
    assert snapshot(tmp_path / "Sent") == before  # read-only


# --- a file whose part starts past the listing's first 64 KB --------------------------------

PAD = b"Notes on the quarter, line by line, for the record.\r\n" * 2000  # ~104 KB of text


def _padded(raw: bytes) -> bytes:
    """`raw` with a long text part first, so every later part starts past the 64 KB a local
    listing reads (its structure and the other parts as they were)."""
    msg = email.message_from_bytes(raw, policy=email.policy.compat32)
    boundary = msg.get_boundary()
    assert boundary, "a multipart fixture"
    mark = b"\n--" + boundary.encode() + b"\r\n"
    at = raw.find(mark) if mark in raw else raw.find(mark.replace(b"\r\n", b"\n"))
    assert at != -1
    part = b"\n--" + boundary.encode() + b"\r\nContent-Type: text/plain\r\n\r\n" + PAD
    return raw[:at] + part + raw[at:]


@pytest.mark.parametrize("kind", ["maildir", "mbox", "eml"])
def test_a_file_part_past_the_first_64_kb_is_still_seen(tmp_path: Path, kind: str) -> None:
    """Each fixture with ~104 KB of text before its other parts: every local source answers
    as for the fixture itself when asked (a PDF after the text is a file; a signature's logo
    or a bounce's copy still is not), the listing itself reads no further than its 64 KB
    (it sees no file there: the rest is read only when asked), and neither ever writes."""
    raws = {name: _padded((FIXTURES / name).read_bytes()) for name in sorted(CARRIES)}
    assert all(len(raw) > 100_000 for raw in raws.values())
    root = tmp_path / "mail"
    source: MailSource
    if kind == "maildir":
        for n, raw in enumerate(raws.values()):
            deliver(root, raw, FALLBACK - dt.timedelta(minutes=n))
        source = MaildirSource("work", root)
    elif kind == "mbox":
        root.mkdir()
        source = MboxSource("work", write_mbox(root / "sent.mbox", list(raws.values())))
    else:
        root.mkdir()
        for name, raw in raws.items():
            (root / name).write_bytes(raw)
        source = EmlFolderSource("work", root)
    before = snapshot(root)
    listed = _listed(source)
    assert set(_by_id(listed).values()) == {False}  # the listing read the first 64 KB only
    asked = {str(i.envelope.message_id): i.carries_file() for i in listed}
    assert asked == _expected_by_id()
    assert snapshot(root) == before


def test_a_changed_mbox_is_not_read_at_a_listings_offsets(tmp_path: Path) -> None:
    """An mbox rewritten between a listing and the question (a client compacting it) is not
    read at the old offsets: the file past the 64 KB is then not seen, never another's."""
    raw = _padded((FIXTURES / "gmail_pdf.eml").read_bytes())
    path = write_mbox(tmp_path / "sent.mbox", [raw])
    (item,) = _listed(MboxSource("work", path))
    path.write_bytes(path.read_bytes() + b"\n")
    assert item.carries_file() is False
    (again,) = _listed(MboxSource("work", path))
    assert again.carries_file() is True


def test_only_a_promise_asks_past_the_listing_and_asks_once() -> None:
    """The parts past a listing's bytes are read for the user's later messages in a thread
    with a promise, once each however often asked; never for another's message or a thread
    without a promise."""
    asked: list[str] = []

    def beyond(name: str, found: bool) -> Any:
        def read() -> bool:
            asked.append(name)
            return found

        return functools.cache(read)

    def late(m: ThreadMessage, name: str, found: bool) -> ThreadMessage:
        return dataclasses.replace(m, files_beyond=(beyond(name, found),))

    promise = _msg("I'll send you the report by Friday.", n=1)
    theirs = late(_msg("Thanks, waiting.", n=2, mine=False), "theirs", True)
    mine = late(_msg("Hi Hana,\n\nBest,\nAlex", n=3), "mine", True)
    assert _open(promise, theirs, mine) == []
    assert asked == ["mine"]
    assert mine.carries_file() and asked == ["mine"]  # read once
    asked.clear()
    quiet = late(_msg("Hi Hana, see you Friday.", n=2), "quiet", True)
    assert _open(_msg("Thanks for the notes.", n=1), quiet) == []
    assert asked == []


def test_the_scan_past_the_head_is_bounded_and_reads_part_headers_only() -> None:
    """`parts.attached_in` on hostile shapes: a binary part with no line end for megabytes,
    a file named only in the body's text, a nest of multiparts, a message of one part, and
    a file past `SCAN_BYTES` (not looked for)."""
    from dayflow.sources import parts

    head = b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b0\r\n\r\n"
    pdf = (
        b"--b0\r\nContent-Type: application/pdf\r\n"
        b'Content-Disposition: attachment; filename="r.pdf"\r\n\r\n%PDF\r\n--b0--\r\n'
    )

    def chunks(data: bytes, size: int = 4096) -> list[bytes]:
        return [data[i : i + size] for i in range(0, len(data), size)]

    blob = b"--b0\r\nContent-Type: application/octet-stream\r\n\r\n" + b"\x00" * 3_000_000
    assert parts.attached_in(chunks(head + blob + b"\r\n" + pdf)) is True
    # A delimiter-like line inside a part's content is no part (no such boundary declared).
    words = b"--b0\r\nContent-Type: text/plain\r\n\r\n--b9\r\nContent-Disposition: attachment\r\n"
    assert parts.attached_in(chunks(head + words + b"\r\n--b0--\r\n")) is False
    nest = head
    for n in range(parts.MAX_PARTS + 5):
        nest += f"--b{n}\r\nContent-Type: multipart/mixed; boundary=b{n + 1}\r\n\r\n".encode()
    assert parts.attached_in(chunks(nest + pdf.replace(b"b0", b"b1005"))) is False
    one = b"Content-Type: text/plain\r\n\r\n" + b"x\r\n" * 100_000 + pdf
    assert parts.attached_in(chunks(one)) is False  # one part: its own parse judged it
    far = head + b"--b0\r\nContent-Type: text/plain\r\n\r\n" + b"y" * parts.SCAN_BYTES + pdf
    assert parts.attached_in(chunks(far, parts.CHUNK)) is False
    # An mbox's "From " separator before the headers is passed over.
    assert parts.attached_in(chunks(b"From alex@x Wed Nov 18 12:00:00 2026\n" + head + pdf))


def test_a_promise_kept_by_a_file_past_the_first_64_kb_leaves_the_brief(tmp_path: Path) -> None:
    """Through the CLI (in-process): day 1 lists Alex's promise to Hana; overnight Alex's
    reply carries the PDF after ~104 KB of text and no word of delivery; day 2 has none."""
    from tests.harness import invoke, offline_model

    inbox, sent = tmp_path / "INBOX", tmp_path / "Sent"
    deliver(inbox, thread_mail("bob1@x", subject="Budget", when=at(13)), at(13))
    deliver(sent, thread_mail("alex5@y", sender=ALEX, to=HANA, subject="Quarterly report",
                              body="Thanks Hana. I'll send you the quarterly report by Friday.",
                              when=at(17, 15)), at(17, 15))  # fmt: skip
    config = tmp_path / "config.toml"
    config.write_text(
        f'me = ["alex@example.org"]\n[[inbox]]\nname = "work"\nkind = "maildir"\n'
        f'path = "{inbox}"\nsent = "{sent}"\n'
    )
    env = {"DAYFLOW_CONFIG": str(config), "DAYFLOW_TZ": "UTC"}

    def promised(day: str) -> list[str]:
        res = invoke(tmp_path / "d.db", offline_model, "brief", "--date", day, "--since",
                     "2026-11-11", "--format", "json", env=env,
                     clock=f"{day}T07:30:00+00:00")  # fmt: skip
        assert res.code == 0, res.err
        followups = json.loads(res.out)["followups"]
        assert isinstance(followups, dict)  # the followups were read
        return [p["with"]["address"] for p in followups.get("you_promised") or []]

    assert promised("2026-11-18") == ["hana@example.net"]
    reply = _sent("gmail_pdf.eml", mid="alex10@y", to=HANA, subject="Re: Quarterly report",
                  reply_to="alex5@y", when=at(18, 18))  # fmt: skip
    deliver(sent, _padded(reply), at(18, 18))
    assert promised("2026-11-19") == []
