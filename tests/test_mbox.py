"""The mbox reader: boundaries found without parsing the file, only the page parsed; `From `
lines inside bodies (escaped or not) never split a message; a truncated last message, CRLF
files, an empty file and files that are not mboxes; the cursor survives mail appended between
pages; the window uses the separator line's delivery time."""

from __future__ import annotations

import datetime as dt
import email
import json
import mailbox
from pathlib import Path

import pytest

from dayflow.errors import SourceError
from dayflow.sources.inbox import Inbox
from dayflow.sources.mbox import MboxSource
from tests.mailkit import BASE, message, write_mbox

MINUTE = dt.timedelta(minutes=1)


def subjects(source: MboxSource, **kw: object) -> list[str]:
    kw.setdefault("limit", 50)
    return [m.subject for m in Inbox([source]).listing(**kw).items]  # type: ignore[arg-type]


def test_the_boundaries_are_those_of_the_mailbox_module_on_a_well_formed_file(
    tmp_path: Path,
) -> None:
    box = write_mbox(tmp_path / "b.mbox", [message(n) for n in range(25)], read={3, 7})
    ours = Inbox([MboxSource("b", box)]).listing(limit=50).items
    theirs = mailbox.mbox(box, create=False)
    try:
        assert len(ours) == len(theirs) == 25
        assert [m.subject for m in ours] == [m["Subject"] for m in reversed(list(theirs))]
    finally:
        theirs.close()
    assert [m.unread for m in ours] == [n not in (3, 7) for n in range(24, -1, -1)]


def test_from_lines_in_a_body_escaped_or_not_never_split_a_message(tmp_path: Path) -> None:
    body = (
        "Hi,\n\nFrom the desk of Sam: the numbers.\n"
        ">From here on, the plan.\n\n"
        "From 9:00 to 17:00 on Tuesday the office is closed.\n"
        "From now on 12:30 lunch, every day of 2026.\n"
    )
    raw = message(1, subject="Tricky body", body=body).replace(b"\r\n", b"\n")
    head, _, text = raw.partition(b"\n\n")
    text = text.replace(b"\n>From here", b"\n>>From here")  # mboxrd: '>From' is stored '>>From'
    path = tmp_path / "b.mbox"
    path.write_bytes(
        b"From a@x Wed Nov  4 08:00:00 2026\n" + message(0).replace(b"\r\n", b"\n") + b"\n"
        b"From b@x Wed Nov  4 08:01:00 2026\n" + head + b"\n\n" + text + b"\n"
        b"From c@x Wed Nov  4 08:02:00 2026\n" + message(2).replace(b"\r\n", b"\n")
    )
    source = MboxSource("b", path)
    assert subjects(source) == ["Message number 2", "Tricky body", "Message number 0"]
    tricky = Inbox([source]).listing(limit=50).items[1]
    got = Inbox([source]).read(tricky.id).body or ""
    assert "From the desk of Sam" in got and "\n>From here on, the plan." in got
    assert "From 9:00 to 17:00" in got and "12:30 lunch" in got


def test_a_truncated_last_message_is_listed_best_effort(tmp_path: Path) -> None:
    path = write_mbox(tmp_path / "b.mbox", [message(n) for n in range(3)])
    raw = path.read_bytes()
    last = raw.rfind(b"\nFrom ") + 1
    for cut in (last + 10, last + 60, len(raw) - 15):  # in the separator, the headers, the body
        path.write_bytes(raw[:cut])
        got = subjects(MboxSource("b", path))
        assert got[-2:] == ["Message number 1", "Message number 0"], cut
        assert len(got) in (2, 3)


def test_crlf_files_empty_files_and_files_that_are_not_mboxes(tmp_path: Path) -> None:
    crlf = write_mbox(tmp_path / "crlf.mbox", [message(n) for n in range(3)])
    crlf.write_bytes(crlf.read_bytes().replace(b"\n", b"\r\n"))
    assert subjects(MboxSource("c", crlf)) == [f"Message number {n}" for n in (2, 1, 0)]
    empty = tmp_path / "empty.mbox"
    empty.write_bytes(b"")
    assert MboxSource("e", empty).status() == (0, None)
    junk = tmp_path / "junk.mbox"
    junk.write_bytes(b"Subject: not an mbox\n\nhello\n")
    with pytest.raises(SourceError, match="is not an mbox file"):
        MboxSource("j", junk).status()
    with pytest.raises(SourceError, match="is a directory"):
        MboxSource("d", tmp_path).status()


def test_the_cursor_survives_mail_appended_between_pages(tmp_path: Path) -> None:
    path = write_mbox(tmp_path / "b.mbox", [message(n, when=BASE + n * MINUTE) for n in range(6)])
    source = MboxSource("b", path)
    first = Inbox([source]).listing(limit=3)
    assert [m.subject[-1] for m in first.items] == ["5", "4", "3"]
    later = write_mbox(tmp_path / "more.mbox", [message(9, when=BASE + 9 * MINUTE)])
    with path.open("ab") as fh:
        fh.write(b"\n" + later.read_bytes())
    rest = Inbox([source]).listing(limit=3, cursor=first.next_cursor)
    assert [m.subject[-1] for m in rest.items] == ["2", "1", "0"]
    assert subjects(MboxSource("b", path))[0] == "Message number 9"


def test_the_window_uses_the_separator_lines_delivery_time(tmp_path: Path) -> None:
    """Dates in the headers lie (a message written a day before it was sent); the separator
    line says when it arrived (asctime or RFC 5322); one whose date cannot be read leaves the
    header's date to it."""
    path = tmp_path / "b.mbox"
    parts = []
    for n in range(4):
        arrived = BASE + n * MINUTE
        stamp = f"{arrived:%a %b} {arrived.day:2d} {arrived:%H:%M:%S %Y}"
        written = message(n, when=arrived - dt.timedelta(days=1)).replace(b"\r\n", b"\n")
        parts.append(f"From s@x {stamp}\n".encode() + written)
    parts.append(
        b"From s@x Wed, 04 Nov 2026 08:05:00 +0000\n"
        + message(5, when=BASE - dt.timedelta(days=1)).replace(b"\r\n", b"\n")
    )
    parts.append(
        b"From s@x on the 4th at 08:10 in 2026\n"
        + message(7, when=BASE + 10 * MINUTE).replace(b"\r\n", b"\n")
    )
    path.write_bytes(b"\n".join(parts))
    source = MboxSource("b", path)
    assert subjects(source, since=BASE + 2 * MINUTE) == [
        "Message number 7",
        "Message number 5",
        "Message number 3",
        "Message number 2",
    ]
    assert subjects(source, since=BASE + 11 * MINUTE) == []


def test_hostile_mboxes_through_the_cli_are_one_line_each(tmp_path: Path) -> None:
    from dayflow.providers.offline import OfflineModel
    from tests.harness import invoke

    good = write_mbox(tmp_path / "good.mbox", [message(n) for n in range(3)])
    empty = tmp_path / "empty.mbox"
    empty.write_bytes(b"")
    junk = tmp_path / "junk.mbox"
    junk.write_bytes(b"\x00\xff binary junk")
    cut = tmp_path / "cut.mbox"
    cut.write_bytes(good.read_bytes()[:-40])
    body = "".join(
        f'[[inbox]]\nname = "{p.stem}"\nkind = "mbox"\npath = "{p}"\n'
        for p in (good, empty, junk, cut)
    )
    (tmp_path / "config.toml").write_text(body)
    env = {"DAYFLOW_CONFIG": str(tmp_path / "config.toml")}
    model = lambda m, s: OfflineModel()  # noqa: E731
    check = invoke(tmp_path / "d.db", model, "sources", "check", env=env)
    assert check.code == 4 and "Traceback" not in check.out + check.err
    lines = check.out.splitlines()
    assert len(lines) == 4
    assert "3 message(s)" in lines[0] and "0 message(s)" in lines[1]
    assert lines[2].startswith("junk") and "is not an mbox file" in lines[2]
    assert "3 message(s)" in lines[3]
    report = json.loads(invoke(tmp_path / "d.db", model, "sources", "check", "--json", env=env).out)
    assert [s["ok"] for s in report["sources"]] == [True, True, False, True]


def test_separators_without_a_date_split_messages_after_a_blank_line(tmp_path: Path) -> None:
    """`From p1@ex.example` alone on a line after a blank line merged the following messages
    into one. Cousins: a sender that is not an address (MAILER-DAEMON), CRLF lines, a dated
    separator beside dateless ones; prose after a blank line ("From the desk of Sam", a lone
    "From Dana") and a dateless `From ` line not after a blank line still never split."""
    body = "Hi,\n\nFrom the desk of Sam: the numbers.\n\nFrom Dana\nwith thanks\n"
    tricky = message(2, subject="Tricky body", body=body).replace(b"\r\n", b"\n")
    parts = [
        b"From p0@ex.example\n" + message(0).replace(b"\r\n", b"\n"),
        b"From MAILER-DAEMON\n" + message(1).replace(b"\r\n", b"\n"),
        b"From p2@ex.example\n" + tricky,
        b"From p3@ex.example Wed Nov  4 08:03:00 2026\n" + message(3).replace(b"\r\n", b"\n"),
        b"From p4@ex.example\n" + message(4).replace(b"\r\n", b"\n"),
    ]
    for eol in (b"\n", b"\r\n"):
        path = tmp_path / f"dateless{len(eol)}.mbox"
        path.write_bytes(b"\n".join(parts).replace(b"\n", eol))
        source = MboxSource("b", path)
        assert subjects(source) == [
            "Message number 4",
            "Message number 3",
            "Tricky body",
            "Message number 1",
            "Message number 0",
        ]
        item = next(m for m in Inbox([source]).listing(limit=50).items if "Tricky" in m.subject)
        got = (Inbox([source]).read(item.id).body or "").replace("\r\n", "\n")
        assert "From the desk of Sam" in got and "From Dana\nwith thanks" in got
    glued = tmp_path / "glued.mbox"
    glued.write_bytes(
        b"From p0@ex.example\n"
        + message(0, body="line one\nFrom p9@ex.example\nSubject: not a header\n").replace(
            b"\r\n", b"\n"
        )
    )
    assert subjects(MboxSource("g", glued)) == ["Message number 0"]


def test_a_folded_status_header_still_marks_the_message_read(tmp_path: Path) -> None:
    """RFC 5322 lets any header be folded: `Status:` / ` RO` is read, as the mailbox module
    and mutt read it; a body line `Status: RO` says nothing."""
    path = tmp_path / "f.mbox"
    folded = message(1).replace(b"MIME-Version", b"Status:\r\n RO\r\nMIME-Version", 1)
    in_body = message(2, body="Status: RO")
    path.write_bytes(
        b"From a@example.org Wed Nov  4 08:01:00 2026\n" + folded.replace(b"\r\n", b"\n")
        + b"\nFrom a@example.org Wed Nov  4 08:02:00 2026\n" + in_body.replace(b"\r\n", b"\n")
    )  # fmt: skip
    assert email.message_from_bytes(folded)["Status"].split() == ["RO"]
    items = Inbox([MboxSource("f", path)]).listing(limit=50).items  # type: ignore[list-item]
    assert {m.subject: m.unread for m in items} == {
        "Message number 1": False,
        "Message number 2": True,
    }
