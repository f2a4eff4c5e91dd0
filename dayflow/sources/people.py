"""Who an event is with: its attendees and organizer as name plus address, the user's own answer
to it, and whether it takes the user's time.

Why a module of its own: these are the parts of an event anyone who invites the user writes, so
they are bounded and cleaned here, once, for every calendar kind (`ical` hands over the parsed
properties, `json_files` its strings). A name is the CN parameter with control, format and bidi
characters dropped and whitespace collapsed, cut to MAX_NAME; an address is the `mailto:` value
(any case, percent-escapes decoded, a `?query` dropped) lowercased, kept only when it looks like
one address (MAX_ADDRESS characters, one `@`, no spaces or brackets), else "". When the value
is not an address (iCloud's `urn:uuid:...`, a principal URL), the EMAIL parameter is (RFC 7986
6.2). An attendee with neither is dropped, as are rooms and resources (CUTYPE=ROOM or
RESOURCE: not people), and an address listed twice is kept once. At most MAX_ATTENDEES are
kept, in the calendar's order, the rest counted (`attendees_more`), but the user's answer is
looked for among all of them, so a 5,000-person all-hands still knows it was declined.

The user's answer (`response`): the PARTSTAT of the user's own ATTENDEE line (`me` says which
addresses are the user's): `accepted`, `tentative`, `declined` or `needs-action` (RFC 5545's
default when PARTSTAT is absent); DELEGATED counts as declined (someone else goes) and an unknown
value as needs-action. Listed under two of the user's addresses, the most committed answer wins.
An organizer who is the user and is not listed has accepted. No answer when the user is on
neither list (a calendar of one's own, a shared one). A declined event, like a free one
(TRANSP:TRANSPARENT), takes no time (`takes_time`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import unquote

MAX_ATTENDEES = 50  # kept per event; the tools show 20
MAX_NAME = 100
MAX_ADDRESS = 254  # RFC 5321's longest path
RESPONSES = ("accepted", "tentative", "declined", "needs-action")
_PARTSTAT = {
    "ACCEPTED": "accepted",
    "TENTATIVE": "tentative",
    "DECLINED": "declined",
    "DELEGATED": "declined",
    "NEEDS-ACTION": "needs-action",
}
_ADDRESS = re.compile(r"[^\s@<>()\[\],;:\"\\]+@[^\s@<>()\[\],;:\"\\]+")
_NOT_PEOPLE = {"ROOM", "RESOURCE"}

Me = Callable[[str], bool]  # whether an address (lowercase) is one of the user's


def nobody(address: str) -> bool:
    """The `Me` of a reader not told who the user is: no address is the user's."""
    return False


def clean_name(value: object) -> str:
    """A display name without control, format or bidi characters, on one line, bounded."""
    text = str(value)[: MAX_NAME * 4]
    kept = "".join(c for c in text if unicodedata.category(c)[0] != "C" or c in " \t\n")
    return " ".join(kept.split())[:MAX_NAME]


def clean_address(value: object) -> str:
    """The address of a `mailto:` value (or a bare address), lowercased; "" when it is not one."""
    text = str(value)[: MAX_ADDRESS * 4].strip()
    if text[:7].lower() == "mailto:":
        text = text[7:]
    text = unquote(text.partition("?")[0]).strip()
    if len(text) > MAX_ADDRESS or any(unicodedata.category(c)[0] == "C" for c in text):
        return ""
    return text.lower() if _ADDRESS.fullmatch(text) else ""


def person(name: object, address: object) -> dict[str, str] | None:
    """`{"name", "address"}` cleaned, or None when neither is left."""
    who = {"name": clean_name(name or ""), "address": clean_address(address or "")}
    return who if who["name"] or who["address"] else None


def from_ical(component: Any, me: Me) -> dict[str, Any]:
    """The `attendees`, `attendees_more`, `organizer`, `response` and `free` fields of a parsed
    VEVENT (only those that apply)."""
    raw = component.get("ATTENDEE")
    values = raw if isinstance(raw, list) else [] if raw is None else [raw]
    listed = []
    for value in values:
        params = getattr(value, "params", {})
        if str(params.get("CUTYPE", "")).upper() in _NOT_PEOPLE:
            continue
        who = person(params.get("CN"), _address(value, params))
        if who is not None:
            listed.append((who, _partstat(params.get("PARTSTAT"))))
    organizer = None
    value = component.get("ORGANIZER")
    if value is not None and not isinstance(value, list):
        params = getattr(value, "params", {})
        organizer = person(params.get("CN"), _address(value, params))
    free = str(component.get("TRANSP", "")).strip().upper() == "TRANSPARENT"
    return fields(listed, organizer, me, free=free)


def fields(
    listed: Iterable[tuple[dict[str, str], str]],
    organizer: dict[str, str] | None,
    me: Me,
    *,
    free: bool = False,
) -> dict[str, Any]:
    """An event's people fields from its attendees (each with its PARTSTAT answer, "" when the
    calendar gives none) and organizer: the first MAX_ATTENDEES distinct ones, the rest counted,
    and the user's answer."""
    out: dict[str, Any] = {}
    kept: list[dict[str, str]] = []
    seen: set[str] = set()
    more = 0
    mine: list[str] = []
    for who, answer in listed:
        address = who["address"]
        if address and address in seen:
            continue
        if address:
            seen.add(address)
            if answer and me(address):
                mine.append(answer)
        if len(kept) < MAX_ATTENDEES:
            kept.append(who)
        else:
            more += 1
    if kept:
        out["attendees"] = kept
    if more:
        out["attendees_more"] = more
    if organizer is not None:
        out["organizer"] = organizer
    if mine:
        out["response"] = min(mine, key=RESPONSES.index)
    elif organizer is not None and organizer["address"] and me(organizer["address"]):
        out["response"] = "accepted"
    if free:
        out["free"] = True
    return out


def takes_time(event: dict[str, Any]) -> bool:
    """Whether an event holds the user's time: not cancelled, not free, not declined."""
    return not (
        event.get("status") == "cancelled"
        or event.get("free") is True
        or event.get("response") == "declined"
    )


def others(event: dict[str, Any], me: Me) -> list[dict[str, str]]:
    """The event's attendees and organizer who are not the user, each once."""
    out, seen = [], set()
    people = [*event.get("attendees", []), *([event["organizer"]] if "organizer" in event else [])]
    for who in people:
        address = who.get("address", "")
        mark = address or f"name:{who.get('name', '')}"
        if (address and me(address)) or mark in seen:
            continue
        seen.add(mark)
        out.append(who)
    return out


def _address(value: object, params: Any) -> object:
    """The address of an ATTENDEE or ORGANIZER: its `mailto:` value, else its EMAIL parameter
    (RFC 7986 6.2: iCloud and Exchange name some people by a `urn:uuid:` or a principal URL)."""
    if clean_address(value) or not params.get("EMAIL"):
        return value
    return params.get("EMAIL")


def _partstat(value: object) -> str:
    if value is None:
        return "needs-action"
    return _PARTSTAT.get(str(value).strip().upper(), "needs-action")


def for_model(event: dict[str, Any], most: int) -> dict[str, Any]:
    """The people fields as a tool shows them: at most `most` attendees (empty parts left out),
    the rest counted in `attendees_more`, the organizer, the user's answer, `free`."""
    out: dict[str, Any] = {}
    attendees = event.get("attendees") or []
    if attendees:
        out["attendees"] = [{k: v for k, v in a.items() if v} for a in attendees[:most]]
    more = max(0, len(attendees) - most) + int(event.get("attendees_more") or 0)
    if more:
        out["attendees_more"] = more
    if event.get("organizer"):
        out["organizer"] = {k: v for k, v in event["organizer"].items() if v}
    for key in ("response", "free"):
        if event.get(key):
            out[key] = event[key]
    return out
