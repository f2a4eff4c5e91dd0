"""Inbox and calendar readers behind two small protocols.

Dayflow reads mail and events from JSON files. Two shapes are accepted:

    inbox.json                                  calendar.json
    {                                           {
      "anchor_date": "2026-11-05",  (optional)    "anchor_date": "2026-11-05",  (optional)
      "messages": [                               "events": [
        {                                           {
          "id": "m01",                                "id": "e01",
          "from": "Sam Okafor <sam@x.example>",       "title": "Weekly staff sync",
          "subject": "Partnership one-pager",         "start": "2026-11-05T13:00:00+00:00",
          "received_at": "2026-11-04T16:12:00+00:00", "end": "2026-11-05T13:30:00+00:00",
          "snippet": "Could you send me ...",         "location": "Room 4",     (optional)
          "body": "Hi Alex, ...",                     "attendees": ["Dana"]     (optional)
          "unread": true,                           }
          "thread_id": "th-1"                     ]
        }                                       }
      ]
    }

Required message fields: `id`, `from`, `subject`, `received_at`. `snippet` defaults to the start of
`body`, `body` to the snippet, `unread` to false, `thread_id` to null. A message may also give
its envelope, which the followups read (who owes whom a reply): `to` and `cc` (an address
string or a list of them), `message_id`, `in_reply_to`, `references`, `list_id` and
`auto_submitted`; and its `attachments`, a list of file names or of objects with a `name` (and
`type` and `size` if known), which read_message shows and which keep a promise to send a file.
Required event fields:
`id`, `title`, `start`, `end`; `attendees` are strings ("Name <address>", an address or a name),
and an event may name its `organizer` (the same way), the user's `response` (accepted,
tentative, declined, needs-action) and `"free": true` (it takes no time). Timestamps are
ISO-8601 and must carry a UTC offset (a naive time could be any zone). A bare list of messages
/ events is accepted as well.

Why `anchor_date`: the bundled sample data would go stale the day after it was written. A file that
names its anchor date has every timestamp moved by whole days, `brief_date - anchor_date`, keeping
wall-clock times, so the sample is always "current"; given the user's timezone (`tz=`), those
wall-clock times are read in that zone, so the sample's 09:30 standup is at 09:30 for everyone.
A file without an anchor (a user's own export) is taken as is.

Every problem with a file is raised as one `SourceError` line naming the file, never as a raw
KeyError or ValueError.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

from dayflow.errors import SourceError
from dayflow.files import NotRegular, TooLarge, mb, read_regular
from dayflow.sources import people
from dayflow.sources.protocols import CalendarSource, InboxSource

SNIPPET_CHARS = 200
# The envelope fields a message may give (`envelope.envelope_from_json` reads them): kept as
# given when present, else absent, so a file without them reads as before.
_ENVELOPE_FIELDS = ("to", "cc", "message_id", "in_reply_to", "references", "list_id",
                    "auto_submitted")  # fmt: skip
SAMPLES = ("standard", "large")  # the bundled inboxes; the calendar is the same for both
_SAMPLE_FILES = {"standard": "inbox.json", "large": "inbox_large.json"}
# Who the sample's user is, and their sent mail (for every bundled inbox): with them the
# sample's brief shows the followups working (an owed reply, a wait, a question answered).
SAMPLE_ME = "alex.morgan@northwind.example"
SAMPLE_SENT = "sent.json"


def to_timezone(iso: str, tz: dt.tzinfo) -> str:
    """Render an aware ISO-8601 timestamp in `tz`, as ISO-8601 with offset."""
    return _parse_aware(iso).astimezone(tz).isoformat()


def local_date(iso: str, tz: dt.tzinfo) -> dt.date:
    """The calendar date an aware ISO-8601 timestamp falls on in `tz`."""
    return _parse_aware(iso).astimezone(tz).date()


def _parse_aware(iso: str) -> dt.datetime:
    try:
        value = dt.datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        raise SourceError(f"not an ISO-8601 timestamp: {iso!r}") from None
    if value.tzinfo is None:
        raise SourceError(f"timestamp has no UTC offset: {iso!r}")
    return value


class _JsonFile:
    """Shared loading, anchoring and validation; subclasses name the list and check one item."""

    _list_key = ""
    _item_word = ""
    _bundled = ""

    def __init__(
        self, path: Path | None, brief_date: dt.date, *, tz: dt.tzinfo | None = None
    ) -> None:
        self._path = path
        self._brief_date = brief_date
        self._local_tz = tz
        self._anchored = False
        self._items: list[dict[str, Any]] | None = None
        self._named: str | None = None  # check_input: what the user gave (standard input)

    @property
    def label(self) -> str:
        """How errors name this file."""
        if self._named is not None:
            return self._named
        return self._bundled if self._path is None else str(self._path)

    def _load(self) -> list[dict[str, Any]]:
        # Parsed once, then handed out as deep copies so callers may mutate what they get.
        if self._items is None:
            self._items = self._parse(self._read_text())
        return copy.deepcopy(self._items)

    def _read_text(self) -> str:
        try:
            if self._path is None:
                return files("dayflow.fixtures").joinpath(self._bundled).read_text(encoding="utf-8")
            # utf-8-sig: a file saved with a byte-order mark (Windows editors) is still UTF-8.
            return read_regular(self._path).decode("utf-8-sig")
        except FileNotFoundError:
            raise self._error("file not found") from None
        except NotRegular as err:
            raise self._error(f"is {err.kind}, not a file") from None
        except TooLarge as err:
            raise self._error(f"is larger than {mb(err.limit)}; refused") from None
        except UnicodeDecodeError:
            raise self._error("is not UTF-8 text") from None
        except OSError as err:
            raise self._error(f"cannot be read ({err.strerror or err})") from None

    def _parse(self, text: str) -> list[dict[str, Any]]:
        try:
            # A number too long for int() becomes a float (inf): the field check then names
            # the field, instead of the parser failing with no field to name.
            data = json.loads(text, parse_int=_int)
        except json.JSONDecodeError as err:
            raise self._error(
                f"invalid JSON at line {err.lineno} column {err.colno}: {err.msg}"
            ) from None
        except RecursionError:
            raise self._error("invalid JSON: nested too deeply") from None
        shift = dt.timedelta(0)
        if isinstance(data, dict):
            if "anchor_date" in data:
                shift = self._brief_date - self._anchor(data["anchor_date"])
                self._anchored = True
            raw = data.get(self._list_key)
            if raw is None:
                raise self._error(f"has no '{self._list_key}' list")
        else:
            raw = data
        if not isinstance(raw, list):
            raise self._error(f"'{self._list_key}' must be a list, not {_kind(raw)}")
        items = [self._item(n, item, shift) for n, item in enumerate(raw, start=1)]
        seen: set[str] = set()
        for n, item in enumerate(items, start=1):
            if item["id"] in seen:
                raise self._error(f"{self._item_word} {n} repeats the id {item['id']!r}")
            seen.add(item["id"])
        return items

    def _anchor(self, value: object) -> dt.date:
        if not isinstance(value, str):
            raise self._error(f"'anchor_date' must be a YYYY-MM-DD string, not {_kind(value)}")
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise self._error(f"'anchor_date' is not a YYYY-MM-DD date: {value!r}") from None

    def _item(self, n: int, item: object, shift: dt.timedelta) -> dict[str, Any]:
        raise NotImplementedError

    def _error(self, problem: str) -> SourceError:
        return SourceError(f"{self.label}: {problem}")

    def _field(
        self,
        n: int,
        item: dict[str, Any],
        name: str,
        kind: type | tuple[type, ...],
        *,
        required: bool = True,
    ) -> Any:
        """One field of item n, type-checked; None when optional and absent (or null)."""
        value = item.get(name)
        if value is None:
            if required:
                raise self._error(f"{self._item_word} {n} has no '{name}'")
            return None
        if not isinstance(value, kind):
            raise self._error(
                f"{self._item_word} {n} '{name}' must be {_kind_name(kind)}, not {_kind(value)}"
            )
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and not _encodable(text):
                raise self._error(
                    f"{self._item_word} {n} '{name}' holds an invalid character (a lone "
                    "surrogate such as \\ud800, which is not Unicode text)"
                )
        # An empty subject is a real thing in mail; an empty id would break task keys.
        if name == "id" and isinstance(value, str) and not value.strip():
            raise self._error(f"{self._item_word} {n} has an empty '{name}'")
        return value

    def _time(self, n: int, item: dict[str, Any], name: str, shift: dt.timedelta) -> dt.datetime:
        raw = self._field(n, item, name, str)
        try:
            value = dt.datetime.fromisoformat(raw)
        except ValueError:
            raise self._error(
                f"{self._item_word} {n} '{name}' is not an ISO-8601 timestamp: {raw!r}"
            ) from None
        if value.tzinfo is None:
            raise self._error(f"{self._item_word} {n} '{name}' has no UTC offset: {raw!r}")
        try:
            # Adding a timedelta to an aware datetime keeps its wall-clock time and offset:
            # "the same time of day, N days later", with no detour through UTC.
            value = value + shift
            if self._anchored and self._local_tz is not None:
                # Sample data keeps its wall-clock times in the user's zone: a 09:30 standup is
                # at 09:30 wherever the brief is read. A user's own export is taken as is.
                value = value.replace(tzinfo=self._local_tz)
            # Every time is shown in some zone later: it must stay representable in all of them.
            value.astimezone(dt.UTC) + dt.timedelta(days=2) - dt.timedelta(days=4)
        except OverflowError:
            raise self._error(f"{self._item_word} {n} '{name}' is out of range: {raw!r}") from None
        return value

    def _check_object(self, n: int, item: object) -> dict[str, Any]:
        if not isinstance(item, dict):
            raise self._error(f"{self._item_word} {n} must be an object, not {_kind(item)}")
        return item


class JsonInbox(_JsonFile, InboxSource):
    """Messages from a JSON file; `path=None` reads the bundled inbox named by `sample`.

    `sample="standard"` is the 19-message inbox whose snippets settle everything; `"large"` is
    69 messages with long bodies, threads and requests buried in them, for long runs.
    """

    _list_key = "messages"
    _item_word = "message"

    def __init__(
        self,
        path: Path | None,
        brief_date: dt.date,
        *,
        sample: str = "standard",
        tz: dt.tzinfo | None = None,
    ) -> None:
        if sample not in _SAMPLE_FILES:
            choices = ", ".join(SAMPLES)
            raise SourceError(f"unknown sample inbox {sample!r} (choose one of: {choices})")
        super().__init__(path, brief_date, tz=tz)
        self._bundled = _SAMPLE_FILES[sample]

    @property
    def is_sample(self) -> bool:
        """True for the bundled sample (its items live in their own `sample:` namespace)."""
        return self._path is None

    def messages(self) -> list[dict[str, Any]]:
        """All messages, newest first, as fresh copies."""
        return self._load()

    def _parse(self, text: str) -> list[dict[str, Any]]:
        items = super()._parse(text)
        items.sort(key=lambda m: m["id"])
        # Newest first; the id breaks ties so the order never depends on the file's order.
        items.sort(key=lambda m: dt.datetime.fromisoformat(m["received_at"]), reverse=True)
        return items

    def _item(self, n: int, item: object, shift: dt.timedelta) -> dict[str, Any]:
        obj = self._check_object(n, item)
        snippet = self._field(n, obj, "snippet", str, required=False)
        body = self._field(n, obj, "body", str, required=False)
        return {
            "id": self._field(n, obj, "id", str),
            "from": self._field(n, obj, "from", str),
            "subject": self._field(n, obj, "subject", str),
            "received_at": self._time(n, obj, "received_at", shift).isoformat(),
            "snippet": _snippet(body or "") if snippet is None else snippet,
            "body": (snippet or "") if body is None else body,
            "unread": bool(self._field(n, obj, "unread", bool, required=False)),
            "thread_id": self._field(n, obj, "thread_id", str, required=False),
            **self._envelope(n, obj),
            **self._attachments(n, obj),
        }

    def _attachments(self, n: int, obj: dict[str, Any]) -> dict[str, Any]:
        """`attachments` as [{name, type, size}], when the message gives any."""
        given = self._field(n, obj, "attachments", list, required=False)
        out = []
        for entry in given or []:
            if isinstance(entry, str):
                entry = {"name": entry}
            name = entry.get("name") if isinstance(entry, dict) else None
            kind = entry.get("type", "application/octet-stream") if isinstance(entry, dict) else ""
            size = entry.get("size", 0) if isinstance(entry, dict) else 0
            if (
                not isinstance(name, str)
                or not name.strip()
                or not _encodable(name)
                or not isinstance(kind, str)
                or not _encodable(kind)
                or not isinstance(size, int)
                or isinstance(size, bool)
                or size < 0
            ):
                raise self._error(
                    f"message {n} 'attachments' must list file names, or objects with a "
                    "'name' (and a 'type' and a 'size' in bytes)"
                )
            out.append({"name": name, "type": kind, "size": size})
        return {"attachments": out} if out else {}

    def _envelope(self, n: int, obj: dict[str, Any]) -> dict[str, Any]:
        """The envelope fields the message gives, each a string or a list of strings."""
        out: dict[str, Any] = {}
        for name in _ENVELOPE_FIELDS:
            value = self._field(n, obj, name, (str, list), required=False)
            if isinstance(value, list) and not all(isinstance(v, str) for v in value):
                raise self._error(f"message {n} '{name}' must be a string or a list of strings")
            if value is not None:
                out[name] = value
        return out


def sample_sent(brief_date: dt.date, *, tz: dt.tzinfo | None = None) -> JsonInbox:
    """The bundled sample's sent mail (`SAMPLE_SENT`), anchored like the sample inbox."""
    reader = JsonInbox(None, brief_date, tz=tz)
    reader._bundled = SAMPLE_SENT
    return reader


class JsonCalendar(_JsonFile, CalendarSource):
    """Events from a JSON file; `path=None` reads the bundled sample calendar."""

    _list_key = "events"
    _item_word = "event"
    _bundled = "calendar.json"

    def __init__(
        self,
        path: Path | None,
        brief_date: dt.date,
        *,
        tz: dt.tzinfo | None = None,
        me: people.Me = people.nobody,
    ) -> None:
        super().__init__(path, brief_date, tz=tz)
        self._me = me  # which attendee is the user (their `response`)

    def events(
        self, first: dt.date | None = None, last: dt.date | None = None
    ) -> list[dict[str, Any]]:
        """All events, by start time, as fresh copies (a JSON file is small: no range needed)."""
        return self._load()

    @property
    def follows_brief_date(self) -> bool:  # type: ignore[override]  # known once read
        return self._anchored

    def _parse(self, text: str) -> list[dict[str, Any]]:
        items = super()._parse(text)
        items.sort(key=lambda e: e["id"])
        items.sort(key=lambda e: dt.datetime.fromisoformat(e["start"]))
        return items

    def _item(self, n: int, item: object, shift: dt.timedelta) -> dict[str, Any]:
        obj = self._check_object(n, item)
        start = self._time(n, obj, "start", shift)
        end = self._time(n, obj, "end", shift)
        if end < start:
            raise self._error(f"event {n} ends before it starts")
        attendees = self._field(n, obj, "attendees", list, required=False) or []
        if not all(isinstance(a, str) for a in attendees):
            raise self._error(f"event {n} 'attendees' must be a list of strings")
        organizer = self._field(n, obj, "organizer", str, required=False)
        response = self._field(n, obj, "response", str, required=False)
        if response is not None and response not in people.RESPONSES:
            raise self._error(f"event {n} 'response' must be one of {', '.join(people.RESPONSES)}")
        listed = [(who, "") for who in map(_person, attendees) if who is not None]
        who = people.fields(listed, _person(organizer or ""), self._me)
        if response is not None:
            who["response"] = response
        if self._field(n, obj, "free", bool, required=False):
            who["free"] = True
        return {
            "id": self._field(n, obj, "id", str),
            "title": self._field(n, obj, "title", str),
            "start": start.isoformat(),
            "end": end.isoformat(),
            "location": self._field(n, obj, "location", str, required=False),
            "attendees": [],
            **who,
        }


def check_input(kind: str, data: bytes, label: str, brief_date: dt.date) -> None:
    """Raise the SourceError a reader of `data` (an inbox or a calendar, by `kind`) would
    raise for `brief_date`, naming it `label` ("--inbox standard input") rather than a file."""
    reader: _JsonFile = (
        JsonInbox(None, brief_date) if kind == "inbox" else JsonCalendar(None, brief_date)
    )
    reader._named = label
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise reader._error("is not UTF-8 text") from None
    reader._parse(text)


def _person(text: str) -> dict[str, str] | None:
    """An attendee written as "Name <address>", "address" or "Name"."""
    import email.utils  # only when an event has people (not on the fast commands' path)

    name, address = email.utils.parseaddr(text)
    if address and "@" in address:
        return people.person(name, address)
    return people.person(text, "")


def _int(digits: str) -> int | float:
    try:
        return int(digits)
    except ValueError:  # more digits than int() accepts (sys.get_int_max_str_digits)
        return float("inf")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _snippet(body: str) -> str:
    text = " ".join(body.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    return text[: SNIPPET_CHARS - 3].rsplit(" ", 1)[0] + "..."


def _kind(value: object) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    if isinstance(kind, tuple):
        return " or ".join(_kind_name(k) for k in kind)
    return {str: "a string", bool: "a boolean", list: "a list"}.get(kind, kind.__name__)
