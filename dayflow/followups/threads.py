"""Joining messages into threads: by Message-ID / In-Reply-To / References, else by subject.

Every message of the window becomes one node (the same message seen in two sources, or in an
inbox and a sent folder, is one node with both sources). Nodes are joined with a union-find
over the ids they name, so a References loop, a message that names itself or a thread of
10,000 messages costs one pass and never recursion; an id named but not in the window is a
placeholder that still joins the replies to it. A message left alone by its headers (none, or
ones naming only what is not there) joins the nearest message with the same normalised subject
(`Re:`, `Fwd:`, `AW:`, `SV:` ... and `[list]` tags stripped) and the same participants within
30 days. Two different messages that share a Message-ID (a broken mailer) stay two messages;
the id links to the first of them.

A thread's key is `thread:` and a short hash of its root (the first id of its oldest message's
References, else its In-Reply-To, else its own Message-ID), which is what `read_message` gives
as `thread_id` for the same mail, so a task filed from either is one task.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from dayflow.sources.envelope import FAIL, PASS, Address, Envelope, base_address, group_post
from dayflow.sources.identity import short_hash
from dayflow.sources.mail import MailItem
from dayflow.sources.me import Me
from dayflow.sources.parts import FilesBeyond

SUBJECT_DAYS = 30  # how far apart two messages joined by subject alone may be
THREAD_KEY_PREFIX = "thread:"


@dataclass(frozen=True)
class Record:
    """One message as one source listed it, with whether that source is a sent folder."""

    key: str  # mail:<hash>, the message's task key
    id: str  # <source>:<hash>
    source: str
    subject: str
    received_at: dt.datetime
    text: str  # the body as listed (else the snippet)
    envelope: Envelope
    in_sent: bool = False
    # `text` is all of the message's words; False when it is a listing's snippet that may stop
    # short of them (the source did not say it is whole).
    whole: bool = True
    # Whether parts past what the listing read hold a file (`MailItem.files_beyond`).
    files_beyond: FilesBeyond | None = field(default=None, compare=False, repr=False)
    # The source's own thread id, for mail with no Message-ID to thread by (a JSON export's
    # `thread_id`, as Gmail's or JMAP's threadId): messages one such source puts in one thread
    # are one thread here too. Mail with headers is threaded by them alone (its `thread_id`
    # is only their hash, and a reused Message-ID must not join two threads).
    thread_id: str | None = None

    @classmethod
    def of(cls, item: MailItem, *, sent: bool = False) -> Record:
        text = item.body if item.body is not None else item.snippet
        whole = item.body is not None or item.snippet_whole is True
        return cls(
            item.key, item.id, item.source, item.subject, item.received_at, text, item.envelope,
            sent, whole, item.files_beyond,
            None if item.envelope.message_id or item.envelope.links else item.thread_id,
        )  # fmt: skip


@dataclass(frozen=True)
class ThreadMessage:
    """One message of a thread (all the places it was seen in, as one)."""

    key: str
    id: str
    subject: str
    received_at: dt.datetime
    sender_name: str
    sender_address: str
    to: tuple[Address, ...]
    cc: tuple[Address, ...]
    from_me: bool
    automated: bool
    listed: bool
    text: str
    sources: tuple[str, ...]
    in_inbox: bool = False  # seen in an inbox, not only in a sent folder
    # It says it is from one of the user's addresses but came from outside: its receiving
    # server failed its authentication, or the user's sent mail was read and holds no copy of
    # it. It is not the user's (`from_me` is False): never their note, never their reply.
    outside: bool = False
    # It carries a file its sender attached (`Envelope.has_attachment`, in any copy of it).
    has_attachment: bool = False
    # Its text is a snippet that may stop short (no copy of it was listed whole).
    cut: bool = False
    # Its copies' parts past what their listings read, when none was seen to carry a file:
    # read only when asked (`carries_file`).
    files_beyond: tuple[FilesBeyond, ...] = field(default=(), compare=False, repr=False)

    @property
    def snippet(self) -> str:
        return " ".join(self.text.split())[:200]

    def carries_file(self) -> bool:
        """Whether a copy of it carries a file, reading past its listing's bytes if it must
        (the read is done once, however often it is asked)."""
        return self.has_attachment or any(found() for found in self.files_beyond)


@dataclass(frozen=True)
class Thread:
    key: str
    subject: str
    latest_at: dt.datetime
    messages: tuple[ThreadMessage, ...]  # newest first
    participants: frozenset[str]  # every address but the user's, normalised
    sources: tuple[str, ...]

    def involves(self, addresses: Iterable[str]) -> bool:
        """Whether any of `addresses` (case and `+tag` ignored) took part."""
        return any(base_address(a) in self.participants for a in addresses)


@dataclass
class _Node:
    records: list[Record] = field(default_factory=list)

    @property
    def first(self) -> Record:
        return self.records[0]


# A reply's or forward's prefix in the languages mailers write it, or a `[list]` tag.
_PREFIX = re.compile(
    r"^\s*(?:(?:re|fwd?|aw|sv|wg|vs|tr|antw|rif|réf|odp|r)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]\s*"
    r"|\[[^\]]{1,40}\]\s*)",
    re.IGNORECASE,
)


def normalise_subject(subject: str) -> str:
    """`Re: AW: [team] Budget  draft` -> `budget draft` (what subject fallback compares)."""
    text = subject
    for _ in range(20):  # bounded: a subject of a thousand "Re:" is cut short, not looped on
        stripped = _PREFIX.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    return " ".join(text.lower().split())


def build_threads(records: Iterable[Record], me: Me) -> list[Thread]:
    """The threads the records make, newest first."""
    nodes = _merge(records)
    parent = list(range(len(nodes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    by_id: dict[str, int] = {}
    for i, node in enumerate(nodes):
        mid = node.first.envelope.message_id
        if mid and mid not in by_id:
            by_id[mid] = i
    real = len(nodes)
    for i, node in enumerate(nodes[:real]):
        for ref in node.first.envelope.links:
            j = by_id.get(ref)
            if j is None:
                j = by_id[ref] = len(parent)
                parent.append(j)  # a placeholder: named, not in the window
            union(i, j)
    # A source's thread holds a reply sent to fewer people than its question (the subject
    # fallback below needs the same participants): "Re:" to the teacher alone, not the list.
    by_thread: dict[tuple[str, str], int] = {}
    for i, node in enumerate(nodes[:real]):
        for record in node.records:
            if record.thread_id:
                union(i, by_thread.setdefault((record.source, record.thread_id), i))
    size: dict[int, int] = {}
    for i in range(real):
        size[find(i)] = size.get(find(i), 0) + 1
    _join_by_subject(nodes, me, union, [size[find(i)] == 1 for i in range(real)])
    groups: dict[int, list[_Node]] = {}
    for i in range(real):
        groups.setdefault(find(i), []).append(nodes[i])
    # Whether any sent folder was read (held a message in the window): only then can a
    # message "from the user" with no copy there be told to have come from outside.
    sent_read = any(r.in_sent for node in nodes for r in node.records)
    threads = [_thread(group, me, sent_read) for group in groups.values()]
    threads.sort(key=lambda t: (t.latest_at, t.key), reverse=True)
    return threads


def _merge(records: Iterable[Record]) -> list[_Node]:
    """One node per message, oldest first: the same key seen again is the same message
    (another source), unless its sender or subject differ (a Message-ID reused)."""
    nodes: list[_Node] = []
    by_key: dict[str, list[_Node]] = {}
    ordered = sorted(records, key=lambda r: (r.received_at, r.key, r.id))
    for record in ordered:
        same = next((n for n in by_key.get(record.key, []) if _same(n.first, record)), None)
        if same is None:
            same = _Node()
            nodes.append(same)
            by_key.setdefault(record.key, []).append(same)
        same.records.append(record)
    return nodes


def _same(a: Record, b: Record) -> bool:
    return (
        a.envelope.sender[1] == b.envelope.sender[1]
        and normalise_subject(a.subject) == normalise_subject(b.subject)
        and abs(a.received_at - b.received_at) <= dt.timedelta(days=2)
    )


def _participants(envelope: Envelope, me: Me) -> frozenset[str]:
    found = (envelope.sender, *envelope.to, *envelope.cc)
    return frozenset(base_address(a) for _, a in found if a and not me.matches(a))


def _join_by_subject(
    nodes: list[_Node], me: Me, union: Callable[[int, int], None], alone: list[bool]
) -> None:
    """Each message its headers left alone joins the nearest one (in time, within 30 days)
    with the same normalised subject and participants."""
    by_subject: dict[tuple[str, frozenset[str]], list[int]] = {}
    for i, node in enumerate(nodes):  # nodes are oldest first
        subject = normalise_subject(node.first.subject)
        if subject:
            key = (subject, _participants(node.first.envelope, me))
            by_subject.setdefault(key, []).append(i)
    limit = dt.timedelta(days=SUBJECT_DAYS)
    for members in by_subject.values():
        for n, i in enumerate(members):
            if not alone[i]:
                continue
            when = nodes[i].first.received_at
            near = [
                j for j in (members[n - 1] if n else None, *members[n + 1 : n + 2]) if j is not None
            ]
            near = [j for j in near if abs(nodes[j].first.received_at - when) <= limit]
            if near:
                union(i, min(near, key=lambda j: abs(nodes[j].first.received_at - when)))


def _thread(group: list[_Node], me: Me, sent_read: bool = False) -> Thread:
    # Newest first; at the same second, a reply (it names more of the thread) after what it
    # answers, so a reply sent the moment the question came still settles it.
    ordered = sorted(
        group, key=lambda n: (n.first.received_at, len(n.first.envelope.links), n.first.key)
    )
    messages = [_message(node, me, sent_read) for node in reversed(ordered)]
    oldest = group[0].first  # the group keeps the nodes' order: oldest first
    env = oldest.envelope
    root = (env.references[0] if env.references else None) or env.in_reply_to or env.message_id
    participants = frozenset().union(*(_participants(n.first.envelope, me) for n in group))
    if root is None:
        basis = "subj:" + normalise_subject(oldest.subject) + "\n" + ",".join(sorted(participants))
        key = THREAD_KEY_PREFIX + short_hash(basis)
    else:
        key = THREAD_KEY_PREFIX + short_hash("mid:" + root)
    sources = tuple(sorted({s for m in messages for s in m.sources}))
    latest = messages[0]
    return Thread(key, latest.subject, latest.received_at, tuple(messages), participants, sources)


def _message(node: _Node, me: Me, sent_read: bool = False) -> ThreadMessage:
    first = node.first
    env = first.envelope
    name, address = env.sender
    in_sent = any(r.in_sent for r in node.records)
    in_inbox = not all(r.in_sent for r in node.records)
    attached = any(r.envelope.has_attachment for r in node.records)
    # A sent folder's message is the user's, unless an inbox holds it too and its sender is
    # known not to be: a sent folder that is the inbox itself (a config naming the same path
    # twice) must not make every message in it the user's.
    theirs = in_inbox and bool(me.addresses) and bool(address)
    claims_me = me.matches(address)
    # Not the user's: forged by the receiving server's word, or, where the sent mail was read
    # and holds no copy of it, handed on by a mail server (a `Received:` chain) and not vouched
    # for by it either (a copy sent from another of the user's accounts passes DKIM or SPF). A
    # copy with no `Received:` at all was filed by the user's own client (a Maildir or IMAP
    # copy of what they sent): theirs, as before.
    outside = (
        claims_me
        and in_inbox
        and not in_sent
        and (env.auth == FAIL or (sent_read and env.relayed and env.auth != PASS))
    )
    return ThreadMessage(
        key=first.key,
        id=first.id,
        subject=first.subject,
        received_at=first.received_at,
        sender_name=name,
        sender_address=address,
        to=env.to,
        cc=env.cc,
        from_me=(claims_me and not outside) or (in_sent and not theirs),
        automated=env.automated,
        # a person's post to a group's list address is group mail, as read_inbox marks it
        listed=env.listed and not (bool(me.addresses) and group_post(env, first.subject)),
        text=max((r.text for r in node.records), key=len),
        sources=tuple(dict.fromkeys(r.source for r in node.records)),
        in_inbox=in_inbox,
        outside=outside,
        has_attachment=attached,
        cut=not any(r.whole for r in node.records),
        files_beyond=()
        if attached
        else tuple(r.files_beyond for r in node.records if r.files_beyond),
    )
