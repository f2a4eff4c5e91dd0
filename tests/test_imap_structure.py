"""`imap_wire.parse_structure` (with `responses`, which inlines a FETCH answer's literals)
against imapclient's parser, the library that reads IMAP responses, on the BODYSTRUCTURE
answers of RFC 3501's examples and in the shapes Gmail, Dovecot and Exchange send (issue 34).

A standard format read by a hand-written parser is held to the library that reads it: each
answer is parsed by both, imapclient's tree is brought to ours (bytes as text, numbers as their
digits, a multipart's parts back in line before its subtype), and the two must be equal; the
parts' numbering, types, parameters and sizes are then compared as a table, so a failure says
which part differs. imapclient is a test-only dependency (the `test` extra)."""

from __future__ import annotations

from typing import Any

import pytest

from dayflow.sources.imap_wire import Sexp, parse_structure, responses, structure_attached

response_parser = pytest.importorskip(
    "imapclient.response_parser", reason="imapclient (the test extra) is not installed"
)

# RFC 3501 section 7.4.2's two examples, as the standard prints them.
RFC_PLAIN = b'("TEXT" "PLAIN" ("CHARSET" "US-ASCII") NIL NIL "7BIT" 3028 92)'
RFC_MIXED = (
    b'(("TEXT" "PLAIN" ("CHARSET" "US-ASCII") NIL NIL "7BIT" 1152 23)("TEXT" "PLAIN" '
    b'("CHARSET" "US-ASCII" "NAME" "cc.diff") "<960723163407.20117h@cac.washington.edu>" '
    b'"Compiler diff" "BASE64" 4554 73) "MIXED")'
)
# Gmail's shape: upper-case types, three extension fields on a part (MD5, disposition,
# language), the boundary on each multipart, the attachment's X-Attachment-Id as its id.
GMAIL_ALTERNATIVE = (
    b'(("TEXT" "PLAIN" ("CHARSET" "UTF-8") NIL NIL "7BIT" 212 6 NIL NIL NIL)("TEXT" "HTML" '
    b'("CHARSET" "UTF-8") NIL NIL "QUOTED-PRINTABLE" 1410 29 NIL NIL NIL) "ALTERNATIVE" '
    b'("BOUNDARY" "0000000000004e1c9a06353396e6") NIL NIL)'
)
GMAIL_MIXED = (
    b'((("TEXT" "PLAIN" ("CHARSET" "UTF-8") NIL NIL "7BIT" 58 2 NIL NIL NIL)("TEXT" "HTML" '
    b'("CHARSET" "UTF-8") NIL NIL "7BIT" 131 2 NIL NIL NIL) "ALTERNATIVE" ("BOUNDARY" '
    b'"000000000000a9f0c406353396e6") NIL NIL)("APPLICATION" "PDF" ("NAME" "Q4 budget.pdf") '
    b'"<f_m3k2x1q90>" NIL "BASE64" 187354 NIL ("ATTACHMENT" ("FILENAME" "Q4 budget.pdf")) NIL)'
    b' "MIXED" ("BOUNDARY" "000000000000a9f0c606353396e8") NIL NIL)'
)
# Dovecot's shape: lower-case, four extension fields (with the location), an inline
# disposition with no parameters, a forwarded message with its envelope and its own body.
DOVECOT_FORWARD = (
    b'(("text" "plain" ("charset" "utf-8" "format" "flowed") NIL NIL "8bit" 340 11 NIL '
    b'("inline" NIL) NIL NIL)("message" "rfc822" ("name" "Fwd: plan.eml") NIL NIL "7bit" 2210 '
    b'("Mon, 02 Nov 2026 09:12:00 +0100" "Re: the \\"plan\\"" (("Dana Whitfield" NIL "dana" '
    b'"example.org")) (("Dana Whitfield" NIL "dana" "example.org")) (("Dana Whitfield" NIL '
    b'"dana" "example.org")) ((NIL NIL "alex" "example.org")) NIL NIL NIL '
    b'"<CAJ1x@mail.example.org>") (("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 420 '
    b'14 NIL NIL NIL NIL)("text" "html" ("charset" "us-ascii") NIL NIL "quoted-printable" 980 '
    b'22 NIL NIL NIL NIL) "alternative" ("boundary" "=_9f3b") NIL NIL NIL) 52 NIL '
    b'("attachment" ("filename" "Fwd: plan.eml")) NIL NIL) "mixed" ("boundary" "=_a71c") NIL '
    b"NIL NIL)"
)
# Exchange's shape: a related part with an inline logo, a spreadsheet whose disposition
# carries its size and dates, the description holding the file name, a language on the
# message.
EXCHANGE_RELATED = (
    b'((("text" "html" ("charset" "us-ascii") NIL NIL "quoted-printable" 5120 120 NIL NIL NIL '
    b'NIL)("image" "png" ("name" "image001.png") "<image001.png@01DB4A2C.5F1E0B30>" '
    b'"image001.png" "base64" 10230 NIL ("inline" ("filename" "image001.png" "size" "7473" '
    b'"creation-date" "Mon, 02 Nov 2026 08:00:11 GMT" "modification-date" "Mon, 02 Nov 2026 '
    b'08:00:11 GMT")) NIL NIL) "related" ("boundary" "_004_AM0PR04MB" "type" "text/html") NIL '
    b'NIL)("application" "vnd.openxmlformats-officedocument.spreadsheetml.sheet" ("name" '
    b'"Q4 numbers.xlsx") NIL "Q4 numbers.xlsx" "base64" 24388 NIL ("attachment" ("filename" '
    b'"Q4 numbers.xlsx" "size" "17820" "creation-date" "Mon, 02 Nov 2026 08:01:40 GMT" '
    b'"modification-date" "Mon, 02 Nov 2026 08:01:40 GMT")) NIL NIL) "mixed" ("boundary" '
    b'"_005_AM0PR04MB") NIL "en-US")'
)
# NIL where a server leaves a field out: no parameters, no encoding, no subtype's boundary.
NILS = (
    b'(("text" "plain" NIL NIL NIL "7bit" 0 0 NIL NIL NIL NIL)("application" "octet-stream" '
    b'NIL NIL NIL "base64" 1024 NIL NIL NIL NIL) "mixed" NIL NIL NIL NIL)'
)
STRUCTURES = {
    "rfc3501-plain": RFC_PLAIN,
    "rfc3501-mixed": RFC_MIXED,
    "gmail-alternative": GMAIL_ALTERNATIVE,
    "gmail-mixed-attachment": GMAIL_MIXED,
    "dovecot-forwarded-rfc822": DOVECOT_FORWARD,
    "exchange-related-and-file": EXCHANGE_RELATED,
    "nil-fields": NILS,
}


def _fetch(structure: bytes) -> list[Any]:
    """A FETCH answer as imaplib hands it over: one line here (no literal)."""
    return [b"7 (UID 41 FLAGS (\\Seen) BODYSTRUCTURE " + structure + b")"]


# A file name sent as a literal (Dovecot and Exchange do so for names with 8-bit or quote
# characters): imaplib gives (the line up to the literal's size, the literal), then the rest.
LITERAL_NAME = 'Résumé "final".pdf'.encode()
LITERAL = [
    (
        b'7 (UID 41 BODYSTRUCTURE (("text" "plain" ("charset" "utf-8") NIL NIL "7bit" 80 3 NIL '
        b'NIL NIL NIL)("application" "pdf" ("name" {%d}' % len(LITERAL_NAME),
        LITERAL_NAME,
    ),
    b') NIL NIL "base64" 5400 NIL ("attachment" ("filename" "resume.pdf")) NIL NIL) "mixed" '
    b'("boundary" "b1") NIL NIL NIL))',
]


def _theirs(node: Any) -> Sexp:
    """imapclient's value in our shape: text for bytes, digits for numbers, lists for tuples,
    a multipart's parts (imapclient nests them in one list) back in line."""
    if node is None:
        return None
    if isinstance(node, bytes):
        return node.decode("utf-8", "replace")
    if isinstance(node, int):
        return str(node)
    items = list(node)
    if items and isinstance(items[0], list):  # BodyData of a multipart: ([parts], subtype, ...)
        items = [*items[0], *items[1:]]
    return [_theirs(item) for item in items]


def _imapclient(data: list[Any]) -> Sexp:
    parsed = response_parser.parse_fetch_response(data)
    ((_, items),) = parsed.items()
    return _theirs(items[b"BODYSTRUCTURE"])


def _ours(data: list[Any]) -> Sexp:
    ((uid, _, _, parts),) = responses(data)
    assert uid == 41
    return parse_structure(parts["BODYSTRUCTURE"])


Row = tuple[str, str, str, str]


def _parts(node: Sexp, number: str = "") -> list[Row]:
    """(part number, type/subtype, parameters, size) of each part, as RFC 3501 numbers them
    (a message/rfc822's body is numbered under it); a multipart shows its subtype."""
    assert isinstance(node, list) and node
    if isinstance(node[0], list):
        count = next(i for i, x in enumerate(node) if not isinstance(x, list))
        rows: list[Row] = [(number or "TEXT", f"multipart/{str(node[count]).lower()}", "", "")]
        for n, part in enumerate(node[:count], 1):
            rows += _parts(part, f"{number}.{n}" if number else str(n))
        return rows
    main, sub, params = str(node[0]).lower(), str(node[1]).lower(), node[2]
    shown = " ".join(str(p) for p in params) if isinstance(params, list) else "NIL"
    leaf: list[Row] = [(number or "1", f"{main}/{sub}", shown, str(node[6]))]
    inner = node[8] if (main, sub) == ("message", "rfc822") else None
    if isinstance(inner, list) and inner and isinstance(inner[0], list):
        leaf += _parts(inner, number or "1")
    return leaf


@pytest.mark.parametrize("name", list(STRUCTURES))
def test_parse_structure_reads_a_bodystructure_as_imapclient_does(name: str) -> None:
    data = _fetch(STRUCTURES[name])
    ours, theirs = _ours(data), _imapclient(data)
    assert _parts(ours) == _parts(theirs)
    assert ours == theirs


def test_a_literal_file_name_is_read_as_imapclient_reads_it() -> None:
    ours, theirs = _ours(LITERAL), _imapclient(LITERAL)
    assert ours == theirs
    assert _parts(ours)[2] == ("2", "application/pdf", 'name Résumé "final".pdf', "5400")


def test_the_numbering_and_fields_of_a_forwarded_message_and_a_related_part() -> None:
    """What the table compares, stated once by hand for two of the answers."""
    assert _parts(parse_structure(DOVECOT_FORWARD)) == [
        ("TEXT", "multipart/mixed", "", ""),
        ("1", "text/plain", "charset utf-8 format flowed", "340"),
        ("2", "message/rfc822", "name Fwd: plan.eml", "2210"),
        ("2", "multipart/alternative", "", ""),
        ("2.1", "text/plain", "charset us-ascii", "420"),
        ("2.2", "text/html", "charset us-ascii", "980"),
    ]
    rows = _parts(parse_structure(EXCHANGE_RELATED))
    assert [r[:2] for r in rows] == [
        ("TEXT", "multipart/mixed"),
        ("1", "multipart/related"),
        ("1.1", "text/html"),
        ("1.2", "image/png"),
        ("2", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ]
    # and what the reader makes of them: a file each, none in the Gmail alternative
    assert structure_attached(EXCHANGE_RELATED) is True
    assert structure_attached(DOVECOT_FORWARD) is True
    assert structure_attached(GMAIL_ALTERNATIVE) is False
