"""Who a message is from, as the brief, the page and `dayflow why` show it: one rule for all.

A sender comes as a From value (`Dana Whitfield <dana@x>`, `dana@x`), as (name, address), or as
a party dict (`{"name": ..., "address": ...}`, what the followups and the since-yesterday reads
hand over). `sender_parts` gives its (name, address) cleaned: RFC 2047 encoded words decoded
(the JSON files hand them over raw), control and format characters out, whitespace collapsed,
blank parts and stray quotes removed (`Quote "" <q@x>` is "Quote", `"" <q@x>` has no name), a
name that is itself an address dropped (it would pass off another address as the sender's),
and a long name cut to MAX_NAME. `sender_name` is the name, else the address, else the value
as it is; `with_address` is "Name (address)", never in angle brackets (Markdown would read
them as a link), and `from_line` is "Name <address>", as `dayflow why` and the page's
evidence show who a message is from. A value floor of its own, so the page and the offline
model can both import it (tests/floors.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

MAX_NAME = 100  # characters of a display name shown, the last an ellipsis when cut
_BRACKETED = re.compile(r"^(.*?)<([^<>]*)>\s*$", re.DOTALL)
_EMPTY_QUOTES = re.compile(r"""(?:""|'')""")
_ADDRESS = re.compile(r"^<?[^\s@<>]+@[^\s@<>]+>?$")


def sender_parts(sender: object) -> tuple[str, str]:
    """(display name, address) of a From value, a (name, address) pair or a party dict, each
    cleaned; "" for a part it does not have."""
    if isinstance(sender, Mapping):
        name, address = str(sender.get("name") or ""), str(sender.get("address") or "")
    elif isinstance(sender, tuple | list) and len(sender) == 2:
        name, address = str(sender[0] or ""), str(sender[1] or "")
    elif isinstance(sender, str):
        name, address = _split(sender)
    else:
        return "", ""
    address = "".join(_clean(address).split()).strip("<>")
    name = _unquoted(_clean(_decoded(name)))
    if _ADDRESS.match(name):  # `"boss@bank.example" <x@elsewhere>`: shown by its address
        name = ""
    if len(name) > MAX_NAME:
        name = name[: MAX_NAME - 1].rstrip() + "…"
    return name, address


def sender_name(sender: object, default: str = "someone") -> str:
    """The name a sender is shown by: its display name, else its address, else the value
    itself (a From that parses as neither), else `default`."""
    name, address = sender_parts(sender)
    return name or address or (_clean(sender) if isinstance(sender, str) else "") or default


def with_address(sender: object, default: str = "someone") -> str:
    """ "Dana (dana@x)": the name with its address, or whichever of them it has."""
    name, address = sender_parts(sender)
    if name and address:
        return f"{name} ({address})"
    return sender_name(sender, default)


def sender_address(sender: object) -> str:
    """The address of a sender, lower-cased, "" without one: `Doe, Jane <Jane@X.example>` is
    jane@x.example (parseaddr reads an unquoted comma as two addresses and gives "Doe", the
    form a MIME From with a quoted `"Doe, Jane"` is rebuilt in)."""
    return sender_parts(sender)[1].lower()


def from_line(sender: object, default: str = "") -> str:
    """ "Dana <dana@x>": the sender as a From line shows it (`dayflow why`, the page's
    evidence), cleaned as `sender_parts` cleans it."""
    name, address = sender_parts(sender)
    if name and address:
        return f"{name} <{address}>"
    return sender_name(sender, default)


def _split(value: str) -> tuple[str, str]:
    from email.utils import parseaddr  # only when a sender is shown

    name, address = parseaddr(value)
    if "@" not in address and "<" not in value:  # `Dana Whitfield`: a name, no address
        return value, ""
    found = _BRACKETED.match(value.strip())
    if found is not None and found.group(2).strip() != address.strip():
        # An unquoted comma (`Amy Lin, RN <nurse@x>`) reads as two addresses to parseaddr.
        return found.group(1), found.group(2)
    return name, address


def _decoded(name: str) -> str:
    if "=?" not in name:
        return name
    from email.header import decode_header, make_header

    try:
        return str(make_header(decode_header(name)))
    except Exception:  # a broken encoded word: its raw text
        return name


def _unquoted(name: str) -> str:
    """A name without the quotes around it (`'Dana'`), nor one left unpaired at an end."""
    while len(name) >= 2 and name[0] == name[-1] and name[0] in "\"'":
        name = name[1:-1].strip()
    if name.strip("\"'") == "":
        return ""
    for mark in "\"'":
        if name.count(mark) % 2:
            name = name.strip(mark).strip() if name[0] == mark or name[-1] == mark else name
    return name


def _clean(text: str) -> str:
    """`text` on one line: control characters as spaces, format characters (bidi, zero
    width) out, empty quote pairs out, whitespace collapsed."""
    kept = []
    for ch in text:
        kind = unicodedata.category(ch)
        if kind == "Cc":
            kept.append(" ")
        elif kind != "Cf":
            kept.append(ch)
    return " ".join(_EMPTY_QUOTES.sub(" ", "".join(kept)).split())
